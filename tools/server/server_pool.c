/* server_pool.c: K worker threads over one shared engine, each with its own context
 * (infer.h: one context per thread), fed from a bounded FIFO (mutex + condvars).
 *
 * A job: the request's values are written from its parsed JSON straight into the
 * context's in-place input buffers (pinned staging on CUDA), the run is enqueued, the
 * parsed document is freed while the device computes, and after the wait the response
 * is printed straight from the context's output buffers (before the next run reuses
 * them). No tensor is copied on the host. The contexts of the K workers run
 * concurrently: one's copies under another's compute.
 *
 * Health: after every run a worker asks infer_context_status on its own thread (the
 * context is never touched by two threads). A failed context is final: its worker
 * leaves the pool, readiness turns false, and when no worker is left the queued jobs
 * and every later submission are answered 503. */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "server.h"

struct srv_pool {
  infer_engine *engine;
  const char *model_name;
  int n_workers, n_inputs;
  pthread_t *threads;
  infer_context **ctx;
  void **in_buf; /* [worker][input]: the context's input buffers */
  atomic_int *healthy;
  int delay_ms;

  pthread_mutex_t mu;
  pthread_cond_t work;  /* a job was queued, or stop */
  pthread_cond_t idle;  /* a job finished */
  srv_job **queue;
  int cap, head, count;
  int running;          /* jobs taken by workers, not yet finished */
  int alive;            /* workers with a healthy context */
  bool stopping;
  int started;          /* threads started */
};

typedef struct worker_arg {
  srv_pool *pool;
  int index;
} worker_arg;

