/* test_threads.c: the thread contract of infer.h, through the public API only.
 *
 * 1. Shared engine: N threads, each with its own contexts on ONE engine per model,
 *    run M iterations on their own seeded random inputs; every output must be
 *    bit-identical to a single-threaded run of the same inputs. Models:
 *    models/sample.onnx (batch 2, the shape of models/sample_input.npy),
 *    tests/threads/mixed.onnx (many kinds of op, random weights, two outputs) and
 *    light_resnet50.onnx from the ONNX test data (skipped with a message when
 *    absent; its constant weights make its softmax uniform, so it checks little
 *    more than that nothing crashes or goes NaN under concurrency).
 * 2. Concurrent builds: each thread loads its own engine of models/sample.onnx at the
 *    same time as the others; error messages stay per thread.
 * 3. One context, two threads: calls of infer_context_run that overlap must not both
 *    succeed; the refused one gets INFER_ERR_INVALID_ARGUMENT "... running on another
 *    thread ...". Whether calls overlap is up to the scheduler, so the test asserts
 *    what it can prove (see check_pair) and that the outputs after each round are
 *    those of that round's input.
 *
 *   test_threads [--device cpu|cuda] [--threads N] [--iters M] [--heavy-iters K]
 *                [--rounds R]
 * Exit 0 pass, 1 fail, 77 skip (--device cuda without a visible GPU).
 */
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "infer.h"

#ifndef MODELS_DIR
#define MODELS_DIR "models"
#endif
#ifndef THREADS_DIR
#define THREADS_DIR "tests/threads"
#endif
#ifndef ONNX_TESTS_DIR
#define ONNX_TESTS_DIR "../shared/onnx-backend-tests"
#endif

#define MAX_THREADS 64
#define MAX_IO 8

static atomic_int failures;
static pthread_mutex_t print_lock = PTHREAD_MUTEX_INITIALIZER;

#define FAIL(...)                                          \
  do {                                                     \
    pthread_mutex_lock(&print_lock);                       \
    printf("FAIL %s:%d: ", __FILE__, __LINE__);            \
    printf(__VA_ARGS__);                                   \
    printf("\n");                                          \
    fflush(stdout);                                        \
    pthread_mutex_unlock(&print_lock);                     \
    atomic_fetch_add(&failures, 1);                        \
  } while (0)

/* Runs an API call that must succeed; on failure reports it and evaluates to false. */
#define OK(call) ok_status((call), #call, __LINE__)
static int ok_status(infer_status s, const char *what, int line) {
  if (s == INFER_OK) return 1;
  pthread_mutex_lock(&print_lock);
  printf("FAIL %s:%d: %s -> %s: %s\n", __FILE__, line, what, infer_status_name(s),
         infer_last_error());
  fflush(stdout);
  pthread_mutex_unlock(&print_lock);
  atomic_fetch_add(&failures, 1);
  return 0;
}

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* ---- seeded inputs ------------------------------------------------------------ */

static uint64_t rng_next(uint64_t *s) { /* xorshift64* */
  *s ^= *s >> 12;
  *s ^= *s << 25;
  *s ^= *s >> 27;
  return *s * 0x2545F4914F6CDD1DULL;
}

/* Fills t (allocated by the caller) like the CLI does: floats uniform in [-1, 1),
 * integers in [0, 10), booleans 0/1. */
static void fill_random(infer_tensor *t, uint64_t seed) {
  uint64_t s = seed * 0x9E3779B97F4A7C15ULL + 1;
  int64_t n = infer_tensor_count(t);
  int is_float = t->dtype == INFER_DTYPE_FLOAT32 || t->dtype == INFER_DTYPE_FLOAT64 ||
                 t->dtype == INFER_DTYPE_FLOAT16 || t->dtype == INFER_DTYPE_BFLOAT16;
  for (int64_t i = 0; i < n; i++) {
    double u = (double)(rng_next(&s) >> 11) * (1.0 / 9007199254740992.0);
    double v = is_float ? 2 * u - 1 : t->dtype == INFER_DTYPE_BOOL ? (double)(u < 0.5) : (double)(int)(u * 10);
    infer_tensor_set(t, i, v);
  }
}

