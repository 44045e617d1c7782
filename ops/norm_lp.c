/* norm_lp.c: LpNormalization (1, 22) and MeanVarianceNormalization (9, 13).
 *
 * LpNormalization: y = x / ||x||_p along `axis` (default -1), p 1 or 2 (default 2);
 * a zero vector stays zero (the ONNX backend tests expect 0 there, not 0/0).
 * MeanVarianceNormalization: y = (x - mean) / (sqrt(E[x^2] - mean^2) + 1e-9) over
 * `axes` (default 0, 2, 3), the op's function body; sums in double, and a variance
 * that rounding makes slightly negative counts as 0. */
#include <stdlib.h>

#include "conv_util.h" /* ws_add */
#include "reduce_util.h"

typedef struct lp_norm_params {
  int64_t axis, p;
} lp_norm_params;

static const char *const lp_norm_attrs[] = {"axis", "p", NULL};

static infer_status lp_norm_parse(const node *n, void **params) {
  lp_norm_params t;
  TRY(attr_get_int(n, "axis", -1, &t.axis));
  TRY(attr_get_int(n, "p", 2, &t.p));
  if (t.p != 1 && t.p != 2)
    return infer_fail(INFER_ERR_INVALID_MODEL, "LpNormalization: p = %lld must be 1 or 2",
                      (long long)t.p);
  lp_norm_params *p = malloc(sizeof *p);
  if (!p) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "LpNormalization: out of memory");
  *p = t;
  *params = p;
  return INFER_OK;
}

static infer_status float_same_shape(const char *op, const tensor *x, tensor *y) {
  if (!dtype_is_float(x->dtype))
    return infer_fail(INFER_ERR_UNSUPPORTED, "%s: dtype %s is not supported", op,
                      infer_dtype_name(x->dtype));
  TRY(nr_check_count(x, op));
  y->dtype = x->dtype;
  nr_copy_shape(y, x);
  return INFER_OK;
}

static infer_status lp_norm_infer(const node *n, const void *params, const tensor *const *in,
                                  tensor *const *out) {
  const lp_norm_params *p = params;
  int axis;
  TRY(float_same_shape("LpNormalization", in[0], out[0]));
  if (in[0]->rank == 0)
    return infer_fail(INFER_ERR_INVALID_MODEL, "LpNormalization: input is a scalar");
  return axis_normalize(p->axis, in[0]->rank, "LpNormalization axis", &axis);
}

static infer_status lp_norm_run(const node *n, const void *params, const tensor *const *in,
                                tensor *const *out, void *ws) {
  const lp_norm_params *p = params;
  const tensor *x = in[0];
  tensor *y = out[0];
  int axis;
  TRY(axis_normalize(p->axis, x->rank, "LpNormalization axis", &axis));
  int64_t outer = nr_span(x->dims, 0, axis), len = x->dims[axis];
  int64_t inner = nr_span(x->dims, axis + 1, x->rank);
  for (int64_t o = 0; o < outer; o++)
    for (int64_t j = 0; j < inner; j++) {
      int64_t base = o * len * inner + j;
      double s = 0;
      for (int64_t i = 0; i < len; i++) {
        double v = nr_load(x, base + i * inner);
        s += p->p == 1 ? fabs(v) : v * v;
      }
      double norm = p->p == 1 ? s : sqrt(s);
      for (int64_t i = 0; i < len; i++)
        nr_store(y, base + i * inner, norm == 0 ? 0.0 : nr_load(x, base + i * inner) / norm);
    }
  return INFER_OK;
}

const op_desc op_lp_normalization = {.name = "LpNormalization",
                                     .domain = "",
                                     .since = 1,
                                     .until = OP_OPSET_MAX,
                                     .min_inputs = 1,
                                     .max_inputs = 1,
                                     .min_outputs = 1,
                                     .max_outputs = 1,
                                     .attrs = lp_norm_attrs,
                                     .parse = lp_norm_parse,
                                     .infer = lp_norm_infer,
                                     .run = lp_norm_run};

/* ---- MeanVarianceNormalization ------------------------------------------------------ */

typedef struct mvn_params {
  int n_axes;
  int64_t axes[INFER_MAX_RANK];
} mvn_params;

static const char *const mvn_attrs[] = {"axes", NULL};

