/* elementwise_chain.c: FusedChain's attributes, shapes and CPU reference
 * (elementwise_chain.h): one pass over the output with the chain's accumulator in float,
 * the inputs read through their broadcast strides. */
#include "elementwise_chain.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../kernels/k_nan.h"

float ewc_apply(const ewc_step *s, float a, float b) {
  if (s->op < EWC_BINARY_END && s->swap) {
    float t = a;
    a = b;
    b = t;
  }
  switch (s->op) {
    case EWC_ADD: return a + b;
    case EWC_SUB: return a - b;
    case EWC_MUL: return a * b;
    case EWC_DIV: return a / b;
    case EWC_MAX: return K_NAN_MAX(a, b); /* as the Max op */
    case EWC_MIN: return K_NAN_MIN(a, b);
    case EWC_POW: return powf(a, b);
    case EWC_RELU: return K_NAN_RELU(a);
    case EWC_SIGMOID: return 1.f / (1.f + expf(-a));
    case EWC_TANH: return tanhf(a);
    case EWC_EXP: return expf(a);
    case EWC_LOG: return logf(a);
    case EWC_SQRT: return sqrtf(a);
    case EWC_ERF: return erff(a);
    case EWC_NEG: return -a;
    case EWC_ABS: return fabsf(a);
    case EWC_RECIPROCAL: return 1.f / a;
    case EWC_GELU: return 0.5f * a * (1.f + erff(a * 0.70710678118654752440f));
    case EWC_GELU_TANH:
      return 0.5f * a * (1.f + tanhf(0.79788456080286535588f * (a + 0.044715f * a * a * a)));
    case EWC_SWISH: return a / (1.f + expf(-s->p0 * a));
    case EWC_HARD_SWISH: {
      float h = a * (1.f / 6.f) + 0.5f;
      return a * K_NAN_CLAMP(h, 0.f, 1.f);
    }
    case EWC_HARD_SIGMOID: {
      float h = s->p0 * a + s->p1;
      return K_NAN_CLAMP(h, 0.f, 1.f);
    }
    case EWC_LEAKY_RELU: return a < 0.f ? s->p0 * a : a;
    case EWC_CLIP: return K_NAN_CLAMP(a, s->p0, s->p1);
    case EWC_SOFTPLUS: return a > 20.f ? a : log1pf(expf(a));
    default: return a;
  }
}

static bool known_op(int op) {
  return (op >= 0 && op < EWC_BINARY_END) || (op >= EWC_RELU && op < EWC_OP_END);
}

void ewc_input_strides(const fused_chain_params *p, int k, const tensor *in, const tensor *out,
                       int64_t *strides, int64_t *offset) {
  if (p->has_view[k]) {
    memcpy(strides, p->view_strides[k], sizeof(int64_t) * (size_t)out->rank);
    *offset = p->view_offset[k];
    return;
  }
  broadcast_strides(in->rank, in->dims, out->rank, strides);
  *offset = 0;
}

/* Node input k as an operand slot: slot 0 is the first operand (input 0, or the parts
 * [0, n_parts)), slot j >= 1 is input j - 1 + max(n_parts, 1). -1 for a part after the
 * first. */
static int slot_of_input(const fused_chain_params *p, int k) {
  int first = p->n_parts > 1 ? p->n_parts : 1;
  if (k < first) return k == 0 ? 0 : -1;
  return k - first + 1;
}

int ewc_slot_input(const fused_chain_params *p, int slot) {
  return slot == 0 ? 0 : slot - 1 + (p->n_parts > 1 ? p->n_parts : 1);
}

int ewc_slots(const fused_chain_params *p, const node *n) {
  return n->n_inputs - (p->n_parts > 1 ? p->n_parts : 1) + 1;
}

/* The "views" attribute into p (by slot; input indices in the attribute); false when
 * malformed. */
static bool parse_views(const node *n, fused_chain_params *p) {
  const int64_t *v;
  int c = -1;
  if (attr_get_ints(n, "views", &v, &c) != INFER_OK) return false;
  for (int i = 0; i < c;) {
    if (c - i < 3) return false;
    int64_t k = v[i], r = v[i + 1];
    if (k < 0 || k >= n->n_inputs) return false;
    int sl = slot_of_input(p, (int)k);
    if (sl < 0 || (sl == 0 && p->n_parts > 1) || sl >= EWC_MAX_INPUTS || r < 0 ||
        r > INFER_MAX_RANK || c - i < 3 + r || v[i + 2] < 0 || p->has_view[sl])
      return false;
    p->has_view[sl] = true;
    p->view_rank[sl] = (int)r;
    p->view_offset[sl] = v[i + 2];
    for (int d = 0; d < r; d++) {
      if (v[i + 3 + d] < 0) return false;
      p->view_strides[sl][d] = v[i + 3 + d];
    }
    i += 3 + (int)r;
  }
  return true;
}

