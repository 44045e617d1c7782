/* gemm_lt.h: one row-major matrix product through cuBLASLt, with its epilogue, planned
 * at build and enqueued at run. MatMul, Gemm and FusedMatMul (ops/cuda/cuda_matmul.c)
 * all come here, so every product gets the same mapping, algorithm search and cache.
 *
 *   Y[b] = act(alpha * A[b] . B[b] + bias + beta * Z[b])     for b < batch
 *
 * A[b] is m x k (stored k x m when trans_a), B[b] k x n (stored n x k when trans_b), Y and
 * Z m x n, all row-major with the given row strides (ld*, 0: packed) and batch strides
 * (stride_*, 0: the same matrix for every b). bias has n entries (one per column of Y),
 * added to every row. Row-major products run as the column-major Y^T = B^T A^T, so no
 * operand is copied. */
#ifndef INFER_GEMM_LT_H
#define INFER_GEMM_LT_H

#include <stdbool.h>
#include <stdint.h>

#include "../cuda_op.h"

typedef enum gemm_act {
  GEMM_ACT_NONE = 0,
  GEMM_ACT_RELU = 1,
  /* cuBLASLt's GELU epilogue (the tanh form): exact for Gelu(approximate="tanh"); for the
   * erf form only where float16 storage hides the difference (see cuda_matmul.c) */
  GEMM_ACT_GELU_TANH = 2,
} gemm_act;

typedef struct gemm_problem {
  int64_t m, n, k, batch;
  bool trans_a, trans_b;
  int64_t lda, ldb, ldy;                /* row strides in elements; 0: packed */
  int64_t stride_a, stride_b, stride_y; /* batch strides in elements */
  infer_dtype dt;                       /* FLOAT16 or FLOAT32 (storage of A, B, Y, Z, bias) */
  float alpha, beta;                    /* beta applies to Z */
  const void *bias;                     /* device address of the n biases (a weight) or NULL */
  bool has_z;
  gemm_act act;
} gemm_problem;

typedef struct gemm_plan gemm_plan;

/* Plans p on x's device: layouts, epilogue, and the fastest of cuBLASLt's candidate
 * algorithms, timed on scratch buffers (or taken from x->algo_cache). *ws_bytes: the
 * scratch run needs. INFER_ERR_UNSUPPORTED when cuBLASLt takes none. */
infer_status gemm_plan_create(const cuda_exec *x, const gemm_problem *p, gemm_plan **out,
                              int64_t *ws_bytes);
/* Enqueues the product on x->stream (z may equal y: in place). ws: x->ws. */
infer_status gemm_plan_run(const cuda_exec *x, const gemm_plan *g, const void *a, const void *b,
                           const void *z, void *y);
/* The same with the plan's scratch at ws (a caller that keeps x->ws for itself). */
infer_status gemm_plan_run_ws(const cuda_exec *x, const gemm_plan *g, const void *a,
                              const void *b, const void *z, void *y, void *ws);
void gemm_plan_release(gemm_plan *g);
/* "cublaslt" with the epilogue, for --profile */
const char *gemm_plan_name(const gemm_plan *g);

#endif
