/* cpu_context.c: the CPU backend's per-thread state and run loop.
 *
 * A run is computed inside enqueue (the CPU has nothing to overlap it with); its status
 * and message are kept for the wait, which may come on another thread. Image inputs
 * (engine/image_input.h) are written as uint8 NHWC into a staging buffer of their own
 * and converted into the float input's arena slot at the start of each run.
 * A context owns one arena laid out by the planner, one workspace sized to the largest
 * need, and a tensor table mapping every value to its bytes. Static graphs allocate
 * nothing during a run. Graphs whose shapes depend on run-time data (e.g. a Reshape
 * whose shape is a graph input) re-infer those nodes at run time and take their
 * buffers from the heap (core/run_heap.h); that memory is released at the next run.
 * Control flow (If, Loop, Scan) runs its subgraphs through cpu_subgraph.c on that heap
 * too; outputs whose shapes were derived at build (ops/control_shapes.c) are checked
 * against them and copied into their planned slots. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../core/run_heap.h"
#include "../../core/status.h"
#include "../../core/tensor_limits.h"
#include "../../ops/op.h"
#include "../image_input.h"
#include "cpu_internal.h"

typedef struct cpu_context {
  const infer_engine *e;
  uint8_t *arena;
  void *ws;
  int64_t ws_bytes;
  tensor *vals; /* per value */
  const tensor **in;
  tensor **out;
  tensor *res, **res_of; /* a control node's results, before they go to its outputs */
  run_heap heap; /* blocks of the last run's shapes known only then (from the budget) */
  double run_ms;    /* host time of the last run */
  double *step_ms;  /* per step, when profiling */
  uint8_t **image;  /* per input: uint8 NHWC staging of an image input, else NULL */
  mem_budget *budget; /* the engine's host memory budget */
  int64_t taken;      /* what this context took of it at creation */
  infer_status last; /* status of the run enqueued, for the wait */
  char last_message[2048];
} cpu_context;

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

/* Gathers node n's tensors from the table. */
static void gather(cpu_context *c, const node *n) {
  for (int k = 0; k < n->n_inputs; k++) c->in[k] = n->inputs[k] >= 0 ? &c->vals[n->inputs[k]] : NULL;
  for (int k = 0; k < n->n_outputs; k++) c->out[k] = n->outputs[k] >= 0 ? &c->vals[n->outputs[k]] : NULL;
}

void cpu_context_release(void *ctx) {
  cpu_context *c = ctx;
  if (!c) return;
  run_heap_release(&c->heap);
  free(c->arena);
  free(c->ws);
  free(c->vals);
  free(c->in);
  free(c->out);
  free(c->res);
  free(c->res_of);
  free(c->step_ms);
  for (int i = 0; c->image && i < c->e->g->n_inputs; i++) free(c->image[i]);
  free(c->image);
  mem_budget_give(c->budget, c->taken);
  free(c);
}

