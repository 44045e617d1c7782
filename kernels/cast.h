/* cast.h: element type conversion on the device. */
#ifndef INFER_K_CAST_H
#define INFER_K_CAST_H

#include <cuda_runtime.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* dst[i] = (dst type) src[i] for i < n, any pair of k_dtype codes, with the CPU
 * Cast's rules (ops/elementwise_convert.c): float -> float and int -> float round
 * once to nearest; float -> int truncates and saturates (NaN -> 0); int -> int
 * wraps; -> bool is (v != 0). cudaErrorInvalidValue for an unknown code. */
cudaError_t k_cast(int src_dtype, const void *src, int dst_dtype, void *dst, int64_t n,
                   cudaStream_t stream);

/* The graph edge of fp16 channels-last engines in one pass: dst (half, N x H x W x C)
 * = src (float, N x C x H x W) converted and transposed. */
cudaError_t k_cast_f32_nchw_to_f16_nhwc(const float *src, void *dst, int64_t n, int64_t c,
                                        int64_t hw, cudaStream_t stream);

#ifdef __cplusplus
}
#endif
#endif
