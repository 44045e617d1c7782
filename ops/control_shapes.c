/* control_shapes.c: the output shapes of If, Loop and Scan derived at build (their
 * op_desc.infer, ops/control.c), where they do not depend on run-time data, so that a
 * backend can plan their buffers like any other step's (a CUDA engine runs them through
 * the host fallback, ops/cuda/cuda_host_fallback.c).
 *
 * A subgraph is walked the way shape inference walks the main graph (engine/fold.c):
 * each node's infer on its inputs' dtypes and shapes, and its CPU reference on inputs
 * whose data is known (the subgraph's constants, constants of the graphs around it read
 * as captures, Shape/Size of known shapes), so that shapes computed from shapes inside a
 * body come out. Formal inputs have the shapes the node gives them and no data (they
 * change from one iteration to the next), except Loop's condition input, which is true
 * on every iteration that runs. Declared shapes (value_info, a subgraph's output types)
 * are not read: only what the walk derives counts. A node the walk cannot infer (it
 * needs data known only at run, or fails on these shapes, as the branch of an If that a
 * build-time condition never takes may) leaves its outputs unknown, and what reads them;
 * that is no error. Nested control nodes are derived by their own infer, recursively
 * (the nesting is bounded by GRAPH_SUBGRAPH_DEPTH_MAX when the model is bound); each
 * subgraph is walked once per derivation, so the work is linear in the model's size.
 *
 * - If: the branch a build-time condition takes; with a condition known only at run,
 *   both branches, where they agree in dtype and shape.
 * - Scan: the scan length is the scan inputs' axis length (>= 1). The body sees every
 *   state at its initial shape and every scan input's slice; each state must come out at
 *   its input's dtype and shape (then, by induction, every iteration sees the same
 *   shapes), and a scan output is the body's output with the length inserted at its
 *   output axis.
 * - Loop: carried values as Scan's states (or, zero trips proven at build, the initial
 *   values). Scan outputs only when the trip count is exact: M a build-time constant
 *   >= 1, the condition input absent or a build-time true, and the body's condition
 *   output folding to true from a true condition input whatever the iteration number and
 *   carried values (so no iteration can end the loop early); then [M, body's shape].
 * Anything else gives OP_NEEDS_DATA (the shapes come from the run), as before.
 *
 * The backends plan buffers of these shapes and check every run's results against them
 * (control_output_check), failing the run with the node named when they differ. */
#include <string.h>

#include "../core/run_heap.h"
#include "../core/status.h"
#include "control_params.h"

/* Folded values inside a walk are for shapes (axes, targets of Reshape): larger ones keep
 * their shape only. */
enum { WALK_FOLD_MAX = 1 << 16 };

/* What a walk derived for one subgraph value. */
typedef struct walk_val {
  tensor t;   /* dtype and shape; data where known (the graph's, the caller's or the walk's) */
  bool known; /* dtype and shape known */
} walk_val;

static void *walk_alloc(run_heap *h, int64_t bytes) {
  void *p = NULL;
  infer_status s = run_heap_alloc(h, bytes, "a value while deriving a subgraph's shapes", &p);
  return s == INFER_OK ? p : NULL;
}

/* Whether infer's output t is a tensor the run could hold. */
static bool plausible(const tensor *t) {
  if (t->rank < 0 || t->rank > INFER_MAX_RANK || infer_dtype_size(t->dtype) == 0) return false;
  for (int r = 0; r < t->rank; r++)
    if (t->dims[r] < 0) return false;
  return tensor_nbytes(t) >= 0;
}

/* Node n's outputs from its CPU reference, its inputs' data being known; a value that is
 * too large or that the op refuses keeps its shape only. */
static void walk_fold(run_heap *h, const node *n, const tensor **in, tensor **out) {
  for (int k = 0; k < n->n_outputs; k++) {
    if (!out[k]) continue;
    int64_t nb = tensor_nbytes(out[k]);
    if (nb > WALK_FOLD_MAX || !(out[k]->data = walk_alloc(h, nb))) goto none;
  }
  int64_t w = n->op->workspace ? n->op->workspace(n, n->params, in, out) : 0;
  void *ws = NULL;
  if (w < 0 || w > WALK_FOLD_MAX || (w > 0 && !(ws = walk_alloc(h, w)))) goto none;
  if (n->op->run(n, n->params, in, out, ws) == INFER_OK) return;
none:
  for (int k = 0; k < n->n_outputs; k++)
    if (out[k]) out[k]->data = NULL;
}

