/* norm_layer.c: LayerNormalization (opset 17) and RMSNormalization (opset 23).
 * X is seen as [outer, inner] with inner = prod(dims[axis:]); each row of `inner`
 * elements is normalized on its own:
 *   LayerNormalization: y = (x - mean) / sqrt(var + eps) * Scale + B,
 *     optional outputs Mean and InvStdDev of shape dims[:axis] + [1]*(rank-axis);
 *   RMSNormalization:   y = x / sqrt(mean(x^2) + eps) * Scale.
 * Scale and B broadcast unidirectionally to X. Statistics accumulate in double. */
#include <stdlib.h>

#include "norm_params.h"
#include "norm_util.h"
#include "reduce_util.h"

static const char *const layernorm_attrs[] = {"axis", "epsilon", "stash_type", NULL};

static infer_status layernorm_parse_named(const char *op, const node *n, void **params) {
  layernorm_params tmp;
  TRY(attr_get_int(n, "axis", -1, &tmp.axis));
  TRY(attr_get_float(n, "epsilon", 1e-5f, &tmp.epsilon));
  TRY(attr_get_int(n, "stash_type", 1, &tmp.stash_type));
  if (tmp.stash_type != INFER_DTYPE_FLOAT32 && tmp.stash_type != INFER_DTYPE_FLOAT64 &&
      tmp.stash_type != INFER_DTYPE_FLOAT16 && tmp.stash_type != INFER_DTYPE_BFLOAT16)
    return infer_fail(INFER_ERR_INVALID_MODEL, "%s: stash_type %lld is not a float type", op,
                      (long long)tmp.stash_type);
  if (!(tmp.epsilon >= 0.0f))
    return infer_fail(INFER_ERR_INVALID_MODEL, "%s: epsilon %g is negative", op,
                      (double)tmp.epsilon);
  layernorm_params *p = malloc(sizeof *p);
  if (!p) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "%s: out of memory", op);
  *p = tmp;
  *params = p;
  return INFER_OK;
}

static infer_status layernorm_parse(const node *n, void **params) {
  return layernorm_parse_named("LayerNormalization", n, params);
}
static infer_status rmsnorm_parse(const node *n, void **params) {
  return layernorm_parse_named("RMSNormalization", n, params);
}

/* t (Scale or B) must broadcast unidirectionally to x. */
static infer_status check_affine(const char *op, const char *name, const tensor *t,
                                 const tensor *x) {
  char sa[160], sb[160];
  TRY(nr_require(t, op, name));
  if (!dtype_is_float(t->dtype))
    return infer_fail(INFER_ERR_UNSUPPORTED, "%s: %s dtype %s is not supported", op, name,
                      infer_dtype_name(t->dtype));
  bool ok = t->rank <= x->rank;
  for (int i = 0; ok && i < t->rank; i++) {
    int64_t d = t->dims[i], xd = x->dims[x->rank - t->rank + i];
    ok = d == 1 || d == xd;
  }
  if (!ok)
    return infer_fail(INFER_ERR_INVALID_MODEL, "%s: %s of shape %s does not broadcast to X %s",
                      op, name, dims_format(t->rank, t->dims, sa, sizeof sa),
                      dims_format(x->rank, x->dims, sb, sizeof sb));
  return INFER_OK;
}

static infer_status layernorm_common_infer(const char *op, const layernorm_params *p,
                                           const tensor *const *in, tensor *const *out,
                                           int *axis) {
  const tensor *x = in[0];
  TRY(nr_require(x, op, "X"));
  if (!dtype_is_float(x->dtype))
    return infer_fail(INFER_ERR_UNSUPPORTED, "%s: X dtype %s is not supported", op,
                      infer_dtype_name(x->dtype));
  TRY(nr_check_count(x, op));
  TRY(axis_normalize(p->axis, x->rank, "axis", axis));
  TRY(check_affine(op, "Scale", in[1], x));
  out[0]->dtype = x->dtype;
  nr_copy_shape(out[0], x);
  return INFER_OK;
}

static infer_status layernorm_infer(const node *n, const void *params, const tensor *const *in,
                                    tensor *const *out) {
  const layernorm_params *p = params;
  int axis;
  TRY(layernorm_common_infer("LayerNormalization", p, in, out, &axis));
  if (n->n_inputs > 2 && in[2]) TRY(check_affine("LayerNormalization", "B", in[2], in[0]));
  for (int k = 1; k < 3 && k < n->n_outputs; k++) {
    if (!out[k]) continue;
    out[k]->dtype = (infer_dtype)p->stash_type;
    nr_copy_shape(out[k], in[0]);
    for (int i = axis; i < in[0]->rank; i++) out[k]->dims[i] = 1;
  }
  return INFER_OK;
}

static infer_status rmsnorm_infer(const node *n, const void *params, const tensor *const *in,
                                  tensor *const *out) {
  int axis;
  return layernorm_common_infer("RMSNormalization", params, in, out, &axis);
}

/* Offsets of an affine parameter broadcast to x: per element of a row when the
 * parameter covers exactly the normalized dims (the usual case), else general. */
typedef struct affine_view {
  const tensor *t;
  int64_t strides[INFER_MAX_RANK]; /* 0 on broadcast dims, aligned to x */
  bool row_dense;                  /* offset == index within the row */
} affine_view;

