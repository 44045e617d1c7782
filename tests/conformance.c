/* conformance.c: runs ONNX backend tests (DIR/test_x/model.onnx +
 * test_data_set_N/{input,output}_K.pb) and prints passed / failed / unsupported,
 * failures grouped by op, and the pass rate of every registered op.
 *
 *   conformance ROOT [--device cpu|cuda] [--precision fp32|fp16] [--filter SUBSTR]
 *               [--known-failures FILE]... [--rtol R] [--atol A] [--timeout S] [--verbose]
 *               [--compare-cpu [--min-ratio R]] [--diff] [--jobs N] [--data-set TEXT]
 *               [--static-shapes]
 *
 * --data-set names the data set in the report (which ONNX version made ROOT);
 * --known-failures may be given several times (the lists add up).
 *
 * --compare-cpu counts only the tests the CPU passes and fails when the device
 * passes fewer than --min-ratio of them (tests listed in --known-failures are left out
 * of that ratio: the list already accounts for them); --diff compares the device with the CPU on
 * seeded random inputs (NMSE <= 1e-9 fp32, 1e-4 fp16) with poisoned device memory.
 * fp16 default tolerance: rtol 2e-2, atol 2e-3 (fp32: ONNX's rtol 1e-3, atol 1e-7).
 * --static-shapes (CPU): a model is taken only where every shape is known at build, as
 * the CUDA backend needs (with the same retry: inputs of rank <= 1 fixed as constants);
 * the others are unsupported. On the CPU this checks which tests a CUDA build refuses
 * for shapes known only at run (tests/known_failures_cuda_runtime_shapes.txt).
 *
 * Tests run in child processes (--jobs of them, each taking a range of tests) with
 * a time limit per test, so a crash or hang is counted (and makes the run fail)
 * instead of ending the runner; a new child takes over the rest of the range. Exit 0 when no
 * test crashed, hung, or failed without being listed in --known-failures, and no listed
 * test passed (the list must be kept true; not checked with --diff); exit 1 when ROOT
 * or a list is absent (CMake registers a suite only where its data should be); exit 77
 * (skip) only with --device cuda where no CUDA device is visible. */
#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/graph.h"
#include "infer.h"
#include "loaders/onnx_loader.h"
#include "ops/op.h"

enum result { R_PASS = 0, R_FAIL = 1, R_UNSUPPORTED = 2, R_CRASH = 3, R_HANG = 4, R_CPU_MISS = 5 };
static const char *result_name[] = {"pass", "FAIL", "unsupported", "CRASH", "HANG", "cpu-miss"};

typedef struct config {
  infer_device device;
  infer_precision precision;
  double rtol, atol;
  int timeout_s;
  bool verbose;
  bool compare_cpu; /* GPU mode: only tests the CPU passes count */
  double min_ratio; /* GPU mode: fail below this share of the CPU's passes */
  bool diff;        /* differential mode: random inputs, device vs CPU */
} config;

/* A data file could not be read: when the model itself is unsupported (e.g. its
 * inputs are sequences or optionals, whose files are not TensorProtos), that is
 * the verdict; otherwise the test fails. */
static enum result unreadable_data(const char *model, const char *path, char *msg, size_t cap) {
  char why[1024];
  snprintf(why, sizeof why, "%s", infer_last_error());
  infer_engine *e = NULL;
  infer_status s = infer_engine_load(model, NULL, &e);
  infer_engine_release(e);
  if (s == INFER_ERR_UNSUPPORTED) {
    snprintf(msg, cap, "load: %s", infer_last_error());
    return R_UNSUPPORTED;
  }
  snprintf(msg, cap, "reading %s: %s", path, why);
  return strstr(why, "not supported") ? R_UNSUPPORTED : R_FAIL;
}

