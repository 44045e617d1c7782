/* conv_pad.h: zero padding of an N-D tensor, for convolutions whose pads cuDNN
 * cannot express (asymmetric). */
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

#ifdef __cplusplus
}
#endif
#endif
