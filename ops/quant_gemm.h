/* quant_gemm.h: the exact integer matrix product of the quantized ops (ConvInteger,
 * QLinearConv, MatMulInteger, QLinearMatMul).
 *
 * C (int32, m x n, row stride ldc) = A (m x k) * B (k x n), row-major, where A and B
 * hold integers stored as float (the quantized values minus their zero points) with
 * |a| <= amax and |b| <= bmax. The result is exact, with ONNX's int32 accumulation
 * (wrapping modulo 2^32 where a sum overflows): k is split into chunks short enough
 * that every partial sum is an integer below 2^24 in magnitude, which float32 holds
 * exactly whatever the summation order, so each chunk goes through cpu_sgemm
 * (OpenBLAS where built with it) into `part` (m x n floats of scratch, row stride n)
 * and the chunks are added in int32. Never allocates. */
#ifndef INFER_QUANT_GEMM_H
#define INFER_QUANT_GEMM_H

#include <stdint.h>

void quant_gemm_exact(int64_t m, int64_t n, int64_t k, const float *a, int64_t lda,
                      const float *b, int64_t ldb, float amax, float bmax, float *part,
                      int32_t *c, int64_t ldc);

/* Largest |v| over v[0..count) (0 for none): the amax / bmax of quant_gemm_exact. */
float quant_absmax(const float *v, int64_t count);

#endif
