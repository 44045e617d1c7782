/* fuzz_model.c: libFuzzer target for the whole model path: the input is written to a
 * file in a private folder (the loader reads files; external data then finds nothing
 * beside it), loaded and built for the CPU under a 256 MiB host memory limit, and, when
 * the build succeeds with static shapes and at most FUZZ_MAX_FLOPS of arithmetic, run
 * once on zeroed inputs. A model that loads is loaded, built and run a second time with
 * the opt-in rewrites on (config int8=1: the int8-conv pass and Int8Conv) and the
 * channels-last pass every fp16 GPU build runs (channels_last=1: on the CPU its
 * reference path), which the default CPU options never reach. Any status is fine; a crash, a sanitizer report, a leak or
 * an allocation past libFuzzer's -malloc_limit_mb is a finding. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/engine_internal.h"
#include "include/infer.h"

/* a run costs about 1 ns per flop here (sanitizers, builtin GEMM): keep it to ~0.1 s */
#define FUZZ_MAX_FLOPS 1e8
#define FUZZ_HOST_LIMIT ((int64_t)256 << 20)

static char model_path[256];
static infer_options *opts, *opts_opt_in;

static void silent(void *user, const char *line) { (void)user, (void)line; }

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  char dir[] = "/tmp/infer-fuzz-model.XXXXXX";
  if (!mkdtemp(dir)) abort();
  snprintf(model_path, sizeof model_path, "%s/model.onnx", dir);
  if (infer_options_create(&opts) != INFER_OK) abort();
  infer_options_set_device(opts, INFER_DEVICE_CPU, 0);
  infer_options_set_batch(opts, 2);
  infer_options_set_memory_limit(opts, FUZZ_HOST_LIMIT, FUZZ_HOST_LIMIT);
  infer_options_set_log(opts, silent, NULL); /* warnings would flood the output */
  if (infer_options_create(&opts_opt_in) != INFER_OK) abort();
  infer_options_set_device(opts_opt_in, INFER_DEVICE_CPU, 0);
  infer_options_set_batch(opts_opt_in, 2);
  infer_options_set_memory_limit(opts_opt_in, FUZZ_HOST_LIMIT, FUZZ_HOST_LIMIT);
  infer_options_set_log(opts_opt_in, silent, NULL);
  if (infer_options_set_config(opts_opt_in, "int8", "1") != INFER_OK ||
      infer_options_set_config(opts_opt_in, "channels_last", "1") != INFER_OK)
    abort();
  return 0;
}

/* The arithmetic of the engine's steps, from the same estimate --profile prints. */
static double engine_flops(const infer_engine *e) {
  const graph *g = e->g;
  double total = 0;
  const tensor *in[64];
  tensor *out[64];
  for (int s = 0; s < e->n_steps; s++) {
    const node *n = &g->nodes[e->steps[s]];
    if (n->n_inputs > 64 || n->n_outputs > 64) return 1e30;
    for (int k = 0; k < n->n_inputs; k++) in[k] = n->inputs[k] >= 0 ? &g->values[n->inputs[k]].t : NULL;
    for (int k = 0; k < n->n_outputs; k++)
      out[k] = n->outputs[k] >= 0 ? &g->values[n->outputs[k]].t : NULL;
    double flops = 0, bytes = 0;
    step_cost(n, in, out, &flops, &bytes);
    /* ops step_cost does not model still touch their bytes */
    total += flops + bytes;
  }
  return total;
}

/* Loads model_path with o; when it builds with static shapes and little arithmetic, runs
 * it once on zeroed inputs and reads every output byte. Returns whether it loaded. */
static int load_and_run(const infer_options *o) {
  infer_engine *e = NULL;
  if (infer_engine_load(model_path, o, &e) != INFER_OK) return 0;
  infer_context *c = NULL;
  if (!e->dynamic && engine_flops(e) <= FUZZ_MAX_FLOPS &&
      infer_context_create(e, &c) == INFER_OK) {
    for (int i = 0; i < infer_engine_input_count(e); i++) {
      void *buf = NULL;
      int64_t bytes = 0;
      if (infer_context_input_buffer(c, i, &buf, &bytes) == INFER_OK && bytes > 0)
        memset(buf, 0, (size_t)bytes);
    }
    if (infer_context_run(c) == INFER_OK)
      for (int out_i = 0; out_i < infer_engine_output_count(e); out_i++) {
        infer_tensor out;
        if (infer_context_get_output(c, out_i, &out) != INFER_OK) continue;
        /* every byte handed out is read: ASan checks it lies inside a live block */
        int64_t n = infer_tensor_count(&out) * (int64_t)infer_dtype_size(out.dtype);
        volatile uint8_t sum = 0;
        for (int64_t b = 0; b < n; b++) sum ^= ((const uint8_t *)out.data)[b];
        (void)sum;
      }
  }
  infer_context_release(c);
  infer_engine_release(e);
  return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  FILE *f = fopen(model_path, "wb");
  if (!f) abort();
  if (size && fwrite(data, 1, size, f) != size) abort();
  fclose(f);
  if (load_and_run(opts)) load_and_run(opts_opt_in);
  return 0;
}
