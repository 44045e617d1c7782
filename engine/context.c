/* context.c: per-thread execution state, device-independent half: argument checks,
 * which inputs are set, the flexible batch of the run, the run in flight (enqueue ...
 * wait) and misuse detection; the backend (engine/backend.h) holds the memory and runs
 * the steps. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/status.h"
#include "backend.h"
#include "engine_internal.h"
#include "image_input.h"

struct infer_context {
  infer_engine *e;
  const backend *be;
  void *ctx;                 /* the backend's context */
  bool *input_set;
  bool ran;                  /* a run succeeded (outputs are valid) */
  bool pending;              /* enqueued, not yet waited for */
  atomic_flag busy;          /* set during enqueue, wait and run calls (misuse detection) */
  int64_t run_batch;         /* flexible batch: the batch the inputs were set with, or 0 */
  infer_step_profile *prof;  /* per step, when profiling */
};

infer_status infer_context_create(infer_engine *e, infer_context **out) {
  if (!e || !out) return infer_fail(INFER_ERR_INVALID_ARGUMENT, "infer_context_create: NULL argument");
  *out = NULL;
  const graph *g = e->g;
  infer_context *c = calloc(1, sizeof *c);
  if (!c) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory");
  atomic_flag_clear(&c->busy);
  c->e = e;
  c->be = e->be;
  c->input_set = calloc((size_t)g->n_inputs + 1, sizeof(bool));
  if (e->opts.profile) c->prof = calloc((size_t)e->n_steps + 1, sizeof *c->prof);
  if (!c->input_set || (e->opts.profile && !c->prof)) {
    infer_context_release(c);
    return infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory");
  }
  for (int s = 0; c->prof && s < e->n_steps; s++) {
    const node *n = &g->nodes[e->steps[s]];
    c->prof[s].node = n->name;
    c->prof[s].op = n->op_type;
    c->prof[s].impl = c->be->name;
  }
  infer_status st = c->be->context_create(e, &c->ctx);
  if (st != INFER_OK) {
    infer_context_release(c);
    return st;
  }
  *out = c;
  return INFER_OK;
}

void infer_context_release(infer_context *c) {
  if (!c) return;
  if (c->pending) c->be->wait(c->ctx); /* the run in flight; its result is dropped */
  if (c->ctx) c->be->context_release(c->ctx);
  free(c->prof);
  free(c->input_set);
  free(c);
}

/* Calls that touch the inputs, outputs or figures of a run are refused while one is in
 * flight (infer.h: only wait, status and release may come then). */
static infer_status refuse_pending(const infer_context *c, const char *fn) {
  if (!c->pending) return INFER_OK;
  return infer_fail(INFER_ERR_INVALID_ARGUMENT, "%s: a run is in flight on this context "
                    "(infer_context_enqueue); call infer_context_wait first", fn);
}

