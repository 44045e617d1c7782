/* quant_linear.c: QuantizeLinear and DequantizeLinear (opsets 10, 13, 19, 21, 23, 24,
 * 25) and DynamicQuantizeLinear (11).
 *
 *   QuantizeLinear:   y = saturate(round_half_even(x / y_scale) + y_zero_point)
 *   DequantizeLinear: y = (x - x_zero_point) * x_scale
 *
 * per tensor (scalar scale), per axis (13+: 1-D scale along `axis`) or blocked (21+:
 * scale of x's shape with the axis divided into ceil(D / block_size) blocks); see
 * quant_layout in quant_util.h. The division runs in the precision the spec names (the
 * `precision` attribute, else the scale's dtype): operands and quotient are rounded to
 * that type, so a float16 scale divides in float16 as the ONNX reference does. The
 * product of DequantizeLinear is formed in float32 (exact for 8/16-bit inputs times
 * any float scale before the final rounding), int32 inputs in double. */
#include <float.h>
#include <stdlib.h>
#include <string.h>

#include "quant_util.h"

static const char *const quant_attrs[] = {"axis", "saturate", "block_size", "output_dtype",
                                          "precision", NULL};
static const char *const dequant_attrs[] = {"axis", "block_size", "output_dtype", NULL};

static const tensor *opt_in(const node *n, const tensor *const *in, int i) {
  return i < n->n_inputs ? in[i] : NULL;
}

static bool shape_known(const tensor *t) {
  for (int i = 0; i < t->rank; i++)
    if (t->dims[i] < 0) return false;
  return true;
}

/* The layout of this node's scale / zero point over x. */
static infer_status linear_layout(const node *n, const quant_linear_params *p, const tensor *x,
                                  const tensor *scale, const tensor *zp, quant_layout *l) {
  return quant_layout_make(n->op_type, x, scale, zp, p->axis, p->block_size, n->opset >= 13,
                           n->opset >= 21, l);
}

/* ---- QuantizeLinear ---------------------------------------------------------------- */

static infer_status quantize_out_dtype(const quant_linear_params *p, const tensor *zp,
                                       infer_dtype *dt) {
  if (zp) {
    if (p->output_dtype && p->output_dtype != zp->dtype)
      return infer_fail(INFER_ERR_INVALID_MODEL,
                        "QuantizeLinear: output_dtype %s does not match y_zero_point's %s",
                        infer_dtype_name(p->output_dtype), infer_dtype_name(zp->dtype));
    *dt = zp->dtype;
  } else {
    *dt = p->output_dtype ? p->output_dtype : INFER_DTYPE_UINT8;
  }
  return quant_check_int_dtype("QuantizeLinear", "output", *dt, true);
}

static infer_status quantize_infer(const node *n, const void *params, const tensor *const *in,
                                   tensor *const *out) {
  const quant_linear_params *p = params;
  const tensor *x = in[0], *scale = in[1], *zp = opt_in(n, in, 2);
  infer_dtype xd = x->dtype;
  if (!dtype_is_float(xd) && xd != INFER_DTYPE_INT32)
    return infer_fail(INFER_ERR_UNSUPPORTED, "QuantizeLinear: x dtype %s is not supported",
                      infer_dtype_name(xd));
  if (xd == INFER_DTYPE_FLOAT64)
    return infer_fail(INFER_ERR_INVALID_MODEL, "QuantizeLinear: x must not be float64");
  TRY(quant_check_scale_dtype("QuantizeLinear", "y_scale", scale->dtype));
  infer_dtype od = INFER_DTYPE_UNDEFINED;
  TRY(quantize_out_dtype(p, zp, &od));
  if (!shape_known(x) || !shape_known(scale) || (zp && !shape_known(zp))) return OP_NEEDS_DATA;
  quant_layout l;
  TRY(linear_layout(n, p, x, scale, zp, &l));
  tensor *y = out[0];
  *y = *x;
  y->data = NULL;
  y->dtype = od;
  return INFER_OK;
}

/* x / s in precision `prec` (both operands and the quotient rounded to it). */
static inline double quant_divide(infer_dtype prec, double x, float s) {
  if (prec == INFER_DTYPE_FLOAT64) return x / (double)s;
  float xf = quant_round_to(prec, (float)x), sf = quant_round_to(prec, s);
  return quant_round_to(prec, xf / sf);
}

static inline double x_value(const tensor *x, int64_t i) {
  return x->dtype == INFER_DTYPE_INT32 ? (double)((const int32_t *)x->data)[i]
                                       : (double)quant_float_at(x, i);
}