/* ---- one model under test ------------------------------------------------------ */

typedef struct model_case {
  const char *label;
  infer_engine *e;
  int n_in, n_out;
  infer_tensor in_info[MAX_IO];
  size_t in_bytes[MAX_IO], out_bytes[MAX_IO], out_total;
  int iters;             /* per thread */
  uint8_t *ref;          /* [thread][iter] outputs, concatenated */
  const infer_tensor *fixed_input; /* iteration 0 of every thread uses it when set */
} model_case;

static uint64_t seed_of(int model, int thread, int iter) {
  return (uint64_t)model * 1000003u + (uint64_t)thread * 10007u + (uint64_t)iter + 1;
}

/* Sets the inputs of iteration (thread, iter); bufs holds one buffer per input. */
static int set_inputs(model_case *m, int mi, infer_context *c, void **bufs, int thread, int iter) {
  for (int i = 0; i < m->n_in; i++) {
    infer_tensor t = m->in_info[i];
    if (m->fixed_input && iter == 0 && i == 0) {
      t = *m->fixed_input;
    } else {
      t.data = bufs[i];
      fill_random(&t, seed_of(mi, thread, iter) * 31 + (uint64_t)i);
    }
    if (!OK(infer_context_set_input(c, i, &t))) return 0;
  }
  return 1;
}

/* Copies the outputs of the last run to dst (m->out_total bytes). */
static int copy_outputs(model_case *m, infer_context *c, uint8_t *dst) {
  for (int o = 0; o < m->n_out; o++) {
    infer_tensor t;
    if (!OK(infer_context_get_output(c, o, &t))) return 0;
    size_t nb = (size_t)infer_tensor_count(&t) * infer_dtype_size(t.dtype);
    if (nb != m->out_bytes[o]) {
      FAIL("%s: output %d has %zu bytes, expected %zu", m->label, o, nb, m->out_bytes[o]);
      return 0;
    }
    memcpy(dst, t.data, nb);
    dst += nb;
  }
  return 1;
}

static void **alloc_input_bufs(model_case *m) {
  void **b = calloc(MAX_IO, sizeof *b);
  for (int i = 0; i < m->n_in; i++) b[i] = malloc(m->in_bytes[i] ? m->in_bytes[i] : 1);
  return b;
}

static void free_input_bufs(void **b) {
  for (int i = 0; b && i < MAX_IO; i++) free(b[i]);
  free(b);
}

static int build_case(model_case *m, const char *label, const char *path, infer_options *o,
                      int iters, int n_threads) {
  memset(m, 0, sizeof *m);
  m->label = label;
  m->iters = iters;
  double t0 = now_s();
  if (!OK(infer_engine_load(path, o, &m->e))) return 0;
  m->n_in = infer_engine_input_count(m->e);
  m->n_out = infer_engine_output_count(m->e);
  if (m->n_in > MAX_IO || m->n_out > MAX_IO) {
    FAIL("%s: too many inputs/outputs for this test", label);
    return 0;
  }
  for (int i = 0; i < m->n_in; i++) {
    if (!OK(infer_engine_input_info(m->e, i, NULL, &m->in_info[i]))) return 0;
    m->in_bytes[i] = (size_t)infer_tensor_count(&m->in_info[i]) * infer_dtype_size(m->in_info[i].dtype);
  }
  for (int o_ = 0; o_ < m->n_out; o_++) {
    infer_tensor t;
    if (!OK(infer_engine_output_info(m->e, o_, NULL, &t))) return 0;
    int64_t n = infer_tensor_count(&t);
    if (n < 0) {
      FAIL("%s: output %d has no static shape", label, o_);
      return 0;
    }
    m->out_bytes[o_] = (size_t)n * infer_dtype_size(t.dtype);
    m->out_total += m->out_bytes[o_];
  }
  m->ref = malloc(m->out_total * (size_t)n_threads * (size_t)iters + 1);
  printf("%s: built in %.2f s (%d inputs, %d outputs, %zu output bytes)\n", label, now_s() - t0,
         m->n_in, m->n_out, m->out_total);
  return 1;
}