infer_status cpu_context_create(infer_engine *e, void **ctx) {
  const graph *g = e->g;
  cpu_context *c = calloc(1, sizeof *c);
  if (!c) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory");
  c->e = e;
  /* the big blocks are taken from the host memory limit before any is allocated */
  int64_t ws_bytes = ((const cpu_engine *)e->be_state)->ws_bytes, staging = 0;
  for (int i = 0; i < g->n_inputs; i++)
    if (engine_image_feed(e, i)) staging += tensor_nbytes(engine_input_tensor(e, i));
  char what[200];
  snprintf(what, sizeof what, "a CPU context (arena %lld + workspace %lld + image staging "
           "%lld bytes)", (long long)e->mem.arena_bytes, (long long)ws_bytes, (long long)staging);
  infer_status taken = mem_budget_take(&e->host_mem, e->mem.arena_bytes + ws_bytes + staging, what);
  if (taken != INFER_OK) {
    free(c);
    return taken;
  }
  c->budget = &e->host_mem;
  c->heap.budget = &e->host_mem;
  c->taken = e->mem.arena_bytes + ws_bytes + staging;
  int io = 1;
  for (int i = 0; i < g->n_nodes; i++) {
    if (g->nodes[i].n_inputs > io) io = g->nodes[i].n_inputs;
    if (g->nodes[i].n_outputs > io) io = g->nodes[i].n_outputs;
  }
  c->vals = calloc((size_t)g->n_values + 1, sizeof(tensor));
  c->in = calloc((size_t)io, sizeof *c->in);
  c->out = calloc((size_t)io, sizeof *c->out);
  c->res = calloc((size_t)io, sizeof *c->res);
  c->res_of = calloc((size_t)io, sizeof *c->res_of);
  c->arena = malloc(e->mem.arena_bytes > 0 ? (size_t)e->mem.arena_bytes : 1);
  if (e->opts.profile) c->step_ms = calloc((size_t)e->n_steps + 1, sizeof(double));
  if (!c->vals || !c->in || !c->out || !c->res || !c->res_of || !c->arena ||
      (e->opts.profile && !c->step_ms)) {
    cpu_context_release(c); /* e, not c, below */
    return infer_fail(INFER_ERR_OUT_OF_MEMORY, "cannot allocate a context (arena %lld bytes)",
                      (long long)e->mem.arena_bytes);
  }
  for (int v = 0; v < g->n_values; v++) {
    c->vals[v] = g->values[v].t;
    if (g->values[v].kind != VALUE_CONSTANT)
      c->vals[v].data = e->buffer_of[v] >= 0 ? c->arena + e->mem.offsets[e->buffer_of[v]] : NULL;
  }
  /* image inputs' staging, zeroed: a run never reads uninitialized bytes */
  c->image = calloc((size_t)g->n_inputs + 1, sizeof *c->image);
  bool staged = c->image != NULL;
  for (int i = 0; staged && i < g->n_inputs; i++) {
    if (!engine_image_feed(e, i)) continue;
    int64_t nb = tensor_nbytes(engine_input_tensor(e, i));
    staged = (c->image[i] = calloc(nb > 0 ? (size_t)nb : 1, 1)) != NULL;
  }
  if (!staged) {
    cpu_context_release(c);
    return infer_fail(INFER_ERR_OUT_OF_MEMORY, "cannot allocate the staging of an image input");
  }
  c->ws_bytes = ((const cpu_engine *)e->be_state)->ws_bytes;
  if (c->ws_bytes > 0 && !(c->ws = malloc((size_t)c->ws_bytes))) {
    int64_t ws = c->ws_bytes;
    cpu_context_release(c);
    return infer_fail(INFER_ERR_OUT_OF_MEMORY, "cannot allocate a %lld-byte workspace",
                      (long long)ws);
  }
  *ctx = c;
  return INFER_OK;
}

infer_status cpu_context_set_input(void *ctx, int index, const infer_tensor *t) {
  cpu_context *c = ctx;
  const graph *g = c->e->g;
  int v = g->inputs[index];
  /* a flexible batch: this run's dims (the arena slot was planned for the build's) */
  if (g->values[v].shape_dep && t->rank > 0) c->vals[v].dims[0] = t->dims[0];
  int64_t nb = tensor_nbytes(t);
  void *dst = c->image[index] ? (void *)c->image[index] : c->vals[v].data;
  if (nb > 0) memcpy(dst, t->data, (size_t)nb);
  return INFER_OK;
}

infer_status cpu_context_input_buffer(void *ctx, int index, void **ptr) {
  cpu_context *c = ctx;
  const graph *g = c->e->g;
  int v = g->inputs[index];
  /* the full build shape from now on (a flexible batch set earlier no longer holds) */
  c->vals[v].dims[0] = g->values[v].t.dims[0];
  *ptr = c->image[index] ? (void *)c->image[index] : c->vals[v].data;
  return INFER_OK;
}

infer_status cpu_context_output_buffer(void *ctx, int index, const void **ptr) {
  cpu_context *c = ctx;
  *ptr = c->vals[c->e->g->outputs[index]].data;
  return INFER_OK;
}

/* Image inputs: uint8 NHWC staging -> the float NCHW arena slot the steps read, for the
 * run's batch. */
static void convert_image_inputs(cpu_context *c) {
  const graph *g = c->e->g;
  for (int i = 0; i < g->n_inputs; i++) {
    const image_feed *f = engine_image_feed(c->e, i);
    if (!f) continue;
    const tensor *t = &c->vals[g->inputs[i]];
    image_u8_nhwc_to_f32_nchw(c->image[i], t->data, t->dims[0], t->dims[2], t->dims[3],
                              f->channels, f->mean, f->std);
  }
}

