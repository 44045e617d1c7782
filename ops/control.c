/* control.c: control flow, If (1+), Loop (1+) and Scan (9+). Each node carries its subgraphs as
 * graph attributes (the loader builds them, with the outer-scope values they read as
 * the node's trailing capture inputs, core/graph.h). The semantics live here; running a
 * subgraph is the backend's (op_exec): the CPU backend interprets it node by node
 * (engine/cpu/cpu_subgraph.c), and so does a CUDA engine's host fallback
 * (ops/cuda/cuda_host_fallback.c). infer (ops/control_shapes.c) derives the output
 * shapes at build where they do not depend on run-time data, and says OP_NEEDS_DATA
 * (known only after the run) elsewhere; the backends check a run's shapes against the
 * derived ones (control_output_check). Sequence and optional values (If/Loop 16+ over
 * them) are refused by the loader. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "../core/status.h"
#include "control_params.h"

static infer_status graph_attr(const node *n, const char *name, const graph **g) {
  const attr *a = node_attr(n, name);
  if (!a) return infer_fail(INFER_ERR_INVALID_MODEL, "%s: attribute '%s' is missing", n->op_type, name);
  if (a->type != ATTR_GRAPH || !a->g)
    return infer_fail(INFER_ERR_INVALID_MODEL, "%s: attribute '%s' is not a graph", n->op_type,
                      name);
  *g = a->g;
  return INFER_OK;
}

static infer_status if_parse(const node *n, void **params) {
  control_params p = {.n_declared = n->n_inputs - n->n_captures};
  TRY(graph_attr(n, "then_branch", &p.then_g));
  TRY(graph_attr(n, "else_branch", &p.else_g));
  if (p.n_declared != 1)
    return infer_fail(INFER_ERR_INVALID_MODEL, "If takes one input (cond), not %d", p.n_declared);
  const graph *b[2] = {p.then_g, p.else_g};
  for (int i = 0; i < 2; i++) {
    if (b[i]->n_inputs != 0)
      return infer_fail(INFER_ERR_INVALID_MODEL, "If: %s has %d inputs (branches take none)",
                        i ? "else_branch" : "then_branch", b[i]->n_inputs);
    if (b[i]->n_outputs < n->n_outputs)
      return infer_fail(INFER_ERR_INVALID_MODEL, "If: %s has %d outputs, the node %d",
                        i ? "else_branch" : "then_branch", b[i]->n_outputs, n->n_outputs);
  }
  if (!(*params = malloc(sizeof p))) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory");
  memcpy(*params, &p, sizeof p);
  return INFER_OK;
}

static infer_status loop_parse(const node *n, void **params) {
  control_params p = {.n_declared = n->n_inputs - n->n_captures};
  TRY(graph_attr(n, "body", &p.body));
  p.n_carried = p.n_declared > 2 ? p.n_declared - 2 : 0;
  if (p.body->n_inputs != 2 + p.n_carried)
    return infer_fail(INFER_ERR_INVALID_MODEL, "Loop: the body has %d inputs, not 2 + %d "
                      "loop-carried", p.body->n_inputs, p.n_carried);
  p.n_scans = p.body->n_outputs - 1 - p.n_carried;
  if (p.n_scans < 0)
    return infer_fail(INFER_ERR_INVALID_MODEL, "Loop: the body has %d outputs, fewer than 1 + "
                      "%d loop-carried", p.body->n_outputs, p.n_carried);
  if (n->n_outputs > p.n_carried + p.n_scans)
    return infer_fail(INFER_ERR_INVALID_MODEL, "Loop has %d outputs, the body gives %d + %d",
                      n->n_outputs, p.n_carried, p.n_scans);
  bool has_m = p.n_declared > 0 && n->inputs[0] >= 0;
  bool has_cond = p.n_declared > 1 && n->inputs[1] >= 0;
  if (!has_m && !has_cond)
    return infer_fail(INFER_ERR_UNSUPPORTED, "Loop without a trip count (M) or a condition "
                      "never ends");
  if (!(*params = malloc(sizeof p))) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory");
  memcpy(*params, &p, sizeof p);
  return INFER_OK;
}

static infer_status control_run(const node *n, const void *params, const tensor *const *in,
                                tensor *const *out, void *ws) {
  (void)params, (void)in, (void)out, (void)ws;
  return infer_fail(INFER_ERR_INTERNAL, "%s runs through the backend's subgraph executor",
                    n->op_type);
}

/* The one element of a bool (cond) or int64 (M) scalar input. */
static infer_status scalar_of(const node *n, const tensor *t, infer_dtype dt, const char *what,
                              int64_t *v) {
  if (t->dtype != dt || dims_count(t->rank, t->dims) != 1)
    return infer_fail(INFER_ERR_INVALID_INPUT, "%s: %s must be one %s, not %s of %lld elements",
                      n->op_type, what, infer_dtype_name(dt), infer_dtype_name(t->dtype),
                      (long long)dims_count(t->rank, t->dims));
  *v = dt == INFER_DTYPE_BOOL ? (((const uint8_t *)t->data)[0] != 0) : tensor_get_i64(t, 0);
  return INFER_OK;
}

