/* server.h: the pieces of `infer-server`, an example KServe v2 / Triton HTTP inference
 * server over libinfer. Like the CLI it uses only the public header infer.h.
 *
 *   server_main.c  options, start-up, signals, graceful shutdown
 *   server_http.c  libmicrohttpd handlers: routes, body limit, status codes
 *   server_json.c  the JSON codec: request validation, response and metadata encoding
 *   server_pool.c  worker threads (one infer_context each) behind a bounded queue
 *   server_conns.c open connections: request deadlines, eviction at the limit
 *
 * A request's JSON is parsed and checked (names, datatypes, shapes) on an HTTP thread;
 * its numbers go straight from the parsed document into the worker context's in-place
 * input buffers (infer_context_input_buffer: pinned staging on CUDA), the run is
 * enqueued, the document is freed while the device runs, and after the wait the
 * response is written straight from the context's output buffers: no copy of a tensor
 * on the host beyond parsing and printing it.
 */
#ifndef INFER_SERVER_H
#define INFER_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "infer.h"

#define SRV_MAX_SHAPES 64

typedef struct srv_shape {
  const char *name;
  int rank;
  int64_t dims[INFER_MAX_RANK];
} srv_shape;

typedef struct srv_config {
  const char *model;     /* path of the .onnx file */
  const char *name;      /* model name in URLs; default: the file name without .onnx */
  const char *host;      /* numeric address or host name to bind (default 127.0.0.1) */
  int port;              /* 0: any free port (the chosen one is printed) */
  int workers;           /* worker threads, one context each */
  int queue;             /* requests waiting for a worker, at most; more get 503 */
  int http_threads;      /* libmicrohttpd's thread pool */
  size_t max_body;       /* request body limit in bytes (413 past it); 0: from the model */
  int max_connections;   /* open connections at most; at the limit the oldest waiting
                            one is closed for a new one */
  int max_per_ip;        /* open connections from one address at most; 0: no cap */
  int idle_timeout;      /* seconds without a byte before a connection is closed */
  int request_timeout;   /* seconds for a request to arrive in full (from the connection's
                            opening or the previous answer), and for an answer to go out */
  infer_device device;
  int device_index;
  infer_precision precision;
  long long batch;       /* value of unbound symbolic batch dims (default 1) */
  int n_shapes;
  srv_shape shapes[SRV_MAX_SHAPES];
  int delay_ms;          /* testing: each worker sleeps this long before a run */
  bool verbose;
} srv_config;

/* ---- JSON codec (server_json.c) ------------------------------------------ */

struct json_t;

/* A checked inference request: per model input (in engine order) its "data" array in
 * the parsed document, and the engine indices of the outputs to return, in the order
 * asked. */
typedef struct srv_request {
  char *id;              /* the request's "id", echoed back; malloc'ed or NULL */
  struct json_t *root;   /* the parsed body (owned; NULL once the inputs are written) */
  int n_inputs;
  struct json_t **data;  /* n_inputs "data" arrays, borrowed from root */
  int n_outputs;
  int *outputs;          /* output indices */
} srv_request;

/* KServe datatype name ("FP32", "INT64", ...) of an infer dtype; NULL if none. */
const char *srv_dtype_kserve(infer_dtype t);

/* Parses the body of POST .../infer and checks it against the engine: names, datatypes,
 * shapes, a "data" array per input. Returns 0 and fills *req (release with
 * srv_request_clear), or an HTTP status (400, 500 for out of memory) with a message in
 * err. The values themselves are checked by srv_json_write_inputs. */
int srv_json_parse_request(const infer_engine *e, const char *body, size_t len,
                           srv_request *req, char *err, size_t err_cap);
/* Writes every input's values, converted to the input's dtype, into buffers[k] (room for
 * input k at the engine's shape: the context's input buffers), checking each value (a
 * number, an integer in range for integer types) and the count. Returns 0, or 400 with
 * a message in err (the buffers may then be partly written). */
int srv_json_write_inputs(const infer_engine *e, const srv_request *req, void *const *buffers,
                          char *err, size_t err_cap);
/* Frees the parsed document (req->root, req->data: the values are in the buffers now). */
void srv_request_drop_document(srv_request *req);
void srv_request_clear(srv_request *req);

/* The response of a successful inference: outs[i] is output req->outputs[i]. Returns a
 * malloc'ed JSON text (length in *len) or NULL when out of memory. */
char *srv_json_response(const infer_engine *e, const char *model_name, const srv_request *req,
                        const infer_tensor *outs, size_t *len);
/* Model metadata (GET /v2/models/NAME), server metadata (GET /v2), and
 * {"error": msg}: malloc'ed JSON texts, NULL when out of memory. */
