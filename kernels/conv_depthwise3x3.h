/* conv_depthwise3x3.h: the 3x3 depthwise convolution of MobileNet (stride 1 or 2) on
 * fp16 channels-last data with FusedConv's epilogue, a kernel with one thread per
 * 8 channels x 2 output pixels and the filters repacked tap-major at build. */
#ifndef INFER_K_CONV_DEPTHWISE3X3_H
#define INFER_K_CONV_DEPTHWISE3X3_H

#include <cuda_runtime.h>

#include "conv_depthwise.h"

#ifdef __cplusplus
extern "C" {
#endif

/* 1 when g is 3x3, strides 1 or 2 (the same both ways), C % 8 == 0 and the index
 * arithmetic fits 32 bits. */
int k_dw3x3_supported(const k_dw_geom *g);

/* Build time: wt (9 * C floats, device) = w (C x 3 x 3 fp16, device) tap-major:
 * wt[t * C + c] = w[c * 9 + t]. Enqueued on stream. */
cudaError_t k_dw3x3_repack(const k_dw_geom *g, const void *w, float *wt, cudaStream_t stream);

/* y = act(depthwise(x, w) + bias + z); wt from k_dw3x3_repack; bias and z may be NULL,
 * z may be y. x is read as min(x, x_max); INFINITY reads it as it is. Every pointer
 * 16-byte aligned (else cudaErrorMisalignedAddress). */
cudaError_t k_dw3x3(const k_dw_geom *g, const void *x, const float *wt, const void *bias,
                    const void *z, void *y, int act, float alpha, float beta, float x_max,
                    cudaStream_t stream);

#ifdef __cplusplus
}
#endif
#endif
