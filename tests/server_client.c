/* server_client.c: test client of infer-server (tests/run_server_test.sh). It reads
 * .npy inputs and references with the public API, sends KServe v2 JSON requests over a
 * plain loopback socket (HTTP/1.1, Content-Length, keep-alive), parses the answers with
 * its own small JSON reader (independent of the server's jansson) and compares the
 * outputs with the references.
 *
 *   server_client check --port P --model NAME --input NAME=FILE --reference NAME=FILE
 *       one request; the answer must match
 *   server_client load  ... --requests N --threads T
 *       N requests over T keep-alive connections; every answer must match; prints
 *       requests/s and latency percentiles
 *   server_client burst ... --threads T [--expect-503]
 *       T connections send one request each at the same moment; every answer must be a
 *       matching 200 or a 503 with an error (with --expect-503: at least one of each)
 * Exit: 0 ok, 1 a wrong answer, 2 bad usage or unreadable files. */
#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "infer.h"

/* ---- a small JSON reader -------------------------------------------------------- */

typedef enum jtype { J_NULL, J_BOOL, J_NUM, J_STR, J_ARR, J_OBJ } jtype;
typedef struct jval {
  jtype t;
  bool b;
  double num;
  char *str;
  int n;
  struct jval *items; /* J_ARR, J_OBJ */
  char **keys;        /* J_OBJ */
} jval;

typedef struct jparser {
  const char *p, *end;
  int depth;
} jparser;

static void jfree(jval *v) {
  if (!v) return;
  free(v->str);
  for (int i = 0; i < v->n; i++) {
    jfree(&v->items[i]);
    if (v->keys) free(v->keys[i]);
  }
  free(v->items);
  free(v->keys);
  memset(v, 0, sizeof *v);
}

static void jskip(jparser *ps) {
  while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\n' || *ps->p == '\r' || *ps->p == '\t'))
    ps->p++;
}

static bool jparse(jparser *ps, jval *v);

static bool jstring(jparser *ps, char **out) {
  if (ps->p >= ps->end || *ps->p != '"') return false;
  ps->p++;
  size_t cap = 16, n = 0;
  char *s = malloc(cap);
  while (s && ps->p < ps->end && *ps->p != '"') {
    char ch = *ps->p++;
    if (ch == '\\') {
      if (ps->p >= ps->end) break;
      char e = *ps->p++;
      switch (e) {
        case 'n': ch = '\n'; break;
        case 't': ch = '\t'; break;
        case 'r': ch = '\r'; break;
        case 'b': ch = '\b'; break;
        case 'f': ch = '\f'; break;
        case 'u': {
          if (ps->end - ps->p < 4) { free(s); return false; }
          unsigned u = 0;
          for (int k = 0; k < 4; k++) {
            char h = *ps->p++;
            u = u * 16 + (unsigned)(h >= 'a' ? h - 'a' + 10 : h >= 'A' ? h - 'A' + 10 : h - '0');
          }
          ch = u < 0x80 ? (char)u : '?';
          break;
        }
        default: ch = e; break;
      }
    }
    if (n + 2 > cap) {
      char *t = realloc(s, cap *= 2);
      if (!t) { free(s); return false; }
      s = t;
    }
    s[n++] = ch;
  }
  if (!s || ps->p >= ps->end) { free(s); return false; }
  ps->p++;
  s[n] = 0;
  *out = s;
  return true;
}

static bool jappend(jval *v, jval *item, char *key) {
  jval *items = realloc(v->items, (size_t)(v->n + 1) * sizeof *items);
  if (!items) return false;
  v->items = items;
  if (v->t == J_OBJ) {
    char **keys = realloc(v->keys, (size_t)(v->n + 1) * sizeof *keys);
    if (!keys) return false;
    v->keys = keys;
    keys[v->n] = key;
  }
  items[v->n++] = *item;
  return true;
}

