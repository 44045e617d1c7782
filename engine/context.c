/* context.c: per-thread execution state and the CPU run loop.
 *
 * A context owns one arena laid out by the planner, one workspace sized to the
 * largest need, and a tensor table mapping every value to its bytes. Static
 * graphs allocate nothing during a run. Graphs whose shapes depend on run-time
 * data (e.g. a Reshape whose shape is a graph input) re-infer those nodes at run
 * time and take their buffers from the heap; that memory is released at the
 * next run. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../ops/op.h"
#include "engine_internal.h"
#include "../core/status.h"
#ifdef INFER_HAVE_CUDA
#include "cuda/cuda_backend.h"
#endif

struct infer_context {
  infer_engine *e;
  uint8_t *arena;
  void *ws;
  int64_t ws_bytes;
  tensor *vals; /* per value */
  bool *input_set;
  const tensor **in;
  tensor **out;
  /* heap blocks of the last dynamic run */
  void **dyn;
  int n_dyn, cap_dyn;
  struct cuda_context *cuda; /* set when the engine runs on the GPU */
  bool ran;                  /* a run succeeded (GPU outputs are valid) */
  atomic_flag busy;          /* set while a run is in progress (misuse detection) */
  double cpu_ms;             /* host time of the last CPU run */
  int64_t run_batch;         /* flexible batch: the batch the inputs were set with, or 0 */
  infer_step_profile *prof;  /* per step, when profiling */
};

static void dyn_free(infer_context *c) {
  for (int i = 0; i < c->n_dyn; i++) free(c->dyn[i]);
  c->n_dyn = 0;
}

static void *dyn_alloc(infer_context *c, int64_t bytes) {
  if (c->n_dyn == c->cap_dyn) {
    int cap = c->cap_dyn ? c->cap_dyn * 2 : 64;
    void **grown = realloc(c->dyn, sizeof(void *) * (size_t)cap);
    if (!grown) return NULL;
    c->dyn = grown;
    c->cap_dyn = cap;
  }
  void *p = malloc(bytes > 0 ? (size_t)bytes : 1);
  if (p) c->dyn[c->n_dyn++] = p;
  return p;
}

/* Gathers node n's tensors from the table. */
static void gather(infer_context *c, const node *n) {
  for (int k = 0; k < n->n_inputs; k++) c->in[k] = n->inputs[k] >= 0 ? &c->vals[n->inputs[k]] : NULL;
  for (int k = 0; k < n->n_outputs; k++) c->out[k] = n->outputs[k] >= 0 ? &c->vals[n->outputs[k]] : NULL;
}

infer_status infer_context_create(infer_engine *e, infer_context **out) {
  if (!e || !out) return infer_fail(INFER_ERR_INVALID_ARGUMENT, "infer_context_create: NULL argument");
  *out = NULL;
  const graph *g = e->g;
  infer_context *c = calloc(1, sizeof *c);
  if (c) atomic_flag_clear(&c->busy);
  if (!c) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory");
  c->e = e;
  if (e->opts.profile) {
    c->prof = calloc((size_t)e->n_steps + 1, sizeof *c->prof);
    if (!c->prof) {
      free(c);
      return infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory");
    }
    for (int s = 0; s < e->n_steps; s++) {
      const node *n = &g->nodes[e->steps[s]];
      c->prof[s].node = n->name;
      c->prof[s].op = n->op_type;
      c->prof[s].impl = "cpu";
    }
  }
#ifdef INFER_HAVE_CUDA
  if (e->cuda) {
    c->input_set = calloc((size_t)g->n_inputs + 1, sizeof(bool));
    infer_status st = c->input_set ? cuda_context_create(e, &c->cuda)
                                   : infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory");
    if (st != INFER_OK) {
      infer_context_release(c);
      return st;
    }
    *out = c;
    return INFER_OK;
  }
#endif
  int io = 1;
  for (int i = 0; i < g->n_nodes; i++) {
    if (g->nodes[i].n_inputs > io) io = g->nodes[i].n_inputs;
    if (g->nodes[i].n_outputs > io) io = g->nodes[i].n_outputs;
  }
  c->vals = calloc((size_t)g->n_values + 1, sizeof(tensor));
  c->input_set = calloc((size_t)g->n_inputs + 1, sizeof(bool));
  c->in = calloc((size_t)io, sizeof *c->in);
  c->out = calloc((size_t)io, sizeof *c->out);
  c->arena = malloc(e->mem.arena_bytes > 0 ? (size_t)e->mem.arena_bytes : 1);
  if (!c->vals || !c->input_set || !c->in || !c->out || !c->arena) {
    infer_context_release(c);
    return infer_fail(INFER_ERR_OUT_OF_MEMORY, "cannot allocate a context (arena %lld bytes)",
                      (long long)e->mem.arena_bytes);
  }
  for (int v = 0; v < g->n_values; v++) {
    c->vals[v] = g->values[v].t;
    if (g->values[v].kind != VALUE_CONSTANT)
      c->vals[v].data = e->buffer_of[v] >= 0 ? c->arena + e->mem.offsets[e->buffer_of[v]] : NULL;
  }
  c->ws_bytes = e->ws_bytes;
  if (c->ws_bytes > 0 && !(c->ws = malloc((size_t)c->ws_bytes))) {
    infer_context_release(c);
    return infer_fail(INFER_ERR_OUT_OF_MEMORY, "cannot allocate a %lld-byte workspace",
                      (long long)c->ws_bytes);
  }
  *out = c;
  return INFER_OK;
}