/* Flexible batch: re-infers a node's output shapes for this run's inputs; the
 * outputs keep their planned arena slots, which were sized for the build batch. */
static infer_status run_flex_prepare(cpu_context *c, const node *n) {
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
static infer_status run_dynamic_prepare(cpu_context *c, const node *n, void **ws) {
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
    char what[64];
    snprintf(what, sizeof what, "output %d", k);
    TRY(tensor_check_limits(c->out[k]->rank, c->out[k]->dims, what));
    snprintf(what, sizeof what, "output %d at this run's shapes", k);
    TRY(run_heap_alloc(&c->heap, nb, what, &c->out[k]->data));
  }
  int64_t w = n->op->workspace ? n->op->workspace(n, n->params, c->in, c->out) : 0;
  if (w < 0) return infer_fail(INFER_ERR_RUNTIME, "workspace size overflows");
  if (w > c->ws_bytes) TRY(run_heap_alloc(&c->heap, w, "the workspace at this run's shapes", ws));
  return INFER_OK;
}

/* Subgraph values and scratch: run-time heap blocks charged to the memory budget (NULL
 * when the budget or malloc refuses; the executor reports it). */
static void *exec_alloc(op_exec *x, int64_t bytes) {
  void *p = NULL;
  cpu_context *c = x->state;
  infer_status s = run_heap_alloc(&c->heap, bytes, "a subgraph value at this run's shapes", &p);
  return s == INFER_OK ? p : NULL;
}

/* Result k of control node n into the output's arena slot, which was planned for the
 * shape derived at build (ops/control_shapes.c): it must have that shape (or, for a
 * flexible batch, fit the slot); a result that does not is refused, never written past
 * the slot. */
static infer_status control_result_to_slot(cpu_context *c, const node *n, int k,
                                           const tensor *got) {
  const infer_engine *e = c->e;
  const value *v = &e->g->values[n->outputs[k]];
  tensor *slot = c->out[k];
  const int b = e->buffer_of[n->outputs[k]];
  const int64_t nb = tensor_nbytes(got);
  if (!v->shape_dep) {
    TRY(control_output_check(n, k, &v->t, got));
  } else if (b < 0 || got->dtype != v->t.dtype || got->rank != v->t.rank || nb < 0 ||
             nb > e->mem.sizes[b]) {
    char a[128], w[128];
    return infer_fail(INFER_ERR_RUNTIME, "output %d is %s %s at this run's batch, which does "
                      "not fit the %lld bytes planned for %s %s at the build batch", k,
                      infer_dtype_name(got->dtype), dims_format(got->rank, got->dims, a, sizeof a),
                      (long long)(b >= 0 ? e->mem.sizes[b] : 0), infer_dtype_name(v->t.dtype),
                      dims_format(v->t.rank, v->t.dims, w, sizeof w));
  }
  memcpy(slot->dims, got->dims, sizeof slot->dims); /* a flexible batch's dims for this run */
  if (nb > 0) memcpy(slot->data, got->data, (size_t)nb);
  return INFER_OK;
}

/* A control-flow node (If, Loop, Scan): its subgraphs run through the subgraph executor,
 * every value on the run-time heap. An output whose shape was derived at build has an
 * arena slot, where the result is copied (readers and infer_context_output_buffer see the
 * slot); an output known only after the run takes the heap result as it is. */
static infer_status run_control(cpu_context *c, const node *n) {
  const graph *g = c->e->g;
  op_exec x = {.run_graph = cpu_subgraph_run, .alloc = exec_alloc, .state = c, .depth = 0};
  for (int k = 0; k < n->n_outputs; k++) {
    c->res_of[k] = c->out[k] ? &c->res[k] : NULL;
    memset(&c->res[k], 0, sizeof(tensor));
  }
  TRY(n->op->control(n, n->params, c->in, c->res_of, &x));
  for (int k = 0; k < n->n_outputs; k++) {
    if (!c->out[k]) continue;
    if (g->values[n->outputs[k]].shape_known && c->out[k]->data)
      TRY(control_result_to_slot(c, n, k, &c->res[k]));
    else
      *c->out[k] = c->res[k];
  }
  return INFER_OK;
}