static bool jparse(jparser *ps, jval *v) {
  memset(v, 0, sizeof *v);
  jskip(ps);
  if (ps->p >= ps->end || ++ps->depth > 64) return false;
  char c = *ps->p;
  bool ok = true;
  if (c == '{' || c == '[') {
    v->t = c == '{' ? J_OBJ : J_ARR;
    char close = c == '{' ? '}' : ']';
    ps->p++;
    jskip(ps);
    if (ps->p < ps->end && *ps->p == close) {
      ps->p++;
    } else {
      for (;;) {
        char *key = NULL;
        if (v->t == J_OBJ) {
          jskip(ps);
          if (!jstring(ps, &key)) { ok = false; break; }
          jskip(ps);
          if (ps->p >= ps->end || *ps->p != ':') { free(key); ok = false; break; }
          ps->p++;
        }
        jval item;
        if (!jparse(ps, &item)) { free(key); jfree(&item); ok = false; break; }
        if (!jappend(v, &item, key)) { free(key); jfree(&item); ok = false; break; }
        jskip(ps);
        if (ps->p < ps->end && *ps->p == ',') { ps->p++; continue; }
        if (ps->p < ps->end && *ps->p == close) { ps->p++; break; }
        ok = false;
        break;
      }
    }
  } else if (c == '"') {
    v->t = J_STR;
    ok = jstring(ps, &v->str);
  } else if (ps->end - ps->p >= 4 && strncmp(ps->p, "null", 4) == 0) {
    v->t = J_NULL;
    ps->p += 4;
  } else if (ps->end - ps->p >= 4 && strncmp(ps->p, "true", 4) == 0) {
    v->t = J_BOOL;
    v->b = true;
    ps->p += 4;
  } else if (ps->end - ps->p >= 5 && strncmp(ps->p, "false", 5) == 0) {
    v->t = J_BOOL;
    ps->p += 5;
  } else {
    char *endp;
    v->t = J_NUM;
    v->num = strtod(ps->p, &endp); /* the body is NUL-terminated */
    ok = endp != ps->p && endp <= ps->end;
    ps->p = endp;
  }
  ps->depth--;
  return ok;
}

static const jval *jget(const jval *o, const char *key) {
  if (!o || o->t != J_OBJ) return NULL;
  for (int i = 0; i < o->n; i++)
    if (strcmp(o->keys[i], key) == 0) return &o->items[i];
  return NULL;
}

/* ---- options and test data ---------------------------------------------------------- */

typedef struct named {
  const char *name;
  infer_tensor t;
} named;

static struct {
  const char *mode, *host, *model;
  int port, threads, requests;
  double tol;
  bool expect_503;
  int n_in, n_ref;
  named in[16], ref[16];
  char *body; /* the request, the same every time except its id */
  size_t body_len;
} g;

static const char *kserve(infer_dtype t) {
  switch (t) {
    case INFER_DTYPE_BOOL: return "BOOL";
    case INFER_DTYPE_UINT8: return "UINT8";
    case INFER_DTYPE_INT8: return "INT8";
    case INFER_DTYPE_INT32: return "INT32";
    case INFER_DTYPE_INT64: return "INT64";
    case INFER_DTYPE_FLOAT16: return "FP16";
    case INFER_DTYPE_FLOAT32: return "FP32";
    case INFER_DTYPE_FLOAT64: return "FP64";
    default: return "?";
  }
}

static int usage(void) {
  fprintf(stderr, "usage: server_client check|load|burst --port P [--host H] --model NAME\n"
                  "  --input NAME=FILE... --reference NAME=FILE... [--requests N] [--threads T]\n"
                  "  [--tol 1e-5] [--expect-503]\n");
  return 2;
}

static bool read_named(char *arg, named *n) {
  char *eq = strchr(arg, '=');
  if (!eq) return false;
  *eq = 0;
  n->name = arg;
  if (infer_tensor_read_file(eq + 1, &n->t, NULL) != INFER_OK) {
    fprintf(stderr, "server_client: %s\n", infer_last_error());
    return false;
  }
  return true;
}

/* A growing text buffer for the request. */
typedef struct text {
  char *p;
  size_t len, cap;
} text;