void infer_context_release(infer_context *c) {
  if (!c) return;
#ifdef INFER_HAVE_CUDA
  cuda_context_release(c->cuda);
#endif
  free(c->prof);
  dyn_free(c);
  free(c->dyn);
  free(c->arena);
  free(c->ws);
  free(c->vals);
  free(c->input_set);
  free(c->in);
  free(c->out);
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
                      "engine was built for batch %lld; build it for a larger one with "
                      "infer_options_set_batch)", v->name,
                      (long long)t->dims[0], (long long)v->t.dims[0], (long long)v->t.dims[0]);
#ifdef INFER_HAVE_CUDA
  /* the GPU runs the build batch; a smaller one is its first rows (engine/batch_rows.c) */
  if (flex && c->cuda && t->dims[0] != v->t.dims[0] && !c->e->rows_independent)
    return infer_fail(INFER_ERR_INVALID_INPUT, "input '%s': batch %lld, but this GPU engine "
                      "runs only its build batch %lld: %s (build it for batch %lld with "
                      "infer_options_set_batch, or run on the CPU)", v->name,
                      (long long)t->dims[0], (long long)v->t.dims[0], c->e->rows_why,
                      (long long)t->dims[0]);
#endif
  if (flex) {
    if (c->vals) c->vals[g->inputs[index]].dims[0] = t->dims[0]; /* CPU contexts only */
    c->run_batch = t->dims[0];
  }
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
#ifdef INFER_HAVE_CUDA
  if (c->cuda) {
    TRY(cuda_context_set_input(c->cuda, index, t->data, nb));
    c->input_set[index] = true;
    return INFER_OK;
  }
#endif
  if (nb > 0) memcpy(c->vals[g->inputs[index]].data, t->data, (size_t)nb);
  c->input_set[index] = true;
  return INFER_OK;
}

/* Shared checks of infer_context_bind_{input,output}_device: the index, the byte
 * count (the whole tensor in the model's dtype at the engine's shape), then the
 * engine's kind. *v gets the value, for messages. */
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
  if (!c->cuda)
    return infer_fail(INFER_ERR_UNSUPPORTED, "%s: %s '%s': device memory binding needs a CUDA "
                      "engine (this one runs on the CPU; use infer_context_%s)", fn, kind,
                      (*v)->name, is_input ? "set_input" : "get_output");
  return INFER_OK;
}

