/* elementwise_unary.c: one-input math ops (Sqrt, Exp, Log, Neg, Abs,
 * Reciprocal, Erf, Floor, Ceil, Round, Sign, trigonometric and hyperbolic
 * functions), Not, IsNaN and IsInf. Results follow C's libm, which is what numpy
 * uses for the ONNX reference outputs. */
#include <stdlib.h>
#include <tgmath.h>

#include "elementwise.h"

#define FLOAT_UNARY(var, NAME, SINCE, kname, EXPR)                                         \
  EW_UNARY_FLOAT_KERNELS(kname, EXPR)                                                      \
  static const ew_unary_impl kname##_impl = {NAME, {EW_UNARY_FLOAT_ENTRIES(kname)},        \
                                             INFER_DTYPE_UNDEFINED};                       \
  EW_UNARY_OP(var, NAME, SINCE, OP_OPSET_MAX, kname##_impl, NULL, NULL);

/* Opset 6 dropped the consumed_inputs attribute of the opset-1 versions. */
FLOAT_UNARY(op_sqrt, "Sqrt", 6, sqrt, sqrt(x))
FLOAT_UNARY(op_exp, "Exp", 6, exp, exp(x))
FLOAT_UNARY(op_log, "Log", 6, log, log(x))
FLOAT_UNARY(op_reciprocal, "Reciprocal", 6, recip, (T)1 / x)
FLOAT_UNARY(op_floor, "Floor", 6, floor, floor(x))
FLOAT_UNARY(op_ceil, "Ceil", 6, ceil, ceil(x))
FLOAT_UNARY(op_erf, "Erf", 9, erf, erf(x))
/* halves to even, like numpy.round (the default rounding mode is to-nearest) */
FLOAT_UNARY(op_round, "Round", 11, round_even, nearbyint(x))
FLOAT_UNARY(op_sin, "Sin", 7, sin, sin(x))
FLOAT_UNARY(op_cos, "Cos", 7, cos, cos(x))
FLOAT_UNARY(op_tan, "Tan", 7, tan, tan(x))
FLOAT_UNARY(op_asin, "Asin", 7, asin, asin(x))
FLOAT_UNARY(op_acos, "Acos", 7, acos, acos(x))
FLOAT_UNARY(op_atan, "Atan", 7, atan, atan(x))
FLOAT_UNARY(op_sinh, "Sinh", 9, sinh, sinh(x))
FLOAT_UNARY(op_cosh, "Cosh", 9, cosh, cosh(x))
FLOAT_UNARY(op_asinh, "Asinh", 9, asinh, asinh(x))
FLOAT_UNARY(op_acosh, "Acosh", 9, acosh, acosh(x))
FLOAT_UNARY(op_atanh, "Atanh", 9, atanh, atanh(x))

/* ---- ops that also take integers ------------------------------------------------ */

/* Negating INT_MIN wraps (computed in unsigned) instead of overflowing. */
EW_UNARY_FLOAT_KERNELS(neg, -x)
EW_SINT_TYPES(EW_UNARY_INT_X, neg, 0 - (U)x)
static const ew_unary_impl neg_impl = {
    "Neg", {EW_UNARY_FLOAT_ENTRIES(neg), EW_SINT_TYPES(EW_UNARY_ENTRY_X, neg, 0)}, 0};
EW_UNARY_OP(op_neg, "Neg", 6, OP_OPSET_MAX, neg_impl, NULL, NULL);

EW_UNARY_FLOAT_KERNELS(abs, fabs(x))
EW_SINT_TYPES(EW_UNARY_INT_X, abs, x < 0 ? 0 - (U)x : (U)x)
EW_UINT_TYPES(EW_UNARY_INT_X, abs, x)
static const ew_unary_impl abs_impl = {"Abs",
                                       {EW_UNARY_FLOAT_ENTRIES(abs),
                                        EW_SINT_TYPES(EW_UNARY_ENTRY_X, abs, 0)
                                            EW_UINT_TYPES(EW_UNARY_ENTRY_X, abs, 0)},
                                       0};
EW_UNARY_OP(op_abs, "Abs", 6, OP_OPSET_MAX, abs_impl, NULL, NULL);

/* NaN stays NaN (numpy.sign). */
EW_UNARY_FLOAT_KERNELS(sign, x != x ? x : (T)((x > 0) - (x < 0)))
EW_SINT_TYPES(EW_UNARY_INT_X, sign, (x > 0) - (x < 0))
EW_UINT_TYPES(EW_UNARY_INT_X, sign, x > 0)
static const ew_unary_impl sign_impl = {"Sign",
                                        {EW_UNARY_FLOAT_ENTRIES(sign),
                                         EW_SINT_TYPES(EW_UNARY_ENTRY_X, sign, 0)
                                             EW_UINT_TYPES(EW_UNARY_ENTRY_X, sign, 0)},
                                        0};
EW_UNARY_OP(op_sign, "Sign", 9, OP_OPSET_MAX, sign_impl, NULL, NULL);

EW_BOOL_TYPES(EW_UNARY_INT_X, not, !x)
static const ew_unary_impl not_impl = {"Not", {EW_BOOL_TYPES(EW_UNARY_ENTRY_X, not, 0)}, 0};
EW_UNARY_OP(op_not, "Not", 1, OP_OPSET_MAX, not_impl, NULL, NULL);

/* ---- IsNaN, IsInf: float in, bool out ------------------------------------------- */

#define BOOL_OUT_KERNELS(name, EXPR)                                                      \
  static void name##_f32(void *o_, const void *a_, int64_t n, const ew_unary_params *p) { \
    uint8_t *o = o_;                                                                      \
    const float *a = a_;                                                                  \
    for (int64_t i = 0; i < n; i++) {                                                     \
      double x = a[i];                                                                    \
      o[i] = (EXPR);                                                                      \
    }                                                                                     \
  }                                                                                       \
  static void name##_f64(void *o_, const void *a_, int64_t n, const ew_unary_params *p) { \
    uint8_t *o = o_;                                                                      \
    const double *a = a_;                                                                 \
    for (int64_t i = 0; i < n; i++) {                                                     \
      double x = a[i];                                                                    \
      o[i] = (EXPR);                                                                      \
    }                                                                                     \
  }                                                                                       \
  static void name##_f16(void *o_, const void *a_, int64_t n, const ew_unary_params *p) { \
    uint8_t *o = o_;                                                                      \
    const uint16_t *a = a_;                                                               \
    for (int64_t i = 0; i < n; i++) {                                                     \
      double x = half_to_float(a[i]);                                                     \
      o[i] = (EXPR);                                                                      \
    }                                                                                     \
  }                                                                                       \
  static void name##_bf16(void *o_, const void *a_, int64_t n, const ew_unary_params *p) { \
    uint8_t *o = o_;                                                                      \
    const uint16_t *a = a_;                                                               \
    for (int64_t i = 0; i < n; i++) {                                                     \
      double x = bf16_to_float(a[i]);                                                     \
      o[i] = (EXPR);                                                                      \
    }                                                                                     \
  }