static void put(text *t, const char *fmt, ...) {
  va_list ap;
  for (;;) {
    va_start(ap, fmt);
    int n = vsnprintf(t->p ? t->p + t->len : NULL, t->p ? t->cap - t->len : 0, fmt, ap);
    va_end(ap);
    if (t->p && (size_t)n < t->cap - t->len) {
      t->len += (size_t)n;
      return;
    }
    size_t cap = t->cap ? t->cap * 2 : 4096;
    while (cap < t->len + (size_t)n + 1) cap *= 2;
    char *p = realloc(t->p, cap);
    if (!p) { perror("realloc"); exit(2); }
    t->p = p;
    t->cap = cap;
  }
}

static void build_request(void) {
  text t = {0};
  put(&t, "{\"inputs\":[");
  for (int i = 0; i < g.n_in; i++) {
    const infer_tensor *x = &g.in[i].t;
    put(&t, "%s{\"name\":\"%s\",\"datatype\":\"%s\",\"shape\":[", i ? "," : "", g.in[i].name,
        kserve(x->dtype));
    for (int k = 0; k < x->rank; k++) put(&t, k ? ",%lld" : "%lld", (long long)x->dims[k]);
    put(&t, "],\"data\":[");
    int64_t n = infer_tensor_count(x);
    for (int64_t k = 0; k < n; k++) {
      double v = infer_tensor_get(x, k);
      if (x->dtype == INFER_DTYPE_BOOL) put(&t, k ? ",%s" : "%s", v != 0 ? "true" : "false");
      else put(&t, k ? ",%.9g" : "%.9g", v);
    }
    put(&t, "]}");
  }
  put(&t, "],\"outputs\":[");
  for (int i = 0; i < g.n_ref; i++) put(&t, "%s{\"name\":\"%s\"}", i ? "," : "", g.ref[i].name);
  put(&t, "]}");
  g.body = t.p;
  g.body_len = t.len;
}

/* ---- HTTP over one connection ------------------------------------------------------------ */

typedef struct conn {
  int fd;
  char *buf; /* the response */
  size_t len, cap;
} conn;

static bool conn_open(conn *c) {
  c->fd = socket(AF_INET, SOCK_STREAM, 0);
  if (c->fd < 0) return false;
  struct timeval tv = {30, 0};
  setsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  setsockopt(c->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  int one = 1;
  setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)g.port)};
  if (inet_pton(AF_INET, g.host, &a.sin_addr) != 1 ||
      connect(c->fd, (struct sockaddr *)&a, sizeof a) != 0) {
    close(c->fd);
    c->fd = -1;
    return false;
  }
  return true;
}

static void conn_close(conn *c) {
  if (c->fd >= 0) close(c->fd);
  c->fd = -1;
}

static bool send_all(int fd, const char *p, size_t n) {
  while (n) {
    ssize_t k = send(fd, p, n, MSG_NOSIGNAL);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return false;
    p += k;
    n -= (size_t)k;
  }
  return true;
}

