/* pad_resize.h: Pad (constant, reflect, edge, wrap) by element size, and Resize
 * (nearest: by element size; linear / cubic: separable passes, one axis each,
 * with host-computed per-axis tap tables). Kernels know no ONNX attributes: the
 * host side (ops/cuda/cuda_pad.c, cuda_resize.c) resolves pads, modes, coordinate
 * transforms and filter taps at prepare time. */
#ifndef INFER_K_PAD_RESIZE_H
#define INFER_K_PAD_RESIZE_H

#include <cuda_runtime.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum k_pad_mode { K_PAD_CONSTANT = 0, K_PAD_REFLECT = 1, K_PAD_EDGE = 2, K_PAD_WRAP = 3 };

/* Pad with negative pads cropping first (ONNX Runtime's order): per dim, the kept
 * input region starts at lo[d] and has ext[d] elements; output coordinate o maps
 * to region position o - pb[d], extended by `mode` outside [0, ext[d]).
 * Constant positions get *cval_dev when cval_dev is not NULL (a device element of
 * the same dtype), else the elem_size bytes at cval (host). rank 0..8;
 * elem_size 1, 2, 4 or 8. */
cudaError_t k_pad(int elem_size, int mode, int rank, const int64_t *in_dims,
                  const int64_t *out_dims, const int64_t *lo, const int64_t *ext,
                  const int64_t *pb, const void *cval, const void *cval_dev, const void *src,
                  void *dst, cudaStream_t stream);

/* Resize, nearest: table_dev holds, axis after axis (outermost first),
 * out_dims[d] input indices per axis, -1 where the coordinate extrapolates (the
 * element is then the elem_size bytes at `ext`, host). rank 1..8. */
cudaError_t k_resize_nearest(int elem_size, int rank, const int64_t *in_dims,
                             const int64_t *out_dims, const int64_t *table_dev, const void *ext,
                             const void *src, void *dst, cudaStream_t stream);

/* Bytes of the accumulation type of a Resize pass for dtype: float (4) for
 * float32/float16/bfloat16, double (8) for the others; 0 for an unknown code. */
int k_resize_acc_bytes(int dtype);

/* One separable linear/cubic pass along an axis: src viewed as
 * [outer, in_a, inner] -> dst [outer, out_a, inner]:
 *   dst[b, o, j] = sum_k w[o*taps + k] * src[b, idx[o*taps + k], j]
 * or `extrapolation` where outside[o] != 0. src (dst) holds `dtype` elements, or
 * accumulation-type elements when src_acc (dst_acc) is set. idx, w and outside are
 * device arrays. Integer outputs truncate toward zero (as the CPU backend). */
cudaError_t k_resize_pass(int dtype, int src_acc, int dst_acc, const void *src, void *dst,
                          int64_t outer, int64_t in_a, int64_t out_a, int64_t inner, int taps,
                          const int64_t *idx, const double *w, const uint8_t *outside,
                          double extrapolation, cudaStream_t stream);

#ifdef __cplusplus
}
#endif
#endif