/* The single-threaded reference: one context, every (thread, iter) in turn. */
static int compute_reference(model_case *m, int mi, int n_threads) {
  infer_context *c = NULL;
  double t0 = now_s();
  if (!OK(infer_context_create(m->e, &c))) return 0;
  void **bufs = alloc_input_bufs(m);
  int ok = 1;
  for (int t = 0; t < n_threads && ok; t++)
    for (int it = 0; it < m->iters && ok; it++) {
      ok = set_inputs(m, mi, c, bufs, t, it) && OK(infer_context_run(c)) &&
           copy_outputs(m, c, m->ref + m->out_total * ((size_t)t * m->iters + it));
    }
  free_input_bufs(bufs);
  infer_context_release(c);
  printf("%s: reference (%d runs on one thread) in %.2f s\n", m->label, n_threads * m->iters,
         now_s() - t0);
  return ok;
}

/* ---- 1. shared engine ---------------------------------------------------------- */

typedef struct worker {
  int id;
  model_case *cases;
  int n_cases;
  pthread_barrier_t *barrier;
  int runs, mismatches;
} worker;

static void *shared_engine_worker(void *arg) {
  worker *w = arg;
  infer_context *ctx[8] = {0};
  void **bufs[8] = {0};
  uint8_t *got[8] = {0};
  int max_iters = 0;
  for (int m = 0; m < w->n_cases; m++) {
    OK(infer_context_create(w->cases[m].e, &ctx[m])); /* contexts made concurrently */
    bufs[m] = alloc_input_bufs(&w->cases[m]);
    got[m] = malloc(w->cases[m].out_total + 1);
    if (w->cases[m].iters > max_iters) max_iters = w->cases[m].iters;
  }
  pthread_barrier_wait(w->barrier);
  /* iterations of the models interleave, so different engines run at the same time */
  for (int it = 0; it < max_iters; it++)
    for (int m = 0; m < w->n_cases; m++) {
      model_case *mc = &w->cases[m];
      if (it >= mc->iters || !ctx[m]) continue;
      if (!set_inputs(mc, m, ctx[m], bufs[m], w->id, it) || !OK(infer_context_run(ctx[m])) ||
          !copy_outputs(mc, ctx[m], got[m]))
        continue;
      w->runs++;
      const uint8_t *ref = mc->ref + mc->out_total * ((size_t)w->id * mc->iters + it);
      if (memcmp(got[m], ref, mc->out_total) != 0) {
        size_t k = 0;
        while (got[m][k] == ref[k]) k++;
        FAIL("%s: thread %d iteration %d: outputs differ from the single-threaded run "
             "(first at byte %zu of %zu)", mc->label, w->id, it, k, mc->out_total);
        w->mismatches++;
      }
    }
  for (int m = 0; m < w->n_cases; m++) {
    infer_context_release(ctx[m]);
    free_input_bufs(bufs[m]);
    free(got[m]);
  }
  return NULL;
}

static void test_shared_engine(model_case *cases, int n_cases, int n_threads) {
  pthread_t th[MAX_THREADS];
  worker w[MAX_THREADS];
  pthread_barrier_t barrier;
  pthread_barrier_init(&barrier, NULL, (unsigned)n_threads);
  double t0 = now_s();
  for (int t = 0; t < n_threads; t++) {
    w[t] = (worker){.id = t, .cases = cases, .n_cases = n_cases, .barrier = &barrier};
    pthread_create(&th[t], NULL, shared_engine_worker, &w[t]);
  }
  int runs = 0, bad = 0;
  for (int t = 0; t < n_threads; t++) {
    pthread_join(th[t], NULL);
    runs += w[t].runs;
    bad += w[t].mismatches;
  }
  pthread_barrier_destroy(&barrier);
  int expected = 0;
  for (int m = 0; m < n_cases; m++) expected += cases[m].iters * n_threads;
  if (runs != expected) FAIL("shared engine: %d of %d runs completed", runs, expected);
  printf("shared engine: %d threads, %d runs, %d differing from the single-threaded run, "
         "%.2f s\n", n_threads, runs, bad, now_s() - t0);
}

