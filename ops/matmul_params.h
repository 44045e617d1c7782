/* matmul_params.h: the parsed attributes (n->params) of Gemm (ops/matmul.c), for the
 * CPU op and its GPU side. MatMul has none; FusedMatMul's are in matmul_fused.h. */
#ifndef INFER_MATMUL_PARAMS_H
#define INFER_MATMUL_PARAMS_H

#include "op.h"

/* alpha and beta 1, transA and transB 0 by default; the flags are 0 or 1 (any
 * non-zero attribute value reads as 1). */
typedef struct gemm_params {
  float alpha, beta;
  int64_t trans_a, trans_b;
} gemm_params;

#endif
