/* cli_profile.c: `infer MODEL --profile`: one line per step with its median time over
 * several runs, share of the total, arithmetic, bytes, achieved rates and the
 * fraction of the roofline. The profiled runs time each step with events (CUDA
 * graphs off), so their total is not the replayed graph's time: the report says so. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

enum { PROFILE_RUNS = 20, PROFILE_WARMUP = 3 };

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

int cli_profile(const cli_args *a, infer_engine *e, infer_context *c) {
  int n_in = infer_engine_input_count(e);
  uint64_t seed = a->seed + 1;
  for (int i = 0; i < n_in; i++) {
    infer_tensor t;
    int rc = cli_random_input(e, i, &seed, &t);
    if (rc != EXIT_OK) return rc;
    infer_status s = infer_context_set_input(c, i, &t);
    infer_tensor_clear(&t);
    if (s != INFER_OK) {
      fprintf(stderr, "infer: profile: %s\n", infer_last_error());
      return cli_exit_code(s);
    }
  }
  int steps = 0;
  double *ms = NULL;
  infer_step_profile *last = NULL;
  for (int r = 0; r < PROFILE_WARMUP + PROFILE_RUNS; r++) {
    infer_status s = infer_context_run(c);
    if (s != INFER_OK) {
      fprintf(stderr, "infer: profile: %s\n", infer_last_error());
      free(ms);
      free(last);
      return cli_exit_code(s);
    }
    if (r < PROFILE_WARMUP) continue;
    if (!ms) {
      steps = infer_context_profile_count(c);
      ms = calloc((size_t)steps * PROFILE_RUNS + 1, sizeof *ms);
      last = calloc((size_t)steps + 1, sizeof *last);
      if (!ms || !last) return EXIT_DEVICE;
    }
    for (int k = 0; k < steps; k++) {
      infer_context_profile_step(c, k, &last[k]);
      ms[(size_t)k * PROFILE_RUNS + (size_t)(r - PROFILE_WARMUP)] = last[k].ms;
    }
  }
  /* peaks for the roofline: the H200 figures measured on the project's GPU host
   * (bf16/fp16 matrix rate and copy bandwidth) unless given; none on the CPU */
  bool cuda = a->device == INFER_DEVICE_CUDA;
  double peak_tflops = a->peak_tflops > 0 ? a->peak_tflops
                       : !cuda ? 0
                       : a->precision == INFER_PRECISION_FP16 ? 790
                       : a->precision == INFER_PRECISION_TF32 ? 395 : 67;
  double peak_gbs = a->peak_gbs > 0 ? a->peak_gbs : cuda ? 4300 : 0;
  double total = 0, *med = calloc((size_t)steps + 1, sizeof *med);
  for (int k = 0; k < steps; k++) {
    qsort(ms + (size_t)k * PROFILE_RUNS, PROFILE_RUNS, sizeof *ms, cmp_double);
    med[k] = ms[(size_t)k * PROFILE_RUNS + PROFILE_RUNS / 2];
    total += med[k];
  }
  printf("=== profile: %s, %d steps, median of %d runs each (steps timed one by one%s) ===\n",
         a->model, steps, PROFILE_RUNS, cuda ? ", CUDA graph off" : "");
  if (peak_tflops > 0)
    printf("roofline peaks: %.0f TFLOP/s, %.0f GB/s%s\n", peak_tflops, peak_gbs,
           a->peak_tflops > 0 ? "" : " (H200 defaults; --peak-tflops/--peak-gbs to change)");
  printf("%4s %-28s %-16s %-7s %9s %6s %10s %10s %9s %8s %6s\n", "#", "node", "op", "impl",
         "ms", "share", "GFLOP", "MB", "TFLOP/s", "GB/s", "roof");
  for (int k = 0; k < steps; k++) {
    double t = med[k] > 0 ? med[k] : 1e-9;
    double tflops = last[k].flops / (t * 1e-3) / 1e12, gbs = last[k].bytes / (t * 1e-3) / 1e9;
    char roof[16] = "-";
    if (peak_tflops > 0 && peak_gbs > 0) {
      double bound = fmax(last[k].flops / (peak_tflops * 1e12), last[k].bytes / (peak_gbs * 1e9));
      snprintf(roof, sizeof roof, "%.0f%%", 100 * bound / (t * 1e-3));
    }
    printf("%4d %-28.28s %-16.16s %-7s %9.4f %5.1f%% %10.3f %10.2f %9.2f %8.1f %6s\n", k,
           last[k].node[0] ? last[k].node : "-", last[k].op, last[k].impl, med[k],
           total > 0 ? 100 * med[k] / total : 0, last[k].flops / 1e9, last[k].bytes / 1e6, tflops,
           gbs, roof);
  }
  printf("total of step medians: %.4f ms\n", total);
  free(med);
  free(ms);
  free(last);
  return EXIT_OK;
}