static infer_status cpu_context_run(cpu_context *c) {
  const infer_engine *e = c->e;
  const graph *g = e->g;
  run_heap_reset(&c->heap);
  char d[256];
  double t0 = now_ms();
  convert_image_inputs(c);
  bool fp16 = ((const cpu_engine *)e->be_state)->fp16_storage;
  /* the GPU casts inputs to float16 on the way in (the in-place buffer is rounded too) */
  for (int i = 0; fp16 && i < g->n_inputs; i++)
    if (!g->values[g->inputs[i]].keep_fp32) cpu_round_to_fp16(&c->vals[g->inputs[i]]);
  for (int s = 0; s < e->n_steps; s++) {
    const node *n = &g->nodes[e->steps[s]];
    gather(c, n);
    void *ws = c->ws;
    bool dynamic = false;
    for (int k = 0; k < n->n_outputs; k++)
      if (n->outputs[k] >= 0 && !g->values[n->outputs[k]].shape_known) dynamic = true;
    infer_status st = n->op->control    ? INFER_OK /* sized by its subgraphs' run */
                      : dynamic         ? run_dynamic_prepare(c, n, &ws)
                      : e->max_batch > 0 ? run_flex_prepare(c, n)
                                         : INFER_OK;
    double s0 = c->step_ms ? now_ms() : 0;
    if (st == INFER_OK && n->op->control) st = run_control(c, n);
    else if (st == INFER_OK) st = n->op->run(n, n->params, c->in, c->out, ws);
    if (st != INFER_OK) return infer_fail_prefix(st, "%s", node_describe(g, e->steps[s], d, sizeof d));
    if (c->step_ms) c->step_ms[s] = now_ms() - s0;
    for (int k = 0; fp16 && k < n->n_outputs; k++) /* mixed precision: kept values stay */
      if (c->out[k] && !g->values[n->outputs[k]].keep_fp32) cpu_round_to_fp16(c->out[k]);
  }
  c->run_ms = now_ms() - t0;
  return INFER_OK;
}

infer_status cpu_context_enqueue(void *ctx) {
  cpu_context *c = ctx;
  c->last = cpu_context_run(c);
  if (c->last != INFER_OK) snprintf(c->last_message, sizeof c->last_message, "%s", infer_last_error());
  return INFER_OK; /* the run's own status is the wait's */
}

infer_status cpu_context_wait(void *ctx) {
  cpu_context *c = ctx;
  if (c->last == INFER_OK) return INFER_OK;
  return infer_fail(c->last, "%s", c->last_message);
}

infer_status cpu_context_output(void *ctx, int index, int64_t run_batch, infer_tensor *out) {
  cpu_context *c = ctx;
  (void)run_batch; /* the table holds this run's dims already */
  *out = c->vals[c->e->g->outputs[index]];
  return INFER_OK;
}

infer_status cpu_context_profile(void *ctx, infer_step_profile *steps) {
  cpu_context *c = ctx;
  const infer_engine *e = c->e;
  for (int s = 0; s < e->n_steps; s++) {
    const node *n = &e->g->nodes[e->steps[s]];
    gather(c, n);
    steps[s].impl = "cpu";
    steps[s].ms = c->step_ms ? c->step_ms[s] : 0;
    step_cost(n, c->in, c->out, &steps[s].flops, &steps[s].bytes);
  }
  return INFER_OK;
}

infer_status cpu_context_timing(const void *ctx, infer_run_timing *t) {
  t->compute_ms = ((const cpu_context *)ctx)->run_ms;
  return INFER_OK;
}

void cpu_round_to_fp16(tensor *t) {
  if (t->dtype != INFER_DTYPE_FLOAT32 || !t->data) return;
  float *x = t->data;
  int64_t n = dims_count(t->rank, t->dims);
  for (int64_t i = 0; i < n; i++) x[i] = half_to_float(float_to_half(x[i]));
}

infer_status cpu_context_read_value(void *ctx, int v, float *dst) {
  cpu_context *c = ctx;
  const tensor *t = &c->vals[v];
  if (!t->data) return infer_fail(INFER_ERR_INVALID_ARGUMENT, "value '%s' holds no data",
                                  c->e->g->values[v].name);
  int64_t n = dims_count(t->rank, t->dims);
  for (int64_t i = 0; i < n; i++) dst[i] = (float)tensor_get_f64(t, i);
  return INFER_OK;
}