/* Reads input_K.pb (or output_K.pb) files of a data set; returns the count or -1. */
static int read_set(const char *model, const char *set_dir, const char *kind, infer_tensor *t,
                    enum result *r, char *msg, size_t cap) {
  char path[4096];
  int n = 0;
  for (; n < 64; n++) {
    snprintf(path, sizeof path, "%s/%s_%d.pb", set_dir, kind, n);
    if (access(path, R_OK) != 0) break;
    if (infer_tensor_read_file(path, &t[n], NULL) != INFER_OK) {
      *r = unreadable_data(model, path, msg, cap);
      return -1;
    }
  }
  return n;
}

/* --diff: GPU contexts poison their memory before each run (config cuda.poison) */
static bool poison_device;
/* --static-shapes: a CPU engine is held to what the CUDA backend takes, every shape known
 * at build (engine.dynamic false, after the retry with constant small inputs that a CUDA
 * build gets too); otherwise the test is unsupported */
static bool static_shapes;
bool test_engine_dynamic(const infer_engine *e); /* tests/engine_peek.c */

/* --config KEY=VALUE (repeatable): library config entries for the builds under test (e.g.
 * cuda.host_fallback=0, outline_dynamic=1), not for --compare-cpu's CPU reference */
static const char *device_config[8];
static int n_device_config;

/* Builds the model for (device, precision) with the shapes of `ins`, runs it once
 * on `ins` and copies the outputs into outs (malloc'ed). */
static enum result engine_run(const char *model, infer_device device, infer_precision precision,
                              bool tested, const infer_tensor *ins, int n_in, infer_tensor *outs,
                              int *n_out, char *msg, size_t cap) {
  infer_options *o;
  infer_options_create(&o);
  infer_options_set_device(o, device, 0);
  infer_options_set_precision(o, precision);
  if (poison_device && device == INFER_DEVICE_CUDA) infer_options_set_config(o, "cuda.poison", "1");
  for (int i = 0; i < n_device_config && tested; i++) {
    char key[128];
    const char *eq = strchr(device_config[i], '=');
    snprintf(key, sizeof key, "%.*s", (int)(eq - device_config[i]), device_config[i]);
    infer_options_set_config(o, key, eq + 1);
  }
  for (int i = 0; i < n_in; i++) infer_options_set_input_shape_at(o, i, ins[i].rank, ins[i].dims);
  infer_engine *e;
  infer_status s = infer_engine_load(model, o, &e);
  bool static_cpu = static_shapes && device == INFER_DEVICE_CPU;
  bool refused =
      s == INFER_ERR_UNSUPPORTED && strstr(infer_last_error(), "depend on run-time data");
  if (s == INFER_OK && static_cpu && test_engine_dynamic(e)) { /* what the CUDA backend refuses */
    infer_engine_release(e);
    refused = true;
  }
  if (refused) {
    /* The GPU needs static shapes: fix the small (rank <= 1) inputs, which carry
     * shapes, axes, scales and the like, at build time and try again. */
    for (int i = 0; i < n_in; i++)
      if (ins[i].rank <= 1) infer_options_set_input_constant_at(o, i, &ins[i]);
    s = infer_engine_load(model, o, &e);
    if (s == INFER_OK && static_cpu && test_engine_dynamic(e)) {
      infer_engine_release(e);
      infer_options_release(o);
      snprintf(msg, cap, "load: some shapes depend on run-time data (--static-shapes: the CUDA "
               "backend refuses the model)");
      return R_UNSUPPORTED;
    }
  }
  infer_options_release(o);
  if (s != INFER_OK) {
    snprintf(msg, cap, "load: %s", infer_last_error());
    return s == INFER_ERR_UNSUPPORTED ? R_UNSUPPORTED : R_FAIL;
  }
  infer_context *c;
  if ((s = infer_context_create(e, &c)) != INFER_OK) {
    snprintf(msg, cap, "context: %s", infer_last_error());
    return R_FAIL;
  }
  if (n_in != infer_engine_input_count(e)) {
    snprintf(msg, cap, "the data set has %d inputs, the model %d", n_in, infer_engine_input_count(e));
    return R_FAIL;
  }
  for (int i = 0; i < n_in; i++)
    if ((s = infer_context_set_input(c, i, &ins[i])) != INFER_OK) {
      snprintf(msg, cap, "input %d: %s", i, infer_last_error());
      return s == INFER_ERR_UNSUPPORTED ? R_UNSUPPORTED : R_FAIL;
    }
  if ((s = infer_context_run(c)) != INFER_OK) {
    snprintf(msg, cap, "run: %s", infer_last_error());
    return s == INFER_ERR_UNSUPPORTED ? R_UNSUPPORTED : R_FAIL;
  }
  *n_out = infer_engine_output_count(e);
  for (int k = 0; k < *n_out && k < 64; k++) {
    infer_tensor got;
    infer_context_get_output(c, k, &got);
    outs[k] = got;
    int64_t nb = infer_tensor_count(&got) * (int64_t)infer_dtype_size(got.dtype);
    outs[k].data = malloc(nb > 0 ? (size_t)nb : 1);
    if (nb > 0) memcpy(outs[k].data, got.data, (size_t)nb);
  }
  infer_context_release(c);
  infer_engine_release(e);
  return R_PASS;
}