infer_status infer_context_set_input(infer_context *c, int index, const infer_tensor *t) {
  if (!c || !t) return infer_fail(INFER_ERR_INVALID_ARGUMENT, "infer_context_set_input: NULL argument");
  TRY(refuse_pending(c, "infer_context_set_input"));
  const graph *g = c->e->g;
  if (index < 0 || index >= g->n_inputs)
    return infer_fail(INFER_ERR_INVALID_ARGUMENT, "input index %d out of range (the model has %d)",
                      index, g->n_inputs);
  const value *v = &g->values[g->inputs[index]];
  const tensor *want = engine_input_tensor(c->e, index); /* uint8 NHWC for an image input */
  char a[128], b[128];
  if (t->dtype != want->dtype)
    return infer_fail(INFER_ERR_INVALID_INPUT, "input '%s': expected dtype %s, got %s%s", v->name,
                      infer_dtype_name(want->dtype), infer_dtype_name(t->dtype),
                      engine_image_feed(c->e, index) ? " (an image input: uint8 N x H x W x C)" : "");
  /* with a flexible batch, dim 0 of a batch input may be anything from 1 to the
   * build batch; every other dim must be the engine's */
  bool flex = v->shape_dep && t->rank == want->rank && t->rank > 0;
  bool fits = t->rank >= 0 && t->rank <= INFER_MAX_RANK && t->rank == want->rank;
  for (int k = flex ? 1 : 0; fits && k < t->rank; k++) fits = t->dims[k] == want->dims[k];
  if (!fits)
    return infer_fail(INFER_ERR_INVALID_INPUT, "input '%s': expected shape %s, got %s", v->name,
                      dims_format(want->rank, want->dims, a, sizeof a),
                      t->rank >= 0 && t->rank <= INFER_MAX_RANK ? dims_format(t->rank, t->dims, b, sizeof b) : "(bad rank)");
  if (flex && (t->dims[0] < 1 || t->dims[0] > want->dims[0]))
    return infer_fail(INFER_ERR_INVALID_INPUT, "input '%s': batch %lld is outside 1..%lld (the "
                      "engine was built for batch %lld; build it with a larger batch, "
                      "infer_options_set_batch)", v->name, (long long)t->dims[0],
                      (long long)want->dims[0], (long long)want->dims[0]);
  /* a backend that runs the build batch hands out its first rows (engine/batch_rows.c) */
  if (flex && !c->be->computes_run_batch && t->dims[0] != want->dims[0] && !c->e->rows_independent)
    return infer_fail(INFER_ERR_INVALID_INPUT, "input '%s': batch %lld, but this %s engine "
                      "runs only its build batch %lld: %s (build it for batch %lld, or run "
                      "on the CPU)", v->name, (long long)t->dims[0], c->be->name,
                      (long long)want->dims[0], c->e->rows_why, (long long)t->dims[0]);
  if (flex) c->run_batch = t->dims[0];
  int64_t nb = tensor_nbytes(t);
  if (nb > 0 && !t->data)
    return infer_fail(INFER_ERR_INVALID_ARGUMENT, "input '%s': data is NULL", v->name);
  if (v->kind == VALUE_CONSTANT) {
    /* fixed at build time (infer_options_set_input_constant_at) */
    if (nb > 0 && memcmp(v->t.data, t->data, (size_t)nb) != 0)
      return infer_fail(INFER_ERR_INVALID_INPUT, "input '%s' was fixed to another value when "
                        "the engine was built", v->name);
    c->input_set[index] = true;
    return INFER_OK;
  }
  TRY(c->be->set_input(c->ctx, index, t));
  c->input_set[index] = true;
  return INFER_OK;
}

infer_status infer_context_input_buffer(infer_context *c, int index, void **ptr, int64_t *bytes) {
  if (!c || !ptr || !bytes)
    return infer_fail(INFER_ERR_INVALID_ARGUMENT, "infer_context_input_buffer: NULL argument");
  *ptr = NULL;
  *bytes = 0;
  TRY(refuse_pending(c, "infer_context_input_buffer"));
  const graph *g = c->e->g;
  if (index < 0 || index >= g->n_inputs)
    return infer_fail(INFER_ERR_INVALID_ARGUMENT, "input index %d out of range (the model has %d)",
                      index, g->n_inputs);
  const value *v = &g->values[g->inputs[index]];
  if (v->kind == VALUE_CONSTANT)
    return infer_fail(INFER_ERR_INVALID_ARGUMENT, "input '%s' was fixed to a value when the "
                      "engine was built: it has no buffer", v->name);
  int64_t nb = tensor_nbytes(engine_input_tensor(c->e, index));
  TRY(c->be->input_buffer(c->ctx, index, ptr));
  *bytes = nb;
  /* a run from the buffer takes the engine's full shape */
  if (v->shape_dep) c->run_batch = 0;
  c->input_set[index] = true;
  return INFER_OK;
}

infer_status infer_context_output_buffer(infer_context *c, int index, const void **ptr,
                                         int64_t *bytes) {
  if (!c || !ptr || !bytes)
    return infer_fail(INFER_ERR_INVALID_ARGUMENT, "infer_context_output_buffer: NULL argument");
  *ptr = NULL;
  *bytes = 0;
  TRY(refuse_pending(c, "infer_context_output_buffer"));
  const graph *g = c->e->g;
  if (index < 0 || index >= g->n_outputs)
    return infer_fail(INFER_ERR_INVALID_ARGUMENT, "output index %d out of range (the model has %d)",
                      index, g->n_outputs);
  const value *v = &g->values[g->outputs[index]];
  char a[128];
  if (!v->shape_known)
    return infer_fail(INFER_ERR_INVALID_ARGUMENT, "output '%s' (shape %s) has no buffer: its "
                      "shape is known only at run time (use infer_context_get_output)", v->name,
                      dims_format(v->t.rank, v->t.dims, a, sizeof a));
  if (c->be->output_bound && c->be->output_bound(c->ctx, index))
    return infer_fail(INFER_ERR_INVALID_ARGUMENT, "output '%s' is bound to device memory "
                      "(infer_context_bind_output_device): runs write it there", v->name);
  TRY(c->be->output_buffer(c->ctx, index, ptr));
  *bytes = tensor_nbytes(&v->t);
  return INFER_OK;
}