infer_status infer_context_bind_input_device(infer_context *c, int index, const void *device_ptr,
                                             int64_t bytes) {
  const value *v = NULL;
  TRY(bind_check(c, "infer_context_bind_input_device", true, index, device_ptr, bytes, &v));
  if (!c->cuda) return INFER_OK; /* unbinding on the CPU: nothing was bound */
#ifdef INFER_HAVE_CUDA
  if (device_ptr && v->kind == VALUE_CONSTANT)
    /* the engine never reads it at run time, and its value cannot be checked
     * against the build's without a device-to-host copy */
    return infer_fail(INFER_ERR_UNSUPPORTED, "input '%s' was fixed to a value when the engine "
                      "was built; set it with infer_context_set_input, not device memory",
                      v->name);
  TRY(cuda_context_bind_input(c->cuda, index, device_ptr));
#endif
  return INFER_OK;
}

infer_status infer_context_bind_output_device(infer_context *c, int index, void *device_ptr,
                                              int64_t bytes) {
  const value *v = NULL;
  TRY(bind_check(c, "infer_context_bind_output_device", false, index, device_ptr, bytes, &v));
  if (!c->cuda) return INFER_OK;
#ifdef INFER_HAVE_CUDA
  TRY(cuda_context_bind_output(c->cuda, index, device_ptr));
#endif
  return INFER_OK;
}

/* Flexible batch: re-infers a node's output shapes for this run's inputs; the
 * outputs keep their planned arena slots, which were sized for the build batch. */
static infer_status run_flex_prepare(infer_context *c, const node *n) {
  const infer_engine *e = c->e;
  void *data[256];
  int nout = n->n_outputs < 256 ? n->n_outputs : 256;
  for (int k = 0; k < nout; k++) {
    data[k] = c->out[k] ? c->out[k]->data : NULL;
    if (c->out[k]) memset(c->out[k], 0, sizeof(tensor));
  }
  infer_status st = n->op->infer(n, n->params, c->in, c->out);
  if (st == INFER_ERR_INVALID_MODEL) st = INFER_ERR_INVALID_INPUT;
  for (int k = 0; k < nout; k++)
    if (c->out[k]) c->out[k]->data = data[k];
  TRY(st);
  for (int k = 0; k < nout; k++) {
    if (!c->out[k]) continue;
    int b = e->buffer_of[n->outputs[k]];
    int64_t nb = tensor_nbytes(c->out[k]);
    if (b < 0 || nb < 0 || nb > e->mem.sizes[b])
      return infer_fail(INFER_ERR_INVALID_INPUT, "output %d needs %lld bytes at this batch, more "
                        "than the %lld planned for the build batch", k, (long long)nb,
                        (long long)(b >= 0 ? e->mem.sizes[b] : 0));
  }
  int64_t w = n->op->workspace ? n->op->workspace(n, n->params, c->in, c->out) : 0;
  if (w < 0 || w > c->ws_bytes)
    return infer_fail(INFER_ERR_INVALID_INPUT, "the step needs %lld bytes of scratch at this "
                      "batch, more than the %lld planned", (long long)w, (long long)c->ws_bytes);
  return INFER_OK;
}

/* Re-infers a node whose shapes were not known at build and gives its outputs
 * heap buffers. */
static infer_status run_dynamic_prepare(infer_context *c, const node *n, void **ws) {
  for (int k = 0; k < n->n_outputs; k++)
    if (c->out[k]) memset(c->out[k], 0, sizeof(tensor));
  infer_status st = n->op->infer(n, n->params, c->in, c->out);
  /* the model was valid at build: a shape that does not fit now comes from the
   * input values of this run */
  if (st == INFER_ERR_INVALID_MODEL) st = INFER_ERR_INVALID_INPUT;
  TRY(st);
  for (int k = 0; k < n->n_outputs; k++) {
    if (!c->out[k]) continue;
    int64_t nb = tensor_nbytes(c->out[k]);
    if (nb < 0) return infer_fail(INFER_ERR_RUNTIME, "output %d is too large", k);
    if (!(c->out[k]->data = dyn_alloc(c, nb)))
      return infer_fail(INFER_ERR_OUT_OF_MEMORY, "cannot allocate %lld bytes", (long long)nb);
  }
  int64_t w = n->op->workspace ? n->op->workspace(n, n->params, c->in, c->out) : 0;
  if (w < 0) return infer_fail(INFER_ERR_RUNTIME, "workspace size overflows");
  if (w > c->ws_bytes) {
    if (!(*ws = dyn_alloc(c, w)))
      return infer_fail(INFER_ERR_OUT_OF_MEMORY, "cannot allocate %lld bytes", (long long)w);
  }
  return INFER_OK;
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
#ifdef INFER_HAVE_CUDA
  if (c->cuda) return cuda_context_health(c->cuda);
#endif
  return INFER_OK; /* CPU runs leave nothing behind that could fail later runs */
}

