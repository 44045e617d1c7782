/* cli_streams.c: `infer MODEL --bench --streams N`, trtexec's --infStreams: N contexts of
 * one engine (weights shared), each driven by its own thread, fed from host memory.
 *
 * Each stream writes seeded random inputs once into its context's in-place input
 * buffers (CUDA: the pinned staging), so a timed iteration is enqueue + wait: H2D,
 * compute and D2H, no host copy. The threads warm up (one after the other, so that
 * no stream's first eager run meets another's CUDA graph capture), meet, and run for
 * the bench duration. Between the warm-up and the timed phase stream 0 runs alone for a moment
 * (calibration): its median H2D, compute and D2H event times are what one run costs
 * when nothing overlaps it. The report gives the total images/s over the wall time W of
 * the timed phase, each stream's latency percentiles (host wall per enqueue + wait), the
 * device's event times, and how much of the copy time was hidden: n runs one after the
 * other would take n (h + c + d) of the calibration's medians, their copies n (h + d);
 * the share hidden is (n (h + c + d) - W) / (n (h + d)), clamped to [0, 1]: 0 when the
 * runs went one after the other, 1 when the walltime is the compute alone. (The event
 * times of the timed runs themselves include time the streams share the GPU, so their
 * sum, also printed, says how busy the device was rather than what was hidden.)
 *
 * Afterwards every stream's outputs are checked against the first context (the CLI's)
 * run with set_input on that stream's inputs: they must be equal bit for bit. */
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "cli_stats.h"

enum { MAX_STREAM_IO = 64 };


/* Where the warmed-up streams meet: the timed phase starts when all are there, or when
 * the main thread opens it (a thread that could not be started never comes). */
typedef struct gate {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int waiting, need;
  bool open;
  int turn; /* the warm-up: stream `turn` warms up now (one at a time) */
} gate;

static void gate_wait(gate *g) {
  pthread_mutex_lock(&g->mu);
  if (++g->waiting >= g->need) g->open = true;
  pthread_cond_broadcast(&g->cv);
  while (!g->open) pthread_cond_wait(&g->cv, &g->mu);
  pthread_mutex_unlock(&g->mu);
}

/* Warm-ups one after the other: a stream's first (eager) run then never meets another's
 * CUDA graph capture. */
static void turn_wait(gate *g, int id) {
  pthread_mutex_lock(&g->mu);
  while (g->turn != id && !g->open) pthread_cond_wait(&g->cv, &g->mu);
  pthread_mutex_unlock(&g->mu);
}

static void turn_done(gate *g) {
  pthread_mutex_lock(&g->mu);
  g->turn++;
  pthread_cond_broadcast(&g->cv);
  pthread_mutex_unlock(&g->mu);
}

static void gate_open(gate *g) {
  pthread_mutex_lock(&g->mu);
  g->open = true;
  pthread_cond_broadcast(&g->cv);
  pthread_mutex_unlock(&g->mu);
}

typedef struct stream {
  const cli_args *a;
  gate *start, *go;
  double calib[3]; /* stream 0: median H2D, compute, D2H of runs made alone, ms */
  long calib_runs;
  infer_context *c;
  int id;
  long n, cap;
  double *wall, *h2d, *gpu, *d2h; /* per timed run, ms */
  double t_begin, t_end;          /* the timed phase, host clock */
  infer_status st;
  char error[1024];
} stream;

static void stream_fail(stream *s, infer_status st, const char *what) {
  s->st = st;
  snprintf(s->error, sizeof s->error, "stream %d: %s: %s", s->id, what, infer_last_error());
}

static infer_status run_once(stream *s) {
  infer_status st = infer_context_enqueue(s->c);
  if (st != INFER_OK) {
    stream_fail(s, st, "enqueue");
    return st;
  }
  if ((st = infer_context_wait(s->c)) != INFER_OK) stream_fail(s, st, "run");
  return st;
}

/* Stream 0, alone: the median event times of a run nothing overlaps (10 runs, or 10% of
 * the duration, whichever is longer; its slots are the timed phase's, reused after). */
static void calibrate(stream *s) {
  double t0 = cli_now_ms();
  long n = 0;
  while (s->st == INFER_OK && n < s->cap && (n < 10 || cli_now_ms() - t0 < s->a->duration_s * 100)) {
    infer_run_timing rt;
    if (run_once(s) != INFER_OK) return;
    infer_status st = infer_context_timing(s->c, &rt);
    if (st != INFER_OK) {
      stream_fail(s, st, "timing");
      return;
    }
    s->h2d[n] = rt.h2d_ms;
    s->gpu[n] = rt.compute_ms;
    s->d2h[n] = rt.d2h_ms;
    n++;
  }
  double *v[3] = {s->h2d, s->gpu, s->d2h};
  for (int k = 0; k < 3 && n > 0; k++) {
    qsort(v[k], (size_t)n, sizeof(double), cli_cmp_double);
    s->calib[k] = v[k][(n - 1) / 2];
  }
  s->calib_runs = n;
}

