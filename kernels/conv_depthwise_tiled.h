/* conv_depthwise_tiled.h: depthwise convolution (group = C = K, one filter per channel:
 * ConvNeXt's 7x7, EfficientNet's 5x5, MobileNet's and ShuffleNet's 3x3) of fp16
 * channels-last data with FusedConv's epilogue y = act(conv(x, w) + bias + z), each
 * thread holding a strip of outputs along W in registers so that every input element
 * it needs is loaded once per filter row. Windows up to 7x7, horizontal stride 1 or 2,
 * vertical stride 1 or 2, symmetric pads, dilation 1, any C. */
#ifndef INFER_K_CONV_DEPTHWISE_TILED_H
#define INFER_K_CONV_DEPTHWISE_TILED_H

#include <cuda_runtime.h>
#include <stdint.h>

#include "conv_depthwise.h" /* k_dw_geom */

#ifdef __cplusplus
extern "C" {
#endif

/* One launch shape, made at build (k_dwt_plan_make asks the device how many blocks
 * fit on an SM). Plain data; the caller keeps it. */
typedef struct k_dwt_plan {
  int v;            /* channels per thread: 4, 2 or 1 */
  int p;            /* outputs per thread along W (8) */
  int tx;           /* channel groups of v per chunk */
  int chunks;       /* channel chunks of tx * v (grid y) */
  int threads;      /* per block */
  int nseg;         /* strips per output row: ceil(out_w / p) */
  int items;        /* n * out_h * nseg strips */
  int per_block;    /* consecutive strips one block computes */
  unsigned blocks;  /* blocks per chunk (grid x) */
  size_t smem;      /* dynamic shared memory: the chunk's weights in fp32 */
  int kernel;       /* which compiled variant (internal) */
} k_dwt_plan;

/* 1 when the kernel takes g: r, s in 1..7, strides 1 or 2, the output size that the
 * pads and strides give, an image (h * w * c elements) and the strip count within
 * 32-bit indices. */
int k_dwt_supported(const k_dw_geom *g);

/* The launch shape for g with v channels per thread (4, 2 or 1; v must divide C).
 * sm_count: the device's multiprocessors. cudaErrorInvalidValue when g is not
 * supported, else what the occupancy query returns. */
cudaError_t k_dwt_plan_make(const k_dw_geom *g, int v, int sm_count, k_dwt_plan *plan);

/* y = act(depthwise(x, w) + bias + z) with the plan made for g. w: C x R x S fp16 (as
 * FusedConv's channels-last K x R x S x 1), bias (C) and z may be NULL, z may be y.
 * act: conv_act of ops/conv_fused.h with alpha, beta. x is read as min(x, x_max), NaN
 * kept; x_max = INFINITY reads it as it is. x, y, z and bias must be aligned to
 * 2 * plan->v bytes (else cudaErrorMisalignedAddress). Enqueued on stream. */
cudaError_t k_dwt(const k_dw_geom *g, const k_dwt_plan *plan, const void *x, const void *w,
                  const void *bias, const void *z, void *y, int act, float alpha, float beta,
                  float x_max, cudaStream_t stream);

#ifdef __cplusplus
}
#endif
#endif
