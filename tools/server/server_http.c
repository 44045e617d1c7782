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
 * method 405, a body past the route's limit 413; errors carry {"error": "..."}.
 *
 * Framing is strict, checked as soon as the headers are in (before any body is read):
 * more than one Content-Length, Content-Length with Transfer-Encoding, or a
 * Transfer-Encoding other than chunked is a 400 at once, since a server and a proxy
 * in front of it that disagree on where a body ends can be made to see different
 * requests. libmicrohttpd's own answers to what it cannot parse (a malformed request
 * line or Content-Length, an HTTP version other than 1.0/1.1, a request line or headers
 * past its buffer) carry its built-in HTML body: 0.9.75 has no hook to replace them.
 * Slow clients are server_conns.c's concern; this file tells it each connection's
 * phase. */
#include <netdb.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <microhttpd.h>

#include "server.h"

/* The body limit of the routes that take none (every route but POST .../infer): enough
 * for a client that sends an empty JSON object out of habit. */
#define SMALL_BODY_LIMIT ((size_t)4096)
/* A chunked body past its limit is read and dropped up to this much more, so that the
 * client still gets its 413 (libmicrohttpd cannot answer in the middle of a body);
 * past it the connection is closed without an answer. */
#define DRAIN_LIMIT ((size_t)8 << 20)

struct srv_http {
  struct MHD_Daemon *daemon;
  srv_conns *conns;
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
  srv_conn *tracked;  /* the connection's entry in h->conns (may be NULL) */
  size_t body_limit;  /* this route's */
  bool keep_body;     /* POST .../infer: the body is kept; other bodies only counted */
  char *body;
  size_t len, cap;
  size_t received;    /* body bytes so far */
  bool too_large;     /* received > body_limit: the answer is 413 */
  bool submitted;   /* a job went to the pool; the handler is called again on resume */
  srv_job job;
  struct timespec t0;
  const char *method, *url; /* libmicrohttpd's, valid for the request: for the log */
} req_state;

static srv_conn *tracked_of(struct MHD_Connection *conn) {
  const union MHD_ConnectionInfo *ci =
      MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
  return ci ? ci->socket_context : NULL;
}

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
  /* the answer's deadline starts: the client must take it in time */
  srv_conns_phase(st->h->conns, st->tracked, SRV_CONN_SENDING);
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
  srv_conns_phase(h->conns, st->tracked, SRV_CONN_WORKING); /* no deadline while it runs */
  rc = srv_pool_submit(h->pool, &st->job, suspend_connection, st->conn);
  if (rc) {
    st->submitted = false;
    return reply_error(st, (unsigned)rc, st->job.error, NULL);
  }
  return MHD_YES; /* suspended; called again once the worker resumes us */
}

/* ---- framing and limits ---------------------------------------------------------------- */

typedef struct framing {
  int content_length, transfer_encoding; /* how many of each header */
  const char *te;                        /* the (first) Transfer-Encoding value */
} framing;

static enum MHD_Result count_framing_header(void *cls, enum MHD_ValueKind kind, const char *key,
                                            const char *value) {
  (void)kind;
  framing *f = cls;
  if (strcasecmp(key, MHD_HTTP_HEADER_CONTENT_LENGTH) == 0) f->content_length++;
  if (strcasecmp(key, MHD_HTTP_HEADER_TRANSFER_ENCODING) == 0 && f->transfer_encoding++ == 0)
    f->te = value ? value : "";
  return MHD_YES;
}

/* True when the body's framing is unambiguous: at most one Content-Length, or one
 * Transfer-Encoding that is exactly chunked (RFC 9112 6.1, 6.3: a server must not
 * guess; we refuse rather than pick one). Else a message in why. */
static bool framing_ok(struct MHD_Connection *conn, char *why, size_t cap) {
  framing f = {0};
  MHD_get_connection_values(conn, MHD_HEADER_KIND, count_framing_header, &f);
  if (f.content_length > 1) {
    snprintf(why, cap, "%d Content-Length headers: a request may have one", f.content_length);
    return false;
  }
  if (f.transfer_encoding > 1) {
    snprintf(why, cap, "%d Transfer-Encoding headers: a request may have one (chunked)",
             f.transfer_encoding);
    return false;
  }
  if (f.transfer_encoding && f.content_length) {
    snprintf(why, cap, "both Content-Length and Transfer-Encoding: a request may have one");
    return false;
  }
  if (f.transfer_encoding) {
    const char *v = f.te;
    size_t n = strlen(v);
    while (*v == ' ' || *v == '\t') v++, n--;
    while (n && (v[n - 1] == ' ' || v[n - 1] == '\t')) n--;
    if (n != 7 || strncasecmp(v, "chunked", 7) != 0) {
      snprintf(why, cap, "Transfer-Encoding '%.100s' is not supported (only chunked)", f.te);
      return false;
    }
  }
  return true;
}