static infer_status context_run(infer_context *c) {
  const infer_engine *e = c->e;
  const graph *g = e->g;
  c->ran = false; /* outputs of a failed run must never be read */
  for (int i = 0; i < g->n_inputs; i++) {
    bool bound = false;
#ifdef INFER_HAVE_CUDA
    bound = c->cuda && cuda_context_input_bound(c->cuda, i);
#endif
    if (!c->input_set[i] && !bound)
      return infer_fail(INFER_ERR_INVALID_INPUT, "input '%s' was not set (nor bound to device "
                        "memory)", g->values[g->inputs[i]].name);
  }
#ifdef INFER_HAVE_CUDA
  if (c->cuda) {
    TRY(cuda_context_run(c->cuda));
    if (c->prof) TRY(cuda_context_profile(c->cuda, c->prof));
    c->ran = true;
    return INFER_OK;
  }
#endif
  dyn_free(c);
  char d[256];
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (int s = 0; s < e->n_steps; s++) {
    const node *n = &g->nodes[e->steps[s]];
    gather(c, n);
    void *ws = c->ws;
    bool dynamic = false;
    for (int k = 0; k < n->n_outputs; k++)
      if (n->outputs[k] >= 0 && !g->values[n->outputs[k]].shape_known) dynamic = true;
    infer_status st = dynamic           ? run_dynamic_prepare(c, n, &ws)
                      : e->max_batch > 0 ? run_flex_prepare(c, n)
                                         : INFER_OK;
    struct timespec s0, s1;
    if (c->prof) clock_gettime(CLOCK_MONOTONIC, &s0);
    if (st == INFER_OK) st = n->op->run(n, n->params, c->in, c->out, ws);
    if (st != INFER_OK) return infer_fail_prefix(st, "%s", node_describe(g, e->steps[s], d, sizeof d));
    if (c->prof) {
      clock_gettime(CLOCK_MONOTONIC, &s1);
      c->prof[s].ms = (double)(s1.tv_sec - s0.tv_sec) * 1e3 + (double)(s1.tv_nsec - s0.tv_nsec) * 1e-6;
      step_cost(n, c->in, c->out, &c->prof[s].flops, &c->prof[s].bytes);
    }
  }
  clock_gettime(CLOCK_MONOTONIC, &t1);
  c->cpu_ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-6;
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
#ifdef INFER_HAVE_CUDA
  if (c->cuda) return cuda_context_timing(c->cuda, t);
#endif
  t->compute_ms = c->cpu_ms;
  return INFER_OK;
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
#ifdef INFER_HAVE_CUDA
  if (c->cuda) {
    if (cuda_context_output_bound(c->cuda, index))
      return infer_fail(INFER_ERR_INVALID_ARGUMENT, "output '%s' is bound to device memory "
                        "(infer_context_bind_output_device): the run wrote it there; bind NULL "
                        "to read it here again", g->values[g->outputs[index]].name);
    void *host = cuda_context_output(c->cuda, index);
    if (!host)
      return infer_fail(INFER_ERR_RUNTIME, "output '%s' is not available here: the last run "
                        "wrote it to the device memory bound then; run again to read it here",
                        g->values[g->outputs[index]].name);
    *out = g->values[g->outputs[index]].t;
    out->data = host;
    /* a smaller run batch: the first rows of the build batch's output */
    if (g->values[g->outputs[index]].shape_dep && c->run_batch > 0 && out->rank > 0)
      out->dims[0] = c->run_batch;
    return INFER_OK;
  }
#endif
  *out = c->vals[g->outputs[index]];
  return INFER_OK;
}
