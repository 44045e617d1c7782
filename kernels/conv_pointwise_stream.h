/* conv_pointwise_stream.h: a pointwise (1x1, stride 1, unpadded, ungrouped) fp16
 * channels-last convolution with few input channels (at most 256): the expansions of
 * the inverted-residual blocks (MobileNet, EfficientNet, MNASNet), whose cost is
 * writing an output six times wider than the input. Each block keeps its tile of the
 * filters in shared memory and streams pixel tiles through (the next one loading while
 * the current one is multiplied and written), with FusedConv's whole epilogue (bias,
 * residual, any activation) before the one store. Same problem and contract as
 * conv_pointwise.h's k_pw_problem. */
#ifndef INFER_K_CONV_POINTWISE_STREAM_H
#define INFER_K_CONV_POINTWISE_STREAM_H

#include <cuda_runtime.h>
#include <stdint.h>

#include "conv_pointwise.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The launch of one problem, fixed at build (k_pws_plan_make). */
typedef struct k_pws_plan {
  k_pw_problem p;
  int bn;     /* output channels a block: 64, 96 or 128 */
  int ntn;    /* output channel tiles */
  int chunks; /* pixel-tile ranges: blocks = ntn * chunks, all resident at once */
  int smem;   /* dynamic shared memory bytes */
} k_pws_plan;

/* 1 when the kernel takes p: channels and out_channels multiples of 8, channels at
 * most 256, act a conv_act code. */
int k_conv_pointwise_stream_supported(const k_pw_problem *p);

/* Build time: raises the kernels' shared-memory limit and sizes the grid to the blocks
 * the device holds at once (sm_count multiprocessors). */
cudaError_t k_pws_plan_make(const k_pw_problem *p, int sm_count, k_pws_plan *plan);

/* x, w, bias, z, y as for k_conv_pointwise (z may be y; 16-byte aligned). */
cudaError_t k_conv_pointwise_stream(const k_pws_plan *plan, const void *x, const void *w,
                                    const void *bias, const void *z, void *y,
                                    cudaStream_t stream);

#ifdef __cplusplus
}
#endif
#endif