/* A fresh copy of t's bytes (Loop outputs never alias the node's inputs). */
static infer_status copy_fresh(op_exec *x, const tensor *t, tensor *out) {
  int64_t nb = tensor_nbytes(t);
  *out = *t;
  if (!(out->data = x->alloc(x, nb))) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory");
  if (nb > 0) memcpy(out->data, t->data, (size_t)nb);
  return INFER_OK;
}

static infer_status if_control(const node *n, const void *params, const tensor *const *in,
                               tensor *const *out, op_exec *x) {
  const control_params *p = params;
  int64_t cond = 0;
  TRY(scalar_of(n, in[0], INFER_DTYPE_BOOL, "cond", &cond));
  return control_run_branch(n, cond ? p->then_g : p->else_g, in, out, x);
}

infer_status control_run_branch(const node *n, const graph *b, const tensor *const *in,
                                tensor *const *out, op_exec *x) {
  tensor *res = x->alloc(x, (int64_t)sizeof(tensor) * (b->n_outputs + 1));
  if (!res) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory");
  TRY(x->run_graph(x, b, NULL, in, res));
  for (int k = 0; k < n->n_outputs; k++)
    if (out[k]) *out[k] = res[k];
  return INFER_OK;
}

/* Scan output k over `iters` iterations (each a tensor of one shape), stacked on a new
 * first axis. */
static infer_status stack_scan(const node *n, const graph *body, int k, const tensor *parts,
                               int64_t iters, op_exec *x, tensor *out) {
  memset(out, 0, sizeof *out);
  if (iters == 0) { /* [0] and the body's declared type and shape, where it has them */
    const value *v = &body->values[body->outputs[k]];
    out->dtype = v->has_type ? v->t.dtype : INFER_DTYPE_FLOAT32;
    out->rank = 1;
    if (v->shape_known && v->t.rank < INFER_MAX_RANK) {
      out->rank = v->t.rank + 1;
      memcpy(out->dims + 1, v->t.dims, sizeof(int64_t) * (size_t)v->t.rank);
    }
  } else {
    const tensor *t0 = &parts[0];
    if (t0->rank + 1 > INFER_MAX_RANK)
      return infer_fail(INFER_ERR_UNSUPPORTED, "Loop: scan output %d has rank %d", k, t0->rank + 1);
    out->dtype = t0->dtype;
    out->rank = t0->rank + 1;
    out->dims[0] = iters;
    memcpy(out->dims + 1, t0->dims, sizeof(int64_t) * (size_t)t0->rank);
    for (int64_t i = 1; i < iters; i++)
      if (parts[i].dtype != t0->dtype || !dims_equal(parts[i].rank, parts[i].dims, t0->rank, t0->dims))
        return infer_fail(INFER_ERR_INVALID_INPUT, "%s: scan output %d changes shape or type at "
                          "iteration %lld", n->op_type, k, (long long)i);
  }
  int64_t nb = tensor_nbytes(out);
  if (nb < 0) return infer_fail(INFER_ERR_INVALID_INPUT, "Loop: scan output %d is too large", k);
  if (!(out->data = x->alloc(x, nb))) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory");
  int64_t part = iters ? tensor_nbytes(&parts[0]) : 0;
  for (int64_t i = 0; i < iters; i++)
    if (part > 0) memcpy((uint8_t *)out->data + i * part, parts[i].data, (size_t)part);
  return INFER_OK;
}

