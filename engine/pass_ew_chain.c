/* pass_ew_chain.c: chains of elementwise ops become one FusedChain (domain infer,
 * ops/elementwise_chain.h), so that N ops read and write the tensor once instead of N
 * times: DenseNet's BatchNorm (as a per-channel Mul and Add, pass bn-to-affine) and ReLU,
 * squeeze-excitation's scaling, a layer scale and a residual Add, an activation after an
 * op with no epilogue of its own.
 *
 * The rule, not a pattern list: a chain starts at an elementwise op whose output has the
 * shape of one of its inputs (the head, the accumulator) and grows through the one reader
 * of its output while that reader is an elementwise op of the same output shape whose
 * other operand broadcasts to it (any value; a one-element constant becomes an
 * immediate). Every op of ew_chain_ops.h can be a step; Clip needs constant bounds.
 * Intermediates must have one reader and not be graph outputs; the fused op is written
 * where the chain's last node was, after every operand's producer. Float dtypes only. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../ops/elementwise_chain.h"
#include "../ops/op.h"
#include "passes.h"
#include "view.h"

static const struct {
  const char *name;
  int op;
} binaries[] = {{"Add", EWC_ADD}, {"Sub", EWC_SUB}, {"Mul", EWC_MUL}, {"Div", EWC_DIV},
                {"Max", EWC_MAX}, {"Min", EWC_MIN}, {"Pow", EWC_POW}};
static const struct {
  const char *name;
  int op;
} unaries[] = {{"Relu", EWC_RELU},       {"Sigmoid", EWC_SIGMOID},
               {"Tanh", EWC_TANH},       {"Exp", EWC_EXP},
               {"Log", EWC_LOG},         {"Sqrt", EWC_SQRT},
               {"Erf", EWC_ERF},         {"Neg", EWC_NEG},
               {"Abs", EWC_ABS},         {"Reciprocal", EWC_RECIPROCAL},
               {"Gelu", EWC_GELU},       {"Swish", EWC_SWISH},
               {"HardSwish", EWC_HARD_SWISH}, {"HardSigmoid", EWC_HARD_SIGMOID},
               {"LeakyRelu", EWC_LEAKY_RELU}, {"Clip", EWC_CLIP},
               {"Softplus", EWC_SOFTPLUS}};

static bool float_value(const value *v) {
  return v->shape_known && v->has_type &&
         (v->t.dtype == INFER_DTYPE_FLOAT32 || v->t.dtype == INFER_DTYPE_FLOAT16 ||
          v->t.dtype == INFER_DTYPE_BFLOAT16);
}

static bool scalar_const(const graph *g, int v, float *out) {
  if (v < 0 || g->values[v].kind != VALUE_CONSTANT || !g->values[v].t.data ||
      dims_count(g->values[v].t.rank, g->values[v].t.dims) != 1 ||
      !dtype_is_float(g->values[v].t.dtype))
    return false;
  *out = (float)tensor_get_f64(&g->values[v].t, 0);
  return true;
}

/* Clip's bounds when constant (inputs from opset 11, attributes before). */
static bool clip_consts(const graph *g, const node *n, float *lo, float *hi) {
  *lo = -INFINITY;
  *hi = INFINITY;
  if (n->opset < 11)
    return attr_get_float(n, "min", -INFINITY, lo) == INFER_OK &&
           attr_get_float(n, "max", INFINITY, hi) == INFER_OK;
  if (n->n_inputs > 1 && n->inputs[1] >= 0 && !scalar_const(g, n->inputs[1], lo)) return false;
  if (n->n_inputs > 2 && n->inputs[2] >= 0 && !scalar_const(g, n->inputs[2], hi)) return false;
  return true;
}

/* The step node n makes when its accumulator input is `acc` (parameters filled), or
 * false when n is not a step. *other: the operand value (-1: none or immediate). */