char *srv_json_model_metadata(const infer_engine *e, const char *model_name,
                              const srv_config *cfg, size_t *len);
char *srv_json_server_metadata(size_t *len);
char *srv_json_error(const char *msg, size_t *len);

/* ---- worker pool (server_pool.c) ------------------------------------------- */

typedef struct srv_job srv_job;
typedef void (*srv_job_done_fn)(srv_job *job);

struct srv_job {
  srv_request req;       /* inputs: filled by the submitter */
  char *response;        /* the answer's JSON (malloc'ed by the worker) when 200 */
  size_t response_len;
  int http_status;       /* 200, or the failure's status with `error` */
  char error[1024];
  double run_ms;         /* time in the worker (inputs, run, response) */
  srv_job_done_fn done;  /* called once by the worker thread when the job is finished;
                            the pool never touches the job after it */
  void *user;
};

typedef struct srv_pool srv_pool;

/* Creates `workers` contexts on e and starts the threads; model_name names the model
 * in responses. On failure the message is in infer_last_error(). */
infer_status srv_pool_create(infer_engine *e, const char *model_name, int workers, int capacity,
                             int delay_ms, srv_pool **out);
/* Queues a job. `accepted(arg)` is called under the queue lock just before the job
 * becomes visible to the workers (the HTTP layer suspends its connection there, so
 * the worker's resume can never come first). Returns 0, or 503 with a message in
 * job->error when the queue is full, no healthy worker is left or the pool stops. */
int srv_pool_submit(srv_pool *p, srv_job *job, void (*accepted)(void *arg), void *arg);
/* True while every worker's context is healthy (infer_context_status after each run). */
bool srv_pool_ready(srv_pool *p);
/* Refuses new jobs from now on (503); the queued ones still run. */
void srv_pool_close(srv_pool *p);
/* Waits until no job is queued or running, at most timeout_ms; true when idle. */
bool srv_pool_wait_idle(srv_pool *p, int timeout_ms);
/* Stops the workers (queued jobs are finished first) and releases the contexts. */
void srv_pool_release(srv_pool *p);
void srv_pool_free_response(srv_job *job);

/* ---- open connections (server_conns.c) ------------------------------------------ */

/* Where a connection is: waiting for (or receiving) a request, which the client must
 * complete within the deadline; its request in the worker pool (no deadline: the time
 * is the server's); its answer going out (the client must take it within the
 * deadline). */
typedef enum srv_conn_phase { SRV_CONN_RECEIVING, SRV_CONN_WORKING, SRV_CONN_SENDING } srv_conn_phase;
typedef struct srv_conn srv_conn;
typedef struct srv_conns srv_conns;

struct sockaddr;
/* Starts the registry and its sweep thread (which shuts down connections past the
 * deadline of request_timeout_s). At `limit` open connections a new one makes room by
 * shutting one waiting for its request: from the address with the most connections,
 * the oldest of those. NULL when out of memory. */
srv_conns *srv_conns_create(int limit, int request_timeout_s, bool verbose);
/* A connection on socket fd from addr (may be NULL) was accepted (phase RECEIVING from
 * now). NULL when out of memory: the connection then has only the idle timeout. */
srv_conn *srv_conns_opened(srv_conns *cs, int fd, const struct sockaddr *addr);
/* The connection enters `phase`, from now. c may be NULL. */
void srv_conns_phase(srv_conns *cs, srv_conn *c, srv_conn_phase phase);
/* The connection is closing: called before its socket is closed. c may be NULL. */
void srv_conns_closed(srv_conns *cs, srv_conn *c);
/* Connections closed so far for their deadline, and evicted at the limit. */
void srv_conns_counts(srv_conns *cs, long long *closed_deadline, long long *evicted);
/* Stops the sweep and frees the registry (after the daemon has stopped). */
void srv_conns_release(srv_conns *cs);

/* ---- HTTP (server_http.c) ---------------------------------------------------- */

typedef struct srv_http srv_http;
/* Starts listening; on success *port_out holds the bound port (the one chosen by the
 * system for port 0). Returns 0, or -1 with a message printed. */
int srv_http_start(const srv_config *cfg, infer_engine *e, srv_pool *pool, const char *name,
                   size_t max_body, srv_http **out, int *port_out);
/* Graceful stop: no new connections, in-flight requests answered (at most
 * timeout_ms), then the daemon stops and h is freed. False when the runs did not
 * finish in time: the daemon is then left running (stopping it with a suspended
 * connection is undefined) and the caller should exit without releasing the pool. */
bool srv_http_stop(srv_http *h, int timeout_ms);

#endif