static infer_status loop_control(const node *n, const void *params, const tensor *const *in,
                                 tensor *const *out, op_exec *x) {
  const control_params *p = params;
  const graph *body = p->body;
  int N = p->n_carried, K = p->n_scans;
  int64_t trips = INT64_MAX, cond = 1;
  if (p->n_declared > 0 && in[0]) TRY(scalar_of(n, in[0], INFER_DTYPE_INT64, "M", &trips));
  if (p->n_declared > 1 && in[1]) TRY(scalar_of(n, in[1], INFER_DTYPE_BOOL, "cond", &cond));
  const tensor **bin = x->alloc(x, (int64_t)sizeof(tensor *) * (2 + N));
  tensor *carried = x->alloc(x, (int64_t)sizeof(tensor) * (N + 1));
  tensor *res = x->alloc(x, (int64_t)sizeof(tensor) * (1 + N + K));
  int64_t *iter_data = x->alloc(x, sizeof(int64_t));
  uint8_t *cond_data = x->alloc(x, 1);
  tensor **scans = x->alloc(x, (int64_t)sizeof(tensor *) * (K + 1));
  int64_t cap = 0;
  if (!bin || !carried || !res || !iter_data || !cond_data || !scans)
    return infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory");
  for (int i = 0; i < N; i++) carried[i] = *in[2 + i];
  tensor iter_t, cond_t;
  int64_t it = 0;
  for (; it < trips && cond; it++) {
    *iter_data = it;
    *cond_data = 1;
    control_body_scalar(body, 0, INFER_DTYPE_INT64, iter_data, &iter_t);
    control_body_scalar(body, 1, INFER_DTYPE_BOOL, cond_data, &cond_t);
    bin[0] = &iter_t;
    bin[1] = &cond_t;
    for (int i = 0; i < N; i++) bin[2 + i] = &carried[i];
    TRY(x->run_graph(x, body, bin, in, res));
    TRY(scalar_of(n, &res[0], INFER_DTYPE_BOOL, "the body's condition output", &cond));
    for (int i = 0; i < N; i++) carried[i] = res[1 + i];
    if (K > 0 && it == cap) { /* room for twice as many iterations' scan parts */
      int64_t grown = cap ? cap * 2 : 16;
      for (int k = 0; k < K; k++) {
        tensor *more = x->alloc(x, (int64_t)sizeof(tensor) * grown);
        if (!more) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory");
        if (cap) memcpy(more, scans[k], sizeof(tensor) * (size_t)cap);
        scans[k] = more;
      }
      cap = grown;
    }
    for (int k = 0; k < K; k++) scans[k][it] = res[1 + N + k];
  }
  for (int i = 0; i < N && i < n->n_outputs; i++) {
    if (!out[i]) continue;
    if (it == 0) TRY(copy_fresh(x, in[2 + i], out[i])); /* the initial values */
    else *out[i] = carried[i];
  }
  for (int k = 0; k < K && N + k < n->n_outputs; k++)
    if (out[N + k]) TRY(stack_scan(n, body, 1 + N + k, it ? scans[k] : NULL, it, x, out[N + k]));
  return INFER_OK;
}


/* ---- Scan (9+): the body runs once per slice of the scan inputs ----------------------- */

static infer_status ints_attr(const node *n, const char *name, int count, int64_t *v) {
  const int64_t *a;
  int c;
  TRY(attr_get_ints(n, name, &a, &c));
  for (int i = 0; i < count; i++) v[i] = c < 0 ? 0 : i < c ? a[i] : 0;
  if (c >= 0 && c != count)
    return infer_fail(INFER_ERR_INVALID_MODEL, "Scan: %s lists %d values, not %d", name, c, count);
  return INFER_OK;
}

