/* test_algo_cache.c: the autotune cache file (engine/cuda/algo_cache.c), no GPU needed.
 *
 * Round trips (put, save, open, get), the cold start, a file made for another
 * environment or format, every kind of damaged file (each must be ignored whole with one
 * warning naming the path and line, then replaced on save), a file that is not a cache
 * (ignored and left alone), saves that cannot be written (a warning, no crash, no
 * temporary file left), keys refused for length or characters, and NULL handling.
 * Prints every failed check; exits nonzero if any failed. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/log.h"
#include "ops/cuda/algo_cache.h"
#include "check.h"

/* ---- the log: warnings are counted and the last one kept ------------------------------ */

static int n_warnings;
static char last_warning[1024];

static void capture(void *user, const char *line) {
  (void)user;
  if (strncmp(line, "warning: ", 9) == 0) n_warnings++;
  snprintf(last_warning, sizeof last_warning, "%s", line);
}

static const log_sink log_sink_ = {0, capture, NULL};
static const log_sink *log_opts = &log_sink_;
static char dir[512], path[600];

static void reset_log(void) {
  n_warnings = 0;
  last_warning[0] = 0;
}

static void write_file(const char *p, const void *data, size_t n) {
  FILE *f = fopen(p, "wb");
  if (!f || fwrite(data, 1, n, f) != n) {
    fprintf(stderr, "test_algo_cache: cannot write %s\n", p);
    exit(2);
  }
  fclose(f);
}

/* Whole file as a string (NULL when absent); the caller frees. */
static char *read_text(const char *p) {
  FILE *f = fopen(p, "rb");
  if (!f) return NULL;
  char *buf = calloc(1, 1 << 20);
  size_t n = fread(buf, 1, (1 << 20) - 1, f);
  buf[n] = 0;
  fclose(f);
  return buf;
}

static bool file_exists(const char *p) { return access(p, F_OK) == 0; }

/* A save must never leave its temporary file behind. */
static int temporaries_in(const char *d) {
  DIR *dd = opendir(d);
  int n = 0;
  if (!dd) return 0;
  for (struct dirent *e; (e = readdir(dd));) n += strstr(e->d_name, ".tmp.") != NULL;
  closedir(dd);
  return n;
}

static const char *ENV_A = "infer 0.1.0; gpu NVIDIA H200; sms 132; cc 9.0; driver 12080; "
                           "runtime 12060; cudnn 90100; cublas 12.6.4";
static const char *ENV_B = "infer 0.1.0; gpu NVIDIA H200; sms 132; cc 9.0; driver 12090; "
                           "runtime 12060; cudnn 90100; cublas 12.6.4";

static const char *KEY_CONV = "conv:fwd:x=32,64,56,56:w=64,64,3,3:pad=1,1,1,1:str=1,1:dil=1,1:"
                              "g=1:dt=half:layout=nhwc:prec=fp16";

/* ---- tests ----------------------------------------------------------------------------- */

static void test_cold_start(void) {
  reset_log();
  unlink(path);
  algo_cache *c = algo_cache_open(path, ENV_A, log_opts);
  CHECK(c != NULL, "open of a missing file");
  int64_t v[4];
  CHECK(!algo_cache_get(c, KEY_CONV, v), "hit in an empty cache");
  CHECK(algo_cache_hits(c) == 0 && algo_cache_misses(c) == 1, "counts %d/%d",
        algo_cache_hits(c), algo_cache_misses(c));
  algo_cache_save(c); /* nothing put: nothing written */
  CHECK(!file_exists(path), "save without a put wrote the file");
  algo_cache_close(c);
  CHECK(n_warnings == 0, "a missing file warned: %s", last_warning);
}

