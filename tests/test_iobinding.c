/* test_iobinding.c: device-memory binding of inputs and outputs (issue 6,
 * infer_context_bind_input_device / infer_context_bind_output_device), through the
 * public API on models/sample.onnx.
 *
 *   test_iobinding                 CPU (CTest iobinding_cpu, no GPU needed): the
 *                                  argument errors (NULL context, bad index, wrong
 *                                  byte count), the CPU refusal, unbinding as a
 *                                  no-op, and host-staged runs unaffected.
 *   test_iobinding --device cuda   GPU (CTest gpu_iobinding): for fp32 and fp16
 *                                  precision, CUDA graph on and off, bound inputs
 *                                  and outputs give the host-staged run's outputs bit
 *                                  for bit; rebinding to other buffers between runs
 *                                  gives the new data's result in the new buffer and
 *                                  leaves the old one alone (a stale CUDA graph
 *                                  would not); refilled bound memory is read again;
 *                                  unbinding returns to host staging; host pointers
 *                                  and wrong sizes are refused; the in-place input
 *                                  buffer unbinds a bound input; a uint8 image input
 *                                  (infer_options_set_input_image) bound to device
 *                                  memory runs as its set_input run.
 * Exit 0 pass, 1 fail, 77 skip (--device cuda without a visible GPU or without a
 * CUDA build).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "infer.h"
#include "check.h"

#ifdef IOB_HAVE_CUDART
#include <cuda_runtime.h>
#endif

#ifndef MODELS_DIR
#define MODELS_DIR "models"
#endif

static size_t nbytes(const infer_tensor *t) {
  return (size_t)infer_tensor_count(t) * infer_dtype_size(t->dtype);
}

/* An engine of the sample model on `dev` at the input file's shape. */
static infer_engine *load(infer_device dev, infer_precision p, int graph,
                          const infer_tensor *in) {
  infer_options *o = NULL;
  infer_engine *e = NULL;
  if (!EXPECT(infer_options_create(&o), INFER_OK, NULL)) return NULL;
  EXPECT(infer_options_set_device(o, dev, 0), INFER_OK, NULL);
  EXPECT(infer_options_set_precision(o, p), INFER_OK, NULL);
  EXPECT(infer_options_set_cuda_graph(o, graph), INFER_OK, NULL);
  EXPECT(infer_options_set_input_shape_at(o, 0, in->rank, in->dims), INFER_OK, NULL);
  EXPECT(infer_engine_load(MODELS_DIR "/sample.onnx", o, &e), INFER_OK, NULL);
  infer_options_release(o);
  return e;
}

#ifdef IOB_HAVE_CUDART
/* Host-staged run of `in`: the output bytes, malloc'ed (the reference). */
static void *host_run(infer_engine *e, const infer_tensor *in, size_t *out_bytes) {
  infer_context *c = NULL;
  void *copy = NULL;
  infer_tensor out;
  if (EXPECT(infer_context_create(e, &c), INFER_OK, NULL) &&
      EXPECT(infer_context_set_input(c, 0, in), INFER_OK, NULL) &&
      EXPECT(infer_context_run(c), INFER_OK, NULL) &&
      EXPECT(infer_context_get_output(c, 0, &out), INFER_OK, NULL)) {
    *out_bytes = nbytes(&out);
    copy = malloc(*out_bytes);
    memcpy(copy, out.data, *out_bytes);
  }
  infer_context_release(c);
  return copy;
}
#endif

/* ---- CPU: argument errors and the refusal ------------------------------------------ */

