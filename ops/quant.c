/* quant.c: the helpers of quant_util.h (the family list: quant_family.c). */
#include <stdlib.h>
#include <string.h>

#include "elementwise.h" /* onnx_type_name */
#include "quant_util.h"


/* ---- dtypes ---------------------------------------------------------------------- */

bool quant_range(infer_dtype dt, int64_t *lo, int64_t *hi) {
  switch (dt) {
    case INFER_DTYPE_UINT8: *lo = 0, *hi = UINT8_MAX; return true;
    case INFER_DTYPE_INT8: *lo = INT8_MIN, *hi = INT8_MAX; return true;
    case INFER_DTYPE_UINT16: *lo = 0, *hi = UINT16_MAX; return true;
    case INFER_DTYPE_INT16: *lo = INT16_MIN, *hi = INT16_MAX; return true;
    case INFER_DTYPE_INT32: *lo = INT32_MIN, *hi = INT32_MAX; return true;
    default: return false;
  }
}

infer_status quant_check_int_dtype(const char *op, const char *role, infer_dtype dt, bool wide) {
  if (dt == INFER_DTYPE_UINT8 || dt == INFER_DTYPE_INT8) return INFER_OK;
  if (wide && (dt == INFER_DTYPE_UINT16 || dt == INFER_DTYPE_INT16)) return INFER_OK;
  return infer_fail(INFER_ERR_UNSUPPORTED, "%s: %s dtype %s is not supported (supported: %s)", op,
                    role, infer_dtype_size(dt) ? infer_dtype_name(dt) : onnx_type_name(dt),
                    wide ? "int8, uint8, int16, uint16" : "int8, uint8");
}

infer_status quant_check_scale_dtype(const char *op, const char *role, infer_dtype dt) {
  if (dt == INFER_DTYPE_FLOAT32 || dt == INFER_DTYPE_FLOAT16 || dt == INFER_DTYPE_BFLOAT16)
    return INFER_OK;
  return infer_fail(INFER_ERR_UNSUPPORTED,
                    "%s: %s dtype %s is not supported (supported: float32, float16, bfloat16)", op,
                    role, infer_dtype_size(dt) ? infer_dtype_name(dt) : onnx_type_name(dt));
}

infer_status quant_dtype_from_attr(const char *op, const char *attr_name, int64_t v,
                                   infer_dtype *out) {
  if (v <= 0 || v > 64)
    return infer_fail(INFER_ERR_INVALID_MODEL, "%s: attribute '%s' = %lld is not a data type", op,
                      attr_name, (long long)v);
  if (v == INFER_DTYPE_STRING || infer_dtype_size((infer_dtype)v) == 0)
    return infer_fail(INFER_ERR_UNSUPPORTED, "%s: attribute '%s' names %s (%lld), not a dtype of "
                      "this engine", op, attr_name,
                      v == INFER_DTYPE_STRING ? "string" : onnx_type_name(v), (long long)v);
  *out = (infer_dtype)v;
  return INFER_OK;
}

infer_status quant_check_scalar(const char *op, const char *role, const tensor *t) {
  char buf[96];
  if (dims_count(t->rank, t->dims) != 1)
    return infer_fail(INFER_ERR_INVALID_MODEL, "%s: %s must be a scalar (one element), not %s", op,
                      role, dims_format(t->rank, t->dims, buf, sizeof buf));
  return INFER_OK;
}

/* ---- QuantizeLinear / DequantizeLinear attributes ---------------------------------- */