static void test_round_trip(void) {
  reset_log();
  unlink(path);
  const int64_t a[4] = {7, 1, 1 << 20, 0};
  const int64_t b[4] = {INT64_MIN, INT64_MAX, -1, 42};
  algo_cache *c = algo_cache_open(path, ENV_A, log_opts);
  algo_cache_put(c, KEY_CONV, a);
  algo_cache_put(c, "gemm:m=128,n=256,k=64:dt=float:prec=tf32", b);
  for (int i = 0; i < 1000; i++) { /* grows the table several times */
    char key[64];
    snprintf(key, sizeof key, "k%04d", i);
    int64_t v[4] = {i, -i, i * 3, 5};
    algo_cache_put(c, key, v);
  }
  algo_cache_save(c);
  algo_cache_close(c);
  CHECK(n_warnings == 0, "warning while saving: %s", last_warning);
  CHECK(temporaries_in(dir) == 0, "a temporary file was left in %s", dir);
  char *text = read_text(path);
  CHECK(text && strncmp(text, "infer-algo-cache 1\nenv ", 23) == 0, "header: %.60s",
        text ? text : "(no file)");
  CHECK(text && strstr(text, "\nk0000 0 0 0 5\nk0001 1 -1 3 5\n"), "sorted entries");
  free(text);

  c = algo_cache_open(path, ENV_A, log_opts);
  int64_t v[4] = {0};
  CHECK(algo_cache_get(c, KEY_CONV, v) && memcmp(v, a, sizeof v) == 0, "conv entry");
  CHECK(algo_cache_get(c, "gemm:m=128,n=256,k=64:dt=float:prec=tf32", v) &&
            memcmp(v, b, sizeof v) == 0,
        "extreme values: %lld %lld %lld %lld", (long long)v[0], (long long)v[1],
        (long long)v[2], (long long)v[3]);
  bool all = true;
  for (int i = 0; i < 1000; i++) {
    char key[64];
    snprintf(key, sizeof key, "k%04d", i);
    all = all && algo_cache_get(c, key, v) && v[0] == i && v[1] == -i && v[2] == i * 3 && v[3] == 5;
  }
  CHECK(all, "the 1000 entries");
  CHECK(!algo_cache_get(c, "conv:other", v), "hit for a key never put");
  CHECK(algo_cache_hits(c) == 1002 && algo_cache_misses(c) == 1, "counts %d/%d",
        algo_cache_hits(c), algo_cache_misses(c));
  /* a warm build puts nothing new: the file is left as it is */
  algo_cache_put(c, KEY_CONV, a);
  unlink(path);
  algo_cache_save(c);
  CHECK(!file_exists(path), "saving unchanged entries rewrote the file");
  /* a changed value is written */
  const int64_t a2[4] = {8, 1, 1 << 20, 0};
  algo_cache_put(c, KEY_CONV, a2);
  algo_cache_save(c);
  algo_cache_close(c);
  c = algo_cache_open(path, ENV_A, log_opts);
  CHECK(algo_cache_get(c, KEY_CONV, v) && v[0] == 8, "changed value");
  algo_cache_close(c);
  CHECK(n_warnings == 0, "warning in a clean round trip: %s", last_warning);
}

static void test_other_environment(void) {
  reset_log();
  unlink(path);
  const int64_t a[4] = {1, 2, 3, 4};
  algo_cache *c = algo_cache_open(path, ENV_A, log_opts);
  algo_cache_put(c, KEY_CONV, a);
  algo_cache_save(c);
  algo_cache_close(c);

  c = algo_cache_open(path, ENV_B, log_opts);
  CHECK(n_warnings == 1 && strstr(last_warning, "another environment") &&
            strstr(last_warning, path),
        "stale file: %d warnings, last: %s", n_warnings, last_warning);
  int64_t v[4];
  CHECK(!algo_cache_get(c, KEY_CONV, v), "a stale entry was trusted");
  CHECK(algo_cache_hits(c) == 0, "hits in a stale cache");
  /* replaced on save, for the new environment */
  const int64_t b[4] = {5, 6, 7, 8};
  algo_cache_put(c, KEY_CONV, b);
  algo_cache_save(c);
  algo_cache_close(c);
  reset_log();
  c = algo_cache_open(path, ENV_B, log_opts);
  CHECK(algo_cache_get(c, KEY_CONV, v) && v[0] == 5, "rewritten for the new environment");
  algo_cache_close(c);
  CHECK(n_warnings == 0, "warning after the rewrite: %s", last_warning);

  /* another format version: ignored, replaced on save */
  static const char other_format[] = "infer-algo-cache 2\nenv x\nk 1 2 3 4\n";
  write_file(path, other_format, sizeof other_format - 1);
  reset_log();
  c = algo_cache_open(path, ENV_A, log_opts);
  CHECK(n_warnings == 1 && strstr(last_warning, "another format"), "format: %s", last_warning);
  CHECK(!algo_cache_get(c, "k", v), "entry of another format trusted");
  algo_cache_put(c, "k", b);
  algo_cache_save(c);
  algo_cache_close(c);
  char *text = read_text(path);
  CHECK(text && strncmp(text, "infer-algo-cache 1\n", 19) == 0, "not replaced: %.40s",
        text ? text : "(no file)");
  free(text);
}