static bool same_shape(const infer_tensor *a, const infer_tensor *b) {
  if (a->rank != b->rank) return false;
  for (int d = 0; d < a->rank; d++)
    if (a->dims[d] != b->dims[d]) return false;
  return true;
}

/* Runs one data set and compares with its expected outputs. In the child process. */
static enum result run_data_set(const config *cfg, infer_device device, infer_precision precision,
                                double rtol, double atol, const char *model, const char *set_dir,
                                char *msg, size_t cap) {
  infer_tensor ins[64], refs[64], outs[64];
  int n_out = 0;
  enum result r = R_PASS;
  int n_in = read_set(model, set_dir, "input", ins, &r, msg, cap);
  if (n_in < 0) return r;
  int n_ref = read_set(model, set_dir, "output", refs, &r, msg, cap);
  if (n_ref < 0) return r;
  r = engine_run(model, device, precision, true, ins, n_in, outs, &n_out, msg, cap);
  if (r != R_PASS) return r;
  if (n_ref != n_out) {
    snprintf(msg, cap, "the data set has %d outputs, the model %d", n_ref, n_out);
    return R_FAIL;
  }
  for (int k = 0; k < n_ref; k++) {
    const infer_tensor *got = &outs[k], *ref = &refs[k];
    if (!same_shape(got, ref)) {
      snprintf(msg, cap, "output %d: shape differs from the reference", k);
      return R_FAIL;
    }
    if (got->dtype != ref->dtype) {
      snprintf(msg, cap, "output %d: dtype %s, reference %s", k, infer_dtype_name(got->dtype),
               infer_dtype_name(ref->dtype));
      return R_FAIL;
    }
    int64_t n = infer_tensor_count(ref);
    for (int64_t i = 0; i < n; i++) {
      double a = infer_tensor_get(got, i), b = infer_tensor_get(ref, i);
      if ((a != a && b != b) || a == b) continue;
      double diff = a > b ? a - b : b - a, mag = b < 0 ? -b : b;
      if (!(diff <= atol + rtol * mag)) {
        snprintf(msg, cap, "output %d element %lld: got %.9g, expected %.9g", k, (long long)i, a, b);
        return R_FAIL;
      }
    }
  }
  msg[0] = 0;
  return R_PASS; /* the child exits next: the OS takes the buffers back */
}

/* Differential mode: the data set's inputs with every float input replaced by
 * seeded random values, run on the CPU and on cfg's device; outputs compared by
 * normalized mean squared error, with NaNs required in the same places. (The GPU
 * context poisons its memory before the run (config cuda.poison=1), which the
 * runner sets, so unwritten outputs show up as NaN.) */
