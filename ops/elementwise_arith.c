/* elementwise_arith.c: Add, Sub, Mul, Div, Mod, BitShift, Pow with numpy
 * broadcasting.
 *
 * Integer semantics (ONNX follows numpy): + - * wrap (computed in unsigned, so
 * no signed overflow); Div truncates toward zero like C (test_div_int32_trunc);
 * Mod with fmod=0 takes the divisor's sign (Python %), with fmod=1 the dividend's
 * (C fmod). Division or modulo by zero, left undefined by the spec, gives 0
 * instead of trapping; INT_MIN / -1 wraps. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "elementwise.h"

/* ---- Add / Sub / Mul ---------------------------------------------------------- */

EW_FLOAT_TYPES(EW_ARITH_X, add, x + y)
EW_SINT_TYPES(EW_ARITH_X, add, (U)x + (U)y)
EW_UINT_TYPES(EW_ARITH_X, add, (U)x + (U)y)
const ew_binary_fn ew_add_table[EW_DTYPE_SLOTS] = {
    EW_FLOAT_TYPES(EW_ENTRY_X, add, 0) EW_SINT_TYPES(EW_ENTRY_X, add, 0)
        EW_UINT_TYPES(EW_ENTRY_X, add, 0)};

EW_FLOAT_TYPES(EW_ARITH_X, sub, x - y)
EW_SINT_TYPES(EW_ARITH_X, sub, (U)x - (U)y)
EW_UINT_TYPES(EW_ARITH_X, sub, (U)x - (U)y)
static const ew_binary_fn sub_table[EW_DTYPE_SLOTS] = {
    EW_FLOAT_TYPES(EW_ENTRY_X, sub, 0) EW_SINT_TYPES(EW_ENTRY_X, sub, 0)
        EW_UINT_TYPES(EW_ENTRY_X, sub, 0)};

EW_FLOAT_TYPES(EW_ARITH_X, mul, x * y)
EW_SINT_TYPES(EW_ARITH_X, mul, (U)x * (U)y)
EW_UINT_TYPES(EW_ARITH_X, mul, (U)x * (U)y)
const ew_binary_fn ew_mul_table[EW_DTYPE_SLOTS] = {
    EW_FLOAT_TYPES(EW_ENTRY_X, mul, 0) EW_SINT_TYPES(EW_ENTRY_X, mul, 0)
        EW_UINT_TYPES(EW_ENTRY_X, mul, 0)};

/* ---- Div ------------------------------------------------------------------------ */

EW_FLOAT_TYPES(EW_ARITH_X, div, x / y)
EW_SINT_TYPES(EW_ARITH_X, div, y == 0 ? 0 : y == -1 ? (T)(0 - (U)x) : x / y)
EW_UINT_TYPES(EW_ARITH_X, div, y == 0 ? 0 : x / y)
static const ew_binary_fn div_table[EW_DTYPE_SLOTS] = {
    EW_FLOAT_TYPES(EW_ENTRY_X, div, 0) EW_SINT_TYPES(EW_ENTRY_X, div, 0)
        EW_UINT_TYPES(EW_ENTRY_X, div, 0)};

/* ---- Mod ------------------------------------------------------------------------ */

static inline int64_t mod_floor_i(int64_t x, int64_t y) {
  if (y == 0 || y == -1) return 0;
  int64_t r = x % y;
  return (r != 0 && ((r < 0) != (y < 0))) ? r + y : r;
}
static inline int64_t mod_trunc_i(int64_t x, int64_t y) {
  return (y == 0 || y == -1) ? 0 : x % y;
}
static inline double mod_floor_f(double x, double y) {
  double r = fmod(x, y);
  return (r != 0 && ((r < 0) != (y < 0))) ? r + y : r;
}

/* fmod is exact, so computing it in double is exact for every float type. */
EW_FLOAT_TYPES(EW_ARITH_X, mod, mod_floor_f(x, y))
EW_SINT_TYPES(EW_ARITH_X, mod, mod_floor_i(x, y))
EW_UINT_TYPES(EW_ARITH_X, mod, y == 0 ? 0 : x % y)
static const ew_binary_fn mod_table[EW_DTYPE_SLOTS] = {
    EW_FLOAT_TYPES(EW_ENTRY_X, mod, 0) EW_SINT_TYPES(EW_ENTRY_X, mod, 0)
        EW_UINT_TYPES(EW_ENTRY_X, mod, 0)};

EW_FLOAT_TYPES(EW_ARITH_X, fmod, fmod(x, y))
EW_SINT_TYPES(EW_ARITH_X, fmod, mod_trunc_i(x, y))
static const ew_binary_fn fmod_table[EW_DTYPE_SLOTS] = {
    EW_FLOAT_TYPES(EW_ENTRY_X, fmod, 0) EW_SINT_TYPES(EW_ENTRY_X, fmod, 0)
        EW_UINT_TYPES(EW_ENTRY_X, mod, 0)};