/* Each damaged file: one warning naming path:line, nothing trusted (not even the good
 * entry before the damage), and a save replaces the file with a valid one. */
static void damaged(const char *what, const char *body, size_t len, int line) {
  reset_log();
  char *content = malloc(len + 512);
  int n = snprintf(content, 512, "infer-algo-cache 1\nenv %s\n", ENV_A);
  memcpy(content + n, body, len);
  write_file(path, content, (size_t)n + len);
  free(content);
  algo_cache *c = algo_cache_open(path, ENV_A, log_opts);
  CHECK(c != NULL, "%s: open", what);
  char where[700];
  snprintf(where, sizeof where, "%s:%d:", path, line);
  CHECK(n_warnings == 1 && strstr(last_warning, where), "%s: want one warning with '%s', got %d: %s",
        what, where, n_warnings, last_warning);
  int64_t v[4];
  CHECK(!algo_cache_get(c, "good", v), "%s: an entry of a damaged file was trusted", what);
  const int64_t a[4] = {9, 9, 9, 9};
  algo_cache_put(c, "good", a);
  algo_cache_save(c);
  algo_cache_close(c);
  reset_log();
  c = algo_cache_open(path, ENV_A, log_opts);
  CHECK(n_warnings == 0 && algo_cache_get(c, "good", v) && v[0] == 9,
        "%s: not replaced by a valid file (%s)", what, last_warning);
  algo_cache_close(c);
}

#define DAMAGED(what, body, line) damaged(what, body, sizeof body - 1, line)

static void test_damaged_files(void) {
  DAMAGED("bad number", "good 1 2 3 4\nk2 1 x 3 4\n", 4);
  DAMAGED("number with trailing text", "good 1 2 3 4\nk2 1 2 3 4x\n", 4);
  DAMAGED("number out of range", "good 1 2 3 4\nk2 1 99999999999999999999 3 4\n", 4);
  DAMAGED("plus sign", "good 1 2 3 4\nk2 +1 2 3 4\n", 4);
  DAMAGED("empty number", "good 1 2 3 4\nk2 1 2 3 \n", 4);
  DAMAGED("too many fields", "good 1 2 3 4\nk2 1 2 3 4 5\n", 4);
  DAMAGED("too few fields", "good 1 2 3 4\nk2 1 2 3\n", 4);
  DAMAGED("double space", "good 1 2 3 4\nk2  1 2 3 4\n", 4);
  DAMAGED("empty line", "good 1 2 3 4\n\n", 4);
  DAMAGED("truncated last line", "good 1 2 3 4\nk2 1 2 3", 4);
  DAMAGED("truncated after the last number", "good 1 2 3 4\nk2 1 2 3 4", 4);
  DAMAGED("binary garbage", "good 1 2 3 4\n\x00\xff\x13garbage\x80\n", 4);
  DAMAGED("carriage return", "good 1 2 3 4\r\n", 3);
  DAMAGED("tab", "good\t1 2 3 4\n", 3);
  DAMAGED("repeated key", "good 1 2 3 4\ngood 1 2 3 4\n", 4);
  char long_line[700];
  memset(long_line, 'k', 600);
  strcpy(long_line + 600, " 1 2 3 4\n");
  damaged("key too long", long_line, strlen(long_line), 3);
  char very_long[5000];
  memset(very_long, '1', sizeof very_long - 2);
  very_long[sizeof very_long - 2] = '\n';
  very_long[sizeof very_long - 1] = 0;
  damaged("line too long", very_long, strlen(very_long), 3);

  /* damage in the first two lines */
  static const char no_env[] = "infer-algo-cache 1\ngood 1 2 3 4\n";
  static const char header_only[] = "infer-algo-cache 1\n";
  static const char cut_header[] = "infer-algo-c";
  struct {
    const char *what, *body;
    size_t len;
    int line;
  } early[] = {{"no env line", no_env, sizeof no_env - 1, 2},
               {"header only", header_only, sizeof header_only - 1, 2},
               {"header cut short", cut_header, sizeof cut_header - 1, 1}};
  for (size_t i = 0; i < sizeof early / sizeof early[0]; i++) {
    reset_log();
    write_file(path, early[i].body, early[i].len);
    algo_cache *c = algo_cache_open(path, ENV_A, log_opts);
    char where[700];
    snprintf(where, sizeof where, "%s:%d:", path, early[i].line);
    CHECK(n_warnings == 1 && strstr(last_warning, where), "%s: want '%s', got %d: %s",
          early[i].what, where, n_warnings, last_warning);
    const int64_t a[4] = {1, 1, 1, 1};
    algo_cache_put(c, "good", a);
    algo_cache_save(c);
    algo_cache_close(c);
    char *text = read_text(path);
    CHECK(text && strncmp(text, "infer-algo-cache 1\nenv ", 23) == 0, "%s: not replaced",
          early[i].what);
    free(text);
  }

  /* an empty file (mktemp) is an empty cache, without a warning */
  reset_log();
  write_file(path, "", 0);
  algo_cache *c = algo_cache_open(path, ENV_A, log_opts);
  CHECK(n_warnings == 0, "empty file warned: %s", last_warning);
  algo_cache_close(c);
}