static infer_status fc_parse(const node *n, void **params) {
  fused_chain_params *p = calloc(1, sizeof *p);
  if (!p) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory");
  *params = p;
  const int64_t *st;
  const float *pf;
  int ns = -1, np = -1;
  TRY(attr_get_ints(n, "steps", &st, &ns));
  TRY(attr_get_floats(n, "params", &pf, &np));
  if (ns < 0 || ns % 3 || ns / 3 > EWC_MAX_STEPS || np != 2 * (ns / 3))
    return infer_fail(INFER_ERR_INVALID_MODEL, "FusedChain: steps/params do not describe at most "
                      "%d steps", EWC_MAX_STEPS);
  int64_t parts = 0;
  TRY(attr_get_int(n, "concat", 0, &parts));
  if (parts == 1 || parts < 0 || parts > EWC_MAX_PARTS || parts > n->n_inputs)
    return infer_fail(INFER_ERR_INVALID_MODEL, "FusedChain: concat = %lld for %d inputs (2 to "
                      "%d parts)", (long long)parts, n->n_inputs, EWC_MAX_PARTS);
  p->n_parts = (int)parts;
  if (ewc_slots(p, n) > EWC_MAX_INPUTS)
    return infer_fail(INFER_ERR_INVALID_MODEL, "FusedChain: %d operands (at most %d)",
                      ewc_slots(p, n), EWC_MAX_INPUTS);
  if (!parse_views(n, p))
    return infer_fail(INFER_ERR_INVALID_MODEL, "FusedChain: the views attribute is malformed");
  p->n_steps = ns / 3;
  for (int k = 0; k < p->n_steps; k++) {
    ewc_step *s = &p->steps[k];
    s->op = (int)st[3 * k];
    s->operand = (int)st[3 * k + 1];
    s->swap = st[3 * k + 2] != 0;
    s->p0 = pf[2 * k];
    s->p1 = pf[2 * k + 1];
    bool binary = s->op >= 0 && s->op < EWC_BINARY_END;
    int sl = binary && s->operand != EWC_IMMEDIATE && s->operand >= 0 && s->operand < n->n_inputs
                 ? slot_of_input(p, s->operand) : -1;
    if (!known_op(s->op) || (binary && s->operand != EWC_IMMEDIATE && sl < 1))
      return infer_fail(INFER_ERR_INVALID_MODEL, "FusedChain: step %d (op %d, operand %d) is "
                        "not valid for %d inputs%s", k, s->op, s->operand, n->n_inputs,
                        p->n_parts ? " after the concatenated parts" : "");
    if (binary && s->operand != EWC_IMMEDIATE) s->operand = sl; /* steps read slots */
  }
  return INFER_OK;
}

infer_status ewc_first_shape(const fused_chain_params *p, const node *n, const tensor *const *in,
                             tensor *shape) {
  const tensor *x = in[0];
  char a[96], b[96];
  *shape = *x;
  shape->data = NULL;
  if (p->n_parts < 2) return INFER_OK;
  if (x->rank < 1)
    return infer_fail(INFER_ERR_INVALID_MODEL, "FusedChain: concatenated parts are scalars");
  int last = x->rank - 1;
  for (int k = 1; k < p->n_parts; k++) {
    const tensor *t = in[k];
    bool same = t->dtype == x->dtype && t->rank == x->rank;
    for (int d = 0; same && d < last; d++) same = t->dims[d] == x->dims[d];
    if (!same)
      return infer_fail(INFER_ERR_INVALID_MODEL, "FusedChain: part %d (%s %s) does not "
                        "concatenate with part 0 (%s %s) along the last axis", k,
                        infer_dtype_name(t->dtype), dims_format(t->rank, t->dims, a, sizeof a),
                        infer_dtype_name(x->dtype), dims_format(x->rank, x->dims, b, sizeof b));
    shape->dims[last] += t->dims[last];
  }
  return INFER_OK;
}

