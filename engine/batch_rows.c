/* batch_rows.c: whether every row of the batch dim is computed from the same row of
 * the inputs only. Then a GPU engine built for batch N can run batch b < N by
 * computing all N rows (the planned shapes, the captured CUDA graph) and handing out
 * the first b: rows past b hold stale inputs, which cannot reach the first b.
 *
 * Conservative: a node touching batch-dependent values passes only when its op is
 * known to act per row (elementwise with operands that broadcast over the batch,
 * convolutions, pools, per-sample normalizations, reductions and softmaxes off axis
 * 0, layout ops that keep axis 0 first, Gemm/MatMul/FusedMatMul with the batch in A
 * only). A FusedAttention reads through views that may move any dim: never. */
#include <stdio.h>
#include <string.h>

#include "../ops/op.h"
#include "engine_internal.h"

static bool is(const node *n, const char *const *names) {
  for (; *names; names++)
    if (strcmp(n->op_type, *names) == 0) return true;
  return false;
}

/* Ops whose every output row depends only on the same input rows, whatever their
 * attributes (given 4-D or higher data with the batch first). */
static const char *const per_row[] = {
    "Relu", "Clip", "Sigmoid", "HardSigmoid", "HardSwish", "Swish", "Tanh", "LeakyRelu", "Gelu",
    "Elu", "Selu", "Softplus", "Softsign", "Mish", "Neg", "Abs", "Exp", "Log", "Sqrt", "Erf",
    "Reciprocal", "Floor", "Ceil", "Round", "Sign", "Not", "IsNaN", "IsInf", "Cast", "Identity",
    "Dropout", "PRelu", "Conv", "FusedConv", "Int8Conv", "ConvTranspose", "MaxPool", "AveragePool",
    "GlobalAveragePool", "GlobalMaxPool", "LRN", "BatchNormalization", "InstanceNormalization",
    "GroupNormalization", "Sin", "Cos", "Shrink", NULL};
/* Elementwise ops with several operands: per row when the operands that are not
 * batch-dependent broadcast over the batch dim. */
static const char *const broadcasting[] = {
    "Add", "Sub", "Mul", "Div", "Pow", "Max", "Min", "Sum", "Mean", "Where", "Equal", "Less",
    "Greater", "LessOrEqual", "GreaterOrEqual", "And", "Or", "Xor", "Mod", NULL};
/* Ops with an axis (attribute `axis`, default given): per row unless it is 0. */
static const struct {
  const char *name;
  int64_t def;
} axis_ops[] = {{"Softmax", -1},   {"LogSoftmax", -1}, {"Concat", 0},   {"Split", 0},
                {"Flatten", 1},    {"ArgMax", 0},      {"ArgMin", 0},   {"Gather", 0},
                {"LayerNormalization", -1}, {"RMSNormalization", -1}};

static int64_t int_attr(const node *n, const char *name, int64_t def) {
  int64_t v = def;
  attr_get_int(n, name, def, &v);
  return v;
}

/* An axis attribute or list normalized against rank r: whether it names axis 0. */
static bool names_axis0(int64_t a, int r) { return a == 0 || a == -r; }

