/* algo_cache.c: the autotune cache file: reading with every field validated, lookup,
 * atomic rewrite. No CUDA here, so CPU-only builds test it (tests/test_algo_cache.c). */
#include "algo_cache.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../core/log.h"

#define HEADER "infer-algo-cache 1"
#define HEADER_PREFIX "infer-algo-cache "
#define TEXT_(x) #x
#define TEXT(x) TEXT_(x)
#define KEY_MAX_TEXT TEXT(ALGO_CACHE_KEY_MAX)
/* Bounds what a hostile or damaged file can make us allocate. */
#define MAX_ENTRIES 65536
/* key, four int64 of at most 20 characters, their spaces; and the env line */
#define LINE_CAP (ALGO_CACHE_KEY_MAX + 4 * 21 + ALGO_CACHE_ENV_MAX + 16)

typedef struct entry {
  char *key; /* NULL: empty slot */
  int64_t vals[4];
} entry;

struct algo_cache {
  char *path;
  char *env;
  const log_sink *log;
  entry *slots; /* open addressing, linear probing; cap is a power of two */
  size_t cap, count;
  bool dirty;   /* something was put since the read: save writes */
  bool foreign; /* the file is not a cache at all: never overwrite it */
  int hits, misses;
};

static uint64_t hash_key(const char *k) {
  uint64_t h = 1469598103934665603ull; /* FNV-1a */
  for (; *k; k++) h = (h ^ (unsigned char)*k) * 1099511628211ull;
  return h;
}

/* The key's slot, or the empty slot where it would go. */
static entry *find_slot(const algo_cache *c, const char *key) {
  size_t i = (size_t)hash_key(key) & (c->cap - 1);
  while (c->slots[i].key && strcmp(c->slots[i].key, key) != 0) i = (i + 1) & (c->cap - 1);
  return &c->slots[i];
}

static void clear_entries(algo_cache *c) {
  for (size_t i = 0; i < c->cap; i++) {
    free(c->slots[i].key);
    c->slots[i].key = NULL;
  }
  c->count = 0;
}

/* Keeps the table at most half full so probes stay short. false: out of memory. */
static bool reserve_one(algo_cache *c) {
  if ((c->count + 1) * 2 <= c->cap) return true;
  size_t cap = c->cap ? c->cap * 2 : 64;
  entry *old = c->slots;
  size_t old_cap = c->cap;
  entry *slots = calloc(cap, sizeof *slots);
  if (!slots) return false;
  c->slots = slots;
  c->cap = cap;
  for (size_t i = 0; i < old_cap; i++)
    if (old[i].key) *find_slot(c, old[i].key) = old[i];
  free(old);
  return true;
}

/* NULL when the key is fine, else why not. */
static const char *key_problem(const char *key) {
  if (!key || !key[0]) return "empty key";
  size_t n = 0;
  for (const char *p = key; *p; p++, n++) {
    if (n >= ALGO_CACHE_KEY_MAX) return "key longer than " KEY_MAX_TEXT " bytes";
    if (*p <= ' ' || *p > '~') return "key with a space or a character that is not printable ASCII";
  }
  return NULL;
}

enum { LINE_OK, LINE_EOF, LINE_LONG, LINE_BINARY, LINE_TRUNCATED, LINE_ERROR };

/* One '\n'-terminated line of printable ASCII, without the newline. We always end
 * the file with a newline, so a last line without one was cut short. */
static int read_line(FILE *f, char *buf, size_t cap) {
  size_t n = 0;
  int ch;
  buf[0] = 0;
  while ((ch = getc(f)) != EOF) {
    if (ch == '\n') return LINE_OK;
    if (ch < ' ' || ch > '~') return LINE_BINARY;
    if (n + 1 >= cap) return LINE_LONG;
    buf[n++] = (char)ch;
    buf[n] = 0;
  }
  if (ferror(f)) return LINE_ERROR;
  return n == 0 ? LINE_EOF : LINE_TRUNCATED;
}

/* Base 10, the whole field, in range; no sign other than a leading '-'. */
static bool parse_i64(const char *s, int64_t *out) {
  if (!(*s >= '0' && *s <= '9') && !(s[0] == '-' && s[1] >= '0' && s[1] <= '9')) return false;
  char *end;
  errno = 0;
  long long v = strtoll(s, &end, 10);
  if (errno == ERANGE || *end) return false;
  *out = (int64_t)v;
  return true;
}

