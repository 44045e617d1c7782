/* server_main.c: `infer-server MODEL.onnx [options]`: options, start-up (one engine, a
 * pool of worker contexts, the HTTP daemon), and a graceful stop on SIGINT/SIGTERM.
 * Uses only the public header, as any service would. */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "server.h"
#include "../shape_arg.h"

enum { EXIT_OK = 0, EXIT_FAILED = 1, EXIT_USAGE = 2 };

static void usage(FILE *f) {
  fprintf(f,
          "usage: infer-server MODEL.onnx [options]\n"
          "  --port N                 TCP port (default 8000; 0: any free port, printed)\n"
          "  --host ADDR              address to bind (default 127.0.0.1)\n"
          "  --name NAME              model name in URLs (default: file name without .onnx)\n"
          "  --workers K              worker threads, one context each (default 2)\n"
          "  --queue N                requests waiting for a worker before 503 (default 64)\n"
          "  --http-threads N         HTTP threads parsing requests (default 2)\n"
          "  --max-body BYTES         request body limit, 413 past it (default: 64 bytes per\n"
          "                           input element + 1 MiB); other routes take 4 KiB\n"
          "  --max-connections N      open connections at most (default 512); at the limit\n"
          "                           one waiting for its request is closed (the oldest\n"
          "                           from the address holding the most)\n"
          "  --max-connections-per-ip N  from one client address (default 64; 0: no cap)\n"
          "  --idle-timeout S         close a connection silent for S seconds (default 10)\n"
          "  --request-timeout S      a request must arrive in full within S seconds of the\n"
          "                           connection opening or the previous answer, and an\n"
          "                           answer be taken within S seconds (default 30)\n"
          "  --device cpu|cuda[:N]    (default cpu)\n"
          "  --precision fp32|tf32|fp16  (default fp32)\n"
          "  --batch N                value of unbound symbolic batch dims (default 1)\n"
          "  --shape NAME=AxBxC       bind an input's shape\n"
          "  --verbose                log each request\n"
          "  --test-delay-ms MS       testing only: each run waits MS first\n"
          "Protocol: KServe v2 / Triton HTTP (JSON data): GET /v2/health/live,\n"
          "/v2/health/ready, /v2, /v2/models/NAME[/ready]; POST /v2/models/NAME/infer.\n"
          "SIGINT/SIGTERM stop it gracefully: queued and running requests are answered.\n");
}

static bool parse_int(const char *s, long long lo, long long hi, long long *out) {
  char *end;
  errno = 0;
  long long v = strtoll(s, &end, 10);
  if (end == s || *end || errno || v < lo || v > hi) return false;
  *out = v;
  return true;
}

static bool bad(const char *what, const char *arg) {
  fprintf(stderr, "infer-server: %s '%s'\n", what, arg);
  return false;
}

