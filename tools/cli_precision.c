/* cli_precision.c: --compare-precision: the model run by the engine the other flags
 * describe (the test: --device, --precision, --config) and by a float32 CPU engine (the
 * reference), both built keeping every intermediate (config keep_values=1), on the same
 * inputs; infer_compare_values matches the values they both kept by ONNX name and ranks
 * them by where the error grows, and this prints the table. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* The settings that describe the test engine only: the reference is a plain fp32 CPU
 * engine whatever they say (keep_values stays: both engines keep their values). */
static const char *const test_only_keys[] = {"channels_last", "cuda.poison", "cuda.conv_impl",
                                             "cuda.cudnn_rtc", "cpu.fp16_storage",
                                             "test.fail_step", "test.fail_after"};

static const char *shorten(const char *s, char *buf, size_t cap) {
  size_t n = strlen(s);
  if (n < cap) return s;
  snprintf(buf, cap, "...%s", s + n - (cap - 4)); /* the end of a long name tells most */
  return buf;
}

static void print_row(int rank, const infer_value_error *r) {
  char name[48], op[40];
  char flags[64] = "";
  size_t fl = 0;
  if (r->test_nan) fl += (size_t)snprintf(flags + fl, sizeof flags - fl, " NaN:%lld", (long long)r->test_nan);
  if (r->test_inf) fl += (size_t)snprintf(flags + fl, sizeof flags - fl, " Inf:%lld", (long long)r->test_inf);
  if (r->fp16_overflow)
    fl += (size_t)snprintf(flags + fl, sizeof flags - fl, " >fp16:%lld", (long long)r->fp16_overflow);
  if (r->ref_nonfinite)
    snprintf(flags + fl, sizeof flags - fl, " ref-nonfinite:%lld", (long long)r->ref_nonfinite);
  char opimpl[96];
  snprintf(opimpl, sizeof opimpl, "%s/%s", r->op, r->impl);
  printf("%4d %5d %9.3g %9.3g %9.3g %9.3g  [%9.3g, %9.3g] [%9.3g, %9.3g]  %-28s %s%s\n", rank,
         r->step, r->growth, r->rel, r->max_abs, r->mean_abs, r->ref_min, r->ref_max, r->test_min,
         r->test_max, shorten(opimpl, op, sizeof op), shorten(r->name, name, sizeof name), flags);
}

int cli_compare_precision(const cli_args *a, infer_options *opts, infer_engine *test,
                          infer_context *tc) {
  int rc = EXIT_OK;
  infer_engine *ref = NULL;
  infer_context *rcx = NULL;
  infer_value_error *rows = NULL;
  int n_rows = 0;
  infer_status s;
  /* the options built the test engine already: turned into the reference's */
  infer_options_set_device(opts, INFER_DEVICE_CPU, 0);
  infer_options_set_precision(opts, INFER_PRECISION_FP32);
  infer_options_set_profile(opts, 0);
  infer_options_set_cache(opts, NULL);
  for (size_t k = 0; k < sizeof test_only_keys / sizeof test_only_keys[0]; k++)
    infer_options_set_config(opts, test_only_keys[k], NULL);
  if ((s = infer_engine_load(a->model, opts, &ref)) != INFER_OK ||
      (s = infer_context_create(ref, &rcx)) != INFER_OK) {
    fprintf(stderr, "infer: --compare-precision: the fp32 CPU reference: %s\n", infer_last_error());
    rc = cli_exit_code(s);
    goto out;
  }
  /* the reference first: an fp16-storage CPU test rounds its input buffers when it runs */
  for (int k = 0; k < infer_engine_input_count(test); k++) {
    void *ptr = NULL;
    int64_t bytes = 0;
    infer_tensor t;
    if ((s = infer_context_input_buffer(tc, k, &ptr, &bytes)) != INFER_OK ||
        (s = infer_engine_input_info(test, k, NULL, &t)) != INFER_OK)
      goto lib_fail;
    t.data = ptr;
    if ((s = infer_context_set_input(rcx, k, &t)) != INFER_OK) goto lib_fail;
  }
  if ((s = infer_context_run(rcx)) != INFER_OK || (s = infer_context_run(tc)) != INFER_OK ||
      (s = infer_compare_values(rcx, tc, &rows, &n_rows)) != INFER_OK)
    goto lib_fail;
  const char *prec = a->precision == INFER_PRECISION_FP16   ? "fp16"
                     : a->precision == INFER_PRECISION_TF32 ? "tf32" : "fp32";
  printf("compare-precision: %s %s", a->device == INFER_DEVICE_CUDA ? "cuda" : "cpu",
         a->device == INFER_DEVICE_CUDA ? prec : "fp32");
  for (int i = 0; i < a->n_configs; i++) printf(" %s", a->configs[i]);
  printf(" against cpu fp32: %d values both kept, ranked by growth (this value's relative "
         "error over the largest its step was given)\n", n_rows);
  printf("rank  step    growth       rel   max_abs  mean_abs  reference range          "
         "test range               op/impl                      value\n");
  int shown = a->verbose || n_rows <= 30 ? n_rows : 30;
  for (int i = 0; i < shown; i++) print_row(i + 1, &rows[i]);
  if (shown < n_rows) printf("(%d more; --verbose prints all)\n", n_rows - shown);
  /* the outputs last: what the error came to */
  for (int k = 0; k < infer_engine_output_count(test); k++) {
    const char *name;
    infer_engine_output_info(test, k, &name, NULL);
    for (int i = 0; i < n_rows; i++)
      if (strcmp(rows[i].name, name) == 0)
        printf("output '%s': max abs err %.3g, mean abs err %.3g, rel %.3g (rank %d)\n", name,
               rows[i].max_abs, rows[i].mean_abs, rows[i].rel, i + 1);
  }
  goto out;
lib_fail:
  fprintf(stderr, "infer: --compare-precision: %s\n", infer_last_error());
  rc = cli_exit_code(s);
out:
  free(rows);
  infer_context_release(rcx);
  infer_engine_release(ref);
  return rc;
}