static infer_status mvn_parse(const node *n, void **params) {
  const int64_t *v;
  int count;
  TRY(attr_get_ints(n, "axes", &v, &count));
  mvn_params t = {.n_axes = 3, .axes = {0, 2, 3}};
  if (count > INFER_MAX_RANK)
    return infer_fail(INFER_ERR_INVALID_MODEL, "MeanVarianceNormalization: %d axes", count);
  if (count >= 0) {
    t.n_axes = count;
    for (int i = 0; i < count; i++) t.axes[i] = v[i];
  }
  mvn_params *p = malloc(sizeof *p);
  if (!p) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "MeanVarianceNormalization: out of memory");
  *p = t;
  *params = p;
  return INFER_OK;
}

/* reduced[a]: axis a is normalized over. */
static infer_status mvn_axes(const mvn_params *p, int rank, bool *reduced) {
  for (int a = 0; a < rank; a++) reduced[a] = false;
  for (int i = 0; i < p->n_axes; i++) {
    int a;
    TRY(axis_normalize(p->axes[i], rank, "MeanVarianceNormalization axes entry", &a));
    reduced[a] = true;
  }
  return INFER_OK;
}

/* Groups (kept positions) and, per axis, the group stride (0 on reduced axes). */
static int64_t mvn_groups(const tensor *x, const bool *reduced, int64_t *gstride) {
  int64_t g = 1;
  for (int a = x->rank - 1; a >= 0; a--) {
    gstride[a] = reduced[a] ? 0 : g;
    if (!reduced[a]) g *= x->dims[a];
  }
  return g;
}

static infer_status mvn_infer(const node *n, const void *params, const tensor *const *in,
                              tensor *const *out) {
  bool reduced[INFER_MAX_RANK];
  TRY(float_same_shape("MeanVarianceNormalization", in[0], out[0]));
  return mvn_axes(params, in[0]->rank, reduced);
}

static int64_t mvn_workspace(const node *n, const void *params, const tensor *const *in,
                             tensor *const *out) {
  bool reduced[INFER_MAX_RANK];
  int64_t gstride[INFER_MAX_RANK], total = 0;
  if (mvn_axes(params, in[0]->rank, reduced) != INFER_OK) return -1;
  return ws_add(&total, mvn_groups(in[0], reduced, gstride), 2 * sizeof(double)) ? total : -1;
}

static infer_status mvn_run(const node *n, const void *params, const tensor *const *in,
                            tensor *const *out, void *ws) {
  const tensor *x = in[0];
  tensor *y = out[0];
  bool reduced[INFER_MAX_RANK];
  int64_t gstride[INFER_MAX_RANK];
  TRY(mvn_axes(params, x->rank, reduced));
  int64_t groups = mvn_groups(x, reduced, gstride), count = dims_count(x->rank, x->dims);
  if (count == 0) return INFER_OK;
  double *sum = ws, *sq = sum + groups;
  for (int64_t g = 0; g < groups; g++) sum[g] = sq[g] = 0;
  int64_t per = count / groups; /* elements per group */
  for (int pass = 0; pass < 2; pass++) {
    int64_t idx[INFER_MAX_RANK] = {0}, g = 0;
    for (int64_t i = 0; i < count; i++) {
      double v = nr_load(x, i);
      if (pass == 0) {
        sum[g] += v;
        sq[g] += v * v;
      } else {
        double mean = sum[g], var = sq[g] - mean * mean;
        nr_store(y, i, (v - mean) / (sqrt(var > 0 ? var : 0) + 1e-9));
      }
      for (int a = x->rank - 1; a >= 0; a--) { /* odometer; g follows the kept axes */
        g += gstride[a];
        if (++idx[a] < x->dims[a]) break;
        g -= gstride[a] * x->dims[a];
        idx[a] = 0;
      }
    }
    if (pass == 0)
      for (int64_t k = 0; k < groups; k++) sum[k] /= (double)per, sq[k] /= (double)per;
  }
  return INFER_OK;
}

const op_desc op_mean_variance_normalization = {.name = "MeanVarianceNormalization",
                                                .domain = "",
                                                .since = 9,
                                                .until = OP_OPSET_MAX,
                                                .min_inputs = 1,
                                                .max_inputs = 1,
                                                .min_outputs = 1,
                                                .max_outputs = 1,
                                                .attrs = mvn_attrs,
                                                .parse = mvn_parse,
                                                .infer = mvn_infer,
                                                .run = mvn_run,
                                                .workspace = mvn_workspace};
