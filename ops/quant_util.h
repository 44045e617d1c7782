/* quant_util.h: what the quantization ops share (ops/quant_linear.c, quant_conv.c,
 * quant_matmul.c; the GPU side later reads the same params and layouts):
 * - quant_linear_params: the parsed attributes of QuantizeLinear and
 *   DequantizeLinear (defaults written once, in quant_linear_parse);
 * - quant_layout: how a scale / zero point maps onto x (per tensor, per axis or
 *   blocked), resolved from the shapes;
 * - the integer ranges, exact round-and-saturate, and the element readers.
 *
 * The quantized dtypes are int8, uint8, int16 and uint16 (and int32 as an input of
 * DequantizeLinear). float8, float4, int4 and int2 are not dtypes of this engine: the
 * loader refuses tensors of those types, and an output_dtype naming one is refused
 * with INFER_ERR_UNSUPPORTED. */
#ifndef INFER_QUANT_UTIL_H
#define INFER_QUANT_UTIL_H

#include <math.h>

#include "op.h"

typedef struct quant_linear_params {
  int64_t axis;             /* quantization axis (per-axis and blocked); default 1 */
  int64_t block_size;       /* > 0: blocked quantization; 0: per tensor or per axis */
  bool saturate;            /* float8 targets only (none here): read and checked */
  infer_dtype output_dtype; /* UNDEFINED: Quantize from the zero point (else uint8),
                               Dequantize from the scale */
  infer_dtype precision;    /* Quantize 23+: dtype of x / y_scale; UNDEFINED: the scale's */
} quant_linear_params;

/* Reads axis, saturate, block_size, output_dtype and precision for the node's opset
 * (the engine passes only the names the descriptor accepts). */
infer_status quant_linear_parse(const node *n, void **params);

typedef enum quant_granularity {
  QUANT_PER_TENSOR = 0,
  QUANT_PER_AXIS,
  QUANT_BLOCKED
} quant_granularity;

/* x seen as outer x dim x inner around the axis; the parameter (scale or zero
 * point) of element (o, a, i) is at quant_param_base(l, o, a) + i * l->istep. */
typedef struct quant_layout {
  quant_granularity kind;
  int axis;
  int64_t outer, dim, inner;
  int64_t block; /* QUANT_BLOCKED: elements along the axis per parameter */
  int64_t sdim;  /* the parameter's extent along the axis (ceil(dim / block)) */
  int64_t istep; /* 1 when blocked (the parameter varies along inner), else 0 */
} quant_layout;

static inline int64_t quant_param_base(const quant_layout *l, int64_t o, int64_t a) {
  switch (l->kind) {
    case QUANT_PER_AXIS: return a;
    case QUANT_BLOCKED: return (o * l->sdim + a / l->block) * l->inner;
    default: return 0;
  }
}

/* The layout of `scale` (and `zp`, may be NULL: same shape required) over x.
 * per_axis / blocked: whether the op's opset has them. Errors name op. */
infer_status quant_layout_make(const char *op, const tensor *x, const tensor *scale,
                               const tensor *zp, int64_t axis, int64_t block_size, bool per_axis,
                               bool blocked, quant_layout *l);

/* Saturation range of a quantized integer dtype (int8, uint8, int16, uint16, int32);
 * false for any other dtype. */
bool quant_range(infer_dtype dt, int64_t *lo, int64_t *hi);

/* INFER_ERR_UNSUPPORTED unless dt is int8/uint8 (or also int16/uint16 when wide),
 * naming op, role and the ONNX type (float8, int4 ... included). */
infer_status quant_check_int_dtype(const char *op, const char *role, infer_dtype dt, bool wide);
/* INFER_ERR_UNSUPPORTED unless dt is float32, float16 or bfloat16. */
infer_status quant_check_scale_dtype(const char *op, const char *role, infer_dtype dt);
/* A dtype number from an attribute (output_dtype, precision, dtype) as an engine
 * dtype: INFER_ERR_UNSUPPORTED naming the ONNX type when the engine lacks it. */
infer_status quant_dtype_from_attr(const char *op, const char *attr_name, int64_t v,
                                   infer_dtype *out);

/* round(v) half to even, plus zp, saturated to [lo, hi]. NaN gives zp (saturated):
 * the spec leaves it undefined; this keeps the result a finite, documented value. */
static inline int64_t quant_round_saturate(double v, int64_t zp, int64_t lo, int64_t hi) {
  double r = isnan(v) ? 0.0 : rint(v) + (double)zp; /* exact: |zp| < 2^31 */
  if (!(r >= (double)lo)) return lo;
  if (r > (double)hi) return hi;
  return (int64_t)r;
}

/* Element i of an integer tensor of any quantized dtype, as int64 (0 for t NULL). */
static inline int64_t quant_int_at(const tensor *t, int64_t i) {
  if (!t) return 0;
  switch (t->dtype) {
    case INFER_DTYPE_UINT8: return ((const uint8_t *)t->data)[i];
    case INFER_DTYPE_INT8: return ((const int8_t *)t->data)[i];
    case INFER_DTYPE_UINT16: return ((const uint16_t *)t->data)[i];
    case INFER_DTYPE_INT16: return ((const int16_t *)t->data)[i];
    case INFER_DTYPE_INT32: return ((const int32_t *)t->data)[i];
    default: return tensor_get_i64(t, i);
  }
}

/* Stores an already saturated value into element i of a quantized integer tensor. */
static inline void quant_int_set(tensor *t, int64_t i, int64_t v) {
  switch (t->dtype) {
    case INFER_DTYPE_UINT8: ((uint8_t *)t->data)[i] = (uint8_t)v; break;
    case INFER_DTYPE_INT8: ((int8_t *)t->data)[i] = (int8_t)v; break;
    case INFER_DTYPE_UINT16: ((uint16_t *)t->data)[i] = (uint16_t)v; break;
    case INFER_DTYPE_INT16: ((int16_t *)t->data)[i] = (int16_t)v; break;
    default: tensor_set_i64(t, i, v); break;
  }
}

/* Element i of a float32/float16/bfloat16 tensor, as float (exact). */
static inline float quant_float_at(const tensor *t, int64_t i) {
  switch (t->dtype) {
    case INFER_DTYPE_FLOAT32: return ((const float *)t->data)[i];
    case INFER_DTYPE_FLOAT16: return half_to_float(((const uint16_t *)t->data)[i]);
    case INFER_DTYPE_BFLOAT16: return bf16_to_float(((const uint16_t *)t->data)[i]);
    default: return (float)tensor_get_f64(t, i);
  }
}

/* v rounded to dtype dt (float32 / float16 / bfloat16: the value that type holds). */
static inline float quant_round_to(infer_dtype dt, float v) {
  if (dt == INFER_DTYPE_FLOAT16) return half_to_float(float_to_half(v));
  if (dt == INFER_DTYPE_BFLOAT16) return bf16_to_float(float_to_bf16(v));
  return v;
}

/* The count of a tensor that must be a scalar (rank 0, or any rank with one
 * element); error naming op and role otherwise. */
infer_status quant_check_scalar(const char *op, const char *role, const tensor *t);

#endif