static void test_cpu(const infer_tensor *in, const infer_tensor *ref) {
  infer_engine *e = load(INFER_DEVICE_CPU, INFER_PRECISION_FP32, 1, in);
  if (!e) return;
  infer_tensor oi;
  CHECK(infer_engine_output_info(e, 0, NULL, &oi) == INFER_OK);
  int64_t in_b = (int64_t)nbytes(in), out_b = (int64_t)nbytes(&oi);
  int n_in = infer_engine_input_count(e), n_out = infer_engine_output_count(e);
  /* never dereferenced: every call below fails before any device work */
  static char fake[16];
  void *p = fake;

  EXPECT(infer_context_bind_input_device(NULL, 0, p, in_b), INFER_ERR_INVALID_ARGUMENT,
         "NULL context");
  EXPECT(infer_context_bind_output_device(NULL, 0, p, out_b), INFER_ERR_INVALID_ARGUMENT,
         "NULL context");

  infer_context *c = NULL;
  if (!EXPECT(infer_context_create(e, &c), INFER_OK, NULL)) {
    infer_engine_release(e);
    return;
  }
  EXPECT(infer_context_bind_input_device(c, -1, p, in_b), INFER_ERR_INVALID_ARGUMENT,
         "out of range");
  EXPECT(infer_context_bind_input_device(c, n_in, p, in_b), INFER_ERR_INVALID_ARGUMENT,
         "out of range");
  EXPECT(infer_context_bind_output_device(c, -1, p, out_b), INFER_ERR_INVALID_ARGUMENT,
         "out of range");
  EXPECT(infer_context_bind_output_device(c, n_out, p, out_b), INFER_ERR_INVALID_ARGUMENT,
         "out of range");

  /* the message names the expected and the actual size */
  char want[64];
  snprintf(want, sizeof want, "%lld bytes; got %lld", (long long)in_b, (long long)(in_b - 4));
  EXPECT(infer_context_bind_input_device(c, 0, p, in_b - 4), INFER_ERR_INVALID_ARGUMENT, want);
  snprintf(want, sizeof want, "%lld bytes; got %lld", (long long)out_b, (long long)(out_b * 2));
  EXPECT(infer_context_bind_output_device(c, 0, p, out_b * 2), INFER_ERR_INVALID_ARGUMENT, want);
  EXPECT(infer_context_bind_input_device(c, 0, p, -1), INFER_ERR_INVALID_ARGUMENT, "got -1");
  EXPECT(infer_context_bind_output_device(c, 0, p, 0), INFER_ERR_INVALID_ARGUMENT, "got 0");

  /* right arguments: a CPU engine cannot bind device memory */
  EXPECT(infer_context_bind_input_device(c, 0, p, in_b), INFER_ERR_UNSUPPORTED,
         "needs a CUDA engine");
  EXPECT(infer_context_bind_output_device(c, 0, p, out_b), INFER_ERR_UNSUPPORTED,
         "needs a CUDA engine");
  /* unbinding succeeds anywhere (nothing is bound) */
  EXPECT(infer_context_bind_input_device(c, 0, NULL, 0), INFER_OK, NULL);
  EXPECT(infer_context_bind_output_device(c, 0, NULL, 0), INFER_OK, NULL);

  /* nothing of that changed the context: a refused binding is not "set" */
  EXPECT(infer_context_run(c), INFER_ERR_INVALID_INPUT, "was not set");
  infer_tensor out;
  if (EXPECT(infer_context_set_input(c, 0, in), INFER_OK, NULL) &&
      EXPECT(infer_context_run(c), INFER_OK, NULL) &&
      EXPECT(infer_context_get_output(c, 0, &out), INFER_OK, NULL)) {
    CHECK(nbytes(&out) == nbytes(ref));
    int64_t n = infer_tensor_count(&out);
    double worst = 0;
    for (int64_t i = 0; i < n && n == infer_tensor_count(ref); i++) {
      double d = infer_tensor_get(&out, i) - infer_tensor_get(ref, i);
      if (d < 0) d = -d;
      if (d > worst) worst = d;
    }
    CHECK(worst <= 1e-5);
  }
  infer_context_release(c);
  infer_engine_release(e);
  printf("cpu: argument errors, refusal and unbinding checked\n");
}

/* ---- GPU ----------------------------------------------------------------------------- */