/* ---- 2. concurrent builds, per-thread error messages --------------------------- */

typedef struct builder {
  int id;
  const char *path;
  const infer_options *opts;
  model_case *ref_case; /* the sample model's case: its references and shapes */
  pthread_barrier_t *barrier;
  bool exact; /* CPU: bit-identical outputs required */
} builder;

static bool floats_close(const float *a, const float *b, size_t n) {
  double mag = 0;
  for (size_t i = 0; i < n; i++) mag = fabs(b[i]) > mag ? fabs(b[i]) : mag;
  for (size_t i = 0; i < n; i++)
    if (!(fabs((double)a[i] - b[i]) <= 1e-4 * (mag > 0 ? mag : 1))) return false;
  return true;
}

static void *build_worker(void *arg) {
  builder *b = arg;
  infer_engine *e = NULL;
  infer_context *c = NULL;
  pthread_barrier_wait(b->barrier);
  if (OK(infer_engine_load(b->path, b->opts, &e)) && OK(infer_context_create(e, &c))) {
    model_case m = *b->ref_case;
    m.e = e;
    void **bufs = alloc_input_bufs(&m);
    uint8_t *got = malloc(m.out_total + 1);
    /* iteration 1 of this thread: seeded random input (0 is the shared sample input) */
    int it = m.iters > 1 ? 1 : 0;
    /* Separate engines agree bit for bit on the CPU. On the GPU each build times
     * cuDNN's algorithms itself, and under load may pick another one, which rounds
     * differently: there the sample's float32 outputs must agree to 1e-4 of their
     * magnitude (within one engine, the threads test above is bit-exact). */
    const uint8_t *ref = m.ref + m.out_total * ((size_t)b->id * m.iters + it);
    if (set_inputs(&m, 0, c, bufs, b->id, it) && OK(infer_context_run(c)) &&
        copy_outputs(&m, c, got) &&
        (b->exact ? memcmp(got, ref, m.out_total) != 0
                  : !floats_close((const float *)got, (const float *)ref, m.out_total / 4)))
      FAIL("concurrent builds: thread %d's own engine gives other outputs", b->id);
    /* each thread fails differently at the same time; messages must not mix */
    infer_tensor t = m.in_info[0];
    t.data = bufs[0];
    int bad_index = 1000 + b->id;
    infer_status s = infer_context_set_input(c, bad_index, &t);
    pthread_barrier_wait(b->barrier);
    char want[32];
    snprintf(want, sizeof want, "%d", bad_index);
    if (s != INFER_ERR_INVALID_ARGUMENT || !strstr(infer_last_error(), want))
      FAIL("thread %d: set_input(index %d) -> %s, message '%s' (another thread's?)", b->id,
           bad_index, infer_status_name(s), infer_last_error());
    free_input_bufs(bufs);
    free(got);
  } else {
    pthread_barrier_wait(b->barrier);
  }
  infer_context_release(c);
  infer_engine_release(e);
  return NULL;
}

static void test_concurrent_builds(const char *path, const infer_options *o, model_case *sample,
                                   int n_threads, bool exact) {
  pthread_t th[MAX_THREADS];
  builder b[MAX_THREADS];
  pthread_barrier_t barrier;
  pthread_barrier_init(&barrier, NULL, (unsigned)n_threads);
  double t0 = now_s();
  for (int t = 0; t < n_threads; t++) {
    b[t] = (builder){.id = t, .path = path, .opts = o, .ref_case = sample, .barrier = &barrier,
                     .exact = exact};
    pthread_create(&th[t], NULL, build_worker, &b[t]);
  }
  for (int t = 0; t < n_threads; t++) pthread_join(th[t], NULL);
  pthread_barrier_destroy(&barrier);
  printf("concurrent builds: %d threads each built and ran its own engine, %.2f s\n", n_threads,
         now_s() - t0);
}

/* ---- 3. one context, two threads ------------------------------------------------ */

typedef struct call_record {
  infer_status s;
  int message_ok;
  double t0, t1;
} call_record;

/* Rounds start on an atomic flag the workers spin on (a barrier wakes sleeping threads
 * one by one, so their calls would rarely meet); `done` counts finished calls. */