/* "<key> <v0> <v1> <v2> <v3>" into the table; NULL on success, else why not. */
static const char *parse_entry(algo_cache *c, char *line) {
  int spaces = 0;
  for (const char *p = line; *p; p++) spaces += *p == ' ';
  if (spaces != 4) return spaces < 4 ? "too few fields (want a key and 4 numbers)"
                                     : "too many fields (want a key and 4 numbers)";
  char *field[5];
  char *p = line;
  for (int k = 0; k < 5; k++) {
    field[k] = p;
    char *sp = strchr(p, ' ');
    if (sp) {
      *sp = 0;
      p = sp + 1;
    }
  }
  const char *why = key_problem(field[0]);
  if (why) return why;
  int64_t vals[4];
  for (int k = 0; k < 4; k++)
    if (!parse_i64(field[k + 1], &vals[k])) return "a value is not a 64-bit integer";
  if (c->count >= MAX_ENTRIES) return "too many entries";
  if (!reserve_one(c)) return "out of memory";
  entry *e = find_slot(c, field[0]);
  if (e->key) return "key repeated";
  if (!(e->key = strdup(field[0]))) return "out of memory";
  memcpy(e->vals, vals, sizeof vals);
  c->count++;
  return NULL;
}

static const char *line_problem(int r) {
  switch (r) {
    case LINE_LONG: return "line too long";
    case LINE_BINARY: return "a byte that is not printable ASCII";
    case LINE_TRUNCATED: return "last line cut short (no newline): truncated file";
    case LINE_ERROR: return "read error";
    default: return "unexpected end of file";
  }
}

static void load(algo_cache *c) {
  FILE *f = fopen(c->path, "rb");
  if (!f) {
    /* a missing file is the cold start, not a problem */
    if (errno != ENOENT)
      log_warn(c->log, "algorithm cache %s cannot be read (%s): not used", c->path,
                  strerror(errno));
    return;
  }
  char *line = malloc(LINE_CAP);
  if (!line) {
    fclose(f);
    return;
  }
  int r = read_line(f, line, LINE_CAP), lineno = 1;
  const char *why = NULL;
  if (r == LINE_EOF) {
    /* an empty file (e.g. made by mktemp) is an empty cache */
  } else if (r == LINE_TRUNCATED && strncmp(line, HEADER, strlen(line)) == 0) {
    why = line_problem(r);
  } else if (r != LINE_OK || strncmp(line, HEADER_PREFIX, strlen(HEADER_PREFIX)) != 0) {
    c->foreign = true;
    log_warn(c->log, "%s:1: not an algorithm cache (the first line is not \"%s\"): not "
                "used, and not overwritten", c->path, HEADER);
  } else if (strcmp(line, HEADER) != 0) {
    log_warn(c->log, "algorithm cache %s has another format (\"%s\", this build reads "
                "\"%s\"): ignored, and replaced when saved", c->path, line, HEADER);
  } else {
    lineno = 2;
    r = read_line(f, line, LINE_CAP);
    if (r != LINE_OK) why = line_problem(r);
    else if (strncmp(line, "env ", 4) != 0) why = "want \"env ...\"";
    else if (strcmp(line + 4, c->env) != 0)
      log_warn(c->log, "algorithm cache %s was made for another environment (%s; this one: "
                  "%s): ignored, and replaced when saved", c->path, line + 4, c->env);
    else
      while (!why && (r = read_line(f, line, LINE_CAP)) != LINE_EOF) {
        lineno++;
        why = r != LINE_OK ? line_problem(r) : parse_entry(c, line);
      }
  }
  if (why) {
    clear_entries(c);
    log_warn(c->log, "algorithm cache %s:%d: %s: the whole file is ignored, and replaced "
                "when saved", c->path, lineno, why);
  }
  free(line);
  fclose(f);
}

algo_cache *algo_cache_open(const char *path, const char *env,
                            const log_sink *log) {
  if (!path || !env) return NULL;
  algo_cache *c = calloc(1, sizeof *c);
  if (!c) return NULL;
  c->log = log;
  c->path = strdup(path);
  size_t n = strlen(env);
  if (n > ALGO_CACHE_ENV_MAX) n = ALGO_CACHE_ENV_MAX;
  c->env = malloc(n + 1);
  if (!c->path || !c->env) {
    algo_cache_close(c);
    return NULL;
  }
  /* the env line must read back as the same printable line */
  for (size_t i = 0; i < n; i++) c->env[i] = env[i] >= ' ' && env[i] <= '~' ? env[i] : '?';
  c->env[n] = 0;
  load(c);
  return c;
}