static infer_status scan_parse(const node *n, void **params) {
  control_params p = {.n_declared = n->n_inputs - n->n_captures};
  TRY(graph_attr(n, "body", &p.body));
  int64_t m;
  TRY(attr_get_int(n, "num_scan_inputs", -1, &m));
  if (m < 1 || m > p.n_declared || m > SCAN_MAX)
    return infer_fail(INFER_ERR_INVALID_MODEL, "Scan: num_scan_inputs %lld for %d inputs",
                      (long long)m, p.n_declared);
  p.n_scan_in = (int)m;
  p.n_carried = p.n_declared - p.n_scan_in;
  p.n_scans = p.body->n_outputs - p.n_carried;
  if (p.body->n_inputs != p.n_declared || p.n_scans < 0 || p.n_scans > SCAN_MAX)
    return infer_fail(INFER_ERR_INVALID_MODEL, "Scan: the body has %d inputs and %d outputs for "
                      "%d states and %d scan inputs", p.body->n_inputs, p.body->n_outputs,
                      p.n_carried, p.n_scan_in);
  TRY(ints_attr(n, "scan_input_axes", p.n_scan_in, p.in_axis));
  TRY(ints_attr(n, "scan_input_directions", p.n_scan_in, p.in_rev));
  TRY(ints_attr(n, "scan_output_axes", p.n_scans, p.out_axis));
  TRY(ints_attr(n, "scan_output_directions", p.n_scans, p.out_rev));
  if (!(*params = malloc(sizeof p))) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory");
  memcpy(*params, &p, sizeof p);
  return INFER_OK;
}

/* Slice i of t along axis a, in fresh bytes. */
static infer_status scan_slice(op_exec *x, const tensor *t, int a, int64_t i, tensor *out) {
  const size_t es = infer_dtype_size(t->dtype);
  const int64_t outer = dims_count(a, t->dims);
  const int64_t inner = dims_count(t->rank - a - 1, t->dims + a + 1) * (int64_t)es;
  memset(out, 0, sizeof *out);
  out->dtype = t->dtype;
  out->rank = t->rank - 1;
  for (int d = 0, k = 0; d < t->rank; d++)
    if (d != a) out->dims[k++] = t->dims[d];
  if (!(out->data = x->alloc(x, outer * inner))) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory");
  for (int64_t o = 0; o < outer; o++)
    memcpy((uint8_t *)out->data + o * inner,
           (const uint8_t *)t->data + (o * t->dims[a] + i) * inner, (size_t)inner);
  return INFER_OK;
}

/* Scan output k: the iterations' parts stacked on axis a (in reverse when rev). */
static infer_status scan_stack(const node *n, const tensor *parts, int64_t iters, int64_t axis,
                               bool rev, op_exec *x, tensor *out) {
  const tensor *t0 = &parts[0];
  if (t0->rank + 1 > INFER_MAX_RANK)
    return infer_fail(INFER_ERR_UNSUPPORTED, "Scan: a scan output of rank %d", t0->rank + 1);
  int a;
  TRY(axis_normalize(axis, t0->rank + 1, "Scan scan_output_axes", &a));
  for (int64_t i = 1; i < iters; i++)
    if (parts[i].dtype != t0->dtype || !dims_equal(parts[i].rank, parts[i].dims, t0->rank, t0->dims))
      return infer_fail(INFER_ERR_INVALID_INPUT, "%s: a scan output changes shape or type at "
                        "iteration %lld", n->op_type, (long long)i);
  memset(out, 0, sizeof *out);
  out->dtype = t0->dtype;
  out->rank = t0->rank + 1;
  for (int d = 0, k = 0; d < out->rank; d++) out->dims[d] = d == a ? iters : t0->dims[k++];
  const int64_t nb = tensor_nbytes(out);
  if (nb < 0) return infer_fail(INFER_ERR_INVALID_INPUT, "Scan: a scan output is too large");
  if (!(out->data = x->alloc(x, nb))) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory");
  const size_t es = infer_dtype_size(t0->dtype);
  const int64_t outer = dims_count(a, t0->dims);
  const int64_t inner = dims_count(t0->rank - a, t0->dims + a) * (int64_t)es;
  for (int64_t t = 0; t < iters; t++) {
    const uint8_t *src = parts[rev ? iters - 1 - t : t].data;
    for (int64_t o = 0; o < outer; o++)
      memcpy((uint8_t *)out->data + (o * iters + t) * inner, src + o * inner, (size_t)inner);
  }
  return INFER_OK;
}