typedef struct sharer {
  int id, rounds;
  infer_context *c;
  atomic_int *go, *done;
  call_record *rec;
} sharer;

static void *share_worker(void *arg) {
  sharer *w = arg;
  for (int r = 0; r < w->rounds; r++) {
    for (int spins = 0; atomic_load(w->go) <= r; spins++)
      if (spins > 20000) sched_yield(); /* spin briefly, then leave the CPU to others */
    call_record *rec = &w->rec[r];
    rec->t0 = now_s();
    rec->s = infer_context_run(w->c);
    rec->t1 = now_s();
    rec->message_ok = rec->s != INFER_ERR_INVALID_ARGUMENT ||
                      strstr(infer_last_error(), "running on another thread") != NULL;
    atomic_fetch_add(w->done, 1);
  }
  return NULL;
}

/* Whether a run of at least L seconds inside [a0, a1] and another inside [b0, b1]
 * can be disjoint. When they cannot, the two calls certainly overlapped. */
static int can_be_disjoint(double a0, double a1, double b0, double b1, double L) {
  double a_first = (a0 + L > b0 ? a0 + L : b0) + L;
  double b_first = (b0 + L > a0 ? b0 + L : a0) + L;
  return (a0 + L <= a1 && a_first <= b1) || (b0 + L <= b1 && b_first <= a1);
}

static void test_shared_context(model_case *m, int mi, int rounds) {
  infer_context *c = NULL;
  if (!OK(infer_context_create(m->e, &c))) return;
  void **bufs = alloc_input_bufs(m);
  uint8_t *ref = malloc(m->out_total * (size_t)rounds + 1), *got = malloc(m->out_total + 1);
  /* references, and the shortest time a run takes on its own */
  double shortest = 1e9;
  int ok = 1;
  for (int r = 0; r < rounds && ok; r++) {
    ok = set_inputs(m, mi, c, bufs, 100 + r % 7, r);
    double t0 = now_s();
    ok = ok && OK(infer_context_run(c));
    double d = now_s() - t0;
    if (d < shortest) shortest = d;
    ok = ok && copy_outputs(m, c, ref + m->out_total * (size_t)r);
  }
  if (!ok) {
    free(ref);
    free(got);
    free_input_bufs(bufs);
    infer_context_release(c);
    return;
  }
  call_record *rec[2] = {calloc((size_t)rounds, sizeof(call_record)),
                         calloc((size_t)rounds, sizeof(call_record))};
  atomic_int go = 0, done = 0;
  sharer w[2];
  pthread_t th[2];
  for (int k = 0; k < 2; k++) {
    w[k] = (sharer){.id = k, .rounds = rounds, .c = c, .go = &go, .done = &done, .rec = rec[k]};
    pthread_create(&th[k], NULL, share_worker, &w[k]);
  }
  int refused = 0, both_ok = 0, wrong_outputs = 0;
  for (int r = 0; r < rounds; r++) {
    /* the context is idle here: the workers wait at `start` */
    int in_ok = ok && set_inputs(m, mi, c, bufs, 100 + r % 7, r);
    if (!in_ok) ok = 0; /* reported; the remaining rounds go through unchecked */
    atomic_store(&go, r + 1);
    while (atomic_load(&done) < 2 * (r + 1)) sched_yield();
    if (!ok) continue;
    int n_ok = (rec[0][r].s == INFER_OK) + (rec[1][r].s == INFER_OK);
    if (n_ok > 0) {
      if (copy_outputs(m, c, got) &&
          memcmp(got, ref + m->out_total * (size_t)r, m->out_total) != 0 && wrong_outputs++ < 5)
        FAIL("shared context: round %d: outputs are not those of this round's input", r);
    } else {
      infer_tensor t;
      if (infer_context_get_output(c, 0, &t) == INFER_OK)
        FAIL("shared context: round %d: no run succeeded, yet an output is readable", r);
    }
  }
  for (int k = 0; k < 2; k++) pthread_join(th[k], NULL);
  /* a real run lasts at least 3/4 of the shortest call observed (alone or here) */
  for (int r = 0; r < rounds; r++)
    for (int k = 0; k < 2; k++)
      if (rec[k][r].s == INFER_OK && rec[k][r].t1 - rec[k][r].t0 < shortest)
        shortest = rec[k][r].t1 - rec[k][r].t0;
  double L = 0.75 * shortest;
  for (int r = 0; r < rounds && ok; r++) {
    call_record *a = &rec[0][r], *b = &rec[1][r];
    for (int k = 0; k < 2; k++) {
      call_record *x = k ? b : a, *y = k ? a : b;
      if (x->s != INFER_OK && x->s != INFER_ERR_INVALID_ARGUMENT)
        FAIL("shared context: round %d thread %d: run -> %s", r, k, infer_status_name(x->s));
      if (x->s == INFER_ERR_INVALID_ARGUMENT) {
        refused++;
        if (!x->message_ok)
          FAIL("shared context: round %d thread %d: refusal without 'running on another "
               "thread' in its message", r, k);
        /* refused while the other thread's call held the context */
        if (y->s != INFER_OK || x->t1 < y->t0 || y->t1 < x->t0)
          FAIL("shared context: round %d thread %d refused, but the other call (%s, "
               "[%.6f, %.6f] vs [%.6f, %.6f]) did not hold the context", r, k,
               infer_status_name(y->s), y->t0, y->t1, x->t0, x->t1);
      }
    }
    if (a->s == INFER_OK && b->s == INFER_OK) {
      both_ok++;
      if (!can_be_disjoint(a->t0, a->t1, b->t0, b->t1, L))
        FAIL("shared context: round %d: two overlapping runs of one context both succeeded "
             "([%.6f, %.6f] and [%.6f, %.6f], a run takes >= %.6f s)", r, a->t0, a->t1, b->t0,
             b->t1, L);
    }
  }
  printf("shared context (%s): %d rounds of two calls: %d refused as overlapping, %d rounds "
         "with both calls succeeding one after the other; shortest run %.3f ms\n",
         m->label, rounds, refused, both_ok, shortest * 1e3);
  if (refused == 0)
    printf("note: no overlap happened in this run; only the outputs were checked\n");
  free(rec[0]);
  free(rec[1]);
  free(ref);
  free(got);
  free_input_bufs(bufs);
  infer_context_release(c);
}

