/* cli_bench.c: `infer MODEL --bench`: a trtexec-style report. Random inputs (never
 * zeros) rotate among several buffers; each timed iteration is set-inputs + run, on
 * the host clock, with the device's own event times beside it. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"

enum { INPUT_SETS = 4 };

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* p in [0, 100] of sorted v (nearest rank). */
static double pct(const double *v, long n, double p) {
  long i = (long)ceil(p / 100.0 * (double)n) - 1;
  if (i < 0) i = 0;
  if (i >= n) i = n - 1;
  return v[i];
}

static double median_of(double *v, long n) {
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return pct(v, n, 50);
}

int cli_bench(const cli_args *a, infer_engine *e, infer_context *c) {
  int n_in = infer_engine_input_count(e);
  if (n_in > 64) n_in = 64;
  infer_tensor sets[INPUT_SETS][64];
  memset(sets, 0, sizeof sets);
  uint64_t seed = a->seed + 1;
  int rc = EXIT_OK;
  for (int k = 0; k < INPUT_SETS && rc == EXIT_OK; k++)
    for (int i = 0; i < n_in && rc == EXIT_OK; i++) rc = cli_random_input(e, i, &seed, &sets[k][i]);
  long cap = 1 << 20, n = 0;
  double *wall = malloc(sizeof(double) * (size_t)cap), *h2d = malloc(sizeof(double) * (size_t)cap),
         *gpu = malloc(sizeof(double) * (size_t)cap), *d2h = malloc(sizeof(double) * (size_t)cap);
  if (!wall || !h2d || !gpu || !d2h) rc = EXIT_DEVICE;
  infer_status s = INFER_OK;
  /* warm-up: module load, algorithm caches, graph capture stay out of the numbers */
  double start = now_ms();
  for (long it = 0; rc == EXIT_OK && (it < 2 || now_ms() - start < a->warmup_ms); it++) {
    for (int i = 0; i < n_in && s == INFER_OK; i++) s = infer_context_set_input(c, i, &sets[it % INPUT_SETS][i]);
    if (s == INFER_OK) s = infer_context_run(c);
    if (s != INFER_OK) break;
  }
  double t_begin = now_ms();
  for (long it = 0; rc == EXIT_OK && s == INFER_OK && n < cap; it++) {
    double elapsed = now_ms() - t_begin;
    if (elapsed >= a->duration_s * 1e3 && it >= a->iterations && it >= 10) break;
    double t0 = now_ms();
    for (int i = 0; i < n_in && s == INFER_OK; i++) s = infer_context_set_input(c, i, &sets[it % INPUT_SETS][i]);
    if (s == INFER_OK) s = infer_context_run(c);
    double t1 = now_ms();
    infer_run_timing rt;
    if (s == INFER_OK) s = infer_context_timing(c, &rt);
    if (s != INFER_OK) break;
    wall[n] = t1 - t0;
    h2d[n] = rt.h2d_ms;
    gpu[n] = rt.compute_ms;
    d2h[n] = rt.d2h_ms;
    n++;
  }
  double total_ms = now_ms() - t_begin;
  if (s != INFER_OK) {
    fprintf(stderr, "infer: bench: %s\n", infer_last_error());
    rc = cli_exit_code(s);
  }
  if (rc == EXIT_OK && n > 0) {
    infer_tensor info;
    infer_engine_input_info(e, 0, NULL, &info);
    long long batch = info.rank > 0 ? (long long)info.dims[0] : 1;
    double mean = 0, var = 0;
    for (long i = 0; i < n; i++) mean += wall[i];
    mean /= (double)n;
    for (long i = 0; i < n; i++) var += (wall[i] - mean) * (wall[i] - mean);
    double sd = sqrt(var / (double)n), cv = mean > 0 ? sd / mean : 0;
    double gpu_mean = 0;
    for (long i = 0; i < n; i++) gpu_mean += gpu[i];
    gpu_mean /= (double)n;
    double gpu_med = median_of(gpu, n), h2d_med = median_of(h2d, n), d2h_med = median_of(d2h, n);
    qsort(wall, (size_t)n, sizeof *wall, cmp_double);
    double runs_per_s = (double)n / (total_ms / 1e3);
    infer_memory_info mem;
    infer_build_timing bt;
    infer_engine_memory(e, &mem);
    infer_engine_build_timing(e, &bt);
    const char *dev = a->device == INFER_DEVICE_CUDA ? "cuda" : "cpu";
    const char *prec = a->precision == INFER_PRECISION_FP16 ? "fp16"
                       : a->precision == INFER_PRECISION_TF32 ? "tf32" : "fp32";
    printf("=== bench: %s on %s, %s, batch %lld%s ===\n", a->model, dev, prec, batch,
           a->no_cuda_graph ? ", no CUDA graph" : "");
    printf("throughput: %.2f runs/s, %.1f images/s\n", runs_per_s, runs_per_s * (double)batch);
    printf("latency (ms, host wall per run incl. input copy-in): min %.4f mean %.4f median %.4f "
           "p90 %.4f p95 %.4f p99 %.4f max %.4f\n", wall[0], mean, pct(wall, n, 50),
           pct(wall, n, 90), pct(wall, n, 95), pct(wall, n, 99), wall[n - 1]);
    printf("device (ms, events): compute median %.4f mean %.4f; H2D median %.4f; D2H median %.4f\n",
           gpu_med, gpu_mean, h2d_med, d2h_med);
    printf("runs: %ld in %.3f s of host walltime; %d rotating input sets\n", n, total_ms / 1e3,
           INPUT_SETS);
    printf("memory: weights %.1f MiB, arena %.1f MiB (naive %.1f MiB), workspace %.1f MiB\n",
           mem.weights / 1048576.0, mem.arena / 1048576.0, mem.naive / 1048576.0,
           mem.workspace / 1048576.0);
    printf("build: load %.1f ms, passes %.1f ms, device build (weights, algorithm search) %.1f ms\n",
           bt.load_ms, bt.passes_ms, bt.device_ms);
    double dev_total = gpu_med + h2d_med + d2h_med;
    if (a->device == INFER_DEVICE_CUDA && pct(wall, n, 50) > 1.2 * dev_total)
      printf("warning: enqueue-bound: host time per run (%.4f ms) exceeds device time (%.4f ms) "
             "by more than 20%%\n", pct(wall, n, 50), dev_total);
    if (a->device == INFER_DEVICE_CUDA && h2d_med + d2h_med > gpu_med)
      printf("warning: transfer-bound: H2D + D2H (%.4f ms) exceed compute (%.4f ms)\n",
             h2d_med + d2h_med, gpu_med);
    if (cv > 0.025)
      printf("warning: the coefficient of variation of latency is %.1f%% (> 2.5%%): results are "
             "noisy\n", 100 * cv);
    if (a->json) {
      FILE *f = fopen(a->json, "w");
      if (!f) {
        fprintf(stderr, "infer: cannot write %s\n", a->json);
        rc = EXIT_USAGE;
      } else {
        fprintf(f, "{\"model\": \"%s\", \"device\": \"%s\", \"precision\": \"%s\", \"batch\": %lld, "
                   "\"runs\": %ld, \"runs_per_s\": %.4f, \"images_per_s\": %.3f, "
                   "\"latency_ms\": {\"min\": %.5f, \"mean\": %.5f, \"median\": %.5f, \"p90\": %.5f, "
                   "\"p95\": %.5f, \"p99\": %.5f, \"max\": %.5f}, \"compute_ms_median\": %.5f, "
                   "\"h2d_ms_median\": %.5f, \"d2h_ms_median\": %.5f, \"cv\": %.5f, "
                   "\"weights_bytes\": %lld, \"arena_bytes\": %lld, \"workspace_bytes\": %lld, "
                   "\"build_ms\": {\"load\": %.2f, \"passes\": %.2f, \"device\": %.2f}}\n",
                a->model, dev, prec, batch, n, runs_per_s, runs_per_s * (double)batch, wall[0], mean,
                pct(wall, n, 50), pct(wall, n, 90), pct(wall, n, 95), pct(wall, n, 99),
                wall[n - 1], gpu_med, h2d_med, d2h_med, cv, (long long)mem.weights,
                (long long)mem.arena, (long long)mem.workspace, bt.load_ms, bt.passes_ms,
                bt.device_ms);
        fclose(f);
      }
    }
  }
  for (int k = 0; k < INPUT_SETS; k++)
    for (int i = 0; i < n_in; i++) infer_tensor_clear(&sets[k][i]);
  free(wall);
  free(h2d);
  free(gpu);
  free(d2h);
  return rc;
}
