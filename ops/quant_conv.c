/* quant_conv.c: ConvInteger and QLinearConv (opset 10), the convolutions over 8-bit
 * quantized tensors.
 *
 *   ConvInteger: Y (int32) = Conv(X - x_zero_point, W - w_zero_point)
 *   QLinearConv: Y = saturate(round_half_even((Conv(X - x_zp, W - w_zp) + B)
 *                             * x_scale * w_scale / y_scale) + y_zp)
 *
 * Attributes, geometry and checks are Conv's (conv_params, conv_dims_make). X and W
 * are staged to float minus their zero points (so padding reads as the zero point, as
 * the spec requires), X goes through Conv's im2col, and each image and group is one
 * exact integer product (quant_gemm_exact: float GEMM chunks that cannot round).
 * x_zero_point is per tensor; w_zero_point and w_scale per tensor or per output
 * channel (1-D of M). The requantization multiplier x_scale * w_scale / y_scale is
 * formed in float32 and applied to the int32 sum in double, as the ONNX reference does. */
#include <stdlib.h>
#include <string.h>

#include "conv_fused.h"
#include "quant_gemm.h"
#include "quant_util.h"

static const char *const qconv_attrs[] = {"auto_pad", "dilations", "group", "kernel_shape",
                                          "pads",     "strides",   NULL};

static infer_status conv_integer_parse(const node *n, void **params) {
  return conv_parse_common(n, "ConvInteger", false, sizeof(conv_params), params);
}
static infer_status qlinear_conv_parse(const node *n, void **params) {
  return conv_parse_common(n, "QLinearConv", false, sizeof(conv_params), params);
}

/* The inputs of either op, by role. */
typedef struct qconv_inputs {
  const char *op;
  bool qlinear;
  const tensor *x, *w, *x_zp, *w_zp;       /* zero points may be NULL (ConvInteger) */
  const tensor *x_scale, *w_scale, *y_scale, *y_zp, *b; /* QLinearConv only */
} qconv_inputs;

static const tensor *opt_in(const node *n, const tensor *const *in, int i) {
  return i < n->n_inputs ? in[i] : NULL;
}

static qconv_inputs qconv_roles(const node *n, const tensor *const *in) {
  qconv_inputs r;
  memset(&r, 0, sizeof r);
  if (strcmp(n->op_type, "ConvInteger") == 0) {
    r.op = "ConvInteger";
    r.x = in[0];
    r.w = in[1];
    r.x_zp = opt_in(n, in, 2);
    r.w_zp = opt_in(n, in, 3);
  } else {
    r.op = "QLinearConv";
    r.qlinear = true;
    r.x = in[0];
    r.x_scale = in[1];
    r.x_zp = in[2];
    r.w = in[3];
    r.w_scale = in[4];
    r.w_zp = in[5];
    r.y_scale = in[6];
    r.y_zp = in[7];
    r.b = opt_in(n, in, 8);
  }
  return r;
}

static bool known(const tensor *t) {
  if (!t) return true;
  for (int i = 0; i < t->rank; i++)
    if (t->dims[i] < 0) return false;
  return true;
}

/* t is a scalar or a 1-D tensor of m entries (per output channel). */
static infer_status check_per_channel(const char *op, const char *role, const tensor *t,
                                      int64_t m) {
  char buf[96];
  if (dims_count(t->rank, t->dims) == 1 || (t->rank == 1 && t->dims[0] == m)) return INFER_OK;
  return infer_fail(INFER_ERR_INVALID_MODEL,
                    "%s: %s %s must be a scalar or 1-D of the %lld output channels", op, role,
                    dims_format(t->rank, t->dims, buf, sizeof buf), (long long)m);
}

