/* test_async.c: asynchronous runs, in-place buffers and 8-bit image inputs (infer.h),
 * through the public API only.
 *
 * 1. enqueue / wait: outputs equal those of infer_context_run bit for bit; misuse is
 *    refused with INFER_ERR_INVALID_ARGUMENT and a message saying why (enqueue twice,
 *    wait with nothing in flight, wait twice, and set_input, the buffers, get_output,
 *    timing, bindings and run while a run is in flight); an input not set fails the
 *    enqueue and leaves nothing in flight; release with a run in flight. A wait on
 *    another thread than the enqueue's gets the outputs, and (CPU) a failing run's
 *    status and message (tests/failures/gather_oob.onnx: an index out of range).
 * 2. In-place buffers: an input written into infer_context_input_buffer runs to the
 *    same outputs, bit for bit, as the same values given to infer_context_set_input on
 *    another context; the buffer keeps its contents between runs; set_input writes the
 *    same memory; infer_context_output_buffer is the memory get_output points at;
 *    sizes are the engine's; a flexible-batch engine runs the full batch from the
 *    buffer after a smaller set_input.
 * 3. Image inputs (infer_options_set_input_image): the engine's input becomes uint8
 *    [N, H, W, C]; random pixels fed so give the outputs of the same pixels normalized
 *    here as torchvision does ((x / 255 - mean) / std in float32, NCHW) and fed to the
 *    plain engine: within 1e-6 on the CPU (also with the channels-last pass forced on
 *    the CPU, and at a smaller flexible batch), within 1e-5 on CUDA fp32, within fp16
 *    tolerance (2e-3 + 2e-2 |ref|) on CUDA fp16, where the u8 NHWC input goes straight
 *    into the first convolution's NHWC layout. Through set_input and through the
 *    buffer. Bad options and a float tensor given to an image input are refused.
 * 4. Threads: T threads, each with its own context of one engine, enqueue / wait K
 *    runs from their input buffers (rewritten per run); every output equals a
 *    single-context set_input run of the same input bit for bit. Under ThreadSanitizer
 *    (tests/run_tsan.sh) this is the race check of the async path.
 *
 *   test_async [--device cpu|cuda] [--precision fp32|fp16] [--threads T] [--iters K]
 * Model: models/sample.onnx (Conv, Relu, MaxPool, Conv, BN, ..., Softmax; input image
 * [batch, 3, 32, 32]). Exit 0 pass, 1 fail, 77 skip (--device cuda without a GPU).
 */
#include <execinfo.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "infer.h"

#ifndef MODELS_DIR
#define MODELS_DIR "models"
#endif
#ifndef FAILURES_DIR
#define FAILURES_DIR "tests/failures"
#endif

static atomic_int failures;
static pthread_mutex_t print_lock = PTHREAD_MUTEX_INITIALIZER;
static infer_device device = INFER_DEVICE_CPU;
static infer_precision precision = INFER_PRECISION_FP32;