/* Shared checks of infer_context_bind_{input,output}_device: the index, the byte
 * count (the whole tensor in the model's dtype at the engine's shape), then the
 * backend. *v gets the value, for messages. */
static infer_status bind_check(infer_context *c, const char *fn, bool is_input, int index,
                               const void *ptr, int64_t bytes, const value **v) {
  if (!c) return infer_fail(INFER_ERR_INVALID_ARGUMENT, "%s: NULL context", fn);
  TRY(refuse_pending(c, fn));
  const graph *g = c->e->g;
  int n = is_input ? g->n_inputs : g->n_outputs;
  const char *kind = is_input ? "input" : "output";
  if (index < 0 || index >= n)
    return infer_fail(INFER_ERR_INVALID_ARGUMENT, "%s: %s index %d out of range (the model has "
                      "%d)", fn, kind, index, n);
  *v = &g->values[is_input ? g->inputs[index] : g->outputs[index]];
  if (!ptr) return INFER_OK; /* unbinding: nothing to size */
  char a[128];
  /* what the caller holds: an image input's uint8 NHWC */
  const tensor *t = is_input ? engine_input_tensor(c->e, index) : &(*v)->t;
  int64_t want = (*v)->shape_known ? tensor_nbytes(t) : -1;
  if (want < 0)
    return infer_fail(INFER_ERR_INVALID_ARGUMENT, "%s: %s '%s' has no static size (shape %s, "
                      "dtype %s), so it cannot be bound to device memory", fn, kind, (*v)->name,
                      dims_format(t->rank, t->dims, a, sizeof a), infer_dtype_name(t->dtype));
  if (bytes != want)
    return infer_fail(INFER_ERR_INVALID_ARGUMENT, "%s: %s '%s' is %s %s, %lld bytes; got %lld "
                      "bytes", fn, kind, (*v)->name, dims_format(t->rank, t->dims, a, sizeof a),
                      infer_dtype_name(t->dtype), (long long)want, (long long)bytes);
  if (!c->be->bind_input)
    return infer_fail(INFER_ERR_UNSUPPORTED, "%s: %s '%s': device memory binding needs a CUDA "
                      "engine (this one runs on the %s; use infer_context_%s)", fn, kind,
                      (*v)->name, c->be->name, is_input ? "set_input" : "get_output");
  return INFER_OK;
}

infer_status infer_context_bind_input_device(infer_context *c, int index, const void *device_ptr,
                                             int64_t bytes) {
  const value *v = NULL;
  TRY(bind_check(c, "infer_context_bind_input_device", true, index, device_ptr, bytes, &v));
  if (!c->be->bind_input) return INFER_OK; /* unbinding where nothing can be bound */
  if (device_ptr && v->kind == VALUE_CONSTANT)
    /* the engine never reads it at run time, and its value cannot be checked
     * against the build's without a device-to-host copy */
    return infer_fail(INFER_ERR_UNSUPPORTED, "input '%s' was fixed to a value when the engine "
                      "was built; set it with infer_context_set_input, not device memory",
                      v->name);
  return c->be->bind_input(c->ctx, index, device_ptr);
}

infer_status infer_context_bind_output_device(infer_context *c, int index, void *device_ptr,
                                              int64_t bytes) {
  const value *v = NULL;
  TRY(bind_check(c, "infer_context_bind_output_device", false, index, device_ptr, bytes, &v));
  if (!c->be->bind_output) return INFER_OK;
  return c->be->bind_output(c->ctx, index, device_ptr);
}

/* Starts a run (busy held by the caller): the inputs must be set. */
static infer_status context_enqueue(infer_context *c) {
  const graph *g = c->e->g;
  if (c->pending)
    return infer_fail(INFER_ERR_INVALID_ARGUMENT, "a run is already in flight on this context "
                      "(infer_context_enqueue twice): call infer_context_wait first");
  c->ran = false; /* outputs of a failed run must never be read */
  for (int i = 0; i < g->n_inputs; i++) {
    bool bound = c->be->input_bound && c->be->input_bound(c->ctx, i);
    if (!c->input_set[i] && !bound)
      return infer_fail(INFER_ERR_INVALID_INPUT, "input '%s' was not set (nor bound to device "
                        "memory)", g->values[g->inputs[i]].name);
  }
  TRY(c->be->enqueue(c->ctx));
  c->pending = true;
  return INFER_OK;
}