static bool step_of(const graph *g, const node *n, int acc, ewc_step *s, int *other) {
  memset(s, 0, sizeof *s);
  s->operand = EWC_IMMEDIATE;
  *other = -1;
  if (n->removed || n->n_outputs != 1 || n->outputs[0] < 0) return false;
  const value *y = &g->values[n->outputs[0]];
  if (!float_value(y)) return false;
  for (size_t k = 0; k < sizeof binaries / sizeof binaries[0]; k++) {
    if (!pass_node_is(n, binaries[k].name)) continue;
    if (n->n_inputs != 2 || (n->inputs[0] != acc && n->inputs[1] != acc)) return false;
    int o = n->inputs[0] == acc ? n->inputs[1] : n->inputs[0];
    if (o == acc || g->values[o].t.dtype != y->t.dtype || !g->values[o].shape_known) return false;
    s->op = binaries[k].op;
    s->swap = n->inputs[1] == acc;
    if (!scalar_const(g, o, &s->p0)) *other = o;
    return true;
  }
  for (size_t k = 0; k < sizeof unaries / sizeof unaries[0]; k++) {
    if (!pass_node_is(n, unaries[k].name) || n->inputs[0] != acc) continue;
    s->op = unaries[k].op;
    const char *ap = "none";
    switch (s->op) {
      case EWC_CLIP: return clip_consts(g, n, &s->p0, &s->p1);
      case EWC_GELU:
        if (attr_get_string(n, "approximate", "none", &ap) != INFER_OK) return false;
        if (strcmp(ap, "tanh") == 0) s->op = EWC_GELU_TANH;
        return true;
      case EWC_SWISH: return attr_get_float(n, "alpha", 1.0f, &s->p0) == INFER_OK;
      case EWC_LEAKY_RELU: return attr_get_float(n, "alpha", 0.01f, &s->p0) == INFER_OK;
      case EWC_HARD_SIGMOID:
        return attr_get_float(n, "alpha", 0.2f, &s->p0) == INFER_OK &&
               attr_get_float(n, "beta", 0.5f, &s->p1) == INFER_OK;
      default: return n->n_inputs == 1;
    }
  }
  return false;
}

/* Whether value o broadcasts (unidirectionally) to shape y. */
static bool broadcasts_to(const value *o, const value *y) {
  if (o->t.rank > y->t.rank) return false;
  for (int k = 0; k < o->t.rank; k++) {
    int64_t d = o->t.dims[o->t.rank - 1 - k], t = y->t.dims[y->t.rank - 1 - k];
    if (d != 1 && d != t) return false;
  }
  return true;
}

static infer_status set_steps(node *n, const ewc_step *steps, int count) {
  int64_t iv[3 * EWC_MAX_STEPS];
  float fv[2 * EWC_MAX_STEPS];
  for (int k = 0; k < count; k++) {
    iv[3 * k] = steps[k].op;
    iv[3 * k + 1] = steps[k].operand;
    iv[3 * k + 2] = steps[k].swap;
    fv[2 * k] = steps[k].p0;
    fv[2 * k + 1] = steps[k].p1;
  }
  TRY(pass_set_attr_ints(n, "steps", iv, 3 * count));
  attr *a = NULL;
  for (int k = 0; k < n->n_attrs; k++)
    if (strcmp(n->attrs[k].name, "params") == 0) a = &n->attrs[k];
  if (!a) {
    attr *grown = realloc(n->attrs, sizeof(attr) * ((size_t)n->n_attrs + 1));
    if (!grown) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "fuse-elementwise: out of memory");
    n->attrs = grown;
    a = &n->attrs[n->n_attrs++];
    memset(a, 0, sizeof *a);
    if (!(a->name = strdup("params"))) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory");
  }
  free(a->floats);
  a->type = ATTR_FLOATS;
  a->n = 2 * count;
  a->floats = malloc(sizeof(float) * (size_t)(2 * count + 1));
  if (!a->floats) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "fuse-elementwise: out of memory");
  memcpy(a->floats, fv, sizeof(float) * (size_t)(2 * count));
  return INFER_OK;
}

static bool is_chain(const node *n) {
  return !n->removed && strcmp(n->op_type, "FusedChain") == 0 && strcmp(n->domain, "infer") == 0 &&
         n->params;
}