static void affine_view_init(affine_view *v, const tensor *t, const tensor *x, int axis,
                             int64_t inner) {
  v->t = t;
  if (!t) return;
  broadcast_strides(t->rank, t->dims, x->rank, v->strides);
  int64_t count = dims_count(t->rank, t->dims);
  bool outer_zero = true;
  for (int i = 0; i < axis; i++) outer_zero = outer_zero && v->strides[i] == 0;
  v->row_dense = outer_zero && count == inner;
}

/* Element of the parameter that goes with x's row `row`, in-row index `i`. */
static double affine_at(const affine_view *v, const tensor *x, int64_t row, int64_t i, int axis,
                        double def) {
  if (!v->t) return def;
  if (v->row_dense) return nr_load(v->t, i);
  int64_t off = 0;
  for (int d = x->rank - 1; d >= axis; d--) {
    off += (i % x->dims[d]) * v->strides[d];
    i /= x->dims[d];
  }
  for (int d = axis - 1; d >= 0; d--) {
    off += (row % x->dims[d]) * v->strides[d];
    row /= x->dims[d];
  }
  return nr_load(v->t, off);
}

static void norm_rows(const tensor *x, const tensor *scale, const tensor *bias, tensor *y,
                      tensor *mean_out, tensor *inv_out, int axis, double eps, bool rms) {
  int64_t outer = nr_span(x->dims, 0, axis), inner = nr_span(x->dims, axis, x->rank);
  affine_view sv, bv;
  affine_view_init(&sv, scale, x, axis, inner);
  affine_view_init(&bv, bias, x, axis, inner);
  bool fast = x->dtype == INFER_DTYPE_FLOAT32 && sv.row_dense && (!bias || bv.row_dense) &&
              scale->dtype == INFER_DTYPE_FLOAT32 && (!bias || bias->dtype == INFER_DTYPE_FLOAT32);
  for (int64_t r = 0; r < outer; r++) {
    int64_t base = r * inner;
    double mean = 0.0, sq = 0.0;
    if (!rms) {
      for (int64_t i = 0; i < inner; i++) mean += nr_load(x, base + i);
      mean = inner ? mean / (double)inner : 0.0;
    }
    for (int64_t i = 0; i < inner; i++) {
      double d = nr_load(x, base + i) - mean;
      sq += d * d;
    }
    double inv = 1.0 / sqrt((inner ? sq / (double)inner : 0.0) + eps);
    if (mean_out) nr_store(mean_out, r, mean);
    if (inv_out) nr_store(inv_out, r, inv);
    if (fast) {
      const float *xs = (const float *)x->data + base, *ss = scale->data;
      const float *bs = bias ? bias->data : NULL;
      float *ys = (float *)y->data + base;
      for (int64_t i = 0; i < inner; i++)
        ys[i] = (float)((xs[i] - mean) * inv * ss[i] + (bs ? bs[i] : 0.0f));
      continue;
    }
    for (int64_t i = 0; i < inner; i++) {
      double s = affine_at(&sv, x, r, i, axis, 1.0), b = affine_at(&bv, x, r, i, axis, 0.0);
      nr_store(y, base + i, (nr_load(x, base + i) - mean) * inv * s + b);
    }
  }
}

static infer_status layernorm_run(const node *n, const void *params, const tensor *const *in,
                                  tensor *const *out, void *ws) {
  const layernorm_params *p = params;
  int axis;
  TRY(axis_normalize(p->axis, in[0]->rank, "axis", &axis));
  const tensor *bias = n->n_inputs > 2 ? in[2] : NULL;
  tensor *mean_out = n->n_outputs > 1 ? out[1] : NULL;
  tensor *inv_out = n->n_outputs > 2 ? out[2] : NULL;
  norm_rows(in[0], in[1], bias, out[0], mean_out, inv_out, axis, p->epsilon, false);
  return INFER_OK;
}

static infer_status rmsnorm_run(const node *n, const void *params, const tensor *const *in,
                                tensor *const *out, void *ws) {
  const layernorm_params *p = params;
  int axis;
  TRY(axis_normalize(p->axis, in[0]->rank, "axis", &axis));
  norm_rows(in[0], in[1], NULL, out[0], NULL, NULL, axis, p->epsilon, true);
  return INFER_OK;
}

const op_desc op_layernorm = {.name = "LayerNormalization",
                              .domain = "",
                              .since = 17,
                              .until = OP_OPSET_MAX,
                              .min_inputs = 2,
                              .max_inputs = 3,
                              .min_outputs = 1,
                              .max_outputs = 3,
                              .attrs = layernorm_attrs,
                              .parse = layernorm_parse,
                              .infer = layernorm_infer,
                              .run = layernorm_run};

const op_desc op_rmsnorm = {.name = "RMSNormalization",
                            .domain = "",
                            .since = 23,
                            .until = OP_OPSET_MAX,
                            .min_inputs = 2,
                            .max_inputs = 2,
                            .min_outputs = 1,
                            .max_outputs = 1,
                            .attrs = layernorm_attrs,
                            .parse = rmsnorm_parse,
                            .infer = rmsnorm_infer,
                            .run = rmsnorm_run};