static enum result diff_data_set(const config *cfg, const char *model, const char *set_dir,
                                 char *msg, size_t cap) {
  infer_tensor ins[64], cpu[64], dev[64];
  int n_cpu = 0, n_dev = 0;
  enum result r = R_PASS;
  int n_in = read_set(model, set_dir, "input", ins, &r, msg, cap);
  /* inputs the runner cannot read cannot run on the CPU either: outside the count */
  if (n_in < 0) return R_CPU_MISS;
  uint64_t seed = 12345;
  for (int i = 0; i < n_in; i++) {
    if (ins[i].dtype != INFER_DTYPE_FLOAT32 && ins[i].dtype != INFER_DTYPE_FLOAT16) continue;
    int64_t n = infer_tensor_count(&ins[i]);
    for (int64_t j = 0; j < n; j++) {
      seed = seed * 6364136223846793005ull + 1442695040888963407ull;
      /* keep the sign pattern of the original data (log/sqrt stay defined) */
      double u = (double)(seed >> 11) / 9007199254740992.0, old = infer_tensor_get(&ins[i], j);
      double v = (0.5 + u) * (old < 0 ? -1 : 1) * (old == 0 ? 0.5 : 1);
      infer_tensor_set(&ins[i], j, v);
    }
  }
  r = engine_run(model, INFER_DEVICE_CPU, INFER_PRECISION_FP32, false, ins, n_in, cpu, &n_cpu, msg, cap);
  if (r != R_PASS) return R_CPU_MISS;
  r = engine_run(model, cfg->device, cfg->precision, true, ins, n_in, dev, &n_dev, msg, cap);
  if (r != R_PASS) return r;
  double limit = cfg->precision == INFER_PRECISION_FP16 ? 1e-4 : 1e-9;
  for (int k = 0; k < n_cpu; k++) {
    if (!same_shape(&cpu[k], &dev[k])) {
      snprintf(msg, cap, "output %d: shape differs between cpu and device", k);
      return R_FAIL;
    }
    int64_t n = infer_tensor_count(&cpu[k]);
    double err = 0, ref = 0;
    for (int64_t i = 0; i < n; i++) {
      double a = infer_tensor_get(&dev[k], i), b = infer_tensor_get(&cpu[k], i);
      if (a != a || b != b) {
        if (a != a && b != b) continue;
        snprintf(msg, cap, "output %d element %lld: device %.9g, cpu %.9g (NaN mismatch: an "
                 "unwritten element?)", k, (long long)i, a, b);
        return R_FAIL;
      }
      if (a == b) continue; /* also equal infinities */
      err += (a - b) * (a - b);
      ref += b * b;
    }
    double nmse = err / (ref > 0 ? ref : 1);
    if (!(nmse <= limit)) {
      snprintf(msg, cap, "output %d: normalized mean squared error %.3g > %.0e", k, nmse, limit);
      return R_FAIL;
    }
  }
  msg[0] = 0;
  return R_PASS;
}

/* Runs every data set of one test; returns the worst result. In the child. */
static enum result child_test(const config *cfg, const char *dir, char *m, size_t cap) {
  char model[4096], set_dir[4096];
  snprintf(model, sizeof model, "%s/model.onnx", dir);
  for (int k = 0; k < 100; k++) {
    snprintf(set_dir, sizeof set_dir, "%s/test_data_set_%d", dir, k);
    struct stat st;
    if (stat(set_dir, &st) != 0) break;
    enum result r;
    if (cfg->diff)
      r = diff_data_set(cfg, model, set_dir, m, cap);
    else if (cfg->compare_cpu &&
             run_data_set(cfg, INFER_DEVICE_CPU, INFER_PRECISION_FP32, 1e-3, 1e-7, model, set_dir,
                          m, cap) != R_PASS)
      r = R_CPU_MISS;
    else
      r = run_data_set(cfg, cfg->device, cfg->precision, cfg->rtol, cfg->atol, model, set_dir, m,
                       cap);
    if (r != R_PASS) return r;
  }
  return R_PASS;
}

/* One test's verdict as a child reports it through its pipe (smaller than
 * PIPE_BUF, so each write arrives whole). */
typedef struct record {
  int test;
  int result;
  char msg[2048];
} record;

/* A child runs tests [next, end) of its range in order, one process for many
 * tests: a CUDA context is made once per child, not once per test. */