static infer_status chain_at(graph *g, int i, int *readers, bool *used, int *removed) {
  const node *n0 = &g->nodes[i];
  if (n0->removed || n0->n_outputs != 1 || n0->outputs[0] < 0 || used[i]) return INFER_OK;
  const value *y0 = &g->values[n0->outputs[0]];
  if (!float_value(y0)) return INFER_OK;
  ewc_step steps[EWC_MAX_STEPS];
  int nodes[EWC_MAX_STEPS], ins[EWC_MAX_INPUTS], n_in = 0, n_steps = 0, n_nodes = 0, acc, cand;
  if (is_chain(n0)) { /* a chain already (bn-to-affine's): it grows from its end */
    const fused_chain_params *p = n0->params;
    if (n0->n_inputs > EWC_MAX_INPUTS) return INFER_OK;
    memcpy(steps, p->steps, sizeof(ewc_step) * (size_t)p->n_steps);
    n_steps = p->n_steps;
    for (int k = 0; k < n0->n_inputs; k++) ins[n_in++] = n0->inputs[k];
    nodes[n_nodes++] = i;
    acc = n0->outputs[0];
    cand = pass_is_graph_output(g, acc) || readers[acc] != 1 ? -1 : pass_sole_reader(g, acc, readers);
  } else {
    /* the head: an input of the output's shape */
    int head = -1;
    for (int k = 0; k < n0->n_inputs && head < 0; k++) {
      int v = n0->inputs[k];
      if (v >= 0 && g->values[v].shape_known && g->values[v].t.dtype == y0->t.dtype &&
          dims_equal(g->values[v].t.rank, g->values[v].t.dims, y0->t.rank, y0->t.dims))
        head = v;
    }
    if (head < 0) return INFER_OK;
    ins[n_in++] = head;
    acc = head;
    cand = i;
  }
  while (cand >= 0 && n_steps < EWC_MAX_STEPS && n_nodes < EWC_MAX_STEPS) {
    int other;
    ewc_step s;
    const node *n = &g->nodes[cand];
    if (used[cand] || !step_of(g, n, acc, &s, &other)) break;
    const value *y = &g->values[n->outputs[0]];
    if (!dims_equal(y->t.rank, y->t.dims, y0->t.rank, y0->t.dims) || y->t.dtype != y0->t.dtype)
      break;
    if (other >= 0) {
      if (!broadcasts_to(&g->values[other], y0)) break;
      int k = 0;
      while (k < n_in && ins[k] != other) k++;
      if (k == 0) break; /* the head again (x * x): not a chain */
      if (k == n_in) {
        if (n_in == EWC_MAX_INPUTS) break;
        ins[n_in++] = other;
      }
      s.operand = k;
    }
    steps[n_steps++] = s;
    nodes[n_nodes++] = cand;
    acc = n->outputs[0];
    if (pass_is_graph_output(g, acc) || readers[acc] != 1) break;
    cand = pass_sole_reader(g, acc, readers);
  }
  if (n_nodes < 2) return INFER_OK;
  /* the last node becomes the chain */
  int last = nodes[n_nodes - 1];
  for (int k = 0; k < n_nodes; k++) used[nodes[k]] = true;
  for (int k = 0; k < n_nodes - 1; k++) pass_remove_node(g, nodes[k], readers);
  for (int k = 0; k < g->nodes[last].n_inputs; k++)
    if (g->nodes[last].inputs[k] >= 0) readers[g->nodes[last].inputs[k]]--;
  node tmp;
  memset(&tmp, 0, sizeof tmp);
  infer_status st = set_steps(&tmp, steps, n_steps);
  if (st != INFER_OK) {
    for (int a = 0; a < tmp.n_attrs; a++) attr_clear(&tmp.attrs[a]);
    free(tmp.attrs);
    return st;
  }
  TRY(pass_rewrite_node(g, last, "infer", "FusedChain", 1, ins, n_in, tmp.attrs, tmp.n_attrs));
  for (int k = 0; k < n_in; k++) readers[ins[k]]++;
  *removed += n_nodes - 1;
  return INFER_OK;
}

/* Whether value w (read only by its one reader, of the output's shape y) comes out of
 * movement nodes whose view of their source has one stride per dim: then the chain can
 * read the source through those strides and the movement nodes go (a Transpose before a
 * residual Add, say). *base, *offset, strides[] describe the view. */
static bool viewable(const graph *g, int w, const value *y, const int *readers, int *base,
                     int64_t *offset, int64_t *strides) {
  const value *wv = &g->values[w];
  /* strides fix every size: not for a batch that changes per run (the CPU's flexible one) */
  if (wv->shape_dep || wv->data_dep || y->shape_dep) return false;
  if (readers[w] != 1 || pass_is_graph_output(g, w) || !wv->shape_known ||
      !dims_equal(wv->t.rank, wv->t.dims, y->t.rank, y->t.dims) || wv->t.dtype != y->t.dtype)
    return false;
  view v;
  if (view_of(g, w, 8, &v) == 0 || v.base == w || v.rank != wv->t.rank) return false;
  for (int d = 0; d < v.rank; d++) {
    if (view_dim(&v, d) != wv->t.dims[d]) return false;
    if (!view_dim_stride(&v, d, &strides[d])) return false;
  }
  /* only a real rearrangement is worth it: a plain reshape is already a free view */
  int64_t contiguous[INFER_MAX_RANK];
  dims_strides(v.rank, wv->t.dims, contiguous);
  bool same = v.offset == 0;
  for (int d = 0; d < v.rank && same; d++) same = wv->t.dims[d] == 1 || strides[d] == contiguous[d];
  if (same) return false;
  *base = v.base;
  *offset = v.offset;
  return true;
}

