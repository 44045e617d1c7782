/* conv_pointwise.h: a pointwise (1x1, stride 1, unpadded, ungrouped) convolution of
 * fp16 channels-last data with FusedConv's whole epilogue in the same kernel:
 * Y[p, k] = act(sum_c X[p, c] * W[k, c] + bias[k] + Z[p, k]), accumulated in fp32 on
 * tensor cores. cuBLASLt's epilogues stop at ReLU; MobileNet's expansions end in
 * ReLU6, and there a separate pass over the (six times wider) output cost more than
 * the convolution. */
#ifndef INFER_K_CONV_POINTWISE_H
#define INFER_K_CONV_POINTWISE_H

#include <cuda_runtime.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* x: pixels x channels, w: out_channels x channels, y and z: pixels x out_channels,
 * bias: out_channels values (bias and z may be NULL; z may be y). channels and
 * out_channels multiples of 8, every pointer 16-byte aligned (else
 * cudaErrorInvalidValue / cudaErrorMisalignedAddress, nothing launched). act:
 * conv_act of ops/conv_fused.h. */
typedef struct k_pw_problem {
  int64_t pixels; /* output pixels */
  int channels, out_channels;
  int act;
  float alpha, beta;
  /* a strided 1x1 convolution (ResNet's downsampling shortcut; conv_pointwise_stream.h
   * only): stride > 1 reads input pixel (n, oh * stride, ow * stride) of an in_h x in_w
   * image for output pixel (n, oh, ow); 0 or 1: input pixel = output pixel */
  int stride, in_h, in_w;
  /* elements from one output pixel to the next (a slice of a wider tensor, a multiple of
   * 8; conv_pointwise_stream.h only); 0: out_channels. z stays dense */
  int64_t y_pitch;
} k_pw_problem;

/* 1 when k_conv_pointwise takes p (sizes as above, pixels within the grid's reach). */
int k_conv_pointwise_supported(const k_pw_problem *p);

/* Build time, once per process and before any launch: lets the kernels use more than
 * 48 KiB of shared memory. */
cudaError_t k_conv_pointwise_init(void);

cudaError_t k_conv_pointwise(const k_pw_problem *p, const void *x, const void *w,
                             const void *bias, const void *z, void *y, cudaStream_t stream);

#ifdef __cplusplus
}
#endif
#endif
