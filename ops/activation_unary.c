/* activation_unary.c: pointwise activations: Relu, LeakyRelu, Sigmoid,
 * HardSigmoid, HardSwish, Tanh, Gelu, Softplus, Elu, Selu, Celu, Softsign, Mish,
 * ThresholdedRelu, Swish, Shrink. Each is one expression instantiated for float, double and
 * (through float) float16 / bfloat16. Comparisons are written so NaN passes
 * through, as in the numpy reference. */
#include <stdlib.h>
#include <string.h>
#include <tgmath.h>

#include "elementwise.h"

#define ACT_OP(var, NAME, SINCE, kname, ATTRS, PARSE)                                     \
  static const ew_unary_impl kname##_impl = {NAME, {EW_UNARY_FLOAT_ENTRIES(kname)},        \
                                             INFER_DTYPE_UNDEFINED};                       \
  EW_UNARY_OP(var, NAME, SINCE, OP_OPSET_MAX, kname##_impl, ATTRS, PARSE);

/* Sigmoid: when exp(-x) overflows, 1 / inf = 0 is the right limit, so the
 * plain form needs no branch. Softplus: log(1 + exp(x)) would overflow to inf
 * for large x; this form stays finite and exact there. */
#define SIGMOID(x) ((T)1 / ((T)1 + exp(-(x))))
#define SOFTPLUS(x) ((x) > 0 ? (x) + log1p(exp(-(x))) : log1p(exp(x)))

/* ---- attribute parsing --------------------------------------------------------------- */

static infer_status params_new(void **params, float alpha, float beta, float gamma, int mode) {
  ew_unary_params *p = malloc(sizeof *p);
  if (!p) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory");
  p->alpha = alpha;
  p->beta = beta;
  p->gamma = gamma;
  p->mode = mode;
  *params = p;
  return INFER_OK;
}

/* alpha (and beta, gamma where the op has them) with the op's defaults */
static infer_status parse_abg(const node *n, void **params, float da, float db, float dg) {
  float a, b, g;
  TRY(attr_get_float(n, "alpha", da, &a));
  TRY(attr_get_float(n, "beta", db, &b));
  TRY(attr_get_float(n, "gamma", dg, &g));
  return params_new(params, a, b, g, 0);
}

static infer_status leaky_parse(const node *n, void **p) { return parse_abg(n, p, 0.01f, 0, 0); }
static infer_status hardsigmoid_parse(const node *n, void **p) {
  return parse_abg(n, p, 0.2f, 0.5f, 0);
}
static infer_status alpha1_parse(const node *n, void **p) { return parse_abg(n, p, 1.0f, 0, 0); }
static infer_status selu_parse(const node *n, void **p) {
  return parse_abg(n, p, 1.67326319217681884765625f, 0, 1.05070102214813232421875f);
}
static infer_status shrink_parse(const node *n, void **params) {
  float lambd, bias;
  TRY(attr_get_float(n, "lambd", 0.5f, &lambd));
  TRY(attr_get_float(n, "bias", 0.0f, &bias));
  return params_new(params, lambd, bias, 0, 0);
}
static infer_status gelu_parse(const node *n, void **params) {
  const char *a;
  TRY(attr_get_string(n, "approximate", "none", &a));
  if (strcmp(a, "none") != 0 && strcmp(a, "tanh") != 0)
    return infer_fail(INFER_ERR_INVALID_MODEL,
                      "Gelu: attribute approximate must be none or tanh, not '%s'", a);
  return params_new(params, 0, 0, 0, strcmp(a, "tanh") == 0);
}

static const char *const alpha_attrs[] = {"alpha", NULL};
static const char *const alpha_beta_attrs[] = {"alpha", "beta", NULL};
static const char *const alpha_gamma_attrs[] = {"alpha", "gamma", NULL};
static const char *const gelu_attrs[] = {"approximate", NULL};
static const char *const shrink_attrs[] = {"lambd", "bias", NULL};

/* ---- kernels and descriptors ------------------------------------------------------- */

/* Relu also takes signed integers (opset 14). */
EW_UNARY_FLOAT_KERNELS(relu, x < 0 ? 0 : x)
EW_SINT_TYPES(EW_UNARY_INT_X, relu, x < 0 ? 0 : x)
static const ew_unary_impl relu_impl = {
    "Relu", {EW_UNARY_FLOAT_ENTRIES(relu), EW_SINT_TYPES(EW_UNARY_ENTRY_X, relu, 0)}, 0};
EW_UNARY_OP(op_relu, "Relu", 6, OP_OPSET_MAX, relu_impl, NULL, NULL);

EW_UNARY_FLOAT_KERNELS(leaky, x < 0 ? p->alpha * x : x)
ACT_OP(op_leaky_relu, "LeakyRelu", 6, leaky, alpha_attrs, leaky_parse)

EW_UNARY_FLOAT_KERNELS(sigmoid, SIGMOID(x))
ACT_OP(op_sigmoid, "Sigmoid", 6, sigmoid, NULL, NULL)

EW_UNARY_FLOAT_KERNELS(tanh, tanh(x))
ACT_OP(op_tanh, "Tanh", 6, tanh, NULL, NULL)

/* clip(alpha * x + beta, 0, 1) */
#define HARD01(v) ((v) < 0 ? 0 : (v) > 1 ? 1 : (v))
EW_UNARY_FLOAT_KERNELS(hardsigmoid, HARD01((T)p->alpha * x + (T)p->beta))
ACT_OP(op_hard_sigmoid, "HardSigmoid", 6, hardsigmoid, alpha_beta_attrs, hardsigmoid_parse)

EW_UNARY_FLOAT_KERNELS(hardswish, x * HARD01(x * (T)(1.0 / 6.0) + (T)0.5))
ACT_OP(op_hard_swish, "HardSwish", 14, hardswish, NULL, NULL)

/* mode 0: 0.5 x (1 + erf(x / sqrt 2)); mode 1: the tanh approximation */
EW_UNARY_FLOAT_KERNELS(gelu, p->mode == 0
                                 ? (T)0.5 * x * ((T)1 + erf(x * (T)0.70710678118654752440))
                                 : (T)0.5 * x *
                                       ((T)1 + tanh((T)0.79788456080286535588 *
                                                    (x + (T)0.044715 * x * x * x))))
ACT_OP(op_gelu, "Gelu", 20, gelu, gelu_attrs, gelu_parse)

EW_UNARY_FLOAT_KERNELS(softplus, SOFTPLUS(x))
ACT_OP(op_softplus, "Softplus", 1, softplus, NULL, NULL)

EW_UNARY_FLOAT_KERNELS(softsign, x / ((T)1 + fabs(x)))
ACT_OP(op_softsign, "Softsign", 1, softsign, NULL, NULL)

EW_UNARY_FLOAT_KERNELS(mish, x * tanh(SOFTPLUS(x)))
ACT_OP(op_mish, "Mish", 18, mish, NULL, NULL)

EW_UNARY_FLOAT_KERNELS(elu, x < 0 ? (T)p->alpha * expm1(x) : x)
ACT_OP(op_elu, "Elu", 6, elu, alpha_attrs, alpha1_parse)

EW_UNARY_FLOAT_KERNELS(selu, x <= 0 ? (T)p->gamma * ((T)p->alpha * exp(x) - (T)p->alpha)
                                    : (T)p->gamma * x)
ACT_OP(op_selu, "Selu", 6, selu, alpha_gamma_attrs, selu_parse)

/* max(0, x) + min(0, alpha * (exp(x / alpha) - 1)) */
EW_UNARY_FLOAT_KERNELS(celu, x < 0 ? (T)p->alpha * expm1(x / (T)p->alpha) : x)
ACT_OP(op_celu, "Celu", 12, celu, alpha_attrs, alpha1_parse)

/* NaN passes (the numpy reference clips, then zeroes what equals alpha) */
EW_UNARY_FLOAT_KERNELS(thresholded, (x > (T)p->alpha || x != x) ? x : 0)
ACT_OP(op_thresholded_relu, "ThresholdedRelu", 10, thresholded, alpha_attrs, alpha1_parse)

/* Swish (opset 24): x * sigmoid(alpha x); activation_glu.c reuses it for SwiGLU. */
EW_UNARY_FLOAT_KERNELS(swish, x * SIGMOID((T)p->alpha * x))
const ew_unary_impl ew_swish_impl = {"Swish", {EW_UNARY_FLOAT_ENTRIES(swish)}, 0};
EW_UNARY_OP(op_swish, "Swish", 24, OP_OPSET_MAX, ew_swish_impl, alpha_attrs, alpha1_parse);

/* Shrink: alpha holds lambd, beta holds bias. */
EW_UNARY_FLOAT_KERNELS(shrink, x < -(T)p->alpha   ? x + (T)p->beta
                               : x > (T)p->alpha ? x - (T)p->beta
                                                 : 0)
ACT_OP(op_shrink, "Shrink", 9, shrink, shrink_attrs, shrink_parse)