infer_status quant_linear_parse(const node *n, void **params) {
  bool q = strcmp(n->op_type, "QuantizeLinear") == 0;
  const char *op = n->op_type;
  /* the opset each attribute appeared in, per op (0: never) */
  static const struct {
    const char *name;
    int quantize, dequantize;
  } since[] = {{"axis", 13, 13},
               {"saturate", 19, 0},
               {"block_size", 21, 21},
               {"output_dtype", 21, 23},
               {"precision", 23, 0}};
  for (size_t i = 0; i < sizeof since / sizeof since[0]; i++) {
    int s = q ? since[i].quantize : since[i].dequantize;
    if (node_attr(n, since[i].name) && (s == 0 || n->opset < s))
      return infer_fail(INFER_ERR_INVALID_MODEL, "%s: attribute '%s' does not exist at opset %lld",
                        op, since[i].name, (long long)n->opset);
  }
  quant_linear_params t;
  memset(&t, 0, sizeof t);
  int64_t sat, odt, prec;
  TRY(attr_get_int(n, "axis", 1, &t.axis));
  TRY(attr_get_int(n, "block_size", 0, &t.block_size));
  TRY(attr_get_int(n, "saturate", 1, &sat));
  TRY(attr_get_int(n, "output_dtype", 0, &odt));
  TRY(attr_get_int(n, "precision", 0, &prec));
  if (t.block_size < 0)
    return infer_fail(INFER_ERR_INVALID_MODEL, "%s: block_size = %lld must be >= 0", op,
                      (long long)t.block_size);
  if (sat != 0 && sat != 1)
    return infer_fail(INFER_ERR_INVALID_MODEL, "%s: saturate = %lld must be 0 or 1", op,
                      (long long)sat);
  t.saturate = sat != 0;
  if (odt != 0) {
    TRY(quant_dtype_from_attr(op, "output_dtype", odt, &t.output_dtype));
    if (q) {
      int64_t lo, hi;
      if (!quant_range(t.output_dtype, &lo, &hi) || t.output_dtype == INFER_DTYPE_INT32)
        return infer_fail(INFER_ERR_INVALID_MODEL, "%s: output_dtype %s is not a quantized type",
                          op, infer_dtype_name(t.output_dtype));
    } else if (!dtype_is_float(t.output_dtype) || t.output_dtype == INFER_DTYPE_FLOAT64) {
      return infer_fail(INFER_ERR_INVALID_MODEL,
                        "%s: output_dtype %s must be float32, float16 or bfloat16", op,
                        infer_dtype_name(t.output_dtype));
    }
  }
  if (prec != 0) {
    TRY(quant_dtype_from_attr(op, "precision", prec, &t.precision));
    if (!dtype_is_float(t.precision))
      return infer_fail(INFER_ERR_INVALID_MODEL, "%s: precision %s is not a float type", op,
                        infer_dtype_name(t.precision));
  }
  quant_linear_params *p = malloc(sizeof *p);
  if (!p) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "%s: out of memory", op);
  *p = t;
  *params = p;
  return INFER_OK;
}

/* ---- layouts ------------------------------------------------------------------------- */

infer_status quant_layout_make(const char *op, const tensor *x, const tensor *scale,
                               const tensor *zp, int64_t axis, int64_t block_size, bool per_axis,
                               bool blocked, quant_layout *l) {
  char s1[96], s2[96];
  memset(l, 0, sizeof *l);
  int64_t count = dims_count(scale->rank, scale->dims);
  l->outer = 1;
  l->dim = 1;
  l->inner = dims_count(x->rank, x->dims);
  l->block = l->sdim = 1;
  if (zp) {
    bool same = zp->rank == scale->rank && dims_equal(zp->rank, zp->dims, scale->rank, scale->dims);
    /* a scalar and a one-element 1-D tensor are the same per-tensor parameter */
    if (!same && !(count == 1 && dims_count(zp->rank, zp->dims) == 1))
      return infer_fail(INFER_ERR_INVALID_MODEL, "%s: zero point %s and scale %s differ in shape",
                        op, dims_format(zp->rank, zp->dims, s1, sizeof s1),
                        dims_format(scale->rank, scale->dims, s2, sizeof s2));
  }
  if (count == 1) { /* any shape of one element: the reference treats it as a scalar */
    l->kind = QUANT_PER_TENSOR;
    return INFER_OK;
  }
  if (!per_axis || x->rank == 0)
    return infer_fail(INFER_ERR_INVALID_MODEL, "%s: scale %s must be a scalar%s", op,
                      dims_format(scale->rank, scale->dims, s1, sizeof s1),
                      per_axis ? " for a scalar input" : " at this opset");
  int ax;
  TRY(axis_normalize(axis, x->rank, "quantization axis", &ax));
  l->axis = ax;
  l->outer = dims_count(ax, x->dims);
  l->dim = x->dims[ax];
  l->inner = dims_count(x->rank - ax - 1, x->dims + ax + 1);
  if (block_size == 0) {
    if (scale->rank != 1 || scale->dims[0] != l->dim)
      return infer_fail(INFER_ERR_INVALID_MODEL,
                        "%s: per-axis scale %s must be 1-D of x's axis %d size %lld (x is %s)", op,
                        dims_format(scale->rank, scale->dims, s1, sizeof s1), ax,
                        (long long)l->dim, dims_format(x->rank, x->dims, s2, sizeof s2));
    l->kind = QUANT_PER_AXIS;
    l->sdim = l->dim;
    return INFER_OK;
  }
  if (!blocked)
    return infer_fail(INFER_ERR_INVALID_MODEL, "%s: block_size needs opset 21", op);
  bool ok = scale->rank == x->rank;
  for (int i = 0; ok && i < x->rank; i++)
    ok = i == ax ? scale->dims[i] == (x->dims[i] + block_size - 1) / block_size
                 : scale->dims[i] == x->dims[i];
  if (!ok)
    return infer_fail(INFER_ERR_INVALID_MODEL,
                      "%s: blocked scale %s does not fit x %s with block_size %lld on axis %d", op,
                      dims_format(scale->rank, scale->dims, s1, sizeof s1),
                      dims_format(x->rank, x->dims, s2, sizeof s2), (long long)block_size, ax);
  l->kind = QUANT_BLOCKED;
  l->block = block_size;
  l->sdim = scale->dims[ax];
  l->istep = 1;
  return INFER_OK;
}