static infer_status scan_control(const node *n, const void *params, const tensor *const *in,
                                 tensor *const *out, op_exec *x) {
  const control_params *p = params;
  const int N = p->n_carried, M = p->n_scan_in, K = p->n_scans;
  int axis[SCAN_MAX];
  int64_t iters = -1;
  for (int j = 0; j < M; j++) {
    const tensor *t = in[N + j];
    TRY(axis_normalize(p->in_axis[j], t->rank, "Scan scan_input_axes", &axis[j]));
    if (iters >= 0 && t->dims[axis[j]] != iters)
      return infer_fail(INFER_ERR_INVALID_INPUT, "Scan: scan inputs of %lld and %lld steps",
                        (long long)iters, (long long)t->dims[axis[j]]);
    iters = t->dims[axis[j]];
  }
  if (iters < 1) return infer_fail(INFER_ERR_UNSUPPORTED, "Scan over 0 steps");
  const tensor **bin = x->alloc(x, (int64_t)sizeof(tensor *) * (N + M));
  tensor *state = x->alloc(x, (int64_t)sizeof(tensor) * (N + 1));
  tensor *slice = x->alloc(x, (int64_t)sizeof(tensor) * M);
  tensor *res = x->alloc(x, (int64_t)sizeof(tensor) * (N + K + 1));
  tensor *parts = x->alloc(x, (int64_t)sizeof(tensor) * (K * iters + 1));
  if (!bin || !state || !slice || !res || !parts)
    return infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory");
  for (int i = 0; i < N; i++) state[i] = *in[i];
  for (int64_t it = 0; it < iters; it++) {
    for (int j = 0; j < M; j++) {
      TRY(scan_slice(x, in[N + j], axis[j], p->in_rev[j] ? iters - 1 - it : it, &slice[j]));
      bin[N + j] = &slice[j];
    }
    for (int i = 0; i < N; i++) bin[i] = &state[i];
    TRY(x->run_graph(x, p->body, bin, in, res));
    for (int i = 0; i < N; i++) state[i] = res[i];
    for (int k = 0; k < K; k++) parts[k * iters + it] = res[N + k];
  }
  for (int i = 0; i < N && i < n->n_outputs; i++)
    if (out[i]) *out[i] = state[i];
  for (int k = 0; k < K && N + k < n->n_outputs; k++)
    if (out[N + k])
      TRY(scan_stack(n, &parts[k * iters], iters, p->out_axis[k], p->out_rev[k] != 0, x, out[N + k]));
  return INFER_OK;
}

static const char *const if_attrs[] = {"then_branch", "else_branch", NULL};
static const char *const loop_attrs[] = {"body", NULL};

/* Inputs: the op's own, then up to any number of captures. */
static const op_desc op_if = {.name = "If", .domain = "", .since = 1, .until = OP_OPSET_MAX,
                              .min_inputs = 1, .max_inputs = INT_MAX, .min_outputs = 1,
                              .max_outputs = INT_MAX, .attrs = if_attrs, .parse = if_parse,
                              .infer = control_if_infer, .run = control_run,
                              .control = if_control};
/* M and cond are optional ("" names): min_inputs 0, loop_parse checks the rest */
static const op_desc op_loop = {.name = "Loop", .domain = "", .since = 1, .until = OP_OPSET_MAX,
                                .min_inputs = 0, .max_inputs = INT_MAX, .min_outputs = 0,
                                .max_outputs = INT_MAX, .attrs = loop_attrs, .parse = loop_parse,
                                .infer = control_loop_infer, .run = control_run,
                                .control = loop_control};

static const char *const scan_attrs[] = {"body", "num_scan_inputs", "scan_input_axes",
                                         "scan_input_directions", "scan_output_axes",
                                         "scan_output_directions", NULL};
/* opset 8's Scan (a batch axis and sequence_lens) is another op: not taken */
static const op_desc op_scan = {.name = "Scan", .domain = "", .since = 9, .until = OP_OPSET_MAX,
                                .min_inputs = 1, .max_inputs = INT_MAX, .min_outputs = 1,
                                .max_outputs = INT_MAX, .attrs = scan_attrs, .parse = scan_parse,
                                .infer = control_scan_infer, .run = control_run,
                                .control = scan_control};

const op_desc *const ops_control[] = {&op_if, &op_loop, &op_scan, NULL};