/* The dtypes and shapes of sg's outputs into res[k] (sg->n_outputs of them, from h):
 * formal[i] for its inputs (NULL: unknown), node_in the control node's inputs (the
 * captures). Data in res stays valid while h and the inputs do. NULL when out of memory
 * (then nothing is derived). */
static walk_val *walk_graph(run_heap *h, const graph *sg, const tensor *const *formal,
                            const tensor *const *node_in) {
  int io = 1;
  for (int i = 0; i < sg->n_nodes; i++) {
    if (sg->nodes[i].n_inputs > io) io = sg->nodes[i].n_inputs;
    if (sg->nodes[i].n_outputs > io) io = sg->nodes[i].n_outputs;
  }
  walk_val *vals = walk_alloc(h, (int64_t)sizeof(walk_val) * (sg->n_values + 1));
  walk_val *res = walk_alloc(h, (int64_t)sizeof(walk_val) * (sg->n_outputs + 1));
  const tensor **in = walk_alloc(h, (int64_t)sizeof(tensor *) * io);
  tensor **out = walk_alloc(h, (int64_t)sizeof(tensor *) * io);
  if (!vals || !res || !in || !out) return NULL;
  for (int v = 0; v < sg->n_values; v++) {
    const value *val = &sg->values[v];
    vals[v].t = val->t;
    vals[v].known = val->kind == VALUE_CONSTANT && val->t.data != NULL;
    if (!vals[v].known) vals[v].t.data = NULL;
  }
  for (int i = 0; i < sg->n_inputs; i++) {
    const value *v = &sg->values[sg->inputs[i]];
    /* a dtype the body does not declare fails the run (cpu_subgraph.c): unknown */
    if (!formal[i] || (v->has_type && v->t.dtype != formal[i]->dtype)) continue;
    vals[sg->inputs[i]] = (walk_val){*formal[i], true};
  }
  for (int c = 0; c < sg->n_captures; c++) {
    const tensor *t = node_in[sg->capture_input[c]];
    if (t) vals[sg->captures[c]] = (walk_val){*t, true};
  }
  for (int i = 0; i < sg->n_nodes; i++) {
    const node *n = &sg->nodes[i];
    if (n->removed) continue;
    bool known = true, all_data = true;
    for (int k = 0; k < n->n_inputs; k++) {
      int v = n->inputs[k];
      in[k] = v >= 0 ? &vals[v].t : NULL;
      if (v < 0) continue;
      known &= vals[v].known;
      all_data &= vals[v].t.data != NULL;
    }
    if (!known) continue;
    for (int k = 0; k < n->n_outputs; k++) {
      int v = n->outputs[k];
      out[k] = v >= 0 ? &vals[v].t : NULL;
      if (out[k]) memset(out[k], 0, sizeof(tensor));
    }
    if (n->op->infer(n, n->params, in, out) != INFER_OK) continue; /* unknown, not an error */
    bool ok = true;
    for (int k = 0; k < n->n_outputs; k++) ok &= !out[k] || plausible(out[k]);
    if (!ok) continue;
    for (int k = 0; k < n->n_outputs; k++)
      if (n->outputs[k] >= 0) vals[n->outputs[k]].known = true;
    if (!n->op->control && (all_data || n->op->fold_from_shape)) walk_fold(h, n, in, out);
  }
  for (int k = 0; k < sg->n_outputs; k++) res[k] = vals[sg->outputs[k]];
  return res;
}

/* Shared with the run (ops/control.c): the scalar a Loop body's input i receives. */
void control_body_scalar(const graph *body, int i, infer_dtype dt, void *data, tensor *t) {
  const value *v = &body->values[body->inputs[i]];
  memset(t, 0, sizeof *t);
  t->dtype = dt;
  t->rank = v->shape_known && v->t.rank == 1 ? 1 : 0;
  t->dims[0] = 1;
  t->data = data;
}

static bool same_type(const tensor *a, const tensor *b) {
  return a->dtype == b->dtype && dims_equal(a->rank, a->dims, b->rank, b->dims);
}