BOOL_OUT_KERNELS(isnan, x != x)
/* p->mode: bit 0 detect positive infinity, bit 1 negative */
BOOL_OUT_KERNELS(isinf, isinf(x) && (x > 0 ? (p->mode & 1) : (p->mode & 2)))

static const ew_unary_impl isnan_impl = {"IsNaN", {EW_UNARY_FLOAT_ENTRIES(isnan)},
                                         INFER_DTYPE_BOOL};
static const ew_unary_impl isinf_impl = {"IsInf", {EW_UNARY_FLOAT_ENTRIES(isinf)},
                                         INFER_DTYPE_BOOL};

static infer_status isinf_parse(const node *n, void **params) {
  int64_t neg, pos;
  TRY(attr_get_int(n, "detect_negative", 1, &neg));
  TRY(attr_get_int(n, "detect_positive", 1, &pos));
  ew_unary_params *p = calloc(1, sizeof *p);
  if (!p) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory");
  p->mode = (pos != 0 ? 1 : 0) | (neg != 0 ? 2 : 0);
  *params = p;
  return INFER_OK;
}
static const char *const isinf_attrs[] = {"detect_negative", "detect_positive", NULL};

EW_UNARY_OP(op_isnan, "IsNaN", 9, OP_OPSET_MAX, isnan_impl, NULL, NULL);
EW_UNARY_OP(op_isinf, "IsInf", 10, OP_OPSET_MAX, isinf_impl, isinf_attrs, isinf_parse);
