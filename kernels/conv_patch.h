/* conv_patch.h: the patches of a non-overlapping convolution (kernel = stride, no
 * padding, ViT's patch embedding, ConvNeXt's and Swin's stems) from channels-last data:
 * a pure rearrangement, after which the convolution is one GEMM (ops/cuda/conv_patch_gemm.c). */
#ifndef INFER_K_CONV_PATCH_H
#define INFER_K_CONV_PATCH_H

#include <cuda_runtime.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* x [n, h, w, c] (elem_size 2 or 4) -> p [n * (h / kh) * (w / kw), kh * kw * c] with
 * p[(b, i, j), (y, x, ch)] = x[b, i * kh + y, j * kw + x, ch]; h % kh == w % kw == 0. */
cudaError_t k_conv_patches(int elem_size, const void *x, int64_t n, int64_t h, int64_t w,
                           int64_t c, int64_t kh, int64_t kw, void *p, cudaStream_t stream);

#ifdef __cplusplus
}
#endif
#endif
