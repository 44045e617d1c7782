/* conv_pad.h: zero padding of an N-D tensor, for convolutions whose pads cuDNN
 * cannot express (asymmetric), and of a channels-last tensor's channels to 8 (the
 * first convolution's 3 colour channels, ops/cuda/conv_channel_pad.c), and the
 * folding of neighbouring pixels into channels (ops/cuda/conv_fold.c). */
#ifndef INFER_K_CONV_PAD_H
#define INFER_K_CONV_PAD_H

#include <cuda_runtime.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* dst (out_dims) = src (in_dims) placed at offset `begin` per dim, zeros elsewhere.
 * elem_size 1, 2, 4 or 8; rank <= 8. */
cudaError_t k_pad_zero(int elem_size, int rank, const int64_t *in_dims, const int64_t *out_dims,
                       const int64_t *begin, const void *src, void *dst, cudaStream_t stream);

/* dst [pixels, 8] = src [pixels, c] (float16, channels last) with channels c..7 zero;
 * 1 <= c <= 8, dst 16-byte aligned. */
cudaError_t k_pad_channels8(const void *src, int64_t pixels, int c, void *dst,
                            cudaStream_t stream);

/* Neighbouring pixels folded into channels, with a convolution's zero padding, for
 * ops/cuda/conv_fold.c: dst [n, hs, ws, c_out] (float16, channels last) with
 *   dst[b, i, j, (th * fw + tw) * c + ch] = src[b, step_h * i + th - ph, step_w * j + tw - pw, ch]
 * for th < fh, tw < fw (zero outside src [n, h, w, c]), channels from fh * fw * c up to
 * c_out zero. Space to depth is fh = step_h, fw = step_w. c_out a multiple of 8, dst
 * 16-byte aligned. */
cudaError_t k_fold_pixels8(const void *src, int n, int h, int w, int c, int fh, int fw,
                           int step_h, int step_w, int ph, int pw, int hs, int ws, int c_out,
                           void *dst, cudaStream_t stream);

#ifdef __cplusplus
}
#endif
#endif