static void sleep_ms(int ms) {
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

void srv_pool_free_response(srv_job *job) {
  free(job->response);
  job->response = NULL;
  job->response_len = 0;
}

static int status_http(infer_status s) {
  switch (s) {
    case INFER_ERR_INVALID_ARGUMENT:
    case INFER_ERR_INVALID_INPUT: return 400;
    default: return 500;
  }
}

/* Values into the input buffers, enqueue, the document freed meanwhile, wait, the
 * response printed from the output buffers. */
static void run_job(srv_pool *p, infer_context *c, void *const *in_buf, srv_job *job) {
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  job->http_status = 200;
  job->error[0] = 0;
  infer_status s = INFER_OK;
  const char *what = "run";
  if (p->delay_ms > 0) sleep_ms(p->delay_ms);
  int rc = srv_json_write_inputs(p->engine, &job->req, in_buf, job->error, sizeof job->error);
  if (rc) job->http_status = rc;
  infer_tensor *outs = NULL;
  if (!rc && !(outs = calloc((size_t)(job->req.n_outputs ? job->req.n_outputs : 1), sizeof *outs))) {
    job->http_status = 500;
    snprintf(job->error, sizeof job->error, "out of memory for the outputs");
  }
  if (outs) {
    s = infer_context_enqueue(c);
    /* the values are in the buffers: the parsed document goes while the device works */
    srv_request_drop_document(&job->req);
    if (s == INFER_OK) s = infer_context_wait(c);
    for (int i = 0; s == INFER_OK && i < job->req.n_outputs; i++)
      if ((s = infer_context_get_output(c, job->req.outputs[i], &outs[i])) != INFER_OK) what = "output";
    if (s == INFER_OK) {
      /* printed from the context's memory, before its next run */
      job->response = srv_json_response(p->engine, p->model_name, &job->req, outs,
                                        &job->response_len);
      if (!job->response) {
        job->http_status = 500;
        snprintf(job->error, sizeof job->error, "out of memory for the response");
      }
    }
    free(outs);
  }
  if (s != INFER_OK) {
    job->http_status = status_http(s);
    snprintf(job->error, sizeof job->error, "%s failed (%s): %s", what, infer_status_name(s),
             infer_last_error());
  }
  if (job->http_status != 200) srv_pool_free_response(job);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  job->run_ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
}

static srv_job *pop_locked(srv_pool *p) {
  srv_job *job = p->queue[p->head];
  p->head = (p->head + 1) % p->cap;
  p->count--;
  return job;
}

static void *worker_main(void *argp) {
  worker_arg *wa = argp;
  srv_pool *p = wa->pool;
  int me = wa->index;
  free(wa);
  infer_context *c = p->ctx[me];
  void *const *in_buf = p->in_buf + (size_t)me * (size_t)p->n_inputs;
  pthread_mutex_lock(&p->mu);
  for (;;) {
    while (p->count == 0 && !p->stopping) pthread_cond_wait(&p->work, &p->mu);
    if (p->count == 0) break; /* stopping, and the queue is drained */
    srv_job *job = pop_locked(p);
    p->running++;
    pthread_mutex_unlock(&p->mu);

    run_job(p, c, in_buf, job);
    infer_status health = infer_context_status(c);
    if (health != INFER_OK) {
      fprintf(stderr, "infer-server: worker %d: context failed (%s): %s; it leaves the pool\n", me,
              infer_status_name(health), infer_last_error());
      atomic_store(&p->healthy[me], 0);
      if (job->http_status == 200) { /* never hand out results of a failed context */
        srv_pool_free_response(job);
        job->http_status = 503;
        snprintf(job->error, sizeof job->error, "the worker's context failed");
      }
    }
    job->done(job); /* the job belongs to its submitter again */

    pthread_mutex_lock(&p->mu);
    p->running--;
    pthread_cond_broadcast(&p->idle);
    if (health != INFER_OK) {
      p->alive--;
      if (p->alive == 0) { /* nobody left to run the queue: answer it */
        while (p->count > 0) {
          srv_job *j = pop_locked(p);
          j->http_status = 503;
          snprintf(j->error, sizeof j->error, "no healthy worker is left");
          j->done(j);
        }
      }
      pthread_cond_broadcast(&p->idle);
      break;
    }
  }
  pthread_mutex_unlock(&p->mu);
  return NULL;
}

infer_status srv_pool_create(infer_engine *e, const char *model_name, int workers, int capacity,
                             int delay_ms, srv_pool **out) {
  *out = NULL;
  srv_pool *p = calloc(1, sizeof *p);
  if (!p) return INFER_ERR_OUT_OF_MEMORY;
  p->engine = e;
  p->model_name = model_name;
  p->n_workers = workers;
  p->n_inputs = infer_engine_input_count(e);
  p->cap = capacity;
  p->delay_ms = delay_ms;
  p->threads = calloc((size_t)workers, sizeof *p->threads);
  p->ctx = calloc((size_t)workers, sizeof *p->ctx);
  p->healthy = calloc((size_t)workers, sizeof *p->healthy);
  p->queue = calloc((size_t)capacity, sizeof *p->queue);
  p->in_buf = calloc((size_t)workers * (size_t)p->n_inputs + 1, sizeof *p->in_buf);
  pthread_mutex_init(&p->mu, NULL);
  pthread_cond_init(&p->work, NULL);
  pthread_cond_init(&p->idle, NULL);
  if (!p->threads || !p->ctx || !p->healthy || !p->queue || !p->in_buf) {
    srv_pool_release(p);
    return INFER_ERR_OUT_OF_MEMORY;
  }
  for (int i = 0; i < workers; i++) {
    infer_status s = infer_context_create(e, &p->ctx[i]);
    if (s != INFER_OK) {
      srv_pool_release(p);
      return s;
    }
    atomic_init(&p->healthy[i], infer_context_status(p->ctx[i]) == INFER_OK);
    /* requests are written into these (the worker's thread uses the context from now) */
    for (int k = 0; k < p->n_inputs; k++) {
      int64_t bytes;
      s = infer_context_input_buffer(p->ctx[i], k, &p->in_buf[(size_t)i * (size_t)p->n_inputs + (size_t)k],
                                     &bytes);
      if (s != INFER_OK) {
        srv_pool_release(p);
        return s;
      }
    }
  }
  p->alive = workers;
  for (int i = 0; i < workers; i++) {
    worker_arg *wa = malloc(sizeof *wa);
    if (wa) *wa = (worker_arg){p, i};
    if (!wa || pthread_create(&p->threads[i], NULL, worker_main, wa) != 0) {
      free(wa);
      srv_pool_release(p);
      return INFER_ERR_RUNTIME;
    }
    p->started++;
  }
  *out = p;
  return INFER_OK;
}

int srv_pool_submit(srv_pool *p, srv_job *job, void (*accepted)(void *arg), void *arg) {
  pthread_mutex_lock(&p->mu);
  int rc = 0;
  if (p->stopping) {
    rc = 503;
    snprintf(job->error, sizeof job->error, "the server is shutting down");
  } else if (p->alive == 0) {
    rc = 503;
    snprintf(job->error, sizeof job->error, "no healthy worker is left");
  } else if (p->count == p->cap) {
    rc = 503;
    snprintf(job->error, sizeof job->error, "the request queue is full (%d waiting); retry later",
             p->cap);
  } else {
    if (accepted) accepted(arg);
    p->queue[(p->head + p->count) % p->cap] = job;
    p->count++;
    pthread_cond_signal(&p->work);
  }
  if (rc) job->http_status = rc;
  pthread_mutex_unlock(&p->mu);
  return rc;
}

bool srv_pool_ready(srv_pool *p) {
  for (int i = 0; i < p->n_workers; i++)
    if (!atomic_load(&p->healthy[i])) return false;
  return p->n_workers > 0;
}

bool srv_pool_wait_idle(srv_pool *p, int timeout_ms) {
  struct timespec until;
  clock_gettime(CLOCK_REALTIME, &until);
  until.tv_sec += timeout_ms / 1000;
  until.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
  if (until.tv_nsec >= 1000000000L) {
    until.tv_sec++;
    until.tv_nsec -= 1000000000L;
  }
  pthread_mutex_lock(&p->mu);
  int rc = 0;
  while ((p->count > 0 || p->running > 0) && rc == 0)
    rc = pthread_cond_timedwait(&p->idle, &p->mu, &until);
  bool idle = p->count == 0 && p->running == 0;
  pthread_mutex_unlock(&p->mu);
  return idle;
}

void srv_pool_close(srv_pool *p) {
  pthread_mutex_lock(&p->mu);
  p->stopping = true;
  pthread_cond_broadcast(&p->work);
  pthread_mutex_unlock(&p->mu);
}

void srv_pool_release(srv_pool *p) {
  if (!p) return;
  srv_pool_close(p);
  for (int i = 0; i < p->started; i++) pthread_join(p->threads[i], NULL);
  for (int i = 0; p->ctx && i < p->n_workers; i++) infer_context_release(p->ctx[i]);
  pthread_cond_destroy(&p->idle);
  pthread_cond_destroy(&p->work);
  pthread_mutex_destroy(&p->mu);
  free(p->queue);
  free(p->in_buf);
  free((void *)p->healthy);
  free(p->ctx);
  free(p->threads);
  free(p);
}