/* POSTs the request (with its id); on success *status, *body (into c->buf) are set. */
static bool http_post(conn *c, const char *id, int *status, const char **body, char *err,
                      size_t err_cap) {
  if (c->fd < 0 && !conn_open(c)) {
    snprintf(err, err_cap, "connect: %s", strerror(errno));
    return false;
  }
  /* the id goes first in the object: {"id":"...", + the rest without its '{' */
  char head[512], idpart[128];
  int idn = snprintf(idpart, sizeof idpart, "{\"id\":\"%s\",", id);
  int hn = snprintf(head, sizeof head,
                    "POST /v2/models/%s/infer HTTP/1.1\r\nHost: %s:%d\r\n"
                    "Content-Type: application/json\r\nContent-Length: %zu\r\n\r\n",
                    g.model, g.host, g.port, (size_t)idn + g.body_len - 1);
  if (!send_all(c->fd, head, (size_t)hn) || !send_all(c->fd, idpart, (size_t)idn) ||
      !send_all(c->fd, g.body + 1, g.body_len - 1)) {
    snprintf(err, err_cap, "send: %s", strerror(errno));
    conn_close(c);
    return false;
  }
  c->len = 0;
  size_t header_end = 0, content_length = 0;
  bool have_length = false, closes = false;
  for (;;) {
    if (c->len + 65536 + 1 > c->cap) {
      size_t cap = c->cap ? c->cap * 2 : 131072;
      char *p = realloc(c->buf, cap);
      if (!p) { snprintf(err, err_cap, "out of memory"); return false; }
      c->buf = p;
      c->cap = cap;
    }
    if (header_end && c->len >= header_end + content_length) break;
    ssize_t k = recv(c->fd, c->buf + c->len, c->cap - c->len - 1, 0);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) {
      snprintf(err, err_cap, "recv: %s after %zu bytes", k < 0 ? strerror(errno) : "closed", c->len);
      conn_close(c);
      return false;
    }
    c->len += (size_t)k;
    c->buf[c->len] = 0;
    if (!header_end) {
      char *e = strstr(c->buf, "\r\n\r\n");
      if (!e) continue;
      header_end = (size_t)(e - c->buf) + 4;
      if (sscanf(c->buf, "HTTP/1.%*d %d", status) != 1) {
        snprintf(err, err_cap, "bad status line");
        conn_close(c);
        return false;
      }
      for (char *line = c->buf; line < e; line = strstr(line, "\r\n") + 2) {
        if (strncasecmp(line, "Content-Length:", 15) == 0) {
          content_length = strtoull(line + 15, NULL, 10);
          have_length = true;
        }
        if (strncasecmp(line, "Connection:", 11) == 0 && strstr(line, "close") &&
            strstr(line, "close") < strstr(line, "\r\n"))
          closes = true;
      }
      if (!have_length) {
        snprintf(err, err_cap, "no Content-Length in the answer");
        conn_close(c);
        return false;
      }
    }
  }
  c->buf[header_end + content_length] = 0;
  *body = c->buf + header_end;
  if (closes) conn_close(c);
  return true;
}

/* ---- checking an answer ------------------------------------------------------------------- */

static bool check_answer(const char *id, const char *body, char *err, size_t cap) {
  jparser ps = {body, body + strlen(body), 0};
  jval root;
  bool ok = false;
  if (!jparse(&ps, &root) || root.t != J_OBJ) {
    snprintf(err, cap, "the answer is not a JSON object: %.200s", body);
    jfree(&root);
    return false;
  }
  const jval *mn = jget(&root, "model_name"), *jid = jget(&root, "id"),
             *outs = jget(&root, "outputs");
  if (!mn || mn->t != J_STR || strcmp(mn->str, g.model) != 0) {
    snprintf(err, cap, "model_name is not '%s'", g.model);
  } else if (!jid || jid->t != J_STR || strcmp(jid->str, id) != 0) {
    snprintf(err, cap, "id is not echoed ('%s')", id);
  } else if (!outs || outs->t != J_ARR || outs->n != g.n_ref) {
    snprintf(err, cap, "outputs is not an array of %d", g.n_ref);
  } else {
    ok = true;
    for (int r = 0; ok && r < g.n_ref; r++) {
      const jval *o = &outs->items[r];
      const jval *name = jget(o, "name"), *dt = jget(o, "datatype"), *shape = jget(o, "shape"),
                 *data = jget(o, "data");
      const infer_tensor *ref = &g.ref[r].t;
      int64_t n = infer_tensor_count(ref);
      ok = false;
      if (!name || name->t != J_STR || strcmp(name->str, g.ref[r].name) != 0) {
        snprintf(err, cap, "outputs[%d] is not '%s'", r, g.ref[r].name);
      } else if (!dt || dt->t != J_STR || strcmp(dt->str, kserve(ref->dtype)) != 0) {
        snprintf(err, cap, "output '%s': datatype is not %s", name->str, kserve(ref->dtype));
      } else if (!shape || shape->t != J_ARR || shape->n != ref->rank) {
        snprintf(err, cap, "output '%s': shape rank is not %d", name->str, ref->rank);
      } else if (!data || data->t != J_ARR || data->n != n) {
        snprintf(err, cap, "output '%s': data does not hold %lld values", name->str, (long long)n);
      } else {
        ok = true;
        for (int k = 0; ok && k < ref->rank; k++)
          if (shape->items[k].t != J_NUM || shape->items[k].num != (double)ref->dims[k]) {
            snprintf(err, cap, "output '%s': shape[%d] is not %lld", name->str, k,
                     (long long)ref->dims[k]);
            ok = false;
          }
        for (int64_t k = 0; ok && k < n; k++) {
          double want = infer_tensor_get(ref, k);
          const jval *x = &data->items[k];
          double got = x->t == J_NUM ? x->num : x->t == J_BOOL ? (double)x->b : NAN;
          bool same = isnan(want) ? isnan(got)
                                  : fabs(got - want) <= g.tol + g.tol * fabs(want);
          if (!same) {
            snprintf(err, cap, "output '%s'[%lld] = %.9g, expected %.9g (tolerance %g)", name->str,
                     (long long)k, got, want, g.tol);
            ok = false;
          }
        }
      }
    }
  }
  jfree(&root);
  return ok;
}

