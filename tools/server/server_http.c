/* server_http.c: the HTTP side of infer-server, on libmicrohttpd.
 *
 * Requests are parsed and checked on libmicrohttpd's threads; a valid inference is
 * queued for the worker pool and its connection suspended, so no HTTP thread waits on
 * a run. The worker writes the values into its context's buffers, runs, prints the
 * response and resumes the connection; the handler, called again, sends it.
 *
 * Routes (KServe v2 / Triton HTTP):
 *   GET  /v2/health/live            200
 *   GET  /v2/health/ready           200, or 503 once a context failed / while stopping
 *   GET  /v2                        server metadata
 *   GET  /v2/models/NAME[/versions/1]        model metadata
 *   GET  /v2/models/NAME[/versions/1]/ready  200 / 503 as the server's readiness
 *   POST /v2/models/NAME[/versions/1]/infer  inference
 * Anything else is 404 (an unknown model or version too), a known path with another
 * method 405, a body past the limit 413; errors carry {"error": "..."}. */
#include <netdb.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <microhttpd.h>

#include "server.h"

struct srv_http {
  struct MHD_Daemon *daemon;
  infer_engine *engine;
  srv_pool *pool;
  const srv_config *cfg;
  const char *name;
  size_t max_body;
  atomic_bool stopping;
  atomic_int active; /* requests begun and not yet completed */
};

typedef enum route {
  ROUTE_NOT_FOUND,
  ROUTE_UNKNOWN_MODEL,
  ROUTE_UNKNOWN_VERSION,
  ROUTE_LIVE,
  ROUTE_READY,
  ROUTE_SERVER_META,
  ROUTE_MODEL_META,
  ROUTE_MODEL_READY,
  ROUTE_INFER
} route;

typedef struct req_state {
  srv_http *h;
  struct MHD_Connection *conn;
  route route;
  bool method_ok;
  char *body;
  size_t len, cap;
  size_t discarded; /* bytes past the limit, dropped */
  bool submitted;   /* a job went to the pool; the handler is called again on resume */
  srv_job job;
  struct timespec t0;
  const char *method, *url; /* libmicrohttpd's, valid for the request: for the log */
} req_state;

static double ms_since(const struct timespec *t0) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)(t.tv_sec - t0->tv_sec) * 1e3 + (double)(t.tv_nsec - t0->tv_nsec) / 1e6;
}

/* ---- routing -------------------------------------------------------------------- */

static route route_of(const srv_http *h, const char *url) {
  if (strcmp(url, "/v2/health/live") == 0) return ROUTE_LIVE;
  if (strcmp(url, "/v2/health/ready") == 0) return ROUTE_READY;
  if (strcmp(url, "/v2") == 0 || strcmp(url, "/v2/") == 0) return ROUTE_SERVER_META;
  static const char prefix[] = "/v2/models/";
  if (strncmp(url, prefix, sizeof prefix - 1) != 0) return ROUTE_NOT_FOUND;
  const char *name = url + sizeof prefix - 1;
  const char *tail = strchr(name, '/');
  size_t name_len = tail ? (size_t)(tail - name) : strlen(name);
  if (!tail) tail = "";
  bool known = name_len == strlen(h->name) && strncmp(name, h->name, name_len) == 0;
  bool version_ok = true;
  static const char versions[] = "/versions/";
  if (strncmp(tail, versions, sizeof versions - 1) == 0) {
    const char *v = tail + sizeof versions - 1;
    const char *end = strchr(v, '/');
    size_t vlen = end ? (size_t)(end - v) : strlen(v);
    version_ok = vlen == 1 && v[0] == '1';
    tail = end ? end : "";
  }
  route r;
  if (tail[0] == 0) r = ROUTE_MODEL_META;
  else if (strcmp(tail, "/ready") == 0) r = ROUTE_MODEL_READY;
  else if (strcmp(tail, "/infer") == 0) r = ROUTE_INFER;
  else return ROUTE_NOT_FOUND;
  if (name_len == 0) return ROUTE_NOT_FOUND;
  if (!known) return ROUTE_UNKNOWN_MODEL;
  if (!version_ok) return ROUTE_UNKNOWN_VERSION;
  return r;
}