/* Waits for the run in flight (busy held by the caller). */
static infer_status context_wait(infer_context *c) {
  if (!c->pending)
    return infer_fail(INFER_ERR_INVALID_ARGUMENT, "infer_context_wait: no run is in flight on "
                      "this context (infer_context_enqueue first)");
  c->pending = false;
  TRY(c->be->wait(c->ctx));
  if (c->prof) TRY(c->be->profile(c->ctx, c->prof));
  c->ran = true;
  return INFER_OK;
}

/* Enqueue, wait and run share one guard against overlapping calls from two threads. */
static bool take(infer_context *c) {
  if (!atomic_flag_test_and_set(&c->busy)) return true;
  infer_fail(INFER_ERR_INVALID_ARGUMENT, "the context is running on another thread; use one "
             "context per thread");
  return false;
}

infer_status infer_context_enqueue(infer_context *c) {
  if (!c) return infer_fail(INFER_ERR_INVALID_ARGUMENT, "infer_context_enqueue: NULL context");
  if (!take(c)) return INFER_ERR_INVALID_ARGUMENT;
  infer_status s = context_enqueue(c);
  atomic_flag_clear(&c->busy);
  return s;
}

infer_status infer_context_wait(infer_context *c) {
  if (!c) return infer_fail(INFER_ERR_INVALID_ARGUMENT, "infer_context_wait: NULL context");
  if (!take(c)) return INFER_ERR_INVALID_ARGUMENT;
  infer_status s = context_wait(c);
  atomic_flag_clear(&c->busy);
  return s;
}

infer_status infer_context_run(infer_context *c) {
  if (!c) return infer_fail(INFER_ERR_INVALID_ARGUMENT, "infer_context_run: NULL context");
  if (!take(c)) return INFER_ERR_INVALID_ARGUMENT;
  infer_status s = context_enqueue(c);
  if (s == INFER_OK) s = context_wait(c);
  atomic_flag_clear(&c->busy);
  return s;
}

infer_status infer_context_status(const infer_context *c) {
  if (!c) return infer_fail(INFER_ERR_INVALID_ARGUMENT, "infer_context_status: NULL context");
  /* the CPU leaves nothing behind that could fail later runs */
  return c->be->health ? c->be->health(c->ctx) : INFER_OK;
}

int infer_context_profile_count(const infer_context *c) {
  return c && c->prof && c->ran && !c->pending ? c->e->n_steps : 0;
}

infer_status infer_context_profile_step(const infer_context *c, int i, infer_step_profile *p) {
  if (!c || !p || i < 0 || i >= infer_context_profile_count(c))
    return infer_fail(INFER_ERR_INVALID_ARGUMENT, "no profile entry %d (profiling is off, no run "
                      "succeeded yet, a run is in flight, or the index is out of range)", i);
  *p = c->prof[i];
  return INFER_OK;
}

infer_status infer_context_timing(const infer_context *c, infer_run_timing *t) {
  if (!c || !t) return infer_fail(INFER_ERR_INVALID_ARGUMENT, "infer_context_timing: NULL argument");
  TRY(refuse_pending(c, "infer_context_timing"));
  if (!c->ran) return infer_fail(INFER_ERR_RUNTIME, "no successful run to time");
  memset(t, 0, sizeof *t);
  return c->be->timing(c->ctx, t);
}

infer_status infer_context_get_output(infer_context *c, int index, infer_tensor *out) {
  if (!c || !out) return infer_fail(INFER_ERR_INVALID_ARGUMENT, "infer_context_get_output: NULL argument");
  TRY(refuse_pending(c, "infer_context_get_output"));
  const graph *g = c->e->g;
  if (index < 0 || index >= g->n_outputs)
    return infer_fail(INFER_ERR_INVALID_ARGUMENT, "output index %d out of range (the model has %d)",
                      index, g->n_outputs);
  if (!c->ran)
    return infer_fail(INFER_ERR_RUNTIME, "output '%s' is not available: no successful run",
                      g->values[g->outputs[index]].name);
  if (c->be->output_bound && c->be->output_bound(c->ctx, index))
    return infer_fail(INFER_ERR_INVALID_ARGUMENT, "output '%s' is bound to device memory "
                      "(infer_context_bind_output_device): the run wrote it there; bind NULL "
                      "to read it here again", g->values[g->outputs[index]].name);
  return c->be->output(c->ctx, index, c->run_batch, out);
}

infer_status context_read_value_f32(infer_context *c, int v, float *dst) {
  TRY(refuse_pending(c, "infer_context_read_value"));
  if (!c->ran)
    return infer_fail(INFER_ERR_RUNTIME, "value '%s' is not available: no successful run",
                      c->e->g->values[v].name);
  return c->be->read_value(c->ctx, v, dst);
}

const infer_engine *context_engine(const infer_context *c) { return c->e; }