/* ---- BitShift -------------------------------------------------------------------- */

/* shifting by the width or more is undefined in C; numpy gives 0 */
EW_UINT_TYPES(EW_ARITH_X, shl, y >= sizeof(T) * 8 ? 0 : (T)((U)x << y))
EW_UINT_TYPES(EW_ARITH_X, shr, y >= sizeof(T) * 8 ? 0 : x >> y)
static const ew_binary_fn shl_table[EW_DTYPE_SLOTS] = {EW_UINT_TYPES(EW_ENTRY_X, shl, 0)};
static const ew_binary_fn shr_table[EW_DTYPE_SLOTS] = {EW_UINT_TYPES(EW_ENTRY_X, shr, 0)};

/* ---- Pow ------------------------------------------------------------------------- */

static inline uint64_t ipow_u(uint64_t b, uint64_t e) {
  uint64_t r = 1;
  for (; e; e >>= 1, b *= b)
    if (e & 1) r *= b;
  return r;
}
/* Integer power wrapping modulo 2^64 (truncated to the type afterwards); a
 * negative exponent gives the integer part of the true result, as C would. */
static inline int64_t ipow_s(int64_t b, int64_t e) {
  if (e < 0) return b == 1 ? 1 : b == -1 ? ((e & 1) ? -1 : 1) : 0;
  return (int64_t)ipow_u((uint64_t)b, (uint64_t)e);
}

EW_FLOAT_TYPES(EW_ARITH_X, pow, sizeof(x) == 4 ? powf((float)x, (float)y) : pow(x, y))
EW_SINT_TYPES(EW_ARITH_X, pow, ipow_s(x, y))
EW_UINT_TYPES(EW_ARITH_X, pow, ipow_u(x, y))
static const ew_binary_fn pow_table[EW_DTYPE_SLOTS] = {
    EW_FLOAT_TYPES(EW_ENTRY_X, pow, 0) EW_SINT_TYPES(EW_ENTRY_X, pow, 0)
        EW_UINT_TYPES(EW_ENTRY_X, pow, 0)};

#define POW_BASE (EW_FLOATS | EW_BIT(INFER_DTYPE_INT32) | EW_BIT(INFER_DTYPE_INT64))

static infer_status pow_infer(const node *n, const void *p, const tensor *const *in,
                              tensor *const *out) {
  /* opset 12+ lets the exponent have its own type; the result has the base's */
  TRY(ew_check_dtype("Pow", "base", in[0]->dtype, POW_BASE | EW_SINTS | EW_UINTS));
  TRY(ew_check_dtype("Pow", "exponent", in[1]->dtype, EW_NUMERIC));
  TRY(ew_broadcast_all("Pow", 2, in, out[0]));
  out[0]->dtype = in[0]->dtype;
  return INFER_OK;
}

/* Mixed base/exponent types, one element at a time: integers by repeated
 * squaring, anything with a float in double precision. */
static void pow_mixed_row(const tensor *a, const tensor *b, const tensor *o, const ew_iter *it) {
  infer_dtype ta = a->dtype, tb = b->dtype, to = o->dtype;
  bool ints = !dtype_is_float(ta) && !dtype_is_float(tb);
  for (int64_t i = 0; i < it->n; i++) {
    int64_t ia = i * it->inner[1], ib = i * it->inner[2];
    if (ints) {
      int64_t x = ew_load_i64(ta, it->ptr[1], ia), y = ew_load_i64(tb, it->ptr[2], ib);
      bool ux = dtype_is_unsigned_int(ta), uy = dtype_is_unsigned_int(tb);
      int64_t r = uy || y >= 0 ? (int64_t)ipow_u((uint64_t)x, (uint64_t)y) : ipow_s(x, y);
      ew_store_i64(to, it->ptr[0], i, r, ux);
    } else {
      double x = ew_load_f64(ta, it->ptr[1], ia), y = ew_load_f64(tb, it->ptr[2], ib);
      ew_store_f64(to, it->ptr[0], i, pow(x, y));
    }
  }
}

static infer_status pow_run(const node *n, const void *p, const tensor *const *in,
                            tensor *const *out, void *ws) {
  if (in[0]->dtype == in[1]->dtype) return ew_run_binary(pow_table, "Pow", in[0], in[1], out[0]);
  ew_iter it;
  if (ew_iter_init(&it, out[0], 2, in)) do
      pow_mixed_row(in[0], in[1], out[0], &it);
    while (ew_iter_next(&it));
  return INFER_OK;
}