/* Dtypes and parameter shapes; d gets the geometry. */
static infer_status qconv_check(const conv_params *p, const qconv_inputs *r, conv_dims *d) {
  const char *op = r->op;
  TRY(quant_check_int_dtype(op, "x", r->x->dtype, false));
  TRY(quant_check_int_dtype(op, "w", r->w->dtype, false));
  if (r->x_zp && r->x_zp->dtype != r->x->dtype)
    return infer_fail(INFER_ERR_INVALID_MODEL, "%s: x is %s but x_zero_point is %s", op,
                      infer_dtype_name(r->x->dtype), infer_dtype_name(r->x_zp->dtype));
  if (r->w_zp && r->w_zp->dtype != r->w->dtype)
    return infer_fail(INFER_ERR_INVALID_MODEL, "%s: w is %s but w_zero_point is %s", op,
                      infer_dtype_name(r->w->dtype), infer_dtype_name(r->w_zp->dtype));
  if (r->y_zp) TRY(quant_check_int_dtype(op, "y_zero_point", r->y_zp->dtype, false));
  if (r->qlinear && (!r->x_scale || !r->w_scale || !r->y_scale))
    return infer_fail(INFER_ERR_INVALID_MODEL, "%s: x_scale, w_scale and y_scale are required",
                      op);
  const tensor *scales[3] = {r->x_scale, r->w_scale, r->y_scale};
  static const char *const names[3] = {"x_scale", "w_scale", "y_scale"};
  for (int i = 0; i < 3; i++)
    if (scales[i] && scales[i]->dtype != INFER_DTYPE_FLOAT32)
      return infer_fail(INFER_ERR_INVALID_MODEL, "%s: %s must be float32, not %s", op, names[i],
                        infer_dtype_name(scales[i]->dtype));
  if (r->b && r->b->dtype != INFER_DTYPE_INT32)
    return infer_fail(INFER_ERR_INVALID_MODEL, "%s: B must be int32, not %s", op,
                      infer_dtype_name(r->b->dtype));
  const tensor *geo[3] = {r->x, r->w, r->b};
  TRY(conv_dims_make(op, p, geo, d));
  if (r->x_zp) TRY(quant_check_scalar(op, "x_zero_point", r->x_zp));
  if (r->w_zp) TRY(check_per_channel(op, "w_zero_point", r->w_zp, d->m));
  if (r->x_scale) TRY(quant_check_scalar(op, "x_scale", r->x_scale));
  if (r->w_scale) TRY(check_per_channel(op, "w_scale", r->w_scale, d->m));
  if (r->y_scale) TRY(quant_check_scalar(op, "y_scale", r->y_scale));
  if (r->y_zp) TRY(quant_check_scalar(op, "y_zero_point", r->y_zp));
  return INFER_OK;
}

static infer_status qconv_infer(const node *n, const void *params, const tensor *const *in,
                                tensor *const *out) {
  for (int i = 0; i < n->n_inputs; i++)
    if (!known(in[i])) return OP_NEEDS_DATA;
  qconv_inputs r = qconv_roles(n, in);
  conv_dims d;
  TRY(qconv_check(params, &r, &d));
  tensor *y = out[0];
  /* QLinearConv without y_zero_point: y has x's dtype (as the ONNX reference) */
  y->dtype = !r.qlinear ? INFER_DTYPE_INT32 : r.y_zp ? r.y_zp->dtype : r.x->dtype;
  y->rank = r.x->rank;
  y->dims[0] = d.n;
  y->dims[1] = d.m;
  for (int i = 0; i < y->rank - 2; i++) y->dims[2 + i] = d.g.out[3 - (y->rank - 2) + i];
  int64_t cnt;
  if (!size_mul(d.kernel, d.cg, &cnt) || tensor_nbytes(y) < 0)
    return infer_fail(INFER_ERR_INVALID_MODEL, "%s: output too large", r.op);
  return INFER_OK;
}

/* Workspace, in order: X and W staged (float), the im2col buffer, the GEMM chunk,
 * and (QLinearConv) the int32 sums of one image and group. */
static int64_t qconv_ws(const conv_dims *d, const qconv_inputs *r) {
  int64_t total = 0, out_sz = win_out_count(&d->g), col = 0, grp;
  if (!d->pointwise && !size_mul(d->cg * d->kernel, out_sz, &col)) return -1;
  if (!size_mul(d->mg, out_sz, &grp)) return -1;
  bool ok = ws_add(&total, dims_count(r->x->rank, r->x->dims), 4) &&
            ws_add(&total, dims_count(r->w->rank, r->w->dims), 4) && ws_add(&total, col, 4) &&
            ws_add(&total, grp, 4) && ws_add(&total, r->qlinear ? grp : 0, 4);
  return ok ? total : -1;
}

static int64_t qconv_workspace(const node *n, const void *params, const tensor *const *in,
                               tensor *const *out) {
  qconv_inputs r = qconv_roles(n, in);
  conv_dims d;
  if (qconv_check(params, &r, &d) != INFER_OK) return -1;
  return qconv_ws(&d, &r);
}