static bool parse_args(int argc, char **argv, srv_config *c) {
  memset(c, 0, sizeof *c);
  c->host = "127.0.0.1";
  c->port = 8000;
  c->workers = 2;
  c->queue = 64;
  c->http_threads = 2;
  c->max_connections = 512;
  c->max_per_ip = 64;
  c->idle_timeout = 10;
  c->request_timeout = 30;
  c->batch = 1;
  for (int i = 1; i < argc; i++) {
    char *o = argv[i];
    char *v = i + 1 < argc ? argv[i + 1] : NULL;
    long long n;
    if (strcmp(o, "--help") == 0 || strcmp(o, "-h") == 0) {
      usage(stdout);
      exit(EXIT_OK);
    } else if (strcmp(o, "--verbose") == 0) {
      c->verbose = true;
      continue;
    } else if (o[0] != '-') {
      if (c->model) return bad("more than one model given:", o);
      c->model = o;
      continue;
    } else if (!v) {
      return bad("this option needs a value:", o);
    }
    i++;
    if (strcmp(o, "--port") == 0) {
      if (!parse_int(v, 0, 65535, &n)) return bad("bad --port", v);
      c->port = (int)n;
    } else if (strcmp(o, "--host") == 0) {
      c->host = v;
    } else if (strcmp(o, "--name") == 0) {
      if (!v[0] || strchr(v, '/')) return bad("bad --name (empty, or with '/')", v);
      c->name = v;
    } else if (strcmp(o, "--workers") == 0) {
      if (!parse_int(v, 1, 256, &n)) return bad("bad --workers (1-256)", v);
      c->workers = (int)n;
    } else if (strcmp(o, "--queue") == 0) {
      if (!parse_int(v, 1, 1 << 20, &n)) return bad("bad --queue", v);
      c->queue = (int)n;
    } else if (strcmp(o, "--http-threads") == 0) {
      if (!parse_int(v, 1, 256, &n)) return bad("bad --http-threads (1-256)", v);
      c->http_threads = (int)n;
    } else if (strcmp(o, "--max-body") == 0) {
      if (!parse_int(v, 1, LLONG_MAX, &n)) return bad("bad --max-body", v);
      c->max_body = (size_t)n;
    } else if (strcmp(o, "--max-connections") == 0) {
      if (!parse_int(v, 1, 1 << 20, &n)) return bad("bad --max-connections", v);
      c->max_connections = (int)n;
    } else if (strcmp(o, "--max-connections-per-ip") == 0) {
      if (!parse_int(v, 0, 1 << 20, &n)) return bad("bad --max-connections-per-ip", v);
      c->max_per_ip = (int)n;
    } else if (strcmp(o, "--idle-timeout") == 0) {
      if (!parse_int(v, 1, 86400, &n)) return bad("bad --idle-timeout (1-86400 s)", v);
      c->idle_timeout = (int)n;
    } else if (strcmp(o, "--request-timeout") == 0) {
      if (!parse_int(v, 1, 86400, &n)) return bad("bad --request-timeout (1-86400 s)", v);
      c->request_timeout = (int)n;
    } else if (strcmp(o, "--device") == 0) {
      if (strcmp(v, "cpu") == 0) {
        c->device = INFER_DEVICE_CPU;
      } else if (strncmp(v, "cuda", 4) == 0 && (v[4] == 0 || v[4] == ':')) {
        c->device = INFER_DEVICE_CUDA;
        if (v[4] == ':') {
          if (!parse_int(v + 5, 0, 1024, &n)) return bad("bad --device", v);
          c->device_index = (int)n;
        }
      } else {
        return bad("bad --device (cpu|cuda[:N])", v);
      }
    } else if (strcmp(o, "--precision") == 0) {
      if (strcmp(v, "fp32") == 0) c->precision = INFER_PRECISION_FP32;
      else if (strcmp(v, "tf32") == 0) c->precision = INFER_PRECISION_TF32;
      else if (strcmp(v, "fp16") == 0) c->precision = INFER_PRECISION_FP16;
      else return bad("bad --precision (fp32|tf32|fp16)", v);
    } else if (strcmp(o, "--batch") == 0) {
      if (!parse_int(v, 1, LLONG_MAX, &n)) return bad("bad --batch", v);
      c->batch = n;
    } else if (strcmp(o, "--shape") == 0) {
      if (c->n_shapes == SRV_MAX_SHAPES) return bad("too many --shape options at", v);
      srv_shape *sh = &c->shapes[c->n_shapes++];
      if (!shape_arg_parse(v, &sh->name, &sh->rank, sh->dims, INFER_MAX_RANK))
        return bad("bad --shape (NAME=AxBxC)", v);
    } else if (strcmp(o, "--test-delay-ms") == 0) {
      if (!parse_int(v, 0, 60000, &n)) return bad("bad --test-delay-ms", v);
      c->delay_ms = (int)n;
    } else {
      return bad("unknown option", o);
    }
  }
  if (!c->model) {
    fprintf(stderr, "infer-server: no model given\n");
    return false;
  }
  if (c->max_per_ip > c->max_connections) {
    fprintf(stderr, "infer-server: --max-connections-per-ip %d is above --max-connections %d\n",
            c->max_per_ip, c->max_connections);
    return false;
  }
  if (c->http_threads > c->max_connections) {
    /* libmicrohttpd splits the limit between its threads */
    fprintf(stderr, "infer-server: --http-threads %d is above --max-connections %d\n",
            c->http_threads, c->max_connections);
    return false;
  }
  return true;
}

/* Each connection is a descriptor: raises the soft open-file limit towards the hard one
 * when --max-connections needs it, else says what to change. */
static bool room_for_connections(int max_connections) {
  const rlim_t spare = 128; /* model file, threads' pipes, epoll, device driver */
  rlim_t need = (rlim_t)max_connections + spare;
  struct rlimit rl;
  if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur >= need)
    return true;
  if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < need) {
    fprintf(stderr,
            "infer-server: --max-connections %d needs %llu open files, the hard limit is %llu "
            "(ulimit -Hn): lower --max-connections or raise the limit\n",
            max_connections, (unsigned long long)need, (unsigned long long)rl.rlim_max);
    return false;
  }
  rl.rlim_cur = need;
  if (setrlimit(RLIMIT_NOFILE, &rl) != 0) {
    fprintf(stderr, "infer-server: --max-connections %d needs %llu open files: %s\n",
            max_connections, (unsigned long long)need, strerror(errno));
    return false;
  }
  return true;
}

/* The file name without its directory and .onnx. */
static char *default_name(const char *path) {
  const char *base = strrchr(path, '/');
  base = base ? base + 1 : path;
  char *name = strdup(base[0] ? base : "model");
  if (!name) return NULL;
  size_t n = strlen(name);
  if (n > 5 && strcmp(name + n - 5, ".onnx") == 0) name[n - 5] = 0;
  return name;
}

