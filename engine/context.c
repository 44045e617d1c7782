/* context.c: per-thread execution state, device-independent half: argument checks,
 * which inputs are set, the flexible batch of the run, misuse detection; the backend
 * (engine/backend.h) holds the memory and runs the steps. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/status.h"
#include "backend.h"
#include "engine_internal.h"

struct infer_context {
  infer_engine *e;
  const backend *be;
  void *ctx;                 /* the backend's context */
  bool *input_set;
  bool ran;                  /* a run succeeded (outputs are valid) */
  atomic_flag busy;          /* set while a run is in progress (misuse detection) */
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
  if (c->ctx) c->be->context_release(c->ctx);
  free(c->prof);
  free(c->input_set);
  free(c);
}

infer_status infer_context_set_input(infer_context *c, int index, const infer_tensor *t) {
  if (!c || !t) return infer_fail(INFER_ERR_INVALID_ARGUMENT, "infer_context_set_input: NULL argument");
  const graph *g = c->e->g;
  if (index < 0 || index >= g->n_inputs)
    return infer_fail(INFER_ERR_INVALID_ARGUMENT, "input index %d out of range (the model has %d)",
                      index, g->n_inputs);
  const value *v = &g->values[g->inputs[index]];
  char a[128], b[128];
  if (t->dtype != v->t.dtype)
    return infer_fail(INFER_ERR_INVALID_INPUT, "input '%s': expected dtype %s, got %s", v->name,
                      infer_dtype_name(v->t.dtype), infer_dtype_name(t->dtype));
  /* with a flexible batch, dim 0 of a batch input may be anything from 1 to the
   * build batch; every other dim must be the engine's */
  bool flex = v->shape_dep && t->rank == v->t.rank && t->rank > 0;
  bool fits = t->rank >= 0 && t->rank <= INFER_MAX_RANK && t->rank == v->t.rank;
  for (int k = flex ? 1 : 0; fits && k < t->rank; k++) fits = t->dims[k] == v->t.dims[k];
  if (!fits)
    return infer_fail(INFER_ERR_INVALID_INPUT, "input '%s': expected shape %s, got %s", v->name,
                      dims_format(v->t.rank, v->t.dims, a, sizeof a),
                      t->rank >= 0 && t->rank <= INFER_MAX_RANK ? dims_format(t->rank, t->dims, b, sizeof b) : "(bad rank)");
  if (flex && (t->dims[0] < 1 || t->dims[0] > v->t.dims[0]))
    return infer_fail(INFER_ERR_INVALID_INPUT, "input '%s': batch %lld is outside 1..%lld (the "
                      "engine was built for batch %lld; build it with a larger batch, "
                      "infer_options_set_batch)", v->name, (long long)t->dims[0],
                      (long long)v->t.dims[0], (long long)v->t.dims[0]);
  /* a backend that runs the build batch hands out its first rows (engine/batch_rows.c) */
  if (flex && !c->be->computes_run_batch && t->dims[0] != v->t.dims[0] && !c->e->rows_independent)
    return infer_fail(INFER_ERR_INVALID_INPUT, "input '%s': batch %lld, but this %s engine "
                      "runs only its build batch %lld: %s (build it for batch %lld, or run "
                      "on the CPU)", v->name, (long long)t->dims[0], c->be->name,
                      (long long)v->t.dims[0], c->e->rows_why, (long long)t->dims[0]);
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

/* Shared checks of infer_context_bind_{input,output}_device: the index, the byte
 * count (the whole tensor in the model's dtype at the engine's shape), then the
 * backend. *v gets the value, for messages. */
static infer_status bind_check(infer_context *c, const char *fn, bool is_input, int index,
                               const void *ptr, int64_t bytes, const value **v) {
  if (!c) return infer_fail(INFER_ERR_INVALID_ARGUMENT, "%s: NULL context", fn);
  const graph *g = c->e->g;
  int n = is_input ? g->n_inputs : g->n_outputs;
  const char *kind = is_input ? "input" : "output";
  if (index < 0 || index >= n)
    return infer_fail(INFER_ERR_INVALID_ARGUMENT, "%s: %s index %d out of range (the model has "
                      "%d)", fn, kind, index, n);
  *v = &g->values[is_input ? g->inputs[index] : g->outputs[index]];
  if (!ptr) return INFER_OK; /* unbinding: nothing to size */
  char a[128];
  int64_t want = (*v)->shape_known ? tensor_nbytes(&(*v)->t) : -1;
  if (want < 0)
    return infer_fail(INFER_ERR_INVALID_ARGUMENT, "%s: %s '%s' has no static size (shape %s, "
                      "dtype %s), so it cannot be bound to device memory", fn, kind, (*v)->name,
                      dims_format((*v)->t.rank, (*v)->t.dims, a, sizeof a),
                      infer_dtype_name((*v)->t.dtype));
  if (bytes != want)
    return infer_fail(INFER_ERR_INVALID_ARGUMENT, "%s: %s '%s' is %s %s, %lld bytes; got %lld "
                      "bytes", fn, kind, (*v)->name,
                      dims_format((*v)->t.rank, (*v)->t.dims, a, sizeof a),
                      infer_dtype_name((*v)->t.dtype), (long long)want, (long long)bytes);
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

static infer_status context_run(infer_context *c);

infer_status infer_context_run(infer_context *c) {
  if (!c) return infer_fail(INFER_ERR_INVALID_ARGUMENT, "infer_context_run: NULL context");
  if (atomic_flag_test_and_set(&c->busy))
    return infer_fail(INFER_ERR_INVALID_ARGUMENT, "the context is running on another thread; "
                      "use one context per thread");
  infer_status s = context_run(c);
  atomic_flag_clear(&c->busy);
  return s;
}

infer_status infer_context_status(const infer_context *c) {
  if (!c) return infer_fail(INFER_ERR_INVALID_ARGUMENT, "infer_context_status: NULL context");
  /* the CPU leaves nothing behind that could fail later runs */
  return c->be->health ? c->be->health(c->ctx) : INFER_OK;
}

static infer_status context_run(infer_context *c) {
  const graph *g = c->e->g;
  c->ran = false; /* outputs of a failed run must never be read */
  for (int i = 0; i < g->n_inputs; i++) {
    bool bound = c->be->input_bound && c->be->input_bound(c->ctx, i);
    if (!c->input_set[i] && !bound)
      return infer_fail(INFER_ERR_INVALID_INPUT, "input '%s' was not set (nor bound to device "
                        "memory)", g->values[g->inputs[i]].name);
  }
  TRY(c->be->run(c->ctx));
  if (c->prof) TRY(c->be->profile(c->ctx, c->prof));
  c->ran = true;
  return INFER_OK;
}

int infer_context_profile_count(const infer_context *c) {
  return c && c->prof && c->ran ? c->e->n_steps : 0;
}

infer_status infer_context_profile_step(const infer_context *c, int i, infer_step_profile *p) {
  if (!c || !p || i < 0 || i >= infer_context_profile_count(c))
    return infer_fail(INFER_ERR_INVALID_ARGUMENT, "no profile entry %d (profiling is off, no run "
                      "succeeded yet, or the index is out of range)", i);
  *p = c->prof[i];
  return INFER_OK;
}

infer_status infer_context_timing(const infer_context *c, infer_run_timing *t) {
  if (!c || !t) return infer_fail(INFER_ERR_INVALID_ARGUMENT, "infer_context_timing: NULL argument");
  if (!c->ran) return infer_fail(INFER_ERR_RUNTIME, "no successful run to time");
  memset(t, 0, sizeof *t);
  return c->be->timing(c->ctx, t);
}

infer_status infer_context_get_output(infer_context *c, int index, infer_tensor *out) {
  if (!c || !out) return infer_fail(INFER_ERR_INVALID_ARGUMENT, "infer_context_get_output: NULL argument");
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