static infer_status quantize_run(const node *n, const void *params, const tensor *const *in,
                                 tensor *const *out, void *ws) {
  const quant_linear_params *p = params;
  const tensor *x = in[0], *scale = in[1], *zp = opt_in(n, in, 2);
  tensor *y = out[0];
  quant_layout l;
  TRY(linear_layout(n, p, x, scale, zp, &l));
  int64_t lo, hi;
  quant_range(y->dtype, &lo, &hi);
  infer_dtype prec = p->precision ? p->precision : scale->dtype;
  int64_t i = 0;
  if (l.kind == QUANT_PER_TENSOR && x->dtype == INFER_DTYPE_FLOAT32 &&
      prec == INFER_DTYPE_FLOAT32) { /* the common case, without per-element dispatch */
    float s = quant_float_at(scale, 0);
    int64_t z = quant_int_at(zp, 0), count = l.inner;
    const float *xv = x->data;
    if (y->dtype == INFER_DTYPE_UINT8) {
      uint8_t *yv = y->data;
      for (; i < count; i++) yv[i] = (uint8_t)quant_round_saturate(xv[i] / s, z, lo, hi);
    } else if (y->dtype == INFER_DTYPE_INT8) {
      int8_t *yv = y->data;
      for (; i < count; i++) yv[i] = (int8_t)quant_round_saturate(xv[i] / s, z, lo, hi);
    } else {
      for (; i < count; i++) quant_int_set(y, i, quant_round_saturate(xv[i] / s, z, lo, hi));
    }
    return INFER_OK;
  }
  for (int64_t o = 0; o < l.outer; o++)
    for (int64_t a = 0; a < l.dim; a++) {
      int64_t base = quant_param_base(&l, o, a);
      for (int64_t j = 0; j < l.inner; j++, i++) {
        int64_t k = base + j * l.istep;
        double q = quant_divide(prec, x_value(x, i), quant_float_at(scale, k));
        quant_int_set(y, i, quant_round_saturate(q, quant_int_at(zp, k), lo, hi));
      }
    }
  return INFER_OK;
}

const op_desc op_quantize_linear = {.name = "QuantizeLinear",
                                    .domain = "",
                                    .since = 10,
                                    .until = OP_OPSET_MAX,
                                    .min_inputs = 2,
                                    .max_inputs = 3,
                                    .min_outputs = 1,
                                    .max_outputs = 1,
                                    .attrs = quant_attrs,
                                    .parse = quant_linear_parse,
                                    .infer = quantize_infer,
                                    .run = quantize_run};

/* ---- DequantizeLinear -------------------------------------------------------------- */

static infer_status dequantize_infer(const node *n, const void *params, const tensor *const *in,
                                     tensor *const *out) {
  const quant_linear_params *p = params;
  const tensor *x = in[0], *scale = in[1], *zp = opt_in(n, in, 2);
  if (x->dtype != INFER_DTYPE_INT32)
    TRY(quant_check_int_dtype("DequantizeLinear", "x", x->dtype, true));
  if (zp && zp->dtype != x->dtype)
    return infer_fail(INFER_ERR_INVALID_MODEL, "DequantizeLinear: x is %s but x_zero_point is %s",
                      infer_dtype_name(x->dtype), infer_dtype_name(zp->dtype));
  TRY(quant_check_scale_dtype("DequantizeLinear", "x_scale", scale->dtype));
  if (!shape_known(x) || !shape_known(scale) || (zp && !shape_known(zp))) return OP_NEEDS_DATA;
  quant_layout l;
  TRY(linear_layout(n, p, x, scale, zp, &l));
  tensor *y = out[0];
  *y = *x;
  y->data = NULL;
  y->dtype = p->output_dtype ? p->output_dtype : scale->dtype;
  return INFER_OK;
}

static inline void store_float(tensor *y, int64_t i, float v) {
  switch (y->dtype) {
    case INFER_DTYPE_FLOAT16: ((uint16_t *)y->data)[i] = float_to_half(v); break;
    case INFER_DTYPE_BFLOAT16: ((uint16_t *)y->data)[i] = float_to_bf16(v); break;
    default: ((float *)y->data)[i] = v; break;
  }
}