const op_desc op_pow = {.name = "Pow", .domain = "", .since = 7, .until = OP_OPSET_MAX,
                        .min_inputs = 2, .max_inputs = 2, .min_outputs = 1, .max_outputs = 1,
                        .infer = pow_infer, .run = pow_run};

/* ---- Mod and BitShift (attributes pick the table) ----------------------------------- */

static infer_status mod_parse(const node *n, void **params) {
  int64_t f;
  TRY(attr_get_int(n, "fmod", 0, &f));
  if (f != 0 && f != 1)
    return infer_fail(INFER_ERR_INVALID_MODEL, "Mod: attribute fmod must be 0 or 1, not %lld",
                      (long long)f);
  ew_mod_params *p = malloc(sizeof *p);
  if (!p) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory");
  p->fmod = f != 0;
  *params = p;
  return INFER_OK;
}

static infer_status bitshift_parse(const node *n, void **params) {
  const char *dir;
  TRY(attr_get_string(n, "direction", NULL, &dir));
  if (!dir) return infer_fail(INFER_ERR_INVALID_MODEL, "BitShift: attribute direction is missing");
  if (strcmp(dir, "LEFT") != 0 && strcmp(dir, "RIGHT") != 0)
    return infer_fail(INFER_ERR_INVALID_MODEL,
                      "BitShift: attribute direction must be LEFT or RIGHT, not '%s'", dir);
  ew_shift_params *p = malloc(sizeof *p);
  if (!p) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory");
  p->left = strcmp(dir, "LEFT") == 0;
  *params = p;
  return INFER_OK;
}

static infer_status mod_infer(const node *n, const void *p, const tensor *const *in,
                              tensor *const *out) {
  return ew_binary_infer("Mod", EW_NUMERIC, INFER_DTYPE_UNDEFINED, in, out);
}
static infer_status bitshift_infer(const node *n, const void *p, const tensor *const *in,
                                   tensor *const *out) {
  return ew_binary_infer("BitShift", EW_UINTS, INFER_DTYPE_UNDEFINED, in, out);
}
static infer_status mod_run(const node *n, const void *p, const tensor *const *in,
                            tensor *const *out, void *ws) {
  const ew_mod_params *mp = p;
  if (!mp) return infer_fail(INFER_ERR_INTERNAL, "%s: attributes were not parsed", n->op_type);
  return ew_run_binary(mp->fmod ? fmod_table : mod_table, n->op_type, in[0], in[1], out[0]);
}
static infer_status bitshift_run(const node *n, const void *p, const tensor *const *in,
                                 tensor *const *out, void *ws) {
  const ew_shift_params *sp = p;
  if (!sp) return infer_fail(INFER_ERR_INTERNAL, "%s: attributes were not parsed", n->op_type);
  return ew_run_binary(sp->left ? shl_table : shr_table, n->op_type, in[0], in[1], out[0]);
}

static const char *const mod_attrs[] = {"fmod", NULL};
static const char *const bitshift_attrs[] = {"direction", NULL};

const op_desc op_mod = {.name = "Mod", .domain = "", .since = 10, .until = OP_OPSET_MAX,
                        .min_inputs = 2, .max_inputs = 2, .min_outputs = 1, .max_outputs = 1,
                        .attrs = mod_attrs, .parse = mod_parse, .infer = mod_infer,
                        .run = mod_run};
const op_desc op_bitshift = {.name = "BitShift", .domain = "", .since = 11,
                             .until = OP_OPSET_MAX, .min_inputs = 2, .max_inputs = 2,
                             .min_outputs = 1, .max_outputs = 1, .attrs = bitshift_attrs,
                             .parse = bitshift_parse, .infer = bitshift_infer,
                             .run = bitshift_run};

/* ---- Add / Sub / Mul / Div descriptors ------------------------------------------------ */

/* From opset 7 (numpy broadcasting; opsets 1-6 used the broadcast/axis attributes). */
EW_BINARY_OP(op_add, "Add", 7, OP_OPSET_MAX, ew_add_table, EW_NUMERIC, INFER_DTYPE_UNDEFINED);
EW_BINARY_OP(op_sub, "Sub", 7, OP_OPSET_MAX, sub_table, EW_NUMERIC, INFER_DTYPE_UNDEFINED);
EW_BINARY_OP(op_mul, "Mul", 7, OP_OPSET_MAX, ew_mul_table, EW_NUMERIC, INFER_DTYPE_UNDEFINED);
EW_BINARY_OP(op_div, "Div", 7, OP_OPSET_MAX, div_table, EW_NUMERIC, INFER_DTYPE_UNDEFINED);
