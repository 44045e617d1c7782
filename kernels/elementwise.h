/* elementwise.h: unary, binary and ternary elementwise kernels with numpy
 * broadcasting (the GPU side of ops/elementwise*.c and ops/activation*.c).
 *
 * Dtypes are k_dtype codes. Floats (f32, f16, bf16) compute in float, f64 in
 * double; integers compute in their own type with wrapping arithmetic; bool is
 * uint8 0/1. Each launcher returns cudaErrorInvalidValue for an (op, dtype) pair
 * it does not implement; the *_supported queries answer the same question at
 * build time, so the host can refuse the node before any run. */
#ifndef INFER_K_ELEMENTWISE_H
#define INFER_K_ELEMENTWISE_H

#include <cuda_runtime.h>
#include <stdint.h>

#include "k_dtype.h"

#ifdef __cplusplus
extern "C" {
#endif

#define K_EW_MAX_IN 3

/* Broadcast geometry of up to 3 inputs against an output, with 1-dims dropped
 * and dims merged wherever every operand walks them contiguously (so equal
 * shapes become one dim). */
typedef struct k_ew_geom {
  int n_in;
  int rank;  /* >= 1 */
  int flat;  /* every input is either laid out like the output or one element */
  int64_t n; /* output elements */
  int64_t dims[K_MAX_RANK];
  int64_t strides[K_EW_MAX_IN][K_MAX_RANK]; /* elements; 0 on broadcast dims */
  int scalar[K_EW_MAX_IN];                  /* the input is a single element */
} k_ew_geom;

/* Fills g for inputs in_dims[k] (rank in_rank[k], numpy right-aligned) broadcast
 * to the output shape. Returns 0, or -1 when an input does not broadcast to the
 * output or a rank exceeds K_MAX_RANK. */
int k_ew_geom_init(k_ew_geom *g, int out_rank, const int64_t *out_dims, int n_in,
                   const int *in_rank, const int64_t *const *in_dims);

/* ---- unary: y[i] = f(x[i]), contiguous, y may equal x ------------------------------- */

enum k_ew_unary_op {
  /* float only */
  K_UN_SQRT, K_UN_EXP, K_UN_LOG, K_UN_RECIPROCAL, K_UN_FLOOR, K_UN_CEIL, K_UN_ERF,
  K_UN_ROUND, K_UN_SIN, K_UN_COS, K_UN_TAN, K_UN_ASIN, K_UN_ACOS, K_UN_ATAN, K_UN_SINH,
  K_UN_COSH, K_UN_ASINH, K_UN_ACOSH, K_UN_ATANH,
  K_UN_LEAKY_RELU, /* alpha */
  K_UN_SIGMOID, K_UN_TANH,
  K_UN_HARD_SIGMOID, /* alpha, beta */
  K_UN_HARD_SWISH,
  K_UN_GELU, /* mode 0: erf, 1: tanh approximation */
  K_UN_SOFTPLUS, K_UN_SOFTSIGN, K_UN_MISH,
  K_UN_ELU,   /* alpha */
  K_UN_SELU,  /* alpha, gamma */
  K_UN_CELU,  /* alpha */
  K_UN_THRESHOLDED_RELU, /* alpha */
  K_UN_DIV_SCALAR, /* x / alpha (Mean's final step) */
  K_UN_SWISH,  /* x * sigmoid(alpha x) */
  K_UN_SHRINK, /* alpha: lambd, beta: bias */
  /* float -> bool */
  K_UN_ISNAN,
  K_UN_ISINF, /* mode bit 0: detect +inf, bit 1: detect -inf */
  /* float and signed integers */
  K_UN_NEG, K_UN_RELU,
  /* float and all integers */
  K_UN_ABS, K_UN_SIGN,
  /* all integers (not bool) */
  K_UN_BITNOT,
  /* bool */
  K_UN_NOT,
  K_UN_COUNT
};

typedef struct k_ew_params {
  float alpha, beta, gamma;
  int mode;
} k_ew_params;

int k_ew_unary_supported(int op, int dtype);
/* Output dtype of the op for an input dtype (bool for IsNaN / IsInf). */
int k_ew_unary_out_dtype(int op, int dtype);
cudaError_t k_ew_unary(int op, int dtype, const void *x, void *y, int64_t n,
                       const k_ew_params *p, cudaStream_t stream);

/* ---- binary: y = f(a, b) over a geometry of 2 inputs --------------------------------- */

enum k_ew_binary_op {
  /* numeric (not bool) */
  K_BIN_ADD, K_BIN_SUB, K_BIN_MUL, K_BIN_DIV,
  K_BIN_MOD,  /* floor modulo (Python %): fmod = 0 */
  K_BIN_FMOD, /* truncated (C fmod): fmod = 1 */
  K_BIN_POW,  /* same dtypes; k_ew_pow_mixed for others */
  K_BIN_MAX, K_BIN_MIN, /* NaN propagates */
  K_BIN_PRELU, /* a < 0 ? a * b : a */
  /* unsigned integers */
  K_BIN_SHL, K_BIN_SHR,
  /* all integers (not bool) */
  K_BIN_BITAND, K_BIN_BITOR, K_BIN_BITXOR,
  /* every dtype incl. bool -> bool */
  K_BIN_EQ, K_BIN_LT, K_BIN_GT, K_BIN_LE, K_BIN_GE,
  /* bool -> bool */
  K_BIN_AND, K_BIN_OR, K_BIN_XOR,
  K_BIN_COUNT
};

int k_ew_binary_supported(int op, int dtype);
int k_ew_binary_out_dtype(int op, int dtype);
/* g from k_ew_geom_init with n_in = 2. y may equal a when a has y's shape
 * (variadic accumulation). */
cudaError_t k_ew_binary(int op, int dtype, const void *a, const void *b, void *y,
                        const k_ew_geom *g, cudaStream_t stream);
/* Whether k_ew_binary runs (op, dtype, g) through its row-broadcast path: float32 or
 * float16 arithmetic (not the comparisons) where y is [B, M, K] (or [M, K]), one input
 * laid out like y and the other [B, 1, K] (or [1, K]), as channels-last data times a
 * per-image, per-channel vector. Any alignment (the vector width adapts); results are
 * those of the general path, bit for bit. */
int k_ew_binary_rows_applies(int op, int dtype, const k_ew_geom *g);

/* Pow with base and exponent of different numeric dtypes (ONNX opset 12+): the
 * output has the base's dtype. Two integer dtypes: exact integer power wrapping
 * modulo 2^64; anything with a float: pow in double, stored with saturation for
 * integer outputs. */
int k_ew_pow_mixed_supported(int base_dtype, int exp_dtype);
cudaError_t k_ew_pow_mixed(int base_dtype, const void *a, int exp_dtype, const void *b, void *y,
                           const k_ew_geom *g, cudaStream_t stream);

/* ---- SwiGLU: y = swish_alpha(a) * b, a, b, y contiguous of n elements --------------- */

/* Floats. As the CPU op (and the ONNX function body) does, swish(a) is first
 * rounded to the dtype, then multiplied by b. */
int k_ew_swiglu_supported(int dtype);
cudaError_t k_ew_swiglu(int dtype, const void *a, const void *b, void *y, int64_t n, float alpha,
                        cudaStream_t stream);

/* ---- Where: y = c ? x : y over a geometry of 3 inputs (c, x, y); c is bool ---------- */

/* elem_size 1, 2, 4 or 8 */
cudaError_t k_ew_where(int elem_size, const void *c, const void *x, const void *y, void *out,
                       const k_ew_geom *g, cudaStream_t stream);

/* ---- Clip: y = min(max(x, lo), hi); NaN passes -------------------------------------- */

int k_ew_clip_supported(int dtype);
/* Each bound is either a device pointer to one element of dtype (lo_dev / hi_dev),
 * or, when that is NULL and has_lo / has_hi is set, the value lo / hi (first
 * rounded to dtype, as a stored bound would be). */
cudaError_t k_ew_clip(int dtype, const void *x, void *y, int64_t n, const void *lo_dev,
                      const void *hi_dev, int has_lo, int has_hi, double lo, double hi,
                      cudaStream_t stream);

#ifdef __cplusplus
}
#endif
#endif