/* An error answer: {"error": "..."} */
static bool is_error_answer(const char *body) {
  jparser ps = {body, body + strlen(body), 0};
  jval root;
  bool ok = jparse(&ps, &root) && jget(&root, "error") && jget(&root, "error")->t == J_STR;
  jfree(&root);
  return ok;
}

/* ---- modes --------------------------------------------------------------------------------- */

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static atomic_int next_request, failures, n_200, n_503, n_other;
static double *latencies;
static pthread_barrier_t start_line;

static void report_failure(const char *id, const char *what) {
  if (atomic_fetch_add(&failures, 1) < 5) fprintf(stderr, "server_client: %s: %s\n", id, what);
}

static void *load_thread(void *arg) {
  conn c = {.fd = -1};
  char id[32], err[512];
  for (;;) {
    int i = atomic_fetch_add(&next_request, 1);
    if (i >= g.requests) break;
    snprintf(id, sizeof id, "req-%d", i);
    int status = 0;
    const char *body;
    double t0 = now_ms();
    if (!http_post(&c, id, &status, &body, err, sizeof err)) {
      report_failure(id, err);
      continue;
    }
    latencies[i] = now_ms() - t0;
    if (status != 200) {
      snprintf(err, sizeof err, "status %d: %.300s", status, body);
      report_failure(id, err);
    } else if (!check_answer(id, body, err, sizeof err)) {
      report_failure(id, err);
    }
  }
  conn_close(&c);
  free(c.buf);
  return arg;
}