static void *stream_main(void *arg) {
  stream *s = arg;
  const cli_args *a = s->a;
  /* warm-up: module load, the first eager run, the graph capture */
  turn_wait(s->start, s->id);
  double w0 = cli_now_ms();
  for (long it = 0; s->st == INFER_OK && (it < 2 || cli_now_ms() - w0 < a->warmup_ms); it++)
    run_once(s);
  turn_done(s->start);
  gate_wait(s->start); /* every stream warm */
  if (s->id == 0) calibrate(s); /* alone on the device meanwhile */
  gate_wait(s->go); /* the timed phase starts together */
  s->t_begin = cli_now_ms();
  for (long it = 0; s->st == INFER_OK && s->n < s->cap; it++) {
    double t0 = cli_now_ms();
    if (t0 - s->t_begin >= a->duration_s * 1e3 && it >= a->iterations && it >= 10) break;
    if (run_once(s) != INFER_OK) break;
    double t1 = cli_now_ms();
    infer_run_timing rt;
    infer_status st = infer_context_timing(s->c, &rt);
    if (st != INFER_OK) {
      stream_fail(s, st, "timing");
      break;
    }
    s->wall[s->n] = t1 - t0;
    s->h2d[s->n] = rt.h2d_ms;
    s->gpu[s->n] = rt.compute_ms;
    s->d2h[s->n] = rt.d2h_ms;
    s->n++;
  }
  s->t_end = cli_now_ms();
  return NULL;
}

/* Writes seeded random values into every input buffer of s's context. */
static int fill_inputs(infer_engine *e, stream *s, int n_in) {
  uint64_t seed = s->a->seed * 7919 + (uint64_t)s->id + 1;
  for (int i = 0; i < n_in; i++) {
    void *p;
    int64_t bytes;
    infer_tensor info;
    const char *name;
    infer_status st = infer_context_input_buffer(s->c, i, &p, &bytes);
    if (st == INFER_OK) st = infer_engine_input_info(e, i, &name, &info);
    if (st != INFER_OK) {
      fprintf(stderr, "infer: --streams: input %d: %s\n", i, infer_last_error());
      return cli_exit_code(st);
    }
    cli_random_fill(&info, &seed, p);
  }
  return EXIT_OK;
}

/* The reference: the CLI's context c runs stream s's inputs through set_input; every
 * output must equal the stream's bit for bit. Returns false (printed) on a difference. */
static bool check_stream(infer_engine *e, infer_context *c, stream *s, int n_in, int n_out) {
  for (int i = 0; i < n_in; i++) {
    void *p;
    int64_t bytes;
    infer_tensor t;
    const char *name;
    infer_status st = infer_context_input_buffer(s->c, i, &p, &bytes);
    if (st == INFER_OK) st = infer_engine_input_info(e, i, &name, &t);
    t.data = p;
    if (st == INFER_OK) st = infer_context_set_input(c, i, &t);
    if (st != INFER_OK) {
      fprintf(stderr, "infer: --streams: check of stream %d: %s\n", s->id, infer_last_error());
      return false;
    }
  }
  if (infer_context_run(c) != INFER_OK) {
    fprintf(stderr, "infer: --streams: reference run: %s\n", infer_last_error());
    return false;
  }
  for (int o = 0; o < n_out; o++) {
    infer_tensor want, got;
    const char *name = "?";
    infer_engine_output_info(e, o, &name, NULL);
    if (infer_context_get_output(c, o, &want) != INFER_OK ||
        infer_context_get_output(s->c, o, &got) != INFER_OK) {
      fprintf(stderr, "infer: --streams: output '%s': %s\n", name, infer_last_error());
      return false;
    }
    int64_t n = infer_tensor_count(&want);
    size_t bytes = n > 0 ? (size_t)n * infer_dtype_size(want.dtype) : 0;
    if (infer_tensor_count(&got) != n || got.dtype != want.dtype ||
        (bytes && memcmp(got.data, want.data, bytes) != 0)) {
      fprintf(stderr, "infer: --streams: stream %d: output '%s' differs from a set_input run "
              "of the same inputs\n", s->id, name);
      return false;
    }
  }
  return true;
}