/* The dtype and shape of t, no data, into out. */
static void shape_into(tensor *out, const tensor *t) {
  memset(out, 0, sizeof *out);
  out->dtype = t->dtype;
  out->rank = t->rank;
  memcpy(out->dims, t->dims, sizeof(int64_t) * (size_t)t->rank);
}

/* The value of a one-element bool or int64 tensor whose data is known. */
static bool known_scalar(const tensor *t, infer_dtype dt, int64_t *v) {
  if (!t || !t->data || t->dtype != dt || dims_count(t->rank, t->dims) != 1) return false;
  *v = dt == INFER_DTYPE_BOOL ? (((const uint8_t *)t->data)[0] != 0) : tensor_get_i64(t, 0);
  return true;
}

/* A scan output: the body's per-iteration shape `part` with `iters` inserted at axis
 * (normalized over the result's rank, as the run stacks it). */
static bool stacked(const tensor *part, int64_t iters, int64_t axis, tensor *out) {
  int a;
  if (part->rank + 1 > INFER_MAX_RANK || axis < -(part->rank + 1) || axis > part->rank)
    return false;
  a = axis < 0 ? (int)axis + part->rank + 1 : (int)axis;
  memset(out, 0, sizeof *out);
  out->dtype = part->dtype;
  out->rank = part->rank + 1;
  for (int d = 0, k = 0; d < out->rank; d++) out->dims[d] = d == a ? iters : part->dims[k++];
  return tensor_nbytes(out) >= 0;
}

infer_status control_if_infer(const node *n, const void *params, const tensor *const *in,
                              tensor *const *out) {
  const control_params *p = params;
  const graph *branch[2] = {p->then_g, p->else_g};
  int64_t cond = 0;
  int lo = 0, hi = 2; /* the branches walked */
  if (known_scalar(in[0], INFER_DTYPE_BOOL, &cond)) { /* only the branch it takes ever runs */
    lo = cond ? 0 : 1;
    hi = lo + 1;
  }
  run_heap h = {0};
  walk_val *res[2] = {NULL, NULL};
  bool ok = true;
  for (int b = lo; b < hi && ok; b++) ok = (res[b] = walk_graph(&h, branch[b], NULL, in)) != NULL;
  for (int k = 0; ok && k < n->n_outputs; k++) {
    if (!out[k]) continue;
    for (int b = lo; b < hi; b++) ok &= res[b][k].known;
    if (ok && hi - lo == 2) ok = same_type(&res[0][k].t, &res[1][k].t);
  }
  for (int k = 0; ok && k < n->n_outputs; k++)
    if (out[k]) shape_into(out[k], &res[lo][k].t);
  run_heap_release(&h);
  return ok ? INFER_OK : OP_NEEDS_DATA;
}

infer_status control_scan_infer(const node *n, const void *params, const tensor *const *in,
                                tensor *const *out) {
  const control_params *p = params;
  const int N = p->n_carried, M = p->n_scan_in, K = p->n_scans;
  run_heap h = {0};
  const tensor **formal = walk_alloc(&h, (int64_t)sizeof(tensor *) * (N + M));
  tensor *formal_t = walk_alloc(&h, (int64_t)sizeof(tensor) * (N + M));
  bool ok = formal && formal_t;
  for (int i = 0; i < N + M; i++) ok &= in[i] != NULL; /* the run needs them all */
  int64_t iters = -1;
  for (int i = 0; ok && i < N; i++) {
    shape_into(&formal_t[i], in[i]); /* each state at its initial shape, its data changing */
    formal[i] = &formal_t[i];
  }
  for (int j = 0; ok && j < M; j++) {
    const tensor *t = in[N + j];
    int64_t axis = p->in_axis[j];
    ok = axis >= -t->rank && axis < t->rank; /* else the run says why */
    int a = axis < 0 ? (int)axis + t->rank : (int)axis;
    if (!ok || (iters >= 0 && t->dims[a] != iters)) {
      ok = false;
      break;
    }
    iters = t->dims[a];
    tensor *s = &formal_t[N + j]; /* one slice: the axis dropped */
    memset(s, 0, sizeof *s);
    s->dtype = t->dtype;
    s->rank = t->rank - 1;
    for (int d = 0, k = 0; d < t->rank; d++)
      if (d != a) s->dims[k++] = t->dims[d];
    formal[N + j] = s;
  }
  ok &= iters >= 1; /* the run refuses a scan over 0 steps */
  const walk_val *res = ok ? walk_graph(&h, p->body, formal, in) : NULL;
  ok &= res != NULL;
  for (int i = 0; ok && i < N; i++) ok = res[i].known && same_type(&res[i].t, in[i]);
  tensor shape[SCAN_MAX];
  for (int k = 0; ok && k < K && N + k < n->n_outputs; k++)
    if (out[N + k])
      ok = res[N + k].known && stacked(&res[N + k].t, iters, p->out_axis[k], &shape[k]);
  for (int k = 0; ok && k < n->n_outputs; k++)
    if (out[k]) shape_into(out[k], k < N ? in[k] : &shape[k - N]);
  run_heap_release(&h);
  return ok ? INFER_OK : OP_NEEDS_DATA;
}