static infer_status dequantize_run(const node *n, const void *params, const tensor *const *in,
                                   tensor *const *out, void *ws) {
  const quant_linear_params *p = params;
  const tensor *x = in[0], *scale = in[1], *zp = opt_in(n, in, 2);
  tensor *y = out[0];
  quant_layout l;
  TRY(linear_layout(n, p, x, scale, zp, &l));
  bool wide = x->dtype == INFER_DTYPE_INT32;
  int64_t i = 0;
  if (l.kind == QUANT_PER_TENSOR && !wide && y->dtype == INFER_DTYPE_FLOAT32) {
    float s = quant_float_at(scale, 0);
    int64_t z = quant_int_at(zp, 0);
    float *yv = y->data;
    if (x->dtype == INFER_DTYPE_UINT8) {
      const uint8_t *xv = x->data;
      for (; i < l.inner; i++) yv[i] = (float)((int32_t)xv[i] - (int32_t)z) * s;
    } else if (x->dtype == INFER_DTYPE_INT8) {
      const int8_t *xv = x->data;
      for (; i < l.inner; i++) yv[i] = (float)((int32_t)xv[i] - (int32_t)z) * s;
    } else {
      for (; i < l.inner; i++) yv[i] = (float)(quant_int_at(x, i) - z) * s;
    }
    return INFER_OK;
  }
  for (int64_t o = 0; o < l.outer; o++)
    for (int64_t a = 0; a < l.dim; a++) {
      int64_t base = quant_param_base(&l, o, a);
      for (int64_t j = 0; j < l.inner; j++, i++) {
        int64_t k = base + j * l.istep;
        int64_t d = quant_int_at(x, i) - quant_int_at(zp, k);
        float s = quant_float_at(scale, k);
        store_float(y, i, wide ? (float)((double)d * (double)s) : (float)d * s);
      }
    }
  return INFER_OK;
}

const op_desc op_dequantize_linear = {.name = "DequantizeLinear",
                                      .domain = "",
                                      .since = 10,
                                      .until = OP_OPSET_MAX,
                                      .min_inputs = 2,
                                      .max_inputs = 3,
                                      .min_outputs = 1,
                                      .max_outputs = 1,
                                      .attrs = dequant_attrs,
                                      .parse = quant_linear_parse,
                                      .infer = dequantize_infer,
                                      .run = dequantize_run};

/* ---- DynamicQuantizeLinear (uint8 only, as the spec says) -----------------------------
 * Follows the op's function body step by step in float32:
 *   lo = min(0, min(x)), hi = max(0, max(x)), y_scale = (hi - lo) / 255,
 *   y_zero_point = round_half_even(clip(0 - lo / y_scale, 0, 255)),
 *   y = QuantizeLinear(x, y_scale, y_zero_point).
 * An all-zero (or empty) x has y_scale 0, where the body divides 0 by 0: the zero
 * point is then 0 and y is 0. */

static infer_status dynquant_infer(const node *n, const void *params, const tensor *const *in,
                                   tensor *const *out) {
  const tensor *x = in[0];
  if (x->dtype != INFER_DTYPE_FLOAT32)
    return infer_fail(INFER_ERR_INVALID_MODEL, "DynamicQuantizeLinear: x must be float32, not %s",
                      infer_dtype_name(x->dtype));
  *out[0] = *x;
  out[0]->data = NULL;
  out[0]->dtype = INFER_DTYPE_UINT8;
  for (int k = 1; k < 3; k++)
    if (k < n->n_outputs && out[k]) {
      memset(out[k], 0, sizeof(tensor));
      out[k]->dtype = k == 1 ? INFER_DTYPE_FLOAT32 : INFER_DTYPE_UINT8;
    }
  return INFER_OK;
}

static infer_status dynquant_run(const node *n, const void *params, const tensor *const *in,
                                 tensor *const *out, void *ws) {
  const tensor *x = in[0];
  const float *xv = x->data;
  int64_t count = dims_count(x->rank, x->dims);
  float lo = 0.0f, hi = 0.0f;
  for (int64_t i = 0; i < count; i++) {
    lo = fminf(lo, xv[i]);
    hi = fmaxf(hi, xv[i]);
  }
  float scale = (hi - lo) / 255.0f;
  int64_t zp = 0;
  if (scale > 0.0f) {
    float z = 0.0f - lo / scale;
    z = z < 0.0f ? 0.0f : z > 255.0f ? 255.0f : z;
    zp = (int64_t)rintf(z);
  }
  uint8_t *yv = out[0]->data;
  for (int64_t i = 0; i < count; i++)
    yv[i] = scale > 0.0f ? (uint8_t)quant_round_saturate(xv[i] / scale, zp, 0, 255) : 0;
  if (n->n_outputs > 1 && out[1]) *(float *)out[1]->data = scale;
  if (n->n_outputs > 2 && out[2]) *(uint8_t *)out[2]->data = (uint8_t)zp;
  return INFER_OK;
}

const op_desc op_dynamic_quantize_linear = {.name = "DynamicQuantizeLinear",
                                            .domain = "",
                                            .since = 11,
                                            .until = OP_OPSET_MAX,
                                            .min_inputs = 1,
                                            .max_inputs = 1,
                                            .min_outputs = 3,
                                            .max_outputs = 3,
                                            .infer = dynquant_infer,
                                            .run = dynquant_run};