#define CHECK(cond)                                                              \
  do {                                                                           \
    if (!(cond)) {                                                               \
      pthread_mutex_lock(&print_lock);                                           \
      printf("FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond);                     \
      pthread_mutex_unlock(&print_lock);                                         \
      atomic_fetch_add(&failures, 1);                                            \
    }                                                                            \
  } while (0)

/* A call that must return `want`; on a mismatch prints both and the message. */
#define EXPECT(call, want) expect_status((call), (want), #call, __LINE__)
static bool expect_status(infer_status got, infer_status want, const char *what, int line) {
  if (got == want) return true;
  pthread_mutex_lock(&print_lock);
  printf("FAIL line %d: %s -> %s (%s), expected %s\n", line, what, infer_status_name(got),
         infer_last_error(), infer_status_name(want));
  pthread_mutex_unlock(&print_lock);
  atomic_fetch_add(&failures, 1);
  return false;
}
#define OK(call) EXPECT(call, INFER_OK)

/* A refusal: status INVALID_ARGUMENT and a message holding `words`. */
#define REFUSED(call, words) refused((call), (words), #call, __LINE__)
static void refused(infer_status got, const char *words, const char *what, int line) {
  if (got == INFER_ERR_INVALID_ARGUMENT && strstr(infer_last_error(), words)) {
    return;
  }
  pthread_mutex_lock(&print_lock);
  printf("FAIL line %d: %s -> %s (%s), expected invalid argument saying '%s'\n", line, what,
         infer_status_name(got), infer_last_error(), words);
  pthread_mutex_unlock(&print_lock);
  atomic_fetch_add(&failures, 1);
}

static uint64_t rng(uint64_t *s) { /* splitmix64 */
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

static void fill_floats(float *p, int64_t n, uint64_t seed) {
  for (int64_t i = 0; i < n; i++) p[i] = (float)((double)(rng(&seed) >> 11) / 4503599627370496.0 - 1.0);
}

static void fill_bytes(uint8_t *p, int64_t n, uint64_t seed) {
  for (int64_t i = 0; i < n; i++) p[i] = (uint8_t)(rng(&seed) >> 56);
}

static const float imagenet_mean[3] = {0.485f, 0.456f, 0.406f};
static const float imagenet_std[3] = {0.229f, 0.224f, 0.225f};

/* Loads sample.onnx at `batch`, optionally with input 0 an image input, optionally with a
 * config entry. NULL (reported) on failure. */
static infer_engine *load(int64_t batch, bool image, const char *key, const char *value) {
  infer_options *o = NULL;
  infer_engine *e = NULL;
  if (!OK(infer_options_create(&o))) return NULL;
  bool ok = OK(infer_options_set_device(o, device, 0)) && OK(infer_options_set_precision(o, precision)) &&
            OK(infer_options_set_batch(o, batch));
  if (ok && image) ok = OK(infer_options_set_input_image(o, 0, 3, imagenet_mean, imagenet_std));
  if (ok && key) ok = OK(infer_options_set_config(o, key, value));
  if (ok) OK(infer_engine_load(MODELS_DIR "/sample.onnx", o, &e));
  infer_options_release(o);
  return e;
}

static infer_context *context(infer_engine *e) {
  infer_context *c = NULL;
  return e && OK(infer_context_create(e, &c)) ? c : NULL;
}

/* Output 0's bytes after a successful run (malloc'ed copy; *n elements of float). */
static float *output_copy(infer_context *c, int64_t *n) {
  infer_tensor t;
  if (!OK(infer_context_get_output(c, 0, &t))) return NULL;
  *n = infer_tensor_count(&t);
  CHECK(t.dtype == INFER_DTYPE_FLOAT32);
  float *p = malloc(sizeof(float) * (size_t)(*n ? *n : 1));
  if (p) memcpy(p, t.data, sizeof(float) * (size_t)*n);
  return p;
}

static bool same_output(infer_context *c, const float *ref, int64_t n, const char *what) {
  infer_tensor t;
  if (!OK(infer_context_get_output(c, 0, &t))) return false;
  if (infer_tensor_count(&t) != n || memcmp(t.data, ref, sizeof(float) * (size_t)n) != 0) {
    pthread_mutex_lock(&print_lock);
    printf("FAIL: %s: output differs from the reference\n", what);
    pthread_mutex_unlock(&print_lock);
    atomic_fetch_add(&failures, 1);
    return false;
  }
  return true;
}

static infer_tensor image_tensor(int64_t batch, float *data) {
  infer_tensor t = {INFER_DTYPE_FLOAT32, 4, {batch, 3, 32, 32}, data};
  return t;
}

/* ---- 1. enqueue / wait --------------------------------------------------------------- */

typedef struct waiter {
  infer_context *c;
  infer_status st;
  char message[512];
} waiter;

static void *wait_on_thread(void *arg) {
  waiter *w = arg;
  w->st = infer_context_wait(w->c);
  snprintf(w->message, sizeof w->message, "%s", w->st == INFER_OK ? "" : infer_last_error());
  return NULL;
}

static void test_enqueue_wait(void) {
  infer_engine *e = load(2, false, NULL, NULL);
  infer_context *c = context(e), *r = context(e);
  if (!c || !r) goto out;
  float in[2 * 3 * 32 * 32];
  fill_floats(in, 2 * 3 * 32 * 32, 11);
  infer_tensor t = image_tensor(2, in);

  /* nothing set: the enqueue fails, nothing is in flight */
  EXPECT(infer_context_enqueue(c), INFER_ERR_INVALID_INPUT);
  CHECK(strstr(infer_last_error(), "not set") != NULL);
  REFUSED(infer_context_wait(c), "no run is in flight");

  OK(infer_context_set_input(r, 0, &t));
  OK(infer_context_run(r));
  int64_t n = 0;
  float *ref = output_copy(r, &n);
  if (!ref) goto out;

  OK(infer_context_set_input(c, 0, &t));
  if (OK(infer_context_enqueue(c))) {
    /* while it is in flight, everything but wait / status / release is refused */
    infer_tensor got;
    infer_run_timing rt;
    void *ip;
    const void *op;
    int64_t nb;
    REFUSED(infer_context_enqueue(c), "in flight");
    REFUSED(infer_context_run(c), "in flight");
    REFUSED(infer_context_get_output(c, 0, &got), "in flight");
    REFUSED(infer_context_set_input(c, 0, &t), "in flight");
    REFUSED(infer_context_input_buffer(c, 0, &ip, &nb), "in flight");
    REFUSED(infer_context_output_buffer(c, 0, &op, &nb), "in flight");
    REFUSED(infer_context_timing(c, &rt), "in flight");
    REFUSED(infer_context_bind_input_device(c, 0, NULL, 0), "in flight");
    REFUSED(infer_context_bind_output_device(c, 0, NULL, 0), "in flight");
    OK(infer_context_status(c));
    OK(infer_context_wait(c));
    same_output(c, ref, n, "enqueue + wait");
    OK(infer_context_timing(c, &rt));
  }
  REFUSED(infer_context_wait(c), "no run is in flight"); /* a second wait */
  same_output(c, ref, n, "after a refused wait"); /* the outputs stay readable */

  /* enqueue here, wait on another thread (ordered by the thread's start) */
  if (OK(infer_context_enqueue(c))) {
    waiter w = {c, INFER_ERR_INTERNAL, ""};
    pthread_t th;
    pthread_create(&th, NULL, wait_on_thread, &w);
    pthread_join(th, NULL);
    EXPECT(w.st, INFER_OK);
    same_output(c, ref, n, "wait on another thread");
  }
  /* release with a run in flight: waits, drops it (valgrind and TSan see the rest) */
  if (OK(infer_context_enqueue(c))) {
    infer_context_release(c);
    c = NULL;
  }
  free(ref);
out:
  infer_context_release(c);
  infer_context_release(r);
  infer_engine_release(e);
}

/* A run failing inside (CPU: Gather index out of range): the enqueue succeeds, the wait
 * on another thread gets the status and the message; the context then runs again. */
static void test_failure_reaches_wait(void) {
  infer_engine *e = NULL;
  infer_context *c = NULL;
  if (!OK(infer_engine_load(FAILURES_DIR "/gather_oob.onnx", NULL, &e)) || !(c = context(e))) {
    infer_engine_release(e);
    return;
  }
  int64_t idx[2] = {1, 7};
  infer_tensor t = {INFER_DTYPE_INT64, 1, {2}, idx};
  OK(infer_context_set_input(c, 0, &t));
  if (OK(infer_context_enqueue(c))) {
    waiter w = {c, INFER_OK, ""};
    pthread_t th;
    pthread_create(&th, NULL, wait_on_thread, &w);
    pthread_join(th, NULL);
    EXPECT(w.st, INFER_ERR_RUNTIME);
    printf("1. failing run, waited on another thread: %s\n", w.message);
    CHECK(strstr(w.message, "Gather") != NULL && strstr(w.message, "7") != NULL);
    infer_tensor got;
    EXPECT(infer_context_get_output(c, 0, &got), INFER_ERR_RUNTIME); /* never stale */
  }
  idx[1] = 4;
  OK(infer_context_set_input(c, 0, &t));
  OK(infer_context_enqueue(c));
  OK(infer_context_wait(c));
  infer_context_release(c);
  infer_engine_release(e);
}

/* ---- 2. in-place buffers ----------------------------------------------------------------- */

static void test_buffers(void) {
  infer_engine *e = load(2, false, NULL, NULL);
  infer_context *c = context(e), *r = context(e);
  float *in = NULL, *ref = NULL;
  if (!c || !r) goto out;
  const int64_t count = 2 * 3 * 32 * 32;
  in = malloc(sizeof(float) * count);
  if (!in) goto out;
  void *ip = NULL;
  const void *op = NULL;
  int64_t ib = 0, ob = 0;
  if (!OK(infer_context_input_buffer(c, 0, &ip, &ib)) ||
      !OK(infer_context_output_buffer(c, 0, &op, &ob)))
    goto out;
  CHECK(ib == count * (int64_t)sizeof(float));
  infer_tensor oinfo;
  OK(infer_engine_output_info(e, 0, NULL, &oinfo));
  CHECK(ob == infer_tensor_count(&oinfo) * (int64_t)infer_dtype_size(oinfo.dtype));
  void *ip2 = NULL;
  int64_t ib2 = 0;
  OK(infer_context_input_buffer(c, 0, &ip2, &ib2));
  CHECK(ip2 == ip && ib2 == ib); /* the same memory for the context's life */
  const void *op2 = NULL;
  REFUSED(infer_context_input_buffer(c, 5, &ip2, &ib2), "out of range");
  REFUSED(infer_context_output_buffer(c, 5, &op2, &ib2), "out of range");
  CHECK(ip2 == NULL && op2 == NULL && ib2 == 0); /* cleared on failure */

  for (int round = 0; round < 3; round++) {
    fill_floats(in, count, 100 + (uint64_t)round);
    infer_tensor t = image_tensor(2, in);
    OK(infer_context_set_input(r, 0, &t));
    OK(infer_context_run(r));
    int64_t n = 0;
    free(ref);
    if (!(ref = output_copy(r, &n))) goto out;
    memcpy(ip, in, sizeof(float) * count); /* written in place, no set_input */
    OK(infer_context_enqueue(c));
    OK(infer_context_wait(c));
    char what[64];
    snprintf(what, sizeof what, "buffer run, round %d", round);
    same_output(c, ref, n, what);
    infer_tensor got;
    OK(infer_context_get_output(c, 0, &got));
    CHECK(got.data == op); /* get_output hands out the output buffer */
    CHECK(memcmp(op, ref, sizeof(float) * (size_t)n) == 0);
    /* the buffer keeps its contents: a second run without writing gives the same */
    OK(infer_context_run(c));
    same_output(c, ref, n, "second run from the unchanged buffer");
  }
  /* set_input writes into the same memory */
  fill_floats(in, count, 7);
  infer_tensor t = image_tensor(2, in);
  OK(infer_context_set_input(c, 0, &t));
  CHECK(memcmp(ip, in, sizeof(float) * count) == 0);

  /* a flexible batch: a smaller set_input, then the buffer: the run takes the full batch */
  infer_context_release(c);
  infer_context_release(r);
  infer_engine_release(e);
  c = r = NULL;
  e = NULL; /* released: the CUDA run skips the reload below, and out: releases e again */
  if (device == INFER_DEVICE_CPU && (e = load(2, false, NULL, NULL)) && (c = context(e))) {
    infer_tensor one = image_tensor(1, in);
    OK(infer_context_set_input(c, 0, &one));
    OK(infer_context_run(c));
    infer_tensor got;
    OK(infer_context_get_output(c, 0, &got));
    CHECK(got.dims[0] == 1);
    OK(infer_context_input_buffer(c, 0, &ip, &ib));
    CHECK(ib == count * (int64_t)sizeof(float));
    memcpy(ip, in, sizeof(float) * count);
    OK(infer_context_run(c));
    OK(infer_context_get_output(c, 0, &got));
    CHECK(got.dims[0] == 2);
  }
out:
  free(in);
  free(ref);
  infer_context_release(c);
  infer_context_release(r);
  infer_engine_release(e);
}

/* ---- 3. image inputs ---------------------------------------------------------------------- */

/* torchvision: ToTensor (x / 255 in float32), Normalize ((x - mean) / std), NCHW */
static void normalize_reference(const uint8_t *nhwc, float *nchw, int64_t n, int64_t h, int64_t w) {
  for (int64_t b = 0; b < n; b++)
    for (int c = 0; c < 3; c++)
      for (int64_t i = 0; i < h * w; i++) {
        float x = (float)nhwc[(b * h * w + i) * 3 + c] / 255.0f;
        nchw[(b * 3 + c) * h * w + i] = (x - imagenet_mean[c]) / imagenet_std[c];
      }
}

/* Largest |a - b| beyond the tolerance atol + rtol |b| as a ratio (> 1 fails), and the
 * largest absolute difference. */
static double compare(const float *a, const float *b, int64_t n, double atol, double rtol,
                      double *max_abs) {
  double worst = 0;
  *max_abs = 0;
  for (int64_t i = 0; i < n; i++) {
    double d = fabs((double)a[i] - (double)b[i]);
    if (!(d <= *max_abs)) *max_abs = d; /* NaN counts */
    double r = d / (atol + rtol * fabs((double)b[i]));
    if (!(r <= worst)) worst = r;
  }
  return worst;
}

static void image_case(const char *label, int64_t build_batch, int64_t batch, const char *key,
                       const char *value, bool via_buffer) {
  double atol = device == INFER_DEVICE_CPU ? 1e-6 : precision == INFER_PRECISION_FP16 ? 2e-3 : 1e-5;
  double rtol = device == INFER_DEVICE_CPU ? 0 : precision == INFER_PRECISION_FP16 ? 2e-2 : 1e-4;
  infer_engine *ef = load(build_batch, false, key, value), *eu = load(build_batch, true, key, value);
  infer_context *cf = context(ef), *cu = context(eu);
  const int64_t pixels = batch * 32 * 32 * 3;
  uint8_t *u8 = malloc((size_t)pixels);
  float *f32 = malloc(sizeof(float) * (size_t)pixels), *ref = NULL;
  if (!cf || !cu || !u8 || !f32) goto out;
  const char *name;
  infer_tensor info;
  OK(infer_engine_input_info(eu, 0, &name, &info));
  CHECK(info.dtype == INFER_DTYPE_UINT8 && info.rank == 4 && info.dims[0] == build_batch &&
        info.dims[1] == 32 && info.dims[2] == 32 && info.dims[3] == 3);
  fill_bytes(u8, pixels, 42 + (uint64_t)batch);
  u8[0] = 0;
  u8[1] = 255; /* both ends of the range */
  normalize_reference(u8, f32, batch, 32, 32);
  infer_tensor tf = image_tensor(batch, f32);
  OK(infer_context_set_input(cf, 0, &tf));
  OK(infer_context_run(cf));
  int64_t n = 0;
  if (!(ref = output_copy(cf, &n))) goto out;
  infer_tensor tu = {INFER_DTYPE_UINT8, 4, {batch, 32, 32, 3}, u8};
  if (via_buffer) {
    void *ip;
    int64_t ib;
    OK(infer_context_input_buffer(cu, 0, &ip, &ib));
    CHECK(ib == pixels); /* a quarter of the float bytes */
    if (ib == pixels) memcpy(ip, u8, (size_t)pixels);
  } else {
    OK(infer_context_set_input(cu, 0, &tu));
  }
  if (!OK(infer_context_enqueue(cu)) || !OK(infer_context_wait(cu))) goto out;
  infer_tensor got;
  OK(infer_context_get_output(cu, 0, &got));
  double max_abs = 0;
  double worst = infer_tensor_count(&got) == n ? compare(got.data, ref, n, atol, rtol, &max_abs) : INFINITY;
  printf("3. %s: uint8 NHWC vs normalized float NCHW, batch %lld of %lld: max |diff| %.3g "
         "(tolerance %.0e + %.0e |ref|)\n", label, (long long)batch, (long long)build_batch,
         max_abs, atol, rtol);
  if (!(worst <= 1)) {
    printf("FAIL: %s: outside the tolerance (ratio %.3g)\n", label, worst);
    atomic_fetch_add(&failures, 1);
  }
  /* a float tensor given to the image input is refused, naming what it takes */
  EXPECT(infer_context_set_input(cu, 0, &tf), INFER_ERR_INVALID_INPUT);
  CHECK(strstr(infer_last_error(), "uint8") != NULL);
out:
  free(u8);
  free(f32);
  free(ref);
  infer_context_release(cf);
  infer_context_release(cu);
  infer_engine_release(ef);
  infer_engine_release(eu);
}

static void test_image_options(void) {
  infer_options *o = NULL;
  if (!OK(infer_options_create(&o))) return;
  float bad_std[3] = {0.2f, 0.0f, 0.2f};
  float nan_mean[3] = {0.5f, NAN, 0.5f};
  REFUSED(infer_options_set_input_image(o, 0, 3, imagenet_mean, bad_std), "std > 0");
  REFUSED(infer_options_set_input_image(o, 0, 3, nan_mean, imagenet_std), "finite");
  REFUSED(infer_options_set_input_image(o, -1, 3, NULL, NULL), "input index");
  REFUSED(infer_options_set_input_image(o, 0, 17, NULL, NULL), "channels");
  REFUSED(infer_options_set_input_image(NULL, 0, 3, NULL, NULL), "NULL");
  infer_engine *e = NULL;
  /* the model's C is 3 */
  OK(infer_options_set_batch(o, 1));
  OK(infer_options_set_device(o, device, 0));
  OK(infer_options_set_input_image(o, 0, 1, NULL, NULL));
  EXPECT(infer_engine_load(MODELS_DIR "/sample.onnx", o, &e), INFER_ERR_INVALID_ARGUMENT);
  CHECK(strstr(infer_last_error(), "3 channels") != NULL && strstr(infer_last_error(), "image") != NULL);
  printf("3. one channel for a 3-channel input: %s\n", infer_last_error());
  infer_engine_release(e);
  e = NULL;
  OK(infer_options_set_input_image(o, 0, 0, NULL, NULL)); /* off again */
  OK(infer_options_set_input_image(o, 1, 3, NULL, NULL)); /* no input 1 */
  EXPECT(infer_engine_load(MODELS_DIR "/sample.onnx", o, &e), INFER_ERR_INVALID_ARGUMENT);
  CHECK(strstr(infer_last_error(), "1 input") != NULL);
  infer_engine_release(e);
  e = NULL;
  OK(infer_options_set_input_image(o, 1, 0, NULL, NULL));
  /* NULL mean / std: x / 255 only, the plain engine builds again */
  OK(infer_options_set_input_image(o, 0, 3, NULL, NULL));
  if (OK(infer_engine_load(MODELS_DIR "/sample.onnx", o, &e))) {
    infer_tensor info;
    OK(infer_engine_input_info(e, 0, NULL, &info));
    CHECK(info.dtype == INFER_DTYPE_UINT8 && info.dims[3] == 3);
  }
  infer_engine_release(e);
  infer_options_release(o);
  /* the gather model's int64 input is no image */
  OK(infer_options_create(&o));
  OK(infer_options_set_input_image(o, 0, 3, NULL, NULL));
  e = NULL;
  EXPECT(infer_engine_load(FAILURES_DIR "/gather_oob.onnx", o, &e), INFER_ERR_INVALID_ARGUMENT);
  CHECK(strstr(infer_last_error(), "float32 N x C x H x W") != NULL);
  infer_engine_release(e);
  infer_options_release(o);
}

/* ---- 4. threads ---------------------------------------------------------------------------- */

enum { MAX_THREADS = 16 };
typedef struct worker {
  infer_engine *e;
  int id, iters;
  float *outputs; /* iters x n */
  int64_t n;
} worker;

static void input_of(float *p, int thread, int iter) {
  fill_floats(p, 2 * 3 * 32 * 32, 1000 * (uint64_t)thread + (uint64_t)iter + 1);
}

static void *worker_main(void *arg) {
  worker *w = arg;
  infer_context *c = context(w->e);
  void *ip;
  const void *op;
  int64_t ib, ob;
  if (!c || !OK(infer_context_input_buffer(c, 0, &ip, &ib)) ||
      !OK(infer_context_output_buffer(c, 0, &op, &ob))) {
    infer_context_release(c);
    return NULL;
  }
  for (int it = 0; it < w->iters; it++) {
    input_of(ip, w->id, it); /* written in place while no run is in flight */
    if (!OK(infer_context_enqueue(c)) || !OK(infer_context_wait(c))) break;
    memcpy(w->outputs + (size_t)it * (size_t)w->n, op, sizeof(float) * (size_t)w->n);
  }
  infer_context_release(c);
  return NULL;
}

static void test_threads(int threads, int iters) {
  infer_engine *e = load(2, false, NULL, NULL);
  infer_context *r = context(e);
  worker w[MAX_THREADS];
  pthread_t th[MAX_THREADS];
  memset(w, 0, sizeof w);
  float in[2 * 3 * 32 * 32];
  infer_tensor info;
  if (!r || !OK(infer_engine_output_info(e, 0, NULL, &info))) goto out;
  int64_t n = infer_tensor_count(&info);
  for (int i = 0; i < threads; i++) {
    w[i] = (worker){e, i, iters, calloc((size_t)(iters * n), sizeof(float)), n};
    if (!w[i].outputs) goto out;
  }
  for (int i = 0; i < threads; i++) pthread_create(&th[i], NULL, worker_main, &w[i]);
  for (int i = 0; i < threads; i++) pthread_join(th[i], NULL);
  int bad = 0;
  for (int i = 0; i < threads; i++)
    for (int it = 0; it < iters; it++) {
      input_of(in, i, it);
      infer_tensor t = image_tensor(2, in);
      OK(infer_context_set_input(r, 0, &t));
      OK(infer_context_run(r));
      infer_tensor got;
      OK(infer_context_get_output(r, 0, &got));
      if (memcmp(got.data, w[i].outputs + (size_t)it * (size_t)n, sizeof(float) * (size_t)n)) bad++;
    }
  printf("4. %d threads x %d runs (enqueue / wait from input buffers): %d differ from a "
         "single-context run\n", threads, iters, bad);
  CHECK(bad == 0);
out:
  for (int i = 0; i < threads; i++) free(w[i].outputs);
  infer_context_release(r);
  infer_engine_release(e);
}

/* A crash names where it happened (the GPU host has no debugger at hand): the stack, with
 * the names -rdynamic exports, on stderr. */
static void on_crash(int sig) {
  void *frames[48];
  int n = backtrace(frames, 48);
  static const char msg[] = "test_async: crashed; stack:\n";
  if (write(2, msg, sizeof msg - 1) < 0) _exit(128 + sig);
  backtrace_symbols_fd(frames, n, 2);
  signal(sig, SIG_DFL);
  raise(sig);
}

static void section(const char *name) { printf("-- %s\n", name); }

int main(int argc, char **argv) {
  int threads = 2, iters = 20;
  signal(SIGSEGV, on_crash);
  signal(SIGBUS, on_crash);
  signal(SIGABRT, on_crash);
  for (int i = 1; i + 1 < argc; i += 2) {
    if (strcmp(argv[i], "--device") == 0) device = strcmp(argv[i + 1], "cuda") == 0 ? INFER_DEVICE_CUDA : INFER_DEVICE_CPU;
    else if (strcmp(argv[i], "--precision") == 0)
      precision = strcmp(argv[i + 1], "fp16") == 0 ? INFER_PRECISION_FP16 : INFER_PRECISION_FP32;
    else if (strcmp(argv[i], "--threads") == 0) threads = atoi(argv[i + 1]);
    else if (strcmp(argv[i], "--iters") == 0) iters = atoi(argv[i + 1]);
    else {
      fprintf(stderr, "unknown option %s\n", argv[i]);
      return 2;
    }
  }
  setvbuf(stdout, NULL, _IONBF, 0);
  if (threads < 1 || threads > MAX_THREADS || iters < 1) {
    fprintf(stderr, "--threads 1..%d, --iters >= 1\n", MAX_THREADS);
    return 2;
  }
  if (device == INFER_DEVICE_CUDA && infer_device_count(INFER_DEVICE_CUDA) == 0) {
    printf("SKIP: no CUDA device visible\n");
    return 77;
  }
  printf("device %s, precision %s\n", device == INFER_DEVICE_CUDA ? "cuda" : "cpu",
         precision == INFER_PRECISION_FP16 ? "fp16" : "fp32");
  section("1. enqueue / wait");
  test_enqueue_wait();
  if (device == INFER_DEVICE_CPU) test_failure_reaches_wait(); /* the GPU has no failing op */
  section("2. in-place buffers");
  test_buffers();
  section("3. image inputs");
  test_image_options();
  image_case("set_input", 2, 2, NULL, NULL, false);
  image_case("input buffer", 2, 2, NULL, NULL, true);
  if (device == INFER_DEVICE_CPU) {
    image_case("flexible batch", 4, 3, NULL, NULL, false);
    image_case("channels-last pass forced", 2, 2, "channels_last", "1", false);
  } else {
    image_case("channels-last off", 2, 2, "channels_last", "0", false);
  }
  section("4. threads");
  test_threads(threads, iters);
  int f = atomic_load(&failures);
  printf("%s: %d failure%s\n", f ? "FAIL" : "PASS", f, f == 1 ? "" : "s");
  return f ? 1 : 0;
}