static infer_status fc_infer(const node *n, const void *params, const tensor *const *in,
                             tensor *const *out) {
  char a[96], b[96];
  const fused_chain_params *p = params;
  tensor xs;
  const tensor *x = &xs;
  bool floats = in[0]->dtype == INFER_DTYPE_FLOAT32 || in[0]->dtype == INFER_DTYPE_FLOAT16 ||
                in[0]->dtype == INFER_DTYPE_BFLOAT16;
  if (!floats)
    return infer_fail(INFER_ERR_UNSUPPORTED, "FusedChain: dtype %s",
                      infer_dtype_name(in[0]->dtype));
  TRY(ewc_first_shape(p, n, in, &xs));
  /* the output: the first operand's shape, or the shape its view gives */
  if (p->has_view[0])
    return infer_fail(INFER_ERR_INVALID_MODEL, "FusedChain: input 0 cannot be a view");
  for (int sl = 1; sl < ewc_slots(p, n); sl++) {
    int k = ewc_slot_input(p, sl);
    int r;
    int64_t d[INFER_MAX_RANK];
    if (p->has_view[sl]) { /* every element it reaches lies in the input */
      int64_t last = p->view_offset[sl];
      if (p->view_rank[sl] != x->rank || in[k]->dtype != x->dtype)
        return infer_fail(INFER_ERR_INVALID_MODEL, "FusedChain: view of input %d has rank %d, "
                          "the output %d", k, p->view_rank[sl], x->rank);
      for (int dd = 0; dd < x->rank; dd++) last += (x->dims[dd] - 1) * p->view_strides[sl][dd];
      if (dims_count(x->rank, x->dims) > 0 && last >= dims_count(in[k]->rank, in[k]->dims))
        return infer_fail(INFER_ERR_INVALID_MODEL, "FusedChain: view of input %d reaches past "
                          "its %lld elements", k, (long long)dims_count(in[k]->rank, in[k]->dims));
      continue;
    }
    if (in[k]->dtype != x->dtype || in[k]->rank > x->rank ||
        broadcast_shapes(x->rank, x->dims, in[k]->rank, in[k]->dims, &r, d) != INFER_OK ||
        !dims_equal(r, d, x->rank, x->dims))
      return infer_fail(INFER_ERR_INVALID_MODEL, "FusedChain: input %d (%s %s) does not broadcast "
                        "to %s %s", k, infer_dtype_name(in[k]->dtype),
                        dims_format(in[k]->rank, in[k]->dims, a, sizeof a),
                        infer_dtype_name(x->dtype), dims_format(x->rank, x->dims, b, sizeof b));
  }
  out[0]->dtype = x->dtype;
  out[0]->rank = x->rank;
  memcpy(out[0]->dims, x->dims, sizeof(int64_t) * (size_t)x->rank);
  return INFER_OK;
}

/* Element i of the first operand: input 0's, or the concatenation's (the part holding
 * column i % C of row i / C). */
static float first_operand(const fused_chain_params *p, const tensor *const *in, int64_t i,
                           int64_t cols) {
  if (p->n_parts < 2) return (float)tensor_get_f64(in[0], i);
  int last = in[0]->rank - 1;
  int64_t row = i / cols, c = i % cols;
  int k = 0;
  while (c >= in[k]->dims[last]) c -= in[k++]->dims[last];
  return (float)tensor_get_f64(in[k], row * in[k]->dims[last] + c);
}

static infer_status fc_run(const node *n, const void *params, const tensor *const *in,
                           tensor *const *out, void *ws) {
  const fused_chain_params *p = params;
  tensor *y = out[0];
  int r = y->rank, ns = ewc_slots(p, n);
  int64_t count = dims_count(r, y->dims);
  int64_t strides[EWC_MAX_INPUTS][INFER_MAX_RANK], off[EWC_MAX_INPUTS] = {0};
  int64_t coord[INFER_MAX_RANK] = {0};
  const tensor *op[EWC_MAX_INPUTS];
  for (int sl = 0; sl < ns; sl++) {
    op[sl] = in[ewc_slot_input(p, sl)];
    if (sl > 0) ewc_input_strides(p, sl, op[sl], y, strides[sl], &off[sl]);
  }
  int64_t cols = r > 0 ? y->dims[r - 1] : 1;
  for (int64_t i = 0; i < count; i++) {
    float acc = first_operand(p, in, i, cols);
    for (int s = 0; s < p->n_steps; s++) {
      const ewc_step *st = &p->steps[s];
      float v = st->p0;
      if (st->op < EWC_BINARY_END && st->operand != EWC_IMMEDIATE)
        v = (float)tensor_get_f64(op[st->operand], off[st->operand]);
      acc = ewc_apply(st, acc, v);
    }
    tensor_set_f64(y, i, acc);
    /* the next element: the innermost coordinate first, carrying outwards */
    for (int d = r - 1; d >= 0; d--) {
      for (int k = 1; k < ns; k++) off[k] += strides[k][d];
      if (++coord[d] < y->dims[d]) break;
      for (int k = 1; k < ns; k++) off[k] -= strides[k][d] * y->dims[d];
      coord[d] = 0;
    }
  }
  return INFER_OK;
}

static const char *const fc_attrs[] = {"steps", "params", "views", "concat", NULL};
static const op_desc op_fused_chain = {
    .name = "FusedChain", .domain = "infer", .since = 1, .until = 1,
    .min_inputs = 1, .max_inputs = EWC_MAX_PARTS + EWC_MAX_INPUTS - 1, .min_outputs = 1, .max_outputs = 1,
    .attrs = fc_attrs, .parse = fc_parse, .infer = fc_infer, .run = fc_run};

const op_desc *const ops_elementwise_chain[] = {&op_fused_chain, NULL};
