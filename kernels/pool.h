/* pool.h: MaxPool (with Indices), AveragePool and LRN on the device.
 *
 * Window geometry is always 3-D, as ops/conv_util.h's win_geom: 1-D and 2-D
 * problems have leading spatial dims of size 1 (kernel 1, stride 1, no pads). One
 * thread per output element; windows are clipped to the input, as the CPU does. */
#ifndef INFER_K_POOL_H
#define INFER_K_POOL_H

#include <cuda_runtime.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Input extent, kernel, stride, dilation, begin/end pads, output extent per dim. */
typedef struct k_pool_geom {
  int64_t in[3], k[3], s[3], d[3], pb[3], pe[3], out[3];
} k_pool_geom;

/* y: max over each window of each of `planes` (N*C) planes; idx (int64, may be
 * NULL): flat input index of the first maximum counting batch and channel,
 * row-major or (col_major) column-major within the spatial dims; -1 (and the
 * lowest value) for a window with no input. float32/16, bfloat16, float64, int8,
 * uint8. */
cudaError_t k_maxpool(int dtype, const k_pool_geom *g, int64_t planes, const void *x, void *y,
                      int64_t *idx, int col_major, cudaStream_t stream);

/* y: mean over each window; the divisor counts the taps inside the input
 * (include_pad 0) or inside the padded input (include_pad 1), never those past the
 * end padding. float32/16, bfloat16, float64. */
cudaError_t k_avgpool(int dtype, const k_pool_geom *g, int64_t planes, const void *x, void *y,
                      int include_pad, cudaStream_t stream);

/* Channels-last 2-D pooling: x is N x H x W x C, y N x OH x OW x C; g as above with
 * dim 0 the size-1 dummy (in, out and k 1), H and W in dims 1 and 2. MaxPool (no
 * Indices; the lowest value for a window with no input) and AveragePool with the
 * semantics above. Channels are read V at a time, V the widest of 16, 8, 4, 2 bytes
 * that divides C with x and y aligned to it. float32/16, bfloat16, float64. */
cudaError_t k_maxpool_nhwc(int dtype, const k_pool_geom *g, int64_t n, int64_t c, const void *x,
                           void *y, cudaStream_t stream);
cudaError_t k_avgpool_nhwc(int dtype, const k_pool_geom *g, int64_t n, int64_t c, const void *x,
                           void *y, int include_pad, cudaStream_t stream);

/* LRN across channels of x (N x C x S):
 * y = x / (bias + alpha/size * sum of x^2 over [c - (size-1)/2, c + size-1-(size-1)/2])^beta.
 * float32/16, bfloat16, float64. */
cudaError_t k_lrn(int dtype, int64_t n, int64_t c, int64_t s, int64_t size, float alpha, float beta,
                  float bias, const void *x, void *y, cudaStream_t stream);

#ifdef __cplusplus
}
#endif
#endif