static void print_latency(const char *label, double *v, long n) {
  qsort(v, (size_t)n, sizeof *v, cli_cmp_double);
  double mean = 0;
  for (long i = 0; i < n; i++) mean += v[i];
  mean /= (double)n;
  printf("%s: %ld runs, latency (ms, enqueue + wait) min %.4f mean %.4f median %.4f p90 %.4f "
         "p95 %.4f p99 %.4f max %.4f\n", label, n, v[0], mean, cli_percentile(v, n, 50), cli_percentile(v, n, 90),
         cli_percentile(v, n, 95), cli_percentile(v, n, 99), v[n - 1]);
}

static double median_of(double *v, long n) {
  qsort(v, (size_t)n, sizeof *v, cli_cmp_double);
  return cli_percentile(v, n, 50);
}

int cli_bench_streams(const cli_args *a, infer_engine *e, infer_context *c) {
  int n_in = infer_engine_input_count(e), n_out = infer_engine_output_count(e);
  if (n_in > MAX_STREAM_IO || n_out > MAX_STREAM_IO) {
    fprintf(stderr, "infer: --streams: more than %d inputs or outputs\n", MAX_STREAM_IO);
    return EXIT_UNSUPPORTED;
  }
  int ns = a->streams;
  stream *st = calloc((size_t)ns, sizeof *st);
  pthread_t *th = calloc((size_t)ns, sizeof *th);
  gate start = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, ns, false, 0};
  gate go = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, ns, false, 0};
  if (!st || !th) {
    free(st);
    free(th);
    fprintf(stderr, "infer: out of memory\n");
    return EXIT_DEVICE;
  }
  int rc = EXIT_OK;
  long cap = 1 << 20;
  for (int s = 0; s < ns && rc == EXIT_OK; s++) {
    stream *x = &st[s];
    *x = (stream){.a = a, .start = &start, .go = &go, .id = s, .cap = cap};
    x->wall = malloc(sizeof(double) * (size_t)cap);
    x->h2d = malloc(sizeof(double) * (size_t)cap);
    x->gpu = malloc(sizeof(double) * (size_t)cap);
    x->d2h = malloc(sizeof(double) * (size_t)cap);
    infer_status cs = infer_context_create(e, &x->c);
    if (cs != INFER_OK) {
      fprintf(stderr, "infer: --streams: context %d: %s\n", s, infer_last_error());
      rc = cli_exit_code(cs);
    } else if (!x->wall || !x->h2d || !x->gpu || !x->d2h) {
      fprintf(stderr, "infer: out of memory\n");
      rc = EXIT_DEVICE;
    } else {
      rc = fill_inputs(e, x, n_in);
    }
  }
  int started = 0;
  for (int s = 0; s < ns && rc == EXIT_OK; s++, started++)
    if (pthread_create(&th[s], NULL, stream_main, &st[s]) != 0) {
      fprintf(stderr, "infer: --streams: cannot start thread %d\n", s);
      rc = EXIT_DEVICE;
      gate_open(&start); /* the others must not wait for it */
      gate_open(&go);
      break;
    }
  for (int s = 0; s < started; s++) pthread_join(th[s], NULL);
  for (int s = 0; s < ns && rc == EXIT_OK; s++)
    if (st[s].st != INFER_OK) {
      fprintf(stderr, "infer: bench: %s\n", st[s].error);
      rc = cli_exit_code(st[s].st);
    }
  long total = 0;
  double t_begin = 0, t_end = 0;
  for (int s = 0; s < ns && rc == EXIT_OK; s++) {
    total += st[s].n;
    if (s == 0 || st[s].t_begin < t_begin) t_begin = st[s].t_begin;
    if (s == 0 || st[s].t_end > t_end) t_end = st[s].t_end;
  }
  bool agree = true;
  for (int s = 0; s < ns && rc == EXIT_OK; s++) agree = agree && check_stream(e, c, &st[s], n_in, n_out);
  if (rc == EXIT_OK && !agree) rc = EXIT_MISMATCH;
  if (rc == EXIT_OK && total > 0) {
    infer_tensor info;
    infer_engine_input_info(e, 0, NULL, &info);
    long long batch = info.rank > 0 ? (long long)info.dims[0] : 1;
    double wall_ms = t_end - t_begin;
    double runs_per_s = (double)total / (wall_ms / 1e3);
    double sum_dev = 0, sum_copy = 0;
    double *all_h2d = malloc(sizeof(double) * (size_t)total), *all_gpu = malloc(sizeof(double) * (size_t)total),
           *all_d2h = malloc(sizeof(double) * (size_t)total);
    long k = 0;
    for (int s = 0; s < ns; s++)
      for (long i = 0; i < st[s].n; i++, k++) {
        sum_dev += st[s].h2d[i] + st[s].gpu[i] + st[s].d2h[i];
        sum_copy += st[s].h2d[i] + st[s].d2h[i];
        if (all_h2d && all_gpu && all_d2h) {
          all_h2d[k] = st[s].h2d[i];
          all_gpu[k] = st[s].gpu[i];
          all_d2h[k] = st[s].d2h[i];
        }
      }
    const char *dev = a->device == INFER_DEVICE_CUDA ? "cuda" : "cpu";
    const char *prec = a->precision == INFER_PRECISION_FP16 ? "fp16"
                       : a->precision == INFER_PRECISION_TF32 ? "tf32" : "fp32";
    printf("=== bench: %s on %s, %s, batch %lld, %d stream%s (a context and a thread each)%s ===\n",
           a->model, dev, prec, batch, ns, ns == 1 ? "" : "s",
           a->no_cuda_graph ? ", no CUDA graph" : "");
    printf("throughput: %.2f runs/s, %.1f images/s (all streams, %ld runs in %.3f s of host "
           "walltime)\n", runs_per_s, runs_per_s * (double)batch, total, wall_ms / 1e3);
    for (int s = 0; s < ns; s++) {
      char label[32];
      snprintf(label, sizeof label, "stream %d", s);
      if (st[s].n > 0) print_latency(label, st[s].wall, st[s].n);
    }
    if (all_h2d && all_gpu && all_d2h)
      printf("device (ms, events, median over all runs): H2D %.4f, compute %.4f, D2H %.4f\n",
             median_of(all_h2d, total), median_of(all_gpu, total), median_of(all_d2h, total));
    double hidden = -1;
    const double *cal = st[0].calib;
    double serial = (double)total * (cal[0] + cal[1] + cal[2]), copies = (double)total * (cal[0] + cal[2]);
    if (copies > 0) {
      hidden = (serial - wall_ms) / copies;
      hidden = hidden < 0 ? 0 : hidden > 1 ? 1 : hidden;
      printf("alone (stream 0, %ld runs before the timed phase; ms, event medians): H2D %.4f + "
             "compute %.4f + D2H %.4f = %.4f per run\n", st[0].calib_runs, cal[0], cal[1],
             cal[2], cal[0] + cal[1] + cal[2]);
      printf("overlap: %ld runs one after the other would take %.1f ms, copies %.1f ms of it; "
             "they took %.1f ms: %.0f%% of the copy time hidden (the timed runs' event times "
             "sum to %.1f ms, %.2fx the walltime)\n", total, serial, copies, wall_ms,
             100 * hidden, sum_dev, sum_dev / wall_ms);
    } else {
      printf("overlap: no copies (the %s reads inputs in place)%s\n", dev,
             a->device == INFER_DEVICE_CPU ? "; streams run side by side on the host's cores"
                                           : "");
    }
    printf("inputs: seeded random values written once into each stream's in-place input "
           "buffers (%s), no host copy per run\n",
           a->device == INFER_DEVICE_CUDA ? "pinned staging" : "the context's input memory");
    printf("outputs: every stream's last run equals a set_input run of its inputs bit for bit\n");
    if (a->json) {
      FILE *f = fopen(a->json, "w");
      if (!f) {
        fprintf(stderr, "infer: cannot write %s\n", a->json);
        rc = EXIT_USAGE;
      } else {
        fprintf(f, "{\"model\": \"%s\", \"device\": \"%s\", \"precision\": \"%s\", \"batch\": %lld, "
                   "\"streams\": %d, \"runs\": %ld, \"runs_per_s\": %.4f, \"images_per_s\": %.3f, "
                   "\"wall_ms\": %.3f, \"alone_ms\": {\"h2d\": %.5f, \"compute\": %.5f, "
                   "\"d2h\": %.5f}, \"serial_ms\": %.3f, \"device_ms_sum\": %.3f, "
                   "\"copy_ms_sum\": %.3f, \"copy_hidden\": %.4f, \"latency_ms_median\": [",
                a->model, dev, prec, batch, ns, total, runs_per_s, runs_per_s * (double)batch,
                wall_ms, cal[0], cal[1], cal[2], serial, sum_dev, sum_copy,
                hidden < 0 ? 0 : hidden);
        for (int s = 0; s < ns; s++) /* the walls are sorted by print_latency */
          fprintf(f, "%s%.5f", s ? ", " : "", st[s].n > 0 ? cli_percentile(st[s].wall, st[s].n, 50) : 0.0);
        fprintf(f, "]}\n");
        fclose(f);
      }
    }
    free(all_h2d);
    free(all_gpu);
    free(all_d2h);
  }
  pthread_mutex_destroy(&start.mu);
  pthread_cond_destroy(&start.cv);
  for (int s = 0; s < ns; s++) {
    infer_context_release(st[s].c);
    free(st[s].wall);
    free(st[s].h2d);
    free(st[s].gpu);
    free(st[s].d2h);
  }
  free(st);
  free(th);
  return rc;
}
