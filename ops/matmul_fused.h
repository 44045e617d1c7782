/* matmul_fused.h: FusedMatMul (domain "infer", made by the pass fuse-matmul-epilogue from
 * MatMul/Gemm -> [Add bias] -> [Add Z] -> [Relu | Gelu] chains):
 *
 *   Y = act(alpha * A . op(B) + bias + Z)
 *
 * A is [..., M, K] (any leading dims, which fold into the rows of one product), B a 2-D
 * [K, N] ([N, K] with trans_b), bias [N] (optional), Z of Y's shape (optional). Y is
 * A's leading dims and N, or out_shape (any dims of as many rows, N last: a Reshape of
 * the rows that the pass took into the chain, so that a Z after it fuses too). The CPU
 * reference (ops/matmul_fused.c) and the GPU (ops/cuda/cuda_matmul.c) read these params. */
#ifndef INFER_MATMUL_FUSED_H
#define INFER_MATMUL_FUSED_H

#include <math.h>
#include <stdbool.h>

#include "../kernels/k_nan.h"
#include "op.h"

typedef enum matmul_act {
  MATMUL_ACT_NONE = 0,
  MATMUL_ACT_RELU,
  MATMUL_ACT_GELU,      /* 0.5 x (1 + erf(x / sqrt 2)) */
  MATMUL_ACT_GELU_TANH, /* Gelu(approximate="tanh") */
} matmul_act;

typedef struct fused_matmul_params {
  matmul_act act;
  bool trans_b;
  float alpha;
  int out_rank; /* 0: Y's dims are A's leading ones and N */
  int64_t out_dims[INFER_MAX_RANK];
} fused_matmul_params;

/* The activation's attribute value ("" for none) and back. */
const char *matmul_act_name(matmul_act a);

static inline double matmul_act_apply(matmul_act a, double v) {
  switch (a) {
    case MATMUL_ACT_RELU: return K_NAN_RELU(v); /* NaN stays NaN, as Relu */
    case MATMUL_ACT_GELU: return 0.5 * v * (1 + erf(v * 0.70710678118654752440));
    case MATMUL_ACT_GELU_TANH:
      return 0.5 * v * (1 + tanh(0.79788456080286535588 * (v + 0.044715 * v * v * v)));
    default: return v;
  }
}

#endif