/* Body limit from the model: JSON numbers rarely take more than 25 bytes each. */
static size_t default_max_body(const infer_engine *e) {
  size_t total = (size_t)1 << 20;
  for (int i = 0; i < infer_engine_input_count(e); i++) {
    infer_tensor t;
    infer_engine_input_info(e, i, NULL, &t);
    int64_t n = infer_tensor_count(&t);
    if (n > 0 && (uint64_t)n < ((uint64_t)1 << 40)) total += (size_t)n * 64;
  }
  return total;
}

int main(int argc, char **argv) {
  srv_config cfg;
  if (!parse_args(argc, argv, &cfg)) {
    usage(stderr);
    return EXIT_USAGE;
  }
  if (!room_for_connections(cfg.max_connections)) return EXIT_USAGE;
  /* SIGINT/SIGTERM are taken by sigwait below: blocked before any thread starts so
   * that every thread inherits the mask. */
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, NULL);
  signal(SIGPIPE, SIG_IGN);

  int rc = EXIT_FAILED;
  infer_options *opts = NULL;
  infer_engine *e = NULL;
  srv_pool *pool = NULL;
  srv_http *http = NULL;
  char *name = cfg.name ? strdup(cfg.name) : default_name(cfg.model);
  infer_status s = infer_options_create(&opts);
  if (s != INFER_OK || !name) {
    fprintf(stderr, "infer-server: out of memory\n");
    goto out;
  }
  infer_options_set_device(opts, cfg.device, cfg.device_index);
  infer_options_set_precision(opts, cfg.precision);
  infer_options_set_batch(opts, cfg.batch);
  infer_options_set_memory_limit(opts, (int64_t)16 << 30, (int64_t)64 << 30); /* hostile models */
  for (int i = 0; i < cfg.n_shapes; i++)
    if ((s = infer_options_set_input_shape(opts, cfg.shapes[i].name, cfg.shapes[i].rank,
                                           cfg.shapes[i].dims)) != INFER_OK) {
      fprintf(stderr, "infer-server: --shape: %s\n", infer_last_error());
      rc = EXIT_USAGE;
      goto out;
    }
  if ((s = infer_engine_load(cfg.model, opts, &e)) != INFER_OK) {
    fprintf(stderr, "infer-server: %s: %s\n", cfg.model, infer_last_error());
    rc = s == INFER_ERR_DEVICE || s == INFER_ERR_RUNTIME || s == INFER_ERR_OUT_OF_MEMORY
             ? EXIT_FAILED : EXIT_USAGE;
    goto out;
  }
  for (int i = 0; i < infer_engine_input_count(e); i++) {
    const char *in_name;
    infer_tensor t;
    infer_engine_input_info(e, i, &in_name, &t);
    if (!srv_dtype_kserve(t.dtype)) {
      fprintf(stderr, "infer-server: input '%s' has dtype %s, which KServe JSON cannot carry\n",
              in_name, infer_dtype_name(t.dtype));
      rc = EXIT_USAGE;
      goto out;
    }
  }
  if ((s = srv_pool_create(e, name, cfg.workers, cfg.queue, cfg.delay_ms, &pool)) != INFER_OK) {
    fprintf(stderr, "infer-server: worker contexts: %s (%s)\n", infer_status_name(s),
            infer_last_error());
    goto out;
  }
  size_t max_body = cfg.max_body ? cfg.max_body : default_max_body(e);
  int port = 0;
  if (srv_http_start(&cfg, e, pool, name, max_body, &http, &port) != 0) goto out;
  printf("infer-server: model '%s' (%s, %s) on http://%s:%d/v2/models/%s, %d worker%s, "
         "queue %d, body limit %zu bytes\n",
         name, cfg.model, cfg.device == INFER_DEVICE_CUDA ? "cuda" : "cpu", cfg.host, port, name,
         cfg.workers, cfg.workers == 1 ? "" : "s", cfg.queue, max_body);
  char per_ip[48] = "no per-address cap";
  if (cfg.max_per_ip) snprintf(per_ip, sizeof per_ip, "%d per address", cfg.max_per_ip);
  printf("infer-server: at most %d connections (%s), idle timeout %d s, request deadline %d s\n",
         cfg.max_connections, per_ip, cfg.idle_timeout, cfg.request_timeout);
  fflush(stdout);

  int sig = 0;
  while (sigwait(&stop_signals, &sig) != 0) {
  }
  printf("infer-server: %s: stopping (answering the requests in flight)\n",
         sig == SIGINT ? "SIGINT" : "SIGTERM");
  fflush(stdout);
  bool clean = srv_http_stop(http, 30000);
  if (clean) {
    srv_pool_release(pool);
    pool = NULL;
    rc = EXIT_OK;
    printf("infer-server: stopped\n");
  } else {
    /* a run or a client did not finish in time: leave without waiting on it */
    fprintf(stderr, "infer-server: stopped before every request was answered\n");
    fflush(stdout);
    _Exit(EXIT_FAILED);
  }
  http = NULL;
out:
  srv_pool_release(pool);
  infer_engine_release(e);
  infer_options_release(opts);
  free(name);
  return rc;
}