static bool node_per_row(const graph *g, const node *n) {
  const value *v0 = n->n_inputs > 0 && n->inputs[0] >= 0 ? &g->values[n->inputs[0]] : NULL;
  int r = v0 ? v0->t.rank : 0;
  if (is(n, per_row)) return v0 && v0->shape_dep; /* the batch must come in through X */
  if (is(n, broadcasting)) {
    int out_rank = g->values[n->outputs[0]].t.rank;
    for (int k = 0; k < n->n_inputs; k++) {
      const value *v = n->inputs[k] >= 0 ? &g->values[n->inputs[k]] : NULL;
      if (!v || v->shape_dep) continue;
      /* right-aligned broadcasting: a shorter operand, or a leading 1, spans all rows */
      if (v->t.rank == out_rank && v->t.dims[0] != 1) return false;
    }
    return true;
  }
  for (size_t k = 0; k < sizeof axis_ops / sizeof axis_ops[0]; k++)
    if (strcmp(n->op_type, axis_ops[k].name) == 0) {
      if (strcmp(n->op_type, "Gather") == 0 && n->n_inputs > 1 &&
          g->values[n->inputs[1]].shape_dep)
        return false; /* batch-dependent indices */
      return !names_axis0(int_attr(n, "axis", axis_ops[k].def), r);
    }
  if (strcmp(n->op_type, "RowGather") == 0) /* rows after the prefix: batch rows apart */
    return v0 && v0->shape_dep && int_attr(n, "prefix", 0) >= 1;
  if (strcmp(n->op_type, "Transpose") == 0) {
    const int64_t *p;
    int c = -1;
    attr_get_ints(n, "perm", &p, &c);
    return c > 0 && p[0] == 0;
  }
  if (strcmp(n->op_type, "Reshape") == 0) {
    const value *y = &g->values[n->outputs[0]];
    return v0 && y->shape_dep && y->t.rank >= 1 && y->t.dims[0] == v0->t.dims[0];
  }
  if (strncmp(n->op_type, "Reduce", 6) == 0) {
    const int64_t *ax;
    int c = -1;
    attr_get_ints(n, "axes", &ax, &c);
    if (c < 0 && n->n_inputs > 1 && n->inputs[1] >= 0) { /* axes as an input (opset 18) */
      const value *a = &g->values[n->inputs[1]];
      if (a->kind != VALUE_CONSTANT) return false;
      int64_t cnt = dims_count(a->t.rank, a->t.dims);
      for (int64_t i = 0; i < cnt; i++)
        if (names_axis0((int64_t)tensor_get_f64(&a->t, i), r)) return false;
      return cnt > 0;
    }
    if (c <= 0) return false; /* all axes, batch included */
    for (int i = 0; i < c; i++)
      if (names_axis0(ax[i], r)) return false;
    return true;
  }
  if (strcmp(n->op_type, "Pad") == 0) { /* per row when nothing is padded on axis 0 */
    if (n->n_inputs > 3 && n->inputs[3] >= 0) return false; /* axes: not worth the case */
    const int64_t *pa;
    int c = -1;
    attr_get_ints(n, "pads", &pa, &c); /* before opset 11 */
    if (c >= 0) return v0 && v0->shape_dep && c == 2 * r && pa[0] == 0 && pa[r] == 0;
    const value *p = n->n_inputs > 1 && n->inputs[1] >= 0 ? &g->values[n->inputs[1]] : NULL;
    if (!v0 || !v0->shape_dep || !p || p->kind != VALUE_CONSTANT ||
        dims_count(p->t.rank, p->t.dims) != 2 * r)
      return false;
    return tensor_get_f64(&p->t, 0) == 0 && tensor_get_f64(&p->t, r) == 0;
  }
  if (strcmp(n->op_type, "Gemm") == 0) {
    for (int k = 1; k < n->n_inputs; k++)
      if (n->inputs[k] >= 0 && g->values[n->inputs[k]].shape_dep) return false;
    return v0 && v0->shape_dep && int_attr(n, "transA", 0) == 0;
  }
  if (strcmp(n->op_type, "FusedMatMul") == 0) {
    /* B and the bias are weights; Z, when it carries the batch, has Y's shape */
    for (int k = 1; k < 3 && k < n->n_inputs; k++)
      if (n->inputs[k] >= 0 && g->values[n->inputs[k]].shape_dep) return false;
    return v0 && v0->shape_dep && r >= 2;
  }
  if (strcmp(n->op_type, "MatMul") == 0) {
    const value *b = &g->values[n->inputs[1]];
    if (!v0 || !v0->shape_dep) return false;
    return !b->shape_dep || (r >= 3 && b->t.rank == r); /* batched per row */
  }
  return false;
}

bool batch_rows_independent(const graph *g, const int *steps, int n_steps, char *why,
                            size_t cap) {
  for (int s = 0; s < n_steps; s++) {
    const node *n = &g->nodes[steps[s]];
    for (int k = 0; k < n->n_inputs; k++)
      if (n->inputs[k] >= 0 && g->values[n->inputs[k]].data_dep) {
        snprintf(why, cap, "value '%s' is computed from the batch size",
                 g->values[n->inputs[k]].name);
        return false;
      }
    bool touches = false;
    for (int k = 0; k < n->n_inputs; k++)
      touches |= n->inputs[k] >= 0 && g->values[n->inputs[k]].shape_dep;
    for (int k = 0; k < n->n_outputs; k++)
      touches |= n->outputs[k] >= 0 && g->values[n->outputs[k]].shape_dep;
    if (!touches) continue;
    if (n->n_outputs < 1 || n->outputs[0] < 0 || !node_per_row(g, n)) {
      char d[256];
      snprintf(why, cap, "%s may mix batch rows", node_describe(g, steps[s], d, sizeof d));
      return false;
    }
  }
  return true;
}
