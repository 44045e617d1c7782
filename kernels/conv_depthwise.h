/* conv_depthwise.h: depthwise convolution (one filter per channel, as in MobileNet,
 * EfficientNet and MnasNet) of fp16 channels-last data with FusedConv's epilogue
 * y = act(conv(x, w) + bias + z), in one pass over x and y. */
#ifndef INFER_K_CONV_DEPTHWISE_H
#define INFER_K_CONV_DEPTHWISE_H

#include <cuda_runtime.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* x: N x H x W x C, y (and z): N x OH x OW x C, w: C x R x S (FusedConv's
 * channels-last K x R x S x C/g with K = g = C), bias: C values. Pads are symmetric,
 * dilations 1, zero padding outside the input. */
typedef struct k_dw_geom {
  int n, c, h, w;
  int r, s;
  int out_h, out_w;
  int pad_h, pad_w, stride_h, stride_w;
} k_dw_geom;

/* 1 when k_conv_depthwise takes g: positive sizes, r and s in 1..7, the output size
 * that the pads and strides give, and index ranges within what the kernel counts in. */
int k_conv_depthwise_supported(const k_dw_geom *g);

/* fp16 data, fp32 accumulation. bias and z may be NULL; z may be y itself. act:
 * conv_act of ops/conv_fused.h (0 none, 1 relu, 2 clip(alpha, beta), 3 leaky
 * relu(alpha), 4 sigmoid, 5 tanh, 6 hard sigmoid(alpha, beta)). sm_count sizes the
 * grid (<= 0: asked of the current device). 16-byte aligned pointers and C % 8 == 0
 * take the vectorized path; anything else a half2 or scalar one. x is read as
 * min(x, x_max) (FusedConv's input_max); x_max = INFINITY reads it as it is. */
cudaError_t k_conv_depthwise(const k_dw_geom *g, const void *x, const void *w, const void *bias,
                             const void *z, void *y, int act, float alpha, float beta,
                             float x_max, int sm_count, cudaStream_t stream);

#ifdef __cplusplus
}
#endif
#endif
