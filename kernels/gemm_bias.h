/* gemm_bias.h: fills a row-major M x N matrix with a broadcast C (Gemm's bias). */
#ifndef INFER_K_GEMM_BIAS_H
#define INFER_K_GEMM_BIAS_H

#include <cuda_runtime.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* y[i][j] = c[(cm == 1 ? 0 : i) * cn + (cn == 1 ? 0 : j)] for an M x N y; cm is 1 or
 * M, cn is 1 or N. elem_size 2, 4 or 8. */
cudaError_t k_fill_broadcast_2d(int elem_size, const void *c, int64_t cm, int64_t cn, void *y,
                                int64_t m, int64_t n, cudaStream_t stream);

#ifdef __cplusplus
}
#endif
#endif