static infer_status add_view_attr(node *n, int k, int rank, int64_t offset, const int64_t *strides) {
  int64_t rec[3 + INFER_MAX_RANK] = {k, rank, offset};
  memcpy(rec + 3, strides, sizeof(int64_t) * (size_t)rank);
  const int64_t *old = NULL;
  int c = -1;
  if (attr_get_ints(n, "views", &old, &c) != INFER_OK) return INFER_ERR_INVALID_MODEL;
  int total = (c > 0 ? c : 0) + 3 + rank;
  int64_t *all = malloc(sizeof(int64_t) * (size_t)total);
  if (!all) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "fuse-elementwise: out of memory");
  if (c > 0) memcpy(all, old, sizeof(int64_t) * (size_t)c);
  memcpy(all + (c > 0 ? c : 0), rec, sizeof(int64_t) * (size_t)(3 + rank));
  infer_status st = pass_set_attr_ints(n, "views", all, total);
  free(all);
  return st;
}

/* Folds viewable inputs (above) into FusedChains, and turns a single binary elementwise
 * op with one into a one-step chain. */
static infer_status absorb_views(graph *g, int *readers, int *removed) {
  for (int i = 0; i < g->n_nodes; i++) {
    node *n = &g->nodes[i];
    if (n->removed || n->n_outputs != 1 || n->outputs[0] < 0) continue;
    const value *y = &g->values[n->outputs[0]];
    if (!float_value(y)) continue;
    if (!is_chain(n)) {
      /* a single binary op: the head is the operand that is not a view */
      if (n->n_inputs != 2) continue;
      int base, v = -1;
      int64_t off, st[INFER_MAX_RANK];
      for (int k = 0; k < 2 && v < 0; k++)
        if (viewable(g, n->inputs[k], y, readers, &base, &off, st)) v = k;
      if (v < 0) continue;
      int head = n->inputs[1 - v];
      ewc_step s;
      int other;
      if (!step_of(g, n, head, &s, &other) || other != n->inputs[v] ||
          !dims_equal(g->values[head].t.rank, g->values[head].t.dims, y->t.rank, y->t.dims))
        continue;
      s.operand = 1;
      int ins[2] = {head, base};
      node tmp;
      memset(&tmp, 0, sizeof tmp);
      infer_status st2 = set_steps(&tmp, &s, 1);
      if (st2 == INFER_OK) st2 = add_view_attr(&tmp, 1, y->t.rank, off, st);
      if (st2 != INFER_OK) {
        for (int a = 0; a < tmp.n_attrs; a++) attr_clear(&tmp.attrs[a]);
        free(tmp.attrs);
        return st2;
      }
      readers[n->inputs[0]]--;
      readers[n->inputs[1]]--;
      TRY(pass_rewrite_node(g, i, "infer", "FusedChain", 1, ins, 2, tmp.attrs, tmp.n_attrs));
      readers[head]++;
      readers[base]++;
      (*removed)++;
      continue;
    }
    for (int k = 1; k < n->n_inputs; k++) {
      int base;
      int64_t off, st[INFER_MAX_RANK];
      const fused_chain_params *p = n->params;
      if (p->has_view[k] || !viewable(g, n->inputs[k], y, readers, &base, &off, st)) continue;
      TRY(add_view_attr(n, k, y->t.rank, off, st));
      readers[n->inputs[k]]--;
      n->inputs[k] = base;
      readers[base]++;
      TRY(pass_reparse(n));
      (*removed)++;
    }
  }
  return INFER_OK;
}

infer_status pass_fuse_elementwise(graph *g, int *removed) {
  *removed = 0;
  int *readers = pass_count_readers(g);
  bool *used = calloc((size_t)g->n_nodes + 1, sizeof(bool));
  infer_status st = readers && used ? INFER_OK
                                    : infer_fail(INFER_ERR_OUT_OF_MEMORY, "fuse-elementwise: out of memory");
  for (int i = 0; st == INFER_OK && i < g->n_nodes; i++) st = chain_at(g, i, readers, used, removed);
  if (st == INFER_OK) st = absorb_views(g, readers, removed);
  free(readers);
  free(used);
  return st;
}