static enum MHD_Result reply_too_large(req_state *st) {
  char msg[160];
  snprintf(msg, sizeof msg, "the request body is larger than the limit (%zu bytes%s)",
           st->body_limit, st->keep_body ? "" : " on this route");
  return reply_error(st, MHD_HTTP_CONTENT_TOO_LARGE, msg, NULL);
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
    st->tracked = tracked_of(conn);
    clock_gettime(CLOCK_MONOTONIC, &st->t0);
    st->route = route_of(h, url);
    const char *allow;
    st->method_ok = method_allowed(st->route, method, &allow);
    st->keep_body = st->route == ROUTE_INFER && st->method_ok;
    st->body_limit = st->keep_body ? h->max_body : SMALL_BODY_LIMIT;
    *con_cls = st;
    atomic_fetch_add(&h->active, 1);
    /* answered now, before any of the body is read: libmicrohttpd then drops the body
     * and closes the connection after the answer */
    char why[256];
    if (!framing_ok(conn, why, sizeof why)) return reply_error(st, MHD_HTTP_BAD_REQUEST, why, NULL);
    const char *cl = MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
                                                 MHD_HTTP_HEADER_CONTENT_LENGTH);
    if (cl) { /* digits only: libmicrohttpd refused anything else already */
      unsigned long long n = strtoull(cl, NULL, 10);
      if (n > st->body_limit) return reply_too_large(st);
      if (st->keep_body && n > 0 && (st->body = malloc((size_t)n + 1))) st->cap = (size_t)n + 1;
    }
    return MHD_YES;
  }
  if (*upload_data_size) { /* a piece of the body */
    size_t n = *upload_data_size;
    *upload_data_size = 0;
    st->received += n;
    if (st->too_large || st->received > st->body_limit) {
      /* only a chunked body gets here (an announced length was checked above) */
      st->too_large = true;
      return st->received - st->body_limit > DRAIN_LIMIT ? MHD_NO : MHD_YES;
    }
    if (!st->keep_body) return MHD_YES; /* counted, not needed */
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
  if (st->too_large) return reply_too_large(st);
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
  (void)toe;
  /* the request is over: the connection waits for the next one, which must arrive
   * within the deadline from now */
  srv_conns_phase(h->conns, tracked_of(conn), SRV_CONN_RECEIVING);
  req_state *st = *con_cls;
  if (!st) return;
  srv_pool_free_response(&st->job);
  srv_request_clear(&st->job.req);
  free(st->body);
  free(st);
  *con_cls = NULL;
  atomic_fetch_sub(&h->active, 1);
}

static void on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
                          enum MHD_ConnectionNotificationCode code) {
  srv_http *h = cls;
  if (code == MHD_CONNECTION_NOTIFY_STARTED) {
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
    const union MHD_ConnectionInfo *ai =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    *socket_context =
        ci ? srv_conns_opened(h->conns, ci->connect_fd, ai ? ai->client_addr : NULL) : NULL;
  } else if (code == MHD_CONNECTION_NOTIFY_CLOSED) {
    /* before libmicrohttpd closes the socket: the sweep can no longer touch it */
    srv_conns_closed(h->conns, *socket_context);
    *socket_context = NULL;
  }
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
  if (!(h->conns = srv_conns_create(cfg->max_connections, cfg->request_timeout, cfg->verbose))) {
    fprintf(stderr, "infer-server: cannot start the connection sweep (out of memory?)\n");
    freeaddrinfo(ai);
    free(h);
    return -1;
  }
  unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO | MHD_ALLOW_SUSPEND_RESUME |
                   MHD_USE_ERROR_LOG;
  if (ai->ai_family == AF_INET6) flags |= MHD_USE_IPv6;
  unsigned threads = cfg->http_threads > 1 ? (unsigned)cfg->http_threads : 0;
  h->daemon = MHD_start_daemon(
      flags, (uint16_t)cfg->port, NULL, NULL, on_request, h, MHD_OPTION_SOCK_ADDR, ai->ai_addr,
      MHD_OPTION_NOTIFY_COMPLETED, on_completed, h, MHD_OPTION_NOTIFY_CONNECTION, on_connection,
      h, MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)cfg->idle_timeout, MHD_OPTION_CONNECTION_LIMIT,
      (unsigned)cfg->max_connections, MHD_OPTION_PER_IP_CONNECTION_LIMIT,
      (unsigned)cfg->max_per_ip, MHD_OPTION_THREAD_POOL_SIZE, threads, MHD_OPTION_END);
  freeaddrinfo(ai);
  if (!h->daemon) {
    fprintf(stderr, "infer-server: cannot listen on %s:%d (in use, or not an address here?)\n",
            cfg->host, cfg->port);
    srv_conns_release(h->conns);
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
  long long past_deadline, evicted;
  srv_conns_counts(h->conns, &past_deadline, &evicted);
  printf("infer-server: %lld connection%s closed past the request deadline, %lld at the "
         "connection limit\n",
         past_deadline, past_deadline == 1 ? "" : "s", evicted);
  srv_conns_release(h->conns);
  free(h);
  return true;
}