bool algo_cache_get(algo_cache *c, const char *key, int64_t vals[4]) {
  if (!c) return false;
  if (key_problem(key) || c->count == 0) {
    c->misses++;
    return false;
  }
  const entry *e = find_slot(c, key);
  if (!e->key) {
    c->misses++;
    return false;
  }
  memcpy(vals, e->vals, sizeof e->vals);
  c->hits++;
  return true;
}

void algo_cache_put(algo_cache *c, const char *key, const int64_t vals[4]) {
  if (!c) return;
  const char *why = key_problem(key);
  if (why) {
    log_warn(c->log, "algorithm cache: %s: entry \"%.60s%s\" not kept", why, key ? key : "",
                key && strlen(key) > 60 ? "..." : "");
    return;
  }
  if (c->count >= MAX_ENTRIES || !reserve_one(c)) {
    log_warn(c->log, "algorithm cache: full or out of memory: entry %s not kept", key);
    return;
  }
  entry *e = find_slot(c, key);
  if (e->key && memcmp(e->vals, vals, sizeof e->vals) == 0) return;
  if (!e->key) {
    if (!(e->key = strdup(key))) return;
    c->count++;
  }
  memcpy(e->vals, vals, sizeof e->vals);
  c->dirty = true;
}

static int cmp_entry_key(const void *a, const void *b) {
  return strcmp((*(const entry *const *)a)->key, (*(const entry *const *)b)->key);
}

/* Writes header, env and the entries sorted by key (files diff well and do not depend
 * on the hash order). false with errno set on failure. */
static bool write_entries(const algo_cache *c, FILE *f) {
  const entry **sorted = malloc((c->count + 1) * sizeof *sorted);
  if (!sorted) {
    errno = ENOMEM;
    return false;
  }
  size_t n = 0;
  for (size_t i = 0; i < c->cap; i++)
    if (c->slots[i].key) sorted[n++] = &c->slots[i];
  qsort(sorted, n, sizeof *sorted, cmp_entry_key);
  fprintf(f, "%s\nenv %s\n", HEADER, c->env);
  for (size_t i = 0; i < n; i++)
    fprintf(f, "%s %lld %lld %lld %lld\n", sorted[i]->key, (long long)sorted[i]->vals[0],
            (long long)sorted[i]->vals[1], (long long)sorted[i]->vals[2],
            (long long)sorted[i]->vals[3]);
  free(sorted);
  return fflush(f) == 0 && !ferror(f) && fsync(fileno(f)) == 0;
}

void algo_cache_save(algo_cache *c) {
  if (!c || !c->dirty) return;
  if (c->foreign) {
    log_warn(c->log, "algorithm cache not saved: %s is some other file", c->path);
    return;
  }
  /* A unique temporary name: two builds saving the same cache at once (threads or
   * processes) must not write into one temporary file. */
  size_t n = strlen(c->path) + sizeof ".tmp.XXXXXX";
  char *tmp = malloc(n);
  if (!tmp) return;
  snprintf(tmp, n, "%s.tmp.XXXXXX", c->path);
  int err = 0, fd = mkstemp(tmp);
  FILE *f = NULL;
  if (fd < 0) err = errno;
  /* mkstemp makes the file 0600; a cache is not secret, and other users of a shared
   * build machine may read it */
  if (!err) (void)fchmod(fd, 0644);
  if (!err && !(f = fdopen(fd, "w"))) {
    err = errno;
    close(fd);
  }
  if (!err && !write_entries(c, f)) err = errno ? errno : EIO;
  if (f && fclose(f) != 0 && !err) err = errno ? errno : EIO;
  if (!err && rename(tmp, c->path) != 0) err = errno;
  bool ok = !err;
  if (!ok) {
    if (fd >= 0) unlink(tmp);
    log_warn(c->log, "algorithm cache %s cannot be written (%s): the choices of this build "
                "are not kept", c->path, strerror(err));
  } else {
    c->dirty = false;
  }
  free(tmp);
}

void algo_cache_close(algo_cache *c) {
  if (!c) return;
  if (c->slots) clear_entries(c);
  free(c->slots);
  free(c->path);
  free(c->env);
  free(c);
}

int algo_cache_hits(const algo_cache *c) { return c ? c->hits : 0; }
int algo_cache_misses(const algo_cache *c) { return c ? c->misses : 0; }
