/* test_cycles.c: create and release everything, many times; run under valgrind by
 * tests/run_valgrind_cycles.sh to find leaks (it is an ordinary test without it).
 *
 * Each cycle: options create, engine load of models/sample.onnx (batch 2), context
 * create, set input, run, read the output, release all; then the error paths: a run
 * that fails inside (Gather index out of range) and one that succeeds after it, a run
 * whose shapes are found during the run (Reshape by a graph input: heap buffers), and
 * a build that fails after the model was read.
 *
 *   test_cycles [CYCLES]   (default 100)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "infer.h"
#include "check.h"

#ifndef MODELS_DIR
#define MODELS_DIR "models"
#endif
#ifndef FAILURES_DIR
#define FAILURES_DIR "tests/failures"
#endif

static void cycle_sample(const infer_tensor *in, const infer_tensor *want) {
  infer_options *o = NULL;
  infer_engine *e = NULL;
  infer_context *c = NULL;
  EXPECT_STATUS(infer_options_create(&o), INFER_OK);
  EXPECT_STATUS(infer_options_set_batch(o, 2), INFER_OK);
  EXPECT_STATUS(infer_engine_load(MODELS_DIR "/sample.onnx", o, &e), INFER_OK);
  if (e) EXPECT_STATUS(infer_context_create(e, &c), INFER_OK);
  if (c) {
    infer_tensor out;
    EXPECT_STATUS(infer_context_set_input(c, 0, in), INFER_OK);
    EXPECT_STATUS(infer_context_run(c), INFER_OK);
    EXPECT_STATUS(infer_context_get_output(c, 0, &out), INFER_OK);
    for (int64_t i = 0; i < infer_tensor_count(want); i++) {
      double d = infer_tensor_get(&out, i) - infer_tensor_get(want, i);
      if (d > 1e-5 || d < -1e-5) {
        printf("FAIL: sample output %lld differs by %g\n", (long long)i, d);
        failures++;
        break;
      }
    }
  }
  infer_context_release(c);
  infer_engine_release(e);
  infer_options_release(o);
}

static void cycle_errors(void) {
  infer_engine *e = NULL;
  infer_context *c = NULL;
  int64_t idx[2] = {1, 9};
  infer_tensor ti = {.dtype = INFER_DTYPE_INT64, .rank = 1, .dims = {2}, .data = idx};
  EXPECT_STATUS(infer_engine_load(FAILURES_DIR "/gather_oob.onnx", NULL, &e), INFER_OK);
  if (e) EXPECT_STATUS(infer_context_create(e, &c), INFER_OK);
  if (c) {
    EXPECT_STATUS(infer_context_set_input(c, 0, &ti), INFER_OK);
    EXPECT_STATUS(infer_context_run(c), INFER_ERR_RUNTIME);
    idx[1] = 4;
    EXPECT_STATUS(infer_context_set_input(c, 0, &ti), INFER_OK);
    EXPECT_STATUS(infer_context_run(c), INFER_OK);
  }
  infer_context_release(c);
  infer_engine_release(e);

  /* shapes found during the run: heap buffers, freed at the next run or release */
  e = NULL;
  c = NULL;
  float x[6] = {1, 2, 3, 4, 5, 6};
  int64_t shape[2] = {2, 3};
  infer_tensor tx = {.dtype = INFER_DTYPE_FLOAT32, .rank = 1, .dims = {6}, .data = x};
  infer_tensor ts = {.dtype = INFER_DTYPE_INT64, .rank = 1, .dims = {2}, .data = shape};
  EXPECT_STATUS(infer_engine_load(FAILURES_DIR "/reshape_runtime.onnx", NULL, &e), INFER_OK);
  if (e) EXPECT_STATUS(infer_context_create(e, &c), INFER_OK);
  if (c) {
    EXPECT_STATUS(infer_context_set_input(c, 0, &tx), INFER_OK);
    EXPECT_STATUS(infer_context_set_input(c, 1, &ts), INFER_OK);
    EXPECT_STATUS(infer_context_run(c), INFER_OK);
    EXPECT_STATUS(infer_context_run(c), INFER_OK);
    shape[0] = 4;
    EXPECT_STATUS(infer_context_set_input(c, 1, &ts), INFER_OK);
    if (infer_context_run(c) == INFER_OK) { /* 6 elements as 4x2: the run fails */
      printf("FAIL: Reshape of 6 elements to 4x2 succeeded\n");
      failures++;
    }
    shape[0] = 3;
    shape[1] = 2;
    EXPECT_STATUS(infer_context_set_input(c, 1, &ts), INFER_OK);
    EXPECT_STATUS(infer_context_run(c), INFER_OK);
  }
  infer_context_release(c);
  infer_engine_release(e);

  /* a build that fails after the model was read and the options copied */
  infer_options *o = NULL;
  int64_t dims[3] = {2, 3, 32};
  e = NULL;
  EXPECT_STATUS(infer_options_create(&o), INFER_OK);
  EXPECT_STATUS(infer_options_set_input_shape(o, "image", 3, dims), INFER_OK);
  if (infer_engine_load(MODELS_DIR "/sample.onnx", o, &e) == INFER_OK) {
    printf("FAIL: a rank-3 image input was accepted\n");
    failures++;
  }
  infer_engine_release(e);
  infer_options_release(o);
}

int main(int argc, char **argv) {
  int cycles = argc > 1 ? atoi(argv[1]) : 100;
  infer_tensor in = {0}, want = {0};
  char *name = NULL;
  EXPECT_STATUS(infer_tensor_read_file(MODELS_DIR "/sample_input.npy", &in, &name), INFER_OK);
  EXPECT_STATUS(infer_tensor_read_file(MODELS_DIR "/sample_output.npy", &want, NULL), INFER_OK);
  if (failures) return 1;
  for (int i = 0; i < cycles && failures < 10; i++) {
    cycle_sample(&in, &want);
    cycle_errors();
  }
  free(name);
  infer_tensor_clear(&in);
  infer_tensor_clear(&want);
  printf(failures ? "%d failures\n" : "%d cycles, all passed\n", failures ? failures : cycles);
  return failures != 0;
}
