/* cpu_gemm.h: the CPU backend's single-precision matrix multiply.
 *
 * C = alpha * op(A) * op(B) + beta * C, row-major, where op(A) is m x k and op(B)
 * is k x n (op = transpose when trans_* is true). lda/ldb/ldc are row strides in
 * elements of the matrices as stored. As in BLAS, beta == 0 means C is only
 * written (its old contents, NaN included, are ignored). Goes through CBLAS
 * (OpenBLAS, multithreaded) when built with INFER_HAVE_CBLAS, else a blocked C
 * loop. Never allocates. */
#ifndef INFER_CPU_GEMM_H
#define INFER_CPU_GEMM_H

#include <stdbool.h>
#include <stdint.h>

void cpu_sgemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha,
               const float *a, int64_t lda, const float *b, int64_t ldb, float beta, float *c,
               int64_t ldc);

#endif