/* A path that names some other file: ignored with a warning, and never overwritten. */
static void test_foreign_files(void) {
  static const char text_file[] = "hello, this is not a cache\n";
  static const char binary_file[] = "\x7f" "ELF\x02\x01\x01\x00\x00\x00\xff\xfe";
  struct {
    const char *what, *body;
    size_t len;
  } cases[] = {{"text file", text_file, sizeof text_file - 1},
               {"binary file", binary_file, sizeof binary_file - 1}};
  for (size_t i = 0; i < 2; i++) {
    reset_log();
    write_file(path, cases[i].body, cases[i].len);
    algo_cache *c = algo_cache_open(path, ENV_A, log_opts);
    CHECK(n_warnings == 1 && strstr(last_warning, "not an algorithm cache") &&
              strstr(last_warning, path),
          "%s: %d warnings: %s", cases[i].what, n_warnings, last_warning);
    int64_t v[4];
    CHECK(!algo_cache_get(c, "hello,", v), "%s: trusted", cases[i].what);
    const int64_t a[4] = {1, 2, 3, 4};
    algo_cache_put(c, "k", a);
    algo_cache_save(c);
    algo_cache_close(c);
    FILE *f = fopen(path, "rb");
    char got[64] = {0};
    size_t n = f ? fread(got, 1, sizeof got, f) : 0;
    if (f) fclose(f);
    CHECK(n == cases[i].len && memcmp(got, cases[i].body, n) == 0, "%s was overwritten",
          cases[i].what);
  }
  /* a directory is not a cache either */
  reset_log();
  algo_cache *c = algo_cache_open(dir, ENV_A, log_opts);
  CHECK(c && n_warnings == 1, "directory as cache: %d warnings", n_warnings);
  algo_cache_close(c);
}

static void test_unwritable(void) {
  const int64_t a[4] = {1, 2, 3, 4};
  char bad[700];
  /* a missing directory, and a "directory" that is a regular file: both fail for root too */
  snprintf(bad, sizeof bad, "%s/no-such-dir/cache.txt", dir);
  char not_dir[700];
  snprintf(not_dir, sizeof not_dir, "%s/plain", dir);
  write_file(not_dir, "x", 1);
  char under_file[800];
  snprintf(under_file, sizeof under_file, "%s/cache.txt", not_dir);
  const char *paths[] = {bad, under_file};
  for (int i = 0; i < 2; i++) {
    algo_cache *c = algo_cache_open(paths[i], ENV_A, log_opts);
    CHECK(c != NULL, "open %s", paths[i]);
    reset_log(); /* reading under a plain file may warn already: only the save counts */
    algo_cache_put(c, KEY_CONV, a);
    algo_cache_save(c);
    CHECK(n_warnings == 1 && strstr(last_warning, "cannot be written") &&
              strstr(last_warning, paths[i]),
          "unwritable %s: %d warnings: %s", paths[i], n_warnings, last_warning);
    int64_t v[4];
    CHECK(algo_cache_get(c, KEY_CONV, v) && v[0] == 1, "entries lost after a failed save");
    algo_cache_close(c);
  }
  unlink(not_dir);
  /* a read-only directory (only meaningful when not root, who may write anyway) */
  if (geteuid() != 0) {
    char ro[700], ro_path[800];
    snprintf(ro, sizeof ro, "%s/ro", dir);
    mkdir(ro, 0700);
    snprintf(ro_path, sizeof ro_path, "%s/cache.txt", ro);
    chmod(ro, 0500);
    reset_log();
    algo_cache *c = algo_cache_open(ro_path, ENV_A, log_opts);
    algo_cache_put(c, KEY_CONV, a);
    algo_cache_save(c);
    algo_cache_close(c);
    CHECK(n_warnings == 1 && strstr(last_warning, "cannot be written"), "read-only dir: %s",
          last_warning);
    CHECK(temporaries_in(ro) == 0, "temporary left in the read-only dir");
    chmod(ro, 0700);
    rmdir(ro);
  }
  CHECK(temporaries_in(dir) == 0, "a temporary file was left after failed saves");
}