static void *burst_thread(void *arg) {
  int me = (int)(intptr_t)arg;
  conn c = {.fd = -1};
  char id[32], err[512];
  snprintf(id, sizeof id, "burst-%d", me);
  bool connected = conn_open(&c);
  pthread_barrier_wait(&start_line);
  int status = 0;
  const char *body;
  if (!connected) {
    report_failure(id, "connect failed");
  } else if (!http_post(&c, id, &status, &body, err, sizeof err)) {
    report_failure(id, err);
  } else if (status == 200) {
    atomic_fetch_add(&n_200, 1);
    if (!check_answer(id, body, err, sizeof err)) report_failure(id, err);
  } else if (status == 503) {
    atomic_fetch_add(&n_503, 1);
    if (!is_error_answer(body)) report_failure(id, "503 without an {\"error\"} body");
  } else {
    atomic_fetch_add(&n_other, 1);
    snprintf(err, sizeof err, "status %d: %.300s", status, body);
    report_failure(id, err);
  }
  conn_close(&c);
  free(c.buf);
  return NULL;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double percentile(const double *sorted, int n, double p) {
  int i = (int)ceil(p / 100.0 * n) - 1;
  return sorted[i < 0 ? 0 : i >= n ? n - 1 : i];
}

int main(int argc, char **argv) {
  if (argc < 2) return usage();
  g.mode = argv[1];
  g.host = "127.0.0.1";
  g.threads = 8;
  g.requests = 500;
  g.tol = 1e-5;
  for (int i = 2; i < argc; i++) {
    const char *o = argv[i];
    char *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (strcmp(o, "--expect-503") == 0) { g.expect_503 = true; continue; }
    if (!v) return usage();
    i++;
    if (strcmp(o, "--port") == 0) g.port = atoi(v);
    else if (strcmp(o, "--host") == 0) g.host = v;
    else if (strcmp(o, "--model") == 0) g.model = v;
    else if (strcmp(o, "--threads") == 0) g.threads = atoi(v);
    else if (strcmp(o, "--requests") == 0) g.requests = atoi(v);
    else if (strcmp(o, "--tol") == 0) g.tol = atof(v);
    else if (strcmp(o, "--input") == 0 && g.n_in < 16) {
      if (!read_named(v, &g.in[g.n_in++])) return 2;
    } else if (strcmp(o, "--reference") == 0 && g.n_ref < 16) {
      if (!read_named(v, &g.ref[g.n_ref++])) return 2;
    } else return usage();
  }
  if (g.port <= 0 || !g.model || g.n_in == 0 || g.n_ref == 0 || g.threads < 1 ||
      g.threads > 256 || g.requests < 1 || g.requests > 1000000)
    return usage();
  build_request();
  int rc = 0;
  if (strcmp(g.mode, "check") == 0) {
    g.requests = 1;
    g.threads = 1;
  }
  if (strcmp(g.mode, "check") == 0 || strcmp(g.mode, "load") == 0) {
    latencies = calloc((size_t)g.requests, sizeof *latencies);
    pthread_t th[256];
    double t0 = now_ms();
    for (int i = 0; i < g.threads; i++) pthread_create(&th[i], NULL, load_thread, NULL);
    for (int i = 0; i < g.threads; i++) pthread_join(th[i], NULL);
    double secs = (now_ms() - t0) / 1e3;
    int failed = atomic_load(&failures);
    qsort(latencies, (size_t)g.requests, sizeof *latencies, cmp_double);
    if (strcmp(g.mode, "load") == 0)
      printf("load: %d requests (%zu-byte bodies) over %d connections in %.2f s: %.1f requests/s; "
             "latency ms p50 %.2f p90 %.2f p99 %.2f max %.2f; %d failed\n",
             g.requests, g.body_len, g.threads, secs, g.requests / secs,
             percentile(latencies, g.requests, 50), percentile(latencies, g.requests, 90),
             percentile(latencies, g.requests, 99), latencies[g.requests - 1], failed);
    else
      printf("check: %s in %.2f ms\n", failed ? "FAILED" : "answer matches the reference",
             latencies[0]);
    rc = failed ? 1 : 0;
  } else if (strcmp(g.mode, "burst") == 0) {
    pthread_t th[256];
    pthread_barrier_init(&start_line, NULL, (unsigned)g.threads);
    for (int i = 0; i < g.threads; i++)
      pthread_create(&th[i], NULL, burst_thread, (void *)(intptr_t)i);
    for (int i = 0; i < g.threads; i++) pthread_join(th[i], NULL);
    int ok = atomic_load(&n_200), busy = atomic_load(&n_503);
    printf("burst: %d requests at once: %d answered 200 (checked), %d answered 503, %d other, "
           "%d failed\n", g.threads, ok, busy, atomic_load(&n_other), atomic_load(&failures));
    rc = atomic_load(&failures) ? 1 : 0;
    if (g.expect_503 && (ok == 0 || busy == 0)) {
      fprintf(stderr, "server_client: expected both 200 and 503 answers\n");
      rc = 1;
    }
  } else {
    return usage();
  }
  for (int i = 0; i < g.n_in; i++) infer_tensor_clear(&g.in[i].t);
  for (int i = 0; i < g.n_ref; i++) infer_tensor_clear(&g.ref[i].t);
  free(g.body);
  free(latencies);
  return rc;
}