/* ---- main ---------------------------------------------------------------------- */

static infer_options *make_options(infer_device dev) {
  infer_options *o = NULL;
  if (!OK(infer_options_create(&o))) return NULL;
  OK(infer_options_set_device(o, dev, 0));
  return o;
}

static int file_exists(const char *p) {
  FILE *f = fopen(p, "rb");
  if (f) fclose(f);
  return f != NULL;
}

int main(int argc, char **argv) {
  infer_device dev = INFER_DEVICE_CPU;
  int n_threads = 8, iters = 20, heavy_iters = 2, rounds = 300;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "--device") && v) {
      if (!strcmp(v, "cuda")) dev = INFER_DEVICE_CUDA;
      else if (strcmp(v, "cpu")) { fprintf(stderr, "bad device %s\n", v); return 2; }
    } else if (!strcmp(a, "--threads") && v) n_threads = atoi(v);
    else if (!strcmp(a, "--iters") && v) iters = atoi(v);
    else if (!strcmp(a, "--heavy-iters") && v) heavy_iters = atoi(v);
    else if (!strcmp(a, "--rounds") && v) rounds = atoi(v);
    else {
      fprintf(stderr, "usage: %s [--device cpu|cuda] [--threads N] [--iters M] "
                      "[--heavy-iters K] [--rounds R]\n", argv[0]);
      return 2;
    }
    i++;
  }
  if (n_threads < 2 || n_threads > MAX_THREADS || iters < 2 || heavy_iters < 0 || rounds < 1) {
    fprintf(stderr, "threads must be 2..%d, iters >= 2, rounds >= 1\n", MAX_THREADS);
    return 2;
  }
  /* CUDA is initialized here on the main thread, before any worker exists */
  if (dev == INFER_DEVICE_CUDA && infer_device_count(INFER_DEVICE_CUDA) == 0) {
    printf("SKIP: no CUDA device is visible to this build of infer\n");
    return 77;
  }
  printf("device %s, %d threads, %d iterations per thread (%d on light_resnet50), %d rounds\n",
         dev == INFER_DEVICE_CUDA ? "cuda" : "cpu", n_threads, iters, heavy_iters, rounds);

  model_case cases[3];
  int n_cases = 0;
  /* models/sample.onnx at the shape of sample_input.npy (batch 2) */
  const char *sample_path = MODELS_DIR "/sample.onnx";
  infer_tensor sample_in = {0}, sample_out = {0};
  if (!OK(infer_tensor_read_file(MODELS_DIR "/sample_input.npy", &sample_in, NULL)) ||
      !OK(infer_tensor_read_file(MODELS_DIR "/sample_output.npy", &sample_out, NULL)))
    return 1;
  infer_options *o_sample = make_options(dev);
  if (!o_sample || !OK(infer_options_set_input_shape_at(o_sample, 0, sample_in.rank, sample_in.dims)))
    return 1;
  if (!build_case(&cases[n_cases], "sample", sample_path, o_sample, iters, n_threads)) return 1;
  cases[n_cases++].fixed_input = &sample_in;

  infer_options *o_mixed = make_options(dev);
  if (!o_mixed || !OK(infer_options_set_batch(o_mixed, 2))) return 1;
  if (!build_case(&cases[n_cases++], "mixed", THREADS_DIR "/mixed.onnx", o_mixed, iters, n_threads))
    return 1;

  const char *resnet = ONNX_TESTS_DIR "/light/light_resnet50.onnx";
  infer_options *o_resnet = make_options(dev);
  if (heavy_iters == 0) {
    printf("light_resnet50: skipped (--heavy-iters 0)\n");
  } else if (!file_exists(resnet)) {
    printf("light_resnet50: skipped, %s not found (set INFER_ONNX_TESTS_DIR)\n", resnet);
  } else if (!build_case(&cases[n_cases++], "light_resnet50", resnet, o_resnet, heavy_iters,
                         n_threads)) {
    return 1;
  }

  for (int m = 0; m < n_cases; m++)
    if (!compute_reference(&cases[m], m, n_threads)) return 1;
  /* the reference itself: iteration 0 of the sample model is sample_input.npy */
  {
    const float *got = (const float *)cases[0].ref, *want = sample_out.data;
    int64_t n = infer_tensor_count(&sample_out);
    if ((size_t)n * sizeof(float) != cases[0].out_bytes[0]) {
      FAIL("sample: output has %zu bytes, sample_output.npy %lld floats", cases[0].out_bytes[0],
           (long long)n);
    } else {
      for (int64_t i = 0; i < n; i++) {
        float d = got[i] - want[i];
        if (!(d < 1e-5f && d > -1e-5f)) {
          FAIL("sample: element %lld is %g, sample_output.npy has %g", (long long)i, got[i], want[i]);
          break;
        }
      }
    }
  }

  test_shared_engine(cases, n_cases, n_threads);
  test_concurrent_builds(sample_path, o_sample, &cases[0], n_threads, dev == INFER_DEVICE_CPU);
  test_shared_context(&cases[0], 0, rounds);
  /* batch 32: a run long enough (about 2 ms on one CPU core) for most rounds to overlap */
  model_case big;
  infer_options *o_big = make_options(dev);
  if (o_big && OK(infer_options_set_batch(o_big, 32)) &&
      build_case(&big, "mixed batch 32", THREADS_DIR "/mixed.onnx", o_big, 1, 1)) {
    test_shared_context(&big, 1, rounds / 3 + 1);
    infer_engine_release(big.e);
    free(big.ref);
  }
  infer_options_release(o_big);

  for (int m = 0; m < n_cases; m++) {
    infer_engine_release(cases[m].e);
    free(cases[m].ref);
  }
  infer_options_release(o_sample);
  infer_options_release(o_mixed);
  infer_options_release(o_resnet);
  infer_tensor_clear(&sample_in);
  infer_tensor_clear(&sample_out);
  int f = atomic_load(&failures);
  printf(f ? "%d failures\n" : "all passed\n", f);
  return f != 0;
}