static bool method_allowed(route r, const char *method, const char **allow) {
  if (r == ROUTE_INFER) {
    *allow = "POST";
    return strcmp(method, MHD_HTTP_METHOD_POST) == 0;
  }
  *allow = "GET, HEAD";
  return strcmp(method, MHD_HTTP_METHOD_GET) == 0 || strcmp(method, MHD_HTTP_METHOD_HEAD) == 0;
}

/* ---- answers ------------------------------------------------------------------- */

/* Queues `json` (malloc'ed, may be NULL for an empty body; freed here) with status. */
static enum MHD_Result reply(req_state *st, unsigned status, char *json, size_t len,
                             const char *allow) {
  struct MHD_Response *r =
      json ? MHD_create_response_from_buffer(len, json, MHD_RESPMEM_MUST_FREE)
           : MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
  if (!r) {
    free(json);
    return MHD_NO;
  }
  if (json) MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
  if (allow) MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, allow);
  if (status == MHD_HTTP_SERVICE_UNAVAILABLE) MHD_add_response_header(r, "Retry-After", "1");
  if (atomic_load(&st->h->stopping)) MHD_add_response_header(r, MHD_HTTP_HEADER_CONNECTION, "close");
  enum MHD_Result ok = MHD_queue_response(st->conn, status, r);
  MHD_destroy_response(r);
  if (st->h->cfg->verbose) {
    if (st->submitted)
      fprintf(stderr, "infer-server: %s %s -> %u in %.2f ms (worker %.2f ms)\n", st->method,
              st->url, status, ms_since(&st->t0), st->job.run_ms);
    else
      fprintf(stderr, "infer-server: %s %s -> %u in %.2f ms\n", st->method, st->url, status,
              ms_since(&st->t0));
  }
  return ok;
}

static enum MHD_Result reply_error(req_state *st, unsigned status, const char *msg,
                                   const char *allow) {
  size_t len = 0;
  char *json = srv_json_error(msg, &len);
  return reply(st, status, json, len, allow);
}

static enum MHD_Result reply_ready(req_state *st) {
  bool ready = !atomic_load(&st->h->stopping) && srv_pool_ready(st->h->pool);
  if (ready) return reply(st, MHD_HTTP_OK, NULL, 0, NULL);
  return reply_error(st, MHD_HTTP_SERVICE_UNAVAILABLE,
                     atomic_load(&st->h->stopping) ? "the server is shutting down"
                                                   : "a worker context has failed",
                     NULL);
}

/* ---- inference ------------------------------------------------------------------- */

static void job_done(srv_job *job) {
  req_state *st = job->user;
  MHD_resume_connection(st->conn);
}

static void suspend_connection(void *arg) { MHD_suspend_connection(arg); }

static enum MHD_Result answer_infer_result(req_state *st) {
  srv_job *job = &st->job;
  if (job->http_status != 200) return reply_error(st, (unsigned)job->http_status, job->error, NULL);
  /* the worker printed it from its context's output buffers */
  char *json = job->response;
  size_t len = job->response_len;
  job->response = NULL; /* reply frees it */
  job->response_len = 0;
  if (!json) return reply_error(st, MHD_HTTP_INTERNAL_SERVER_ERROR, "no response", NULL);
  return reply(st, MHD_HTTP_OK, json, len, NULL);
}

static enum MHD_Result start_infer(req_state *st) {
  srv_http *h = st->h;
  if (st->discarded)
    return reply_error(st, MHD_HTTP_CONTENT_TOO_LARGE, "the request body is larger than the limit",
                       NULL);
  if (atomic_load(&h->stopping))
    return reply_error(st, MHD_HTTP_SERVICE_UNAVAILABLE, "the server is shutting down", NULL);
  if (MHD_lookup_connection_value(st->conn, MHD_HEADER_KIND, "Inference-Header-Content-Length"))
    return reply_error(st, MHD_HTTP_BAD_REQUEST,
                       "the binary tensor data extension is not supported: send JSON \"data\"",
                       NULL);
  char err[1024];
  int rc = srv_json_parse_request(h->engine, st->body ? st->body : "", st->len, &st->job.req, err,
                                  sizeof err);
  free(st->body); /* parsed: the document holds the values until the worker writes them */
  st->body = NULL;
  st->len = st->cap = 0;
  if (rc) return reply_error(st, (unsigned)rc, err, NULL);
  st->job.done = job_done;
  st->job.user = st;
  st->submitted = true;
  rc = srv_pool_submit(h->pool, &st->job, suspend_connection, st->conn);
  if (rc) {
    st->submitted = false;
    return reply_error(st, (unsigned)rc, st->job.error, NULL);
  }
  return MHD_YES; /* suspended; called again once the worker resumes us */
}