infer_status control_loop_infer(const node *n, const void *params, const tensor *const *in,
                                tensor *const *out) {
  const control_params *p = params;
  const int N = p->n_carried, K = p->n_scans;
  const tensor *m = p->n_declared > 0 ? in[0] : NULL, *c = p->n_declared > 1 ? in[1] : NULL;
  int64_t trips = -1, cond = 1;
  bool trips_known = known_scalar(m, INFER_DTYPE_INT64, &trips);
  bool cond_known = !c || known_scalar(c, INFER_DTYPE_BOOL, &cond);
  bool zero = (trips_known && trips <= 0) || (cond_known && !cond); /* the body never runs */
  for (int i = 0; i < N; i++)
    if (!in[2 + i]) return OP_NEEDS_DATA; /* the run needs them all */
  run_heap h = {0};
  const tensor **formal = walk_alloc(&h, (int64_t)sizeof(tensor *) * (2 + N));
  tensor *formal_t = walk_alloc(&h, (int64_t)sizeof(tensor) * (2 + N));
  const walk_val *res = NULL;
  static const uint8_t yes = 1; /* the body runs only while the condition holds */
  if (formal && formal_t) {
    control_body_scalar(p->body, 0, INFER_DTYPE_INT64, NULL, &formal_t[0]);
    control_body_scalar(p->body, 1, INFER_DTYPE_BOOL, (void *)&yes, &formal_t[1]);
    for (int i = 0; i < N; i++) shape_into(&formal_t[2 + i], in[2 + i]);
    for (int i = 0; i < 2 + N; i++) formal[i] = &formal_t[i];
    res = walk_graph(&h, p->body, formal, in);
  }
  /* every iteration sees the shapes the first does: carried values keep theirs */
  bool steady = res && res[0].known && res[0].t.dtype == INFER_DTYPE_BOOL &&
                dims_count(res[0].t.rank, res[0].t.dims) == 1;
  for (int i = 0; steady && i < N; i++)
    steady = res[1 + i].known && same_type(&res[1 + i].t, in[2 + i]);
  /* exactly `trips` iterations: it starts, and no iteration's condition can end it early */
  int64_t go_on = 0;
  bool exact = trips_known && trips >= 1 && cond_known && cond && steady &&
               known_scalar(&res[0].t, INFER_DTYPE_BOOL, &go_on) && go_on;
  tensor shape[SCAN_MAX];
  bool ok = true;
  for (int k = 0; ok && k < n->n_outputs; k++) {
    if (!out[k]) continue;
    if (k < N) ok = zero || steady;
    else ok = k - N < K && k - N < SCAN_MAX && exact && res[1 + k].known &&
              stacked(&res[1 + k].t, trips, 0, &shape[k - N]);
  }
  for (int k = 0; ok && k < n->n_outputs; k++)
    if (out[k]) shape_into(out[k], k < N ? in[2 + k] : &shape[k - N]);
  run_heap_release(&h);
  return ok ? INFER_OK : OP_NEEDS_DATA;
}

infer_status control_output_check(const node *n, int k, const tensor *want, const tensor *got) {
  if (same_type(want, got)) return INFER_OK;
  char a[128], b[128];
  dims_format(got->rank, got->dims, a, sizeof a);
  dims_format(want->rank, want->dims, b, sizeof b);
  return infer_fail(INFER_ERR_RUNTIME, "%s output %d is %s %s at this run, not the %s %s its "
                    "buffer was planned for (the shape derived at build)", n->op_type, k,
                    infer_dtype_name(got->dtype), a, infer_dtype_name(want->dtype), b);
}
