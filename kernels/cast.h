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

/* 8-bit images in (infer_options_set_input_image): per channel k of C <= 16,
 * y = (x / 255 - mean[k]) / std[k] in float32, rounded once to dst_dtype (K_F32 or
 * K_F16). src is uint8 N x H x W x C; dst is N x C x H x W, or N x H x W x C when
 * dst_nhwc (the layout of an fp16 channels-last engine's first convolution: no
 * transpose at all). hw = H * W. cudaErrorInvalidValue for another dtype or C. */
#define K_IMAGE_MAX_CHANNELS 16
typedef struct k_image_norm {
  float mean[K_IMAGE_MAX_CHANNELS], std[K_IMAGE_MAX_CHANNELS];
} k_image_norm;
cudaError_t k_image_u8_nhwc(const uint8_t *src, int dst_dtype, void *dst, int dst_nhwc, int64_t n,
                            int64_t hw, int c, const k_image_norm *norm, cudaStream_t stream);

#ifdef __cplusplus
}
#endif
#endif