#ifdef IOB_HAVE_CUDART
#define CU(call)                                                                         \
  do {                                                                                   \
    cudaError_t e_ = (call);                                                             \
    if (e_ != cudaSuccess) {                                                             \
      printf("FAIL %s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
      failures++;                                                                        \
    }                                                                                    \
  } while (0)

/* Device buffer `d` (bytes long) must hold exactly `want`. */
#define SAME_DEV(d, want, bytes, what) same_dev((d), (want), (bytes), (what), __LINE__)
static void same_dev(const void *d, const void *want, size_t bytes, const char *what, int line) {
  void *h = malloc(bytes);
  cudaError_t err = cudaMemcpy(h, d, bytes, cudaMemcpyDeviceToHost);
  if (err != cudaSuccess) {
    printf("FAIL %s:%d: %s: cudaMemcpy: %s\n", __FILE__, line, what, cudaGetErrorString(err));
    failures++;
  } else if (memcmp(h, want, bytes) != 0) {
    printf("FAIL %s:%d: %s: the device buffer differs from the expected bytes\n", __FILE__,
           line, what);
    failures++;
  }
  free(h);
}

/* The context runs on its own non-blocking stream, which does not wait for the
 * default stream, and cudaMemset / a cudaMemcpy from pageable memory may return
 * before the device is done: the test finishes each write before the next run. */
#define FILL(d, byte, bytes)                    \
  do {                                          \
    CU(cudaMemset((d), (byte), (bytes)));       \
    CU(cudaDeviceSynchronize());                \
  } while (0)
#define UPLOAD(d, h, bytes)                                        \
  do {                                                             \
    CU(cudaMemcpy((d), (h), (bytes), cudaMemcpyHostToDevice));     \
    CU(cudaDeviceSynchronize());                                   \
  } while (0)

static void same_host(infer_context *c, const void *want, size_t bytes, const char *what,
                      int line) {
  infer_tensor out;
  if (!check_status(infer_context_get_output(c, 0, &out), INFER_OK, NULL, what, __FILE__, line))
    return;
  if (nbytes(&out) != bytes || memcmp(out.data, want, bytes) != 0) {
    printf("FAIL %s:%d: %s: the host output differs from the expected bytes\n", __FILE__, line,
           what);
    failures++;
  }
}
#define SAME_HOST(c, want, bytes, what) same_host((c), (want), (bytes), (what), __LINE__)

static void test_gpu_case(infer_precision prec, int graph, const infer_tensor *in0,
                          const infer_tensor *in1) {
  const char *label = prec == INFER_PRECISION_FP16 ? "fp16" : "fp32";
  printf("cuda %s, CUDA graph %s\n", label, graph ? "on" : "off");
  infer_engine *e = load(INFER_DEVICE_CUDA, prec, graph, in0);
  if (!e) return;
  size_t ob = 0, ob1 = 0, ib = nbytes(in0);
  void *ref0 = host_run(e, in0, &ob), *ref1 = host_run(e, in1, &ob1);
  if (!ref0 || !ref1 || ob != ob1) {
    CHECK(!"host-staged reference runs");
    goto done_refs;
  }
  CHECK(memcmp(ref0, ref1, ob) != 0); /* two inputs that the test can tell apart */

  void *d_in0 = NULL, *d_in1 = NULL, *d_out0 = NULL, *d_out1 = NULL;
  CU(cudaMalloc(&d_in0, ib));
  CU(cudaMalloc(&d_in1, ib));
  CU(cudaMalloc(&d_out0, ob));
  CU(cudaMalloc(&d_out1, ob));
  if (!d_in0 || !d_in1 || !d_out0 || !d_out1) goto done_bufs;
  UPLOAD(d_in0, in0->data, ib);
  UPLOAD(d_in1, in1->data, ib);
  FILL(d_out0, 0xFF, ob);
  FILL(d_out1, 0xFF, ob);

  infer_context *c = NULL;
  if (!EXPECT(infer_context_create(e, &c), INFER_OK, NULL)) goto done_bufs;

  /* refusals: wrong size, host memory */
  char want[64];
  snprintf(want, sizeof want, "%zu bytes; got %zu", ib, ib + 1);
  EXPECT(infer_context_bind_input_device(c, 0, d_in0, (int64_t)ib + 1),
         INFER_ERR_INVALID_ARGUMENT, want);
  EXPECT(infer_context_bind_input_device(c, 0, in0->data, (int64_t)ib),
         INFER_ERR_INVALID_ARGUMENT, "not device memory");
  void *pinned = NULL;
  CU(cudaMallocHost(&pinned, ob));
  if (pinned)
    EXPECT(infer_context_bind_output_device(c, 0, pinned, (int64_t)ob),
           INFER_ERR_INVALID_ARGUMENT, "not device memory");
  cudaFreeHost(pinned);
  EXPECT(infer_context_run(c), INFER_ERR_INVALID_INPUT, "was not set");

  /* 1. both bound: the host-staged result, in device memory */
  EXPECT(infer_context_bind_input_device(c, 0, d_in0, (int64_t)ib), INFER_OK, NULL);
  EXPECT(infer_context_bind_output_device(c, 0, d_out0, (int64_t)ob), INFER_OK, NULL);
  EXPECT(infer_context_run(c), INFER_OK, NULL);
  SAME_DEV(d_out0, ref0, ob, "bound input 0 -> bound output 0");
  infer_tensor t;
  EXPECT(infer_context_get_output(c, 0, &t), INFER_ERR_INVALID_ARGUMENT,
         "bound to device memory");
  /* a second run (graph replay) writes it again */
  FILL(d_out0, 0xFF, ob);
  EXPECT(infer_context_run(c), INFER_OK, NULL);
  SAME_DEV(d_out0, ref0, ob, "replayed run");
  infer_run_timing rt;
  EXPECT(infer_context_timing(c, &rt), INFER_OK, NULL);

  /* 2. rebinding both to other buffers: the new input's result in the new output
   * buffer, the old one untouched (a graph still holding the old pointers fails) */
  EXPECT(infer_context_bind_input_device(c, 0, d_in1, (int64_t)ib), INFER_OK, NULL);
  EXPECT(infer_context_bind_output_device(c, 0, d_out1, (int64_t)ob), INFER_OK, NULL);
  EXPECT(infer_context_run(c), INFER_OK, NULL);
  SAME_DEV(d_out1, ref1, ob, "rebound input 1 -> output 1");
  SAME_DEV(d_out0, ref0, ob, "the old output buffer after rebinding");

  /* 3. only the input rebound (a re-capture that may update the graph in place) */
  EXPECT(infer_context_bind_input_device(c, 0, d_in0, (int64_t)ib), INFER_OK, NULL);
  EXPECT(infer_context_run(c), INFER_OK, NULL);
  SAME_DEV(d_out1, ref0, ob, "input 0 rebound, output 1 kept");
  /* binding the same pointer again changes nothing */
  EXPECT(infer_context_bind_input_device(c, 0, d_in0, (int64_t)ib), INFER_OK, NULL);
  EXPECT(infer_context_run(c), INFER_OK, NULL);
  SAME_DEV(d_out1, ref0, ob, "same pointer bound again");

  /* 4. bound memory is read at every run: new contents, same pointer */
  UPLOAD(d_in0, in1->data, ib);
  EXPECT(infer_context_run(c), INFER_OK, NULL);
  SAME_DEV(d_out1, ref1, ob, "refilled bound input");
  UPLOAD(d_in0, in0->data, ib);

  /* 5. output unbound: the last run's output is in device memory, not staging;
   * from the next run on back to host staging, the device buffer left alone */
  FILL(d_out1, 0xFF, ob);
  EXPECT(infer_context_bind_output_device(c, 0, NULL, 0), INFER_OK, NULL);
  EXPECT(infer_context_get_output(c, 0, &t), INFER_ERR_RUNTIME, "run again");
  EXPECT(infer_context_run(c), INFER_OK, NULL);
  SAME_HOST(c, ref0, ob, "output unbound");
  void *ff = malloc(ob);
  memset(ff, 0xFF, ob);
  SAME_DEV(d_out1, ff, ob, "an unbound output buffer is not written");
  free(ff);

  /* 6. input unbound: no host data was ever given, so the run refuses; then host
   * staging works as before */
  EXPECT(infer_context_bind_input_device(c, 0, NULL, 0), INFER_OK, NULL);
  EXPECT(infer_context_run(c), INFER_ERR_INVALID_INPUT, "was not set");
  EXPECT(infer_context_status(c), INFER_OK, NULL);
  EXPECT(infer_context_set_input(c, 0, in1), INFER_OK, NULL);
  EXPECT(infer_context_run(c), INFER_OK, NULL);
  SAME_HOST(c, ref1, ob, "input unbound, host staged");

  /* 7. host input, bound output; then set_input on a bound input unbinds it */
  EXPECT(infer_context_bind_output_device(c, 0, d_out0, (int64_t)ob), INFER_OK, NULL);
  EXPECT(infer_context_run(c), INFER_OK, NULL);
  SAME_DEV(d_out0, ref1, ob, "host input, bound output");
  EXPECT(infer_context_bind_input_device(c, 0, d_in0, (int64_t)ib), INFER_OK, NULL);
  EXPECT(infer_context_run(c), INFER_OK, NULL);
  SAME_DEV(d_out0, ref0, ob, "bound input over host data");
  EXPECT(infer_context_set_input(c, 0, in1), INFER_OK, NULL);
  EXPECT(infer_context_run(c), INFER_OK, NULL);
  SAME_DEV(d_out0, ref1, ob, "set_input after binding: the host data wins");
  EXPECT(infer_context_bind_input_device(c, 0, NULL, 0), INFER_OK, NULL); /* already */
  EXPECT(infer_context_run(c), INFER_OK, NULL);
  SAME_DEV(d_out0, ref1, ob, "unbinding an unbound input keeps the host data");

  /* 8. a second context of the same engine keeps its own bindings */
  infer_context *c2 = NULL;
  if (EXPECT(infer_context_create(e, &c2), INFER_OK, NULL)) {
    EXPECT(infer_context_bind_input_device(c2, 0, d_in0, (int64_t)ib), INFER_OK, NULL);
    EXPECT(infer_context_run(c2), INFER_OK, NULL);
    SAME_HOST(c2, ref0, ob, "second context, bound input");
    EXPECT(infer_context_run(c), INFER_OK, NULL);
    SAME_DEV(d_out0, ref1, ob, "first context unaffected");
  }
  infer_context_release(c2);

  /* 9. the in-place input buffer (infer_context_input_buffer) unbinds a bound input:
   * the run reads the pinned staging, written in place, into the still-bound output */
  void *staging = NULL;
  int64_t sb = 0;
  EXPECT(infer_context_bind_input_device(c, 0, d_in1, (int64_t)ib), INFER_OK, NULL);
  EXPECT(infer_context_run(c), INFER_OK, NULL);
  SAME_DEV(d_out0, ref1, ob, "bound input 1 before the buffer");
  if (EXPECT(infer_context_input_buffer(c, 0, &staging, &sb), INFER_OK, NULL) && sb == (int64_t)ib) {
    memcpy(staging, in0->data, ib);
    EXPECT(infer_context_enqueue(c), INFER_OK, NULL);
    EXPECT(infer_context_wait(c), INFER_OK, NULL);
    SAME_DEV(d_out0, ref0, ob, "input buffer after a binding: the staging wins");
  }
  EXPECT(infer_context_status(c), INFER_OK, NULL);
  infer_context_release(c);
done_bufs:
  cudaFree(d_in0);
  cudaFree(d_in1);
  cudaFree(d_out0);
  cudaFree(d_out1);
done_refs:
  free(ref0);
  free(ref1);
  infer_engine_release(e);
}

/* An image input (uint8 NHWC, infer_options_set_input_image) bound to device memory:
 * the run normalizes straight from it, the output equal to a set_input run's. */
static void test_gpu_image_binding(infer_precision prec) {
  const int64_t n = 2, h = 32, w = 32;
  const size_t ib = (size_t)(n * h * w * 3);
  infer_options *o = NULL;
  infer_engine *e = NULL;
  infer_context *c = NULL, *r = NULL;
  uint8_t *px = malloc(ib);
  void *d_px = NULL;
  if (!px || !EXPECT(infer_options_create(&o), INFER_OK, NULL)) goto out;
  for (size_t i = 0; i < ib; i++) px[i] = (uint8_t)(i * 37 + 11);
  EXPECT(infer_options_set_device(o, INFER_DEVICE_CUDA, 0), INFER_OK, NULL);
  EXPECT(infer_options_set_precision(o, prec), INFER_OK, NULL);
  EXPECT(infer_options_set_batch(o, n), INFER_OK, NULL);
  EXPECT(infer_options_set_input_image(o, 0, 3, NULL, NULL), INFER_OK, NULL);
  if (!EXPECT(infer_engine_load(MODELS_DIR "/sample.onnx", o, &e), INFER_OK, NULL) ||
      !EXPECT(infer_context_create(e, &c), INFER_OK, NULL) ||
      !EXPECT(infer_context_create(e, &r), INFER_OK, NULL))
    goto out;
  infer_tensor t = {INFER_DTYPE_UINT8, 4, {n, h, w, 3}, px};
  EXPECT(infer_context_set_input(r, 0, &t), INFER_OK, NULL);
  EXPECT(infer_context_run(r), INFER_OK, NULL);
  infer_tensor ref;
  if (!EXPECT(infer_context_get_output(r, 0, &ref), INFER_OK, NULL)) goto out;
  CU(cudaMalloc(&d_px, ib));
  if (!d_px) goto out;
  UPLOAD(d_px, px, ib);
  EXPECT(infer_context_bind_input_device(c, 0, d_px, (int64_t)ib * 4), INFER_ERR_INVALID_ARGUMENT,
         "uint8");
  EXPECT(infer_context_bind_input_device(c, 0, d_px, (int64_t)ib), INFER_OK, NULL);
  for (int run = 0; run < 3; run++) /* eager, captured, replayed */
    EXPECT(infer_context_run(c), INFER_OK, NULL);
  SAME_HOST(c, ref.data, nbytes(&ref), "uint8 image input bound to device memory");
  EXPECT(infer_context_bind_input_device(c, 0, NULL, 0), INFER_OK, NULL);
out:
  infer_context_release(c);
  infer_context_release(r);
  infer_engine_release(e);
  infer_options_release(o);
  cudaFree(d_px);
  free(px);
}

static int test_gpu(const infer_tensor *in0) {
  if (infer_device_count(INFER_DEVICE_CUDA) < 1) {
    printf("SKIP: no CUDA device is visible to this build of infer\n");
    return 77;
  }
  /* a second input: the first one reversed and scaled (same shape, other output) */
  infer_tensor in1 = *in0;
  int64_t n = infer_tensor_count(in0);
  in1.data = malloc(nbytes(in0));
  for (int64_t i = 0; i < n; i++) infer_tensor_set(&in1, i, -0.5 * infer_tensor_get(in0, n - 1 - i));
  for (int p = 0; p < 2; p++)
    for (int graph = 1; graph >= 0; graph--)
      test_gpu_case(p ? INFER_PRECISION_FP16 : INFER_PRECISION_FP32, graph, in0, &in1);
  test_gpu_image_binding(INFER_PRECISION_FP32);
  test_gpu_image_binding(INFER_PRECISION_FP16);
  free(in1.data);
  return failures ? 1 : 0;
}
#else
static int test_gpu(const infer_tensor *in0) {
  (void)in0;
  printf("SKIP: this build of infer has no CUDA backend\n");
  return 77;
}
#endif

int main(int argc, char **argv) {
  int cuda = argc == 3 && strcmp(argv[1], "--device") == 0 && strcmp(argv[2], "cuda") == 0;
  int cpu = argc == 1 || (argc == 3 && strcmp(argv[1], "--device") == 0 &&
                          strcmp(argv[2], "cpu") == 0);
  if (!cuda && !cpu) {
    fprintf(stderr, "usage: %s [--device cpu|cuda]\n", argv[0]);
    return 2;
  }
  infer_tensor in, ref;
  if (infer_tensor_read_file(MODELS_DIR "/sample_input.npy", &in, NULL) != INFER_OK ||
      infer_tensor_read_file(MODELS_DIR "/sample_output.npy", &ref, NULL) != INFER_OK) {
    printf("FAIL: cannot read the sample input/output: %s\n", infer_last_error());
    return 1;
  }
  int rc;
  if (cuda) {
    rc = test_gpu(&in);
  } else {
    test_cpu(&in, &ref);
    rc = failures ? 1 : 0;
  }
  infer_tensor_clear(&in);
  infer_tensor_clear(&ref);
  if (rc == 0) printf("PASS\n");
  else if (rc == 1) printf("%d failure(s)\n", failures);
  return rc;
}
