/* cli_bench.c: `infer MODEL --bench`: a trtexec-style report. Random inputs (never
 * zeros) rotate among several buffers; each timed iteration is set-inputs + run, on
 * the host clock, with the device's own event times beside it. With --no-transfers
 * the inputs and outputs are bound once in device memory and an iteration is the
 * run alone. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "cli_stats.h"
#ifdef INFER_CLI_CUDA
#include <cuda_runtime.h>
#endif

enum { INPUT_SETS = 4, MAX_IO = 64 };


static double median_of(double *v, long n) {
  qsort(v, (size_t)n, sizeof *v, cli_cmp_double);
  return cli_percentile(v, n, 50);
}

/* --no-transfers: one device buffer per input, holding input set 0, and one per
 * output, each bound once (dev[] gets them, inputs first). Rotating among device
 * buffers would rebind before every run, and a rebinding captures the CUDA graph
 * again: a cost no steady-state run pays. Returns an exit code. */
static int bind_device_io(const cli_args *a, infer_engine *e, infer_context *c,
                          const infer_tensor *set0, int n_in, int n_out, void **dev) {
#ifdef INFER_CLI_CUDA
  cudaError_t err = cudaSetDevice(a->device_index); /* cudaMalloc allocates there */
  for (int k = 0; k < n_in + n_out && err == cudaSuccess; k++) {
    int is_in = k < n_in, idx = is_in ? k : k - n_in;
    const char *what = is_in ? "input" : "output", *name = "?";
    infer_tensor info;
    infer_status s = is_in ? infer_engine_input_info(e, idx, &name, &info)
                           : infer_engine_output_info(e, idx, &name, &info);
    int64_t count = s == INFER_OK ? infer_tensor_count(&info) : -1;
    if (count < 0) {
      fprintf(stderr, "infer: --no-transfers: %s '%s' has no static shape\n", what, name);
      return EXIT_UNSUPPORTED;
    }
    size_t bytes = (size_t)count * infer_dtype_size(info.dtype);
    if ((err = cudaMalloc(&dev[k], bytes ? bytes : 1)) != cudaSuccess) {
      dev[k] = NULL;
      fprintf(stderr, "infer: --no-transfers: cannot allocate %zu bytes of device memory for %s "
              "'%s': %s\n", bytes, what, name, cudaGetErrorString(err));
      return EXIT_DEVICE;
    }
    if (is_in && bytes > 0 &&
        (err = cudaMemcpy(dev[k], set0[idx].data, bytes, cudaMemcpyHostToDevice)) != cudaSuccess)
      break;
    /* a copy from pageable memory may still be in flight when cudaMemcpy returns, and
     * the context's stream does not wait for the default stream */
    if (is_in && (err = cudaDeviceSynchronize()) != cudaSuccess) break;
    s = is_in ? infer_context_bind_input_device(c, idx, dev[k], (int64_t)bytes)
              : infer_context_bind_output_device(c, idx, dev[k], (int64_t)bytes);
    if (s != INFER_OK) {
      fprintf(stderr, "infer: --no-transfers: %s\n", infer_last_error());
      return cli_exit_code(s);
    }
  }
  if (err != cudaSuccess) {
    fprintf(stderr, "infer: --no-transfers: %s\n", cudaGetErrorString(err));
    return EXIT_DEVICE;
  }
  return EXIT_OK;
#else
  (void)a, (void)e, (void)c, (void)set0, (void)n_in, (void)n_out, (void)dev;
  fprintf(stderr, "infer: --no-transfers needs a build with the CUDA backend\n");
  return EXIT_UNSUPPORTED;
#endif
}

/* Unbinds before freeing: the context must never keep a pointer to freed memory. */
static void unbind_device_io(infer_context *c, int n_in, int n_out, void **dev) {
  for (int k = 0; k < n_in + n_out; k++) {
    if (!dev[k]) continue;
    if (k < n_in) infer_context_bind_input_device(c, k, NULL, 0);
    else infer_context_bind_output_device(c, k - n_in, NULL, 0);
#ifdef INFER_CLI_CUDA
    cudaFree(dev[k]);
#endif
    dev[k] = NULL;
  }
}