static void test_keys(void) {
  reset_log();
  unlink(path);
  algo_cache *c = algo_cache_open(path, ENV_A, log_opts);
  const int64_t a[4] = {1, 2, 3, 4};
  char longest[ALGO_CACHE_KEY_MAX + 2];
  memset(longest, 'k', ALGO_CACHE_KEY_MAX);
  longest[ALGO_CACHE_KEY_MAX] = 0;
  algo_cache_put(c, longest, a);
  CHECK(n_warnings == 0, "a key of the largest length refused: %s", last_warning);
  char too_long[ALGO_CACHE_KEY_MAX + 2];
  memset(too_long, 'j', ALGO_CACHE_KEY_MAX + 1);
  too_long[ALGO_CACHE_KEY_MAX + 1] = 0;
  algo_cache_put(c, too_long, a);
  CHECK(n_warnings == 1 && strstr(last_warning, "longer"), "too long key: %s", last_warning);
  algo_cache_put(c, "with space", a);
  algo_cache_put(c, "with\nnewline", a);
  algo_cache_put(c, "", a);
  algo_cache_put(c, NULL, a);
  CHECK(n_warnings == 5, "refused keys: %d warnings", n_warnings);
  int64_t v[4];
  CHECK(!algo_cache_get(c, too_long, v) && !algo_cache_get(c, "with space", v) &&
            !algo_cache_get(c, NULL, v),
        "a refused key was kept");
  algo_cache_save(c);
  algo_cache_close(c);
  c = algo_cache_open(path, ENV_A, log_opts);
  CHECK(algo_cache_get(c, longest, v) && v[3] == 4, "the longest key did not round-trip");
  CHECK(n_warnings == 5, "reading back warned: %s", last_warning);
  algo_cache_close(c);
}

static void test_null(void) {
  int64_t v[4];
  CHECK(!algo_cache_get(NULL, "k", v), "get on NULL");
  algo_cache_put(NULL, "k", v);
  algo_cache_save(NULL);
  algo_cache_close(NULL);
  CHECK(algo_cache_hits(NULL) == 0 && algo_cache_misses(NULL) == 0, "counts of NULL");
  CHECK(algo_cache_open(NULL, ENV_A, log_opts) == NULL, "open(NULL path)");
  /* an env with a newline must still read back as the same environment */
  reset_log();
  unlink(path);
  algo_cache *c = algo_cache_open(path, "two\nlines", log_opts);
  const int64_t a[4] = {1, 2, 3, 4};
  algo_cache_put(c, "k", a);
  algo_cache_save(c);
  algo_cache_close(c);
  c = algo_cache_open(path, "two\nlines", log_opts);
  CHECK(algo_cache_get(c, "k", v) && n_warnings == 0, "env with a newline: %s", last_warning);
  algo_cache_close(c);
}

int main(void) {
  const char *tmp = getenv("TMPDIR");
  snprintf(dir, sizeof dir, "%s/test_algo_cache_XXXXXX", tmp && *tmp ? tmp : "/tmp");
  if (!mkdtemp(dir)) {
    perror("mkdtemp");
    return 2;
  }
  snprintf(path, sizeof path, "%s/algo.cache", dir);
  test_cold_start();
  test_round_trip();
  test_other_environment();
  test_damaged_files();
  test_foreign_files();
  test_unwritable();
  test_keys();
  test_null();
  unlink(path);
  rmdir(dir);
  if (failures) {
    fprintf(stderr, "test_algo_cache: %d check(s) failed\n", failures);
    return 1;
  }
  printf("test_algo_cache: all checks passed\n");
  return 0;
}