/* ---- the access handler -------------------------------------------------------------- */

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version,
                                  const char *upload_data, size_t *upload_data_size,
                                  void **con_cls) {
  srv_http *h = cls;
  req_state *st = *con_cls;
  if (!st) { /* headers are in */
    st = calloc(1, sizeof *st);
    if (!st) return MHD_NO;
    st->h = h;
    st->conn = conn;
    st->method = method;
    st->url = url;
    clock_gettime(CLOCK_MONOTONIC, &st->t0);
    st->route = route_of(h, url);
    const char *allow;
    st->method_ok = method_allowed(st->route, method, &allow);
    *con_cls = st;
    atomic_fetch_add(&h->active, 1);
    if (st->route == ROUTE_INFER && st->method_ok) {
      /* refuse an announced oversized body at once, before reading it */
      const char *cl = MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
                                                   MHD_HTTP_HEADER_CONTENT_LENGTH);
      if (cl) {
        char *end;
        unsigned long long n = strtoull(cl, &end, 10);
        if (n > h->max_body)
          return reply_error(st, MHD_HTTP_CONTENT_TOO_LARGE,
                             "the request body is larger than the limit", NULL);
        if (n > 0 && (st->body = malloc((size_t)n + 1))) st->cap = (size_t)n + 1;
      }
    }
    return MHD_YES;
  }
  if (*upload_data_size) { /* a piece of the body */
    size_t n = *upload_data_size;
    *upload_data_size = 0;
    if (st->route != ROUTE_INFER || !st->method_ok) return MHD_YES; /* not needed */
    if (st->discarded || st->len + n > h->max_body) {
      st->discarded += n;
      /* a chunked body that keeps coming long past the limit: hang up */
      return st->discarded > h->max_body + ((size_t)64 << 20) ? MHD_NO : MHD_YES;
    }
    if (st->len + n + 1 > st->cap) {
      size_t cap = st->cap ? st->cap : 4096;
      while (cap < st->len + n + 1) cap *= 2;
      char *p = realloc(st->body, cap);
      if (!p) return MHD_NO;
      st->body = p;
      st->cap = cap;
    }
    memcpy(st->body + st->len, upload_data, n);
    st->len += n;
    st->body[st->len] = 0;
    return MHD_YES;
  }
  /* the request is complete (or a worker resumed us) */
  if (st->submitted) return answer_infer_result(st);
  const char *allow;
  switch (st->route) {
    case ROUTE_NOT_FOUND: return reply_error(st, MHD_HTTP_NOT_FOUND, "not found", NULL);
    case ROUTE_UNKNOWN_MODEL: {
      char msg[512];
      snprintf(msg, sizeof msg, "unknown model (this server serves '%s')", h->name);
      return reply_error(st, MHD_HTTP_NOT_FOUND, msg, NULL);
    }
    case ROUTE_UNKNOWN_VERSION:
      return reply_error(st, MHD_HTTP_NOT_FOUND, "unknown model version (only 1)", NULL);
    default: break;
  }
  if (!st->method_ok) {
    method_allowed(st->route, method, &allow);
    char msg[128];
    snprintf(msg, sizeof msg, "method %s not allowed here (allowed: %s)", method, allow);
    return reply_error(st, MHD_HTTP_METHOD_NOT_ALLOWED, msg, allow);
  }
  size_t len = 0;
  char *json;
  switch (st->route) {
    case ROUTE_LIVE: return reply(st, MHD_HTTP_OK, NULL, 0, NULL);
    case ROUTE_READY:
    case ROUTE_MODEL_READY: return reply_ready(st);
    case ROUTE_SERVER_META:
      json = srv_json_server_metadata(&len);
      return json ? reply(st, MHD_HTTP_OK, json, len, NULL)
                  : reply_error(st, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory", NULL);
    case ROUTE_MODEL_META:
      json = srv_json_model_metadata(h->engine, h->name, h->cfg, &len);
      return json ? reply(st, MHD_HTTP_OK, json, len, NULL)
                  : reply_error(st, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory", NULL);
    case ROUTE_INFER: return start_infer(st);
    default: return reply_error(st, MHD_HTTP_NOT_FOUND, "not found", NULL);
  }
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                         enum MHD_RequestTerminationCode toe) {
  srv_http *h = cls;
  req_state *st = *con_cls;
  if (!st) return;
  srv_pool_free_response(&st->job);
  srv_request_clear(&st->job.req);
  free(st->body);
  free(st);
  *con_cls = NULL;
  atomic_fetch_sub(&h->active, 1);
}

/* ---- start and stop ----------------------------------------------------------------- */

int srv_http_start(const srv_config *cfg, infer_engine *e, srv_pool *pool, const char *name,
                   size_t max_body, srv_http **out, int *port_out) {
  *out = NULL;
  struct addrinfo hints = {0}, *ai = NULL;
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  char port[16];
  snprintf(port, sizeof port, "%d", cfg->port);
  int gai = getaddrinfo(cfg->host, port, &hints, &ai);
  if (gai != 0 || !ai) {
    fprintf(stderr, "infer-server: cannot resolve host '%s': %s\n", cfg->host, gai_strerror(gai));
    return -1;
  }
  srv_http *h = calloc(1, sizeof *h);
  if (!h) {
    freeaddrinfo(ai);
    return -1;
  }
  h->engine = e;
  h->pool = pool;
  h->cfg = cfg;
  h->name = name;
  h->max_body = max_body;
  atomic_init(&h->stopping, false);
  atomic_init(&h->active, 0);
  unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO | MHD_ALLOW_SUSPEND_RESUME |
                   MHD_USE_ERROR_LOG;
  if (ai->ai_family == AF_INET6) flags |= MHD_USE_IPv6;
  unsigned threads = cfg->http_threads > 1 ? (unsigned)cfg->http_threads : 0;
  h->daemon = MHD_start_daemon(
      flags, (uint16_t)cfg->port, NULL, NULL, on_request, h, MHD_OPTION_SOCK_ADDR, ai->ai_addr,
      MHD_OPTION_NOTIFY_COMPLETED, on_completed, h, MHD_OPTION_CONNECTION_TIMEOUT,
      (unsigned)30, MHD_OPTION_CONNECTION_LIMIT, (unsigned)512, MHD_OPTION_THREAD_POOL_SIZE,
      threads, MHD_OPTION_END);
  freeaddrinfo(ai);
  if (!h->daemon) {
    fprintf(stderr, "infer-server: cannot listen on %s:%d (in use, or not an address here?)\n",
            cfg->host, cfg->port);
    free(h);
    return -1;
  }
  const union MHD_DaemonInfo *info = MHD_get_daemon_info(h->daemon, MHD_DAEMON_INFO_BIND_PORT);
  *port_out = info ? (int)info->port : cfg->port;
  *out = h;
  return 0;
}

bool srv_http_stop(srv_http *h, int timeout_ms) {
  if (!h) return true;
  /* 1. no new connections; requests on open ones are answered 503 from here on */
  MHD_socket fd = MHD_quiesce_daemon(h->daemon);
  if (fd != MHD_INVALID_SOCKET) close(fd);
  atomic_store(&h->stopping, true);
  /* 2. the pool takes no more jobs (closed under its lock, so no submission can slip
   * in after the wait below), and the queued and running ones finish: their
   * connections are resumed */
  srv_pool_close(h->pool);
  struct timespec t0;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  if (!srv_pool_wait_idle(h->pool, timeout_ms)) {
    /* stopping the daemon with a suspended connection is undefined: leave it */
    fprintf(stderr, "infer-server: runs still going after %d ms; not waiting longer\n", timeout_ms);
    return false;
  }
  /* 3. the answers go out, and requests still arriving get their 503; bounded by a
   * short grace, since a client that sends or reads slowly must not hold the stop */
  const int grace_ms = 3000;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  while (atomic_load(&h->active) > 0 && ms_since(&t0) < grace_ms) {
    struct timespec ts = {0, 10 * 1000000L};
    nanosleep(&ts, NULL);
  }
  int left = atomic_load(&h->active);
  if (left > 0)
    fprintf(stderr, "infer-server: %d request%s unfinished after a %d ms grace, closing\n", left,
            left == 1 ? "" : "s", grace_ms);
  MHD_stop_daemon(h->daemon);
  free(h);
  return true;
}
