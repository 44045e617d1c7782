/* index_util.c: what the index family shares: the scatter reductions per dtype, the
 * `reduction` attribute, index dtype and range errors. */
#include <string.h>

#include "index_params.h"

bool index_dtype_numeric(infer_dtype dt) {
  return dt != INFER_DTYPE_BOOL &&
         (dtype_is_float(dt) || dtype_is_signed_int(dt) || dtype_is_unsigned_int(dt));
}

infer_status index_parse_reduction(const node *n, index_reduce *r) {
  const char *s;
  TRY(attr_get_string(n, "reduction", "none", &s));
  static const struct {
    const char *name;
    index_reduce r;
    int since;
  } names[] = {{"none", IR_NONE, 1}, {"add", IR_ADD, 16}, {"mul", IR_MUL, 16},
               {"max", IR_MAX, 18},  {"min", IR_MIN, 18}};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (strcmp(s, names[i].name) == 0) {
      if (node_attr(n, "reduction") && n->opset < 16)
        return infer_fail(INFER_ERR_INVALID_MODEL,
                          "%s: attribute 'reduction' does not exist at opset %lld", n->op_type,
                          (long long)n->opset);
      if (n->opset < names[i].since)
        return infer_fail(INFER_ERR_INVALID_MODEL,
                          "%s: reduction '%s' needs opset %d or later (the model has %lld)",
                          n->op_type, s, names[i].since, (long long)n->opset);
      *r = names[i].r;
      return INFER_OK;
    }
  return infer_fail(INFER_ERR_INVALID_MODEL,
                    "%s: reduction '%s' is not one of none, add, mul, max, min", n->op_type, s);
}

infer_status index_check_reduce_dtype(const char *op, infer_dtype dt, index_reduce r) {
  if (infer_dtype_size(dt) == 0 || (r != IR_NONE && !index_dtype_numeric(dt)))
    return infer_fail(INFER_ERR_UNSUPPORTED, "%s: dtype %s is not supported%s", op,
                      infer_dtype_name(dt), r != IR_NONE ? " with a reduction" : "");
  return INFER_OK;
}

infer_status index_out_of_range(const char *op, int64_t v, int64_t pos, int64_t dim) {
  return infer_fail(INFER_ERR_INVALID_INPUT,
                    "%s: index %lld (element %lld of indices) is out of range [%lld, %lld)", op,
                    (long long)v, (long long)pos, (long long)-dim, (long long)dim);
}

infer_status index_check_indices_dtype(const char *op, const tensor *t, bool allow_int32) {
  if (t->dtype == INFER_DTYPE_INT64 || (allow_int32 && t->dtype == INFER_DTYPE_INT32))
    return INFER_OK;
  return infer_fail(INFER_ERR_INVALID_MODEL, "%s: indices must be %s, not %s", op,
                    allow_int32 ? "int32 or int64" : "int64", infer_dtype_name(t->dtype));
}

/* ---- reductions ---------------------------------------------------------------------
 * One loop per (dtype, reduction): T storage, U the unsigned type integer add/mul wrap
 * in, LD/ST the load to / store from the compute type C. */

#define IR_LD_ID(v) (v)
#define IR_ST_ID(v) (v)
#define IR_MAXF(a, b) ((a) > (b) || (a) != (a) ? (a) : (b))
#define IR_MINF(a, b) ((a) < (b) || (a) != (a) ? (a) : (b))
#define IR_MAXI(a, b) ((a) > (b) ? (a) : (b))
#define IR_MINI(a, b) ((a) < (b) ? (a) : (b))

#define IR_FLOAT_KERNEL(sfx, T, C, LD, ST)                                               \
  static void reduce_##sfx(index_reduce r, T *d, const T *s, int64_t n) {               \
    for (int64_t i = 0; i < n; i++) {                                                   \
      C a = LD(d[i]), b = LD(s[i]);                                                     \
      C v = r == IR_ADD ? a + b : r == IR_MUL ? a * b : r == IR_MAX ? IR_MAXF(b, a)     \
                                                                    : IR_MINF(b, a);    \
      d[i] = ST(v);                                                                     \
    }                                                                                   \
  }
#define IR_INT_KERNEL(sfx, T, U)                                                         \
  static void reduce_##sfx(index_reduce r, T *d, const T *s, int64_t n) {               \
    for (int64_t i = 0; i < n; i++) {                                                   \
      T a = d[i], b = s[i];                                                             \
      d[i] = r == IR_ADD   ? (T)((U)a + (U)b)                                           \
             : r == IR_MUL ? (T)((U)a * (U)b)                                           \
             : r == IR_MAX ? IR_MAXI(a, b)                                              \
                           : IR_MINI(a, b);                                             \
    }                                                                                   \
  }

IR_FLOAT_KERNEL(f32, float, float, IR_LD_ID, IR_ST_ID)
IR_FLOAT_KERNEL(f64, double, double, IR_LD_ID, IR_ST_ID)
IR_FLOAT_KERNEL(f16, uint16_t, float, half_to_float, float_to_half)
IR_FLOAT_KERNEL(bf16, uint16_t, float, bf16_to_float, float_to_bf16)
IR_INT_KERNEL(i8, int8_t, uint32_t)
IR_INT_KERNEL(i16, int16_t, uint32_t)
IR_INT_KERNEL(i32, int32_t, uint32_t)
IR_INT_KERNEL(i64, int64_t, uint64_t)
IR_INT_KERNEL(u8, uint8_t, uint32_t)
IR_INT_KERNEL(u16, uint16_t, uint32_t)
IR_INT_KERNEL(u32, uint32_t, uint32_t)
IR_INT_KERNEL(u64, uint64_t, uint64_t)

void index_reduce_run(infer_dtype dt, index_reduce r, void *dst, const void *src, int64_t n) {
  if (n <= 0) return;
  if (r == IR_NONE) {
    memmove(dst, src, (size_t)n * infer_dtype_size(dt));
    return;
  }
  switch (dt) {
    case INFER_DTYPE_FLOAT32: reduce_f32(r, dst, src, n); break;
    case INFER_DTYPE_FLOAT64: reduce_f64(r, dst, src, n); break;
    case INFER_DTYPE_FLOAT16: reduce_f16(r, dst, src, n); break;
    case INFER_DTYPE_BFLOAT16: reduce_bf16(r, dst, src, n); break;
    case INFER_DTYPE_INT8: reduce_i8(r, dst, src, n); break;
    case INFER_DTYPE_INT16: reduce_i16(r, dst, src, n); break;
    case INFER_DTYPE_INT32: reduce_i32(r, dst, src, n); break;
    case INFER_DTYPE_INT64: reduce_i64(r, dst, src, n); break;
    case INFER_DTYPE_UINT8: reduce_u8(r, dst, src, n); break;
    case INFER_DTYPE_UINT16: reduce_u16(r, dst, src, n); break;
    case INFER_DTYPE_UINT32: reduce_u32(r, dst, src, n); break;
    case INFER_DTYPE_UINT64: reduce_u64(r, dst, src, n); break;
    default: break; /* index_check_reduce_dtype refused it at infer */
  }
}