int cli_bench(const cli_args *a, infer_engine *e, infer_context *c) {
  if (a->streams > 0) return cli_bench_streams(a, e, c);
  int n_in = infer_engine_input_count(e), n_out = infer_engine_output_count(e);
  if (n_in > MAX_IO) n_in = MAX_IO;
  if (n_out > MAX_IO) n_out = MAX_IO;
  void *dbuf[2 * MAX_IO] = {NULL};
  /* with the inputs bound, an iteration sets nothing: the run reads device memory */
  int set_in = a->no_transfers ? 0 : n_in;
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
  if (rc == EXIT_OK && a->no_transfers) rc = bind_device_io(a, e, c, sets[0], n_in, n_out, dbuf);
  infer_status s = INFER_OK;
  /* warm-up: module load, algorithm caches, graph capture stay out of the numbers */
  double start = cli_now_ms();
  for (long it = 0; rc == EXIT_OK && (it < 2 || cli_now_ms() - start < a->warmup_ms); it++) {
    for (int i = 0; i < set_in && s == INFER_OK; i++) s = infer_context_set_input(c, i, &sets[it % INPUT_SETS][i]);
    if (s == INFER_OK) s = infer_context_run(c);
    if (s != INFER_OK) break;
  }
  double t_begin = cli_now_ms();
  for (long it = 0; rc == EXIT_OK && s == INFER_OK && n < cap; it++) {
    double elapsed = cli_now_ms() - t_begin;
    /* --iterations alone: exactly that many runs; otherwise --duration, with at least
     * --iterations runs, or at least 10 (for the percentiles) when it is not given */
    if (a->iterations && !a->duration_given) {
      if (it >= a->iterations) break;
    } else if (elapsed >= a->duration_s * 1e3 && it >= (a->iterations ? a->iterations : 10)) {
      break;
    }
    double t0 = cli_now_ms();
    for (int i = 0; i < set_in && s == INFER_OK; i++) s = infer_context_set_input(c, i, &sets[it % INPUT_SETS][i]);
    if (s == INFER_OK) s = infer_context_run(c);
    double t1 = cli_now_ms();
    infer_run_timing rt;
    if (s == INFER_OK) s = infer_context_timing(c, &rt);
    if (s != INFER_OK) break;
    wall[n] = t1 - t0;
    h2d[n] = rt.h2d_ms;
    gpu[n] = rt.compute_ms;
    d2h[n] = rt.d2h_ms;
    n++;
  }
  double total_ms = cli_now_ms() - t_begin;
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
    qsort(wall, (size_t)n, sizeof *wall, cli_cmp_double);
    double runs_per_s = (double)n / (total_ms / 1e3);
    infer_memory_info mem;
    infer_build_timing bt;
    infer_engine_memory(e, &mem);
    infer_engine_build_timing(e, &bt);
    const char *dev = a->device == INFER_DEVICE_CUDA ? "cuda" : "cpu";
    const char *prec = a->precision == INFER_PRECISION_FP16 ? "fp16"
                       : a->precision == INFER_PRECISION_TF32 ? "tf32" : "fp32";
    printf("=== bench: %s on %s, %s, batch %lld%s%s ===\n", a->model, dev, prec, batch,
           a->no_cuda_graph ? ", no CUDA graph" : "", a->no_transfers ? ", no transfers" : "");
    printf("throughput: %.2f runs/s, %.1f images/s\n", runs_per_s, runs_per_s * (double)batch);
    printf("latency (ms, host wall per run %s): min %.4f mean %.4f median %.4f "
           "p90 %.4f p95 %.4f p99 %.4f max %.4f\n",
           a->no_transfers ? "with inputs and outputs in device memory" : "incl. input copy-in",
           wall[0], mean, cli_percentile(wall, n, 50), cli_percentile(wall, n, 90), cli_percentile(wall, n, 95), cli_percentile(wall, n, 99),
           wall[n - 1]);
    /* bound memory is copied (or cast) device to device where the host copies were */
    printf("device (ms, events): compute median %.4f mean %.4f; %s median %.4f; %s median %.4f\n",
           gpu_med, gpu_mean, a->no_transfers ? "inputs in (D2D)" : "H2D", h2d_med,
           a->no_transfers ? "outputs out (D2D)" : "D2H", d2h_med);
    /* how many runs, and why that many */
    char why[128];
    if (n >= cap)
      snprintf(why, sizeof why, "stopped at the limit of %ld runs", cap);
    else if (a->iterations && !a->duration_given)
      snprintf(why, sizeof why, "as --iterations asked");
    else
      snprintf(why, sizeof why, "%s %g s, and at least %lld runs%s",
               a->duration_given ? "--duration" : "the default --duration of", a->duration_s,
               a->iterations ? a->iterations : 10,
               a->iterations ? " as --iterations asked" : " for the percentiles");
    if (a->no_transfers)
      printf("runs: %ld in %.3f s of host walltime (%s); inputs (random set 0) bound once in "
             "device memory\n", n, total_ms / 1e3, why);
    else
      printf("runs: %ld in %.3f s of host walltime (%s); %d rotating input sets\n", n,
             total_ms / 1e3, why, INPUT_SETS);
    printf("memory: weights %.1f MiB, arena %.1f MiB (naive %.1f MiB), workspace %.1f MiB\n",
           mem.weights / 1048576.0, mem.arena / 1048576.0, mem.naive / 1048576.0,
           mem.workspace / 1048576.0);
    printf("build: load %.1f ms, passes %.1f ms, device build (weights, algorithm search) %.1f ms",
           bt.load_ms, bt.passes_ms, bt.device_ms);
    /* warm (all hits) against cold (all misses) is what --cache buys */
    if (a->cache && a->device == INFER_DEVICE_CUDA) {
      int hits = bt.algo_cache_hits, misses = bt.algo_cache_misses;
      printf("; algorithm cache %d hits, %d misses%s", hits, misses,
             hits + misses == 0 ? ""
             : misses == 0      ? " (warm)"
             : hits == 0        ? " (cold)"
                                : " (partly warm)");
    }
    printf("\n");
    double dev_total = gpu_med + h2d_med + d2h_med;
    if (a->device == INFER_DEVICE_CUDA && cli_percentile(wall, n, 50) > 1.2 * dev_total)
      printf("warning: enqueue-bound: host time per run (%.4f ms) exceeds device time (%.4f ms) "
             "by more than 20%%\n", cli_percentile(wall, n, 50), dev_total);
    if (a->device == INFER_DEVICE_CUDA && !a->no_transfers && h2d_med + d2h_med > gpu_med)
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
        fprintf(f, "{\"model\": \"%s\", \"device\": \"%s\", \"precision\": \"%s\", "
                   "\"no_transfers\": %s, \"batch\": %lld, "
                   "\"runs\": %ld, \"runs_per_s\": %.4f, \"images_per_s\": %.3f, "
                   "\"latency_ms\": {\"min\": %.5f, \"mean\": %.5f, \"median\": %.5f, \"p90\": %.5f, "
                   "\"p95\": %.5f, \"p99\": %.5f, \"max\": %.5f}, \"compute_ms_median\": %.5f, "
                   "\"h2d_ms_median\": %.5f, \"d2h_ms_median\": %.5f, \"cv\": %.5f, "
                   "\"weights_bytes\": %lld, \"arena_bytes\": %lld, \"workspace_bytes\": %lld, "
                   "\"build_ms\": {\"load\": %.2f, \"passes\": %.2f, \"device\": %.2f}, "
                   "\"algo_cache\": {\"hits\": %d, \"misses\": %d}}\n",
                a->model, dev, prec, a->no_transfers ? "true" : "false", batch, n, runs_per_s,
                runs_per_s * (double)batch, wall[0], mean,
                cli_percentile(wall, n, 50), cli_percentile(wall, n, 90), cli_percentile(wall, n, 95), cli_percentile(wall, n, 99),
                wall[n - 1], gpu_med, h2d_med, d2h_med, cv, (long long)mem.weights,
                (long long)mem.arena, (long long)mem.workspace, bt.load_ms, bt.passes_ms,
                bt.device_ms, bt.algo_cache_hits, bt.algo_cache_misses);
        fclose(f);
      }
    }
  }
  unbind_device_io(c, n_in, n_out, dbuf);
  for (int k = 0; k < INPUT_SETS; k++)
    for (int i = 0; i < n_in; i++) infer_tensor_clear(&sets[k][i]);
  free(wall);
  free(h2d);
  free(gpu);
  free(d2h);
  return rc;
}