static infer_status qconv_run(const node *n, const void *params, const tensor *const *in,
                              tensor *const *out, void *ws) {
  qconv_inputs r = qconv_roles(n, in);
  conv_dims d;
  TRY(qconv_check(params, &r, &d));
  tensor *y = out[0];
  const int64_t in_sz = win_in_count(&d.g), out_sz = win_out_count(&d.g);
  const int64_t kk = d.cg * d.kernel;
  int64_t nx = dims_count(r.x->rank, r.x->dims), nw = dims_count(r.w->rank, r.w->dims);
  char *cur = ws;
  float *xs = ws_take(&cur, nx, 4), *wsf = ws_take(&cur, nw, 4);
  float *col = ws_take(&cur, d.pointwise ? 0 : kk * out_sz, 4);
  float *part = ws_take(&cur, d.mg * out_sz, 4);
  int32_t *acc = ws_take(&cur, r.qlinear ? d.mg * out_sz : 0, 4);

  int64_t xz = quant_int_at(r.x_zp, 0);
  for (int64_t i = 0; i < nx; i++) xs[i] = (float)(quant_int_at(r.x, i) - xz);
  bool wz_vec = r.w_zp && dims_count(r.w_zp->rank, r.w_zp->dims) > 1;
  int64_t per_m = d.cg * d.kernel;
  for (int64_t m = 0; m < d.m; m++) {
    int64_t wz = quant_int_at(r.w_zp, wz_vec ? m : 0);
    for (int64_t i = m * per_m; i < (m + 1) * per_m; i++)
      wsf[i] = (float)(quant_int_at(r.w, i) - wz);
  }
  float xmax = quant_absmax(xs, nx), wmax = quant_absmax(wsf, nw);

  int64_t lo = 0, hi = 0, yz = 0;
  float xsc = 0, ysc = 1;
  bool ws_vec = false;
  if (r.qlinear) {
    quant_range(y->dtype, &lo, &hi);
    yz = quant_int_at(r.y_zp, 0);
    xsc = quant_float_at(r.x_scale, 0);
    ysc = quant_float_at(r.y_scale, 0);
    ws_vec = dims_count(r.w_scale->rank, r.w_scale->dims) > 1;
  }
  const int32_t *bias = r.b ? r.b->data : NULL;
  for (int64_t b = 0; b < d.n; b++)
    for (int64_t g = 0; g < d.group; g++) {
      const float *xg = xs + (b * d.c + g * d.cg) * in_sz, *cols = xg;
      if (!d.pointwise) {
        im2col_f32(xg, d.cg, &d.g, col);
        cols = col;
      }
      int64_t y0 = (b * d.m + g * d.mg) * out_sz;
      int32_t *sums = r.qlinear ? acc : (int32_t *)y->data + y0;
      quant_gemm_exact(d.mg, out_sz, kk, wsf + g * d.mg * kk, kk, cols, out_sz, wmax, xmax, part,
                       sums, out_sz);
      if (!r.qlinear) continue;
      for (int64_t m = 0; m < d.mg; m++) {
        int64_t mm = g * d.mg + m;
        float mult = xsc * quant_float_at(r.w_scale, ws_vec ? mm : 0) / ysc;
        uint32_t bv = bias ? (uint32_t)bias[mm] : 0;
        const int32_t *srow = sums + m * out_sz;
        int64_t yi = y0 + m * out_sz;
        for (int64_t i = 0; i < out_sz; i++) {
          int32_t s = (int32_t)((uint32_t)srow[i] + bv); /* int32 accumulation wraps */
          quant_int_set(y, yi + i, quant_round_saturate((double)s * (double)mult, yz, lo, hi));
        }
      }
    }
  return INFER_OK;
}

const op_desc op_conv_integer = {.name = "ConvInteger",
                                 .domain = "",
                                 .since = 10,
                                 .until = OP_OPSET_MAX,
                                 .min_inputs = 2,
                                 .max_inputs = 4,
                                 .min_outputs = 1,
                                 .max_outputs = 1,
                                 .attrs = qconv_attrs,
                                 .parse = conv_integer_parse,
                                 .infer = qconv_infer,
                                 .run = qconv_run,
                                 .workspace = qconv_workspace};

const op_desc op_qlinear_conv = {.name = "QLinearConv",
                                 .domain = "",
                                 .since = 10,
                                 .until = OP_OPSET_MAX,
                                 .min_inputs = 8,
                                 .max_inputs = 9,
                                 .min_outputs = 1,
                                 .max_outputs = 1,
                                 .attrs = qconv_attrs,
                                 .parse = qlinear_conv_parse,
                                 .infer = qconv_infer,
                                 .run = qconv_run,
                                 .workspace = qconv_workspace};