typedef struct worker {
  pid_t pid;
  int fd;
  int next, end; /* the test it is on, and the end of its range */
  size_t got;    /* bytes of the record being read */
  record rec;
} worker;

static bool worker_start(const config *cfg, const char *root, char **names, worker *w) {
  int fds[2];
  if (pipe(fds) != 0) return false;
  pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return false;
  }
  if (pid == 0) {
    close(fds[0]);
    for (int t = w->next; t < w->end; t++) {
      record r;
      memset(&r, 0, sizeof r);
      char dir[4096];
      snprintf(dir, sizeof dir, "%s/%s", root, names[t]);
      alarm((unsigned)cfg->timeout_s); /* per test: a hang ends the child */
      r.test = t;
      r.result = child_test(cfg, dir, r.msg, sizeof r.msg);
      alarm(0);
      if (write(fds[1], &r, sizeof r) != (ssize_t)sizeof r) _exit(100);
    }
    _exit(0);
  }
  close(fds[1]);
  w->pid = pid;
  w->fd = fds[0];
  w->got = 0;
  return true;
}

/* Runs all tests over `jobs` children, each taking a contiguous range. A child
 * that dies marks the test it was on as crashed (or hung, on its alarm), and a new
 * child carries on with the rest of its range. */
static void run_all(const config *cfg, const char *root, char **names, int n, int jobs,
                    enum result *results, char (*msgs)[2048]) {
  if (jobs > n) jobs = n > 0 ? n : 1;
  worker *w = calloc((size_t)jobs, sizeof(worker));
  struct pollfd *pfd = calloc((size_t)jobs, sizeof(struct pollfd));
  int active = 0;
  for (int j = 0; j < jobs; j++) {
    w[j].next = (int)((int64_t)n * j / jobs);
    w[j].end = (int)((int64_t)n * (j + 1) / jobs);
    w[j].fd = -1;
    while (w[j].next < w[j].end && !worker_start(cfg, root, names, &w[j])) {
      results[w[j].next] = R_FAIL;
      snprintf(msgs[w[j].next], 2048, "fork/pipe failed: %s", strerror(errno));
      w[j].next++;
    }
    if (w[j].fd >= 0) active++;
  }
  while (active > 0) {
    for (int j = 0; j < jobs; j++) {
      pfd[j].fd = w[j].fd;
      pfd[j].events = POLLIN;
      pfd[j].revents = 0;
    }
    if (poll(pfd, (nfds_t)jobs, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (int j = 0; j < jobs; j++) {
      if (w[j].fd < 0 || !(pfd[j].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      ssize_t r = read(w[j].fd, (char *)&w[j].rec + w[j].got, sizeof(record) - w[j].got);
      if (r > 0) {
        w[j].got += (size_t)r;
        if (w[j].got == sizeof(record)) {
          int t = w[j].rec.test;
          int res = w[j].rec.result;
          results[t] = (res <= R_UNSUPPORTED || res == R_CPU_MISS) ? (enum result)res : R_CRASH;
          snprintf(msgs[t], 2048, "%s", w[j].rec.msg);
          w[j].next = t + 1;
          w[j].got = 0;
        }
        continue;
      }
      /* end of file: the child is gone */
      close(w[j].fd);
      w[j].fd = -1;
      active--;
      int status = 0;
      waitpid(w[j].pid, &status, 0);
      bool clean = WIFEXITED(status) && WEXITSTATUS(status) == 0 && w[j].next >= w[j].end;
      if (clean) continue;
      int t = w[j].next;
      if (t < w[j].end) {
        bool hang = WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM;
        results[t] = hang ? R_HANG : R_CRASH;
        snprintf(msgs[t], 2048, "%s", hang ? "timed out"
                                  : WIFSIGNALED(status) ? strsignal(WTERMSIG(status))
                                                        : "the test process exited early");
        w[j].next = t + 1;
      }
      while (w[j].next < w[j].end && !worker_start(cfg, root, names, &w[j])) {
        results[w[j].next] = R_FAIL;
        snprintf(msgs[w[j].next], 2048, "fork/pipe failed: %s", strerror(errno));
        w[j].next++;
      }
      if (w[j].fd >= 0) active++;
    }
  }
  free(w);
  free(pfd);
}

/* Op types of a model, for grouping ("Conv", ...), and whether each is registered. */
static int model_ops(const char *dir, char ops[][64], bool *registered, int cap) {
  char model[4096];
  snprintf(model, sizeof model, "%s/model.onnx", dir);
  graph *g;
  if (onnx_load_graph(model, NULL, &g) != INFER_OK) return 0;
  int n = 0;
  for (int i = 0; i < g->n_nodes; i++) {
    const node *nd = &g->nodes[i];
    bool seen = false;
    for (int k = 0; k < n; k++) seen |= strcmp(ops[k], nd->op_type) == 0;
    if (seen || n == cap) continue;
    snprintf(ops[n], 64, "%s", nd->op_type);
    registered[n] = op_registry_find(nd->domain, nd->op_type, nd->opset, NULL) != NULL;
    n++;
  }
  graph_release(g);
  return n;
}

typedef struct op_stat {
  char name[64];
  int total, pass;
  int fail_tests;
} op_stat;

/* Asks in a child process: CUDA initialized in this process would be unusable in
 * the children that run the tests (a CUDA context does not survive fork). */
static bool cuda_visible_in_child(void) {
  pid_t pid = fork();
  if (pid == 0) _exit(infer_device_count(INFER_DEVICE_CUDA) > 0 ? 0 : 1);
  int status;
  if (pid < 0 || waitpid(pid, &status, 0) < 0) return false;
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool listed(char **list, int n, const char *name) {
  for (int i = 0; i < n; i++)
    if (strcmp(list[i], name) == 0) return true;
  return false;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: conformance ROOT [--device cpu|cuda] [--precision fp32|fp16] "
                    "[--filter SUBSTR] [--known-failures FILE] [--rtol R] [--atol A] [--verbose] "
                    "[--config KEY=VALUE (the builds under test)]\n");
    return 2;
  }
  const char *root = argv[1], *filter = NULL, *data_set = NULL;
  const char *known_paths[8];
  int n_known_paths = 0;
  int jobs = 1;
  config cfg = {INFER_DEVICE_CPU, INFER_PRECISION_FP32, -1, -1, 60, false, false, 0, false};
  for (int i = 2; i < argc; i++) {
    const char *v = i + 1 < argc ? argv[i + 1] : "";
    if (strcmp(argv[i], "--device") == 0) { cfg.device = strncmp(v, "cuda", 4) == 0 ? INFER_DEVICE_CUDA : INFER_DEVICE_CPU; i++; }
    else if (strcmp(argv[i], "--precision") == 0) { cfg.precision = strcmp(v, "fp16") == 0 ? INFER_PRECISION_FP16 : INFER_PRECISION_FP32; i++; }
    else if (strcmp(argv[i], "--filter") == 0) { filter = v; i++; }
    else if (strcmp(argv[i], "--known-failures") == 0 && n_known_paths < 8) { known_paths[n_known_paths++] = v; i++; }
    else if (strcmp(argv[i], "--data-set") == 0) { data_set = v; i++; }
    else if (strcmp(argv[i], "--rtol") == 0) { cfg.rtol = atof(v); i++; }
    else if (strcmp(argv[i], "--atol") == 0) { cfg.atol = atof(v); i++; }
    else if (strcmp(argv[i], "--timeout") == 0) { cfg.timeout_s = atoi(v); i++; }
    else if (strcmp(argv[i], "--verbose") == 0) cfg.verbose = true;
    else if (strcmp(argv[i], "--compare-cpu") == 0) cfg.compare_cpu = true;
    else if (strcmp(argv[i], "--static-shapes") == 0) static_shapes = true;
    else if (strcmp(argv[i], "--jobs") == 0) { jobs = atoi(v) > 0 ? atoi(v) : 1; i++; }
    else if (strcmp(argv[i], "--diff") == 0) {
      cfg.diff = cfg.compare_cpu = true;
      poison_device = true;
    }
    else if (strcmp(argv[i], "--min-ratio") == 0) { cfg.min_ratio = atof(v); i++; }
    else if (strcmp(argv[i], "--config") == 0 && strchr(v, '=') && n_device_config < 8) {
      device_config[n_device_config++] = v;
      i++;
    }
    else { fprintf(stderr, "conformance: unknown option %s\n", argv[i]); return 2; }
  }
  /* ONNX's runner tolerance; fp16 keeps ~3 significant digits per operation */
  bool fp16 = cfg.precision == INFER_PRECISION_FP16;
  if (cfg.rtol < 0) cfg.rtol = fp16 ? 2e-2 : 1e-3;
  if (cfg.atol < 0) cfg.atol = fp16 ? 2e-3 : 1e-7;
  if (cfg.device == INFER_DEVICE_CUDA && !cuda_visible_in_child()) {
    printf("SKIP: no CUDA device is visible to this build (infer_device_count = 0)\n");
    return 77;
  }
  if (data_set) printf("data set: %s (%s)\n", data_set, root);
  DIR *dir = opendir(root);
  if (!dir) {
    /* CMake registers a suite only where its data should be: missing data is a failure */
    printf("FAIL: %s not found (the build generates the node tests with python3-onnx; "
           "-DINFER_ONNX_TESTS_DIR names other data)\n", root);
    return 1;
  }
  char *names[4096];
  int n_names = 0;
  struct dirent *de;
  while ((de = readdir(dir)) && n_names < 4096) {
    if (de->d_name[0] == '.') continue;
    if (filter && !strstr(de->d_name, filter)) continue;
    char model[4096];
    snprintf(model, sizeof model, "%s/%s/model.onnx", root, de->d_name);
    if (access(model, R_OK) == 0) names[n_names++] = strdup(de->d_name);
  }
  closedir(dir);
  qsort(names, (size_t)n_names, sizeof(char *), cmp_str);

  /* known failures: one test name per line, '#' comments */
  char *known[4096];
  int n_known = 0;
  for (int k = 0; k < n_known_paths; k++) {
    FILE *f = fopen(known_paths[k], "r");
    if (!f) {
      printf("FAIL: cannot read the known-failures list %s\n", known_paths[k]);
      return 1;
    }
    char line[512];
    while (f && fgets(line, sizeof line, f) && n_known < 4096) {
      char *p = line;
      while (*p == ' ' || *p == '\t') p++;
      p[strcspn(p, " \t#\r\n")] = 0;
      if (*p) known[n_known++] = strdup(p);
    }
    if (f) fclose(f);
  }

  static op_stat stats[512];
  int n_stats = 0, counts[6] = {0}, unregistered = 0, unexpected = 0, fixed = 0;
  int listed_cpu_passed = 0, listed_passed = 0; /* left out of the --compare-cpu ratio */
  enum result *results = calloc((size_t)n_names + 1, sizeof *results);
  char (*msgs)[2048] = calloc((size_t)n_names + 1, 2048);
  run_all(&cfg, root, names, n_names, jobs, results, msgs);
  for (int t = 0; t < n_names; t++) {
    char path[4096], *msg = msgs[t];
    snprintf(path, sizeof path, "%s/%s", root, names[t]);
    char ops[32][64];
    bool reg[32];
    int n_ops = model_ops(path, ops, reg, 32);
    bool all_registered = n_ops > 0;
    for (int k = 0; k < n_ops; k++) all_registered &= reg[k];
    enum result r = results[t];
    counts[r]++;
    if (r == R_UNSUPPORTED && !all_registered) unregistered++;
    bool is_known = listed(known, n_known, names[t]);
    if (is_known && r != R_CPU_MISS) listed_cpu_passed++, listed_passed += r == R_PASS;
    if (r == R_PASS && is_known) {
      fixed++;
      printf("%-60s pass (listed as a known failure: remove it from the list)\n", names[t]);
    }
    /* a crash or hang is never acceptable; a failure, or a registered op refusing
     * an attribute/dtype, is acceptable only when listed */
    bool gap = r == R_FAIL || (r == R_UNSUPPORTED && all_registered);
    if (r == R_CRASH || r == R_HANG || (gap && !is_known)) unexpected++;
    if (cfg.verbose || r == R_FAIL || r == R_CRASH || r == R_HANG ||
        (r == R_UNSUPPORTED && all_registered))
      printf("%-60s %-11s %s\n", names[t], result_name[r], msg);
    /* per-op stats over the tests whose ops are all registered (and, comparing
     * with the CPU, that the CPU passes) */
    if (!all_registered || r == R_CPU_MISS) continue;
    for (int k = 0; k < n_ops; k++) {
      op_stat *s = NULL;
      for (int j = 0; j < n_stats; j++)
        if (strcmp(stats[j].name, ops[k]) == 0) s = &stats[j];
      if (!s && n_stats < 512) {
        s = &stats[n_stats++];
        snprintf(s->name, sizeof s->name, "%s", ops[k]);
      }
      if (!s) continue;
      s->total++;
      s->pass += r == R_PASS;
    }
  }
  printf("\nper registered op (tests whose ops are all registered): passed/total\n");
  for (int j = 0; j < n_stats; j++)
    printf("  %-24s %4d/%-4d %5.1f%%%s\n", stats[j].name, stats[j].pass, stats[j].total,
           100.0 * stats[j].pass / stats[j].total,
           stats[j].pass * 100 < stats[j].total * 95 ? "  < 95%" : "");
  if (data_set) printf("\ndata set: %s", data_set);
  printf("\n%s: %d tests: %d passed, %d failed, %d unsupported (%d with an unregistered op), "
         "%d crashed, %d hung\n", root, n_names, counts[R_PASS], counts[R_FAIL],
         counts[R_UNSUPPORTED], unregistered, counts[R_CRASH], counts[R_HANG]);
  if (n_known_paths)
    printf("known failures listed: %d; failing but not listed: %d; listed but passing: %d\n",
           n_known, unexpected, fixed);
  bool ratio_ok = true;
  if (cfg.compare_cpu) {
    int cpu_passed = n_names - counts[R_CPU_MISS] - listed_cpu_passed;
    int passed = counts[R_PASS] - listed_passed;
    double ratio = cpu_passed ? (double)passed / cpu_passed : 1;
    ratio_ok = ratio >= cfg.min_ratio;
    int all_cpu = n_names - counts[R_CPU_MISS];
    printf("%s %s: passed %d of the %d tests the CPU passes and the known-failures list does "
           "not name (%.1f%%; required %.1f%%; %d listed left out); of all %d the CPU passes: "
           "%d (%.1f%%)\n",
           cfg.device == INFER_DEVICE_CUDA ? "cuda" : "cpu", fp16 ? "fp16" : "fp32", passed,
           cpu_passed, 100 * ratio, 100 * cfg.min_ratio, listed_cpu_passed, all_cpu,
           counts[R_PASS], all_cpu ? 100.0 * counts[R_PASS] / all_cpu : 100.0);
  }
  for (int t = 0; t < n_names; t++) free(names[t]);
  free(results);
  free(msgs);
  for (int i = 0; i < n_known; i++) free(known[i]);
  /* A listed failure that passes fails the run too: the list must stay true. Not with
   * --diff, which checks other inputs than the list's tests (a test listed for a
   * reference output out of float16's range may well pass on random inputs). */
  if (cfg.diff) fixed = 0;
  if (fixed)
    printf("FAIL: %d test(s) listed in %s pass now: remove them from the list\n", fixed,
           n_known_paths == 1 ? known_paths[0] : "the known-failures lists");
  return (counts[R_CRASH] || counts[R_HANG] || (n_known_paths && unexpected) || fixed || !ratio_ok)
             ? 1
             : 0;
}
