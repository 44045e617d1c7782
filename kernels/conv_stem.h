/* conv_stem.h: a float16 channels-last convolution of few input channels (at most 8: a
 * network's first layer on 3 colour channels) as an implicit GEMM on the tensor cores,
 * every FusedConv epilogue fused. cuDNN's kernels for such inputs cannot load a pixel in
 * one vector and run ResNet's 7x7 stem, VGG's and SqueezeNet's first 3x3 at 20-26% of
 * the memory roofline on the H200 (--profile), while the layer's cost is writing its
 * output: 64 channels for every 3 read.
 *
 * Each block keeps its 64 (or fewer) filters in shared memory, the taps' channels
 * widened to 4 or 8 with zeros so that two adjacent reduction terms are one 32-bit word,
 * and walks output tiles of 8 x 16 pixels: the tile's input window is staged in shared
 * memory with the same widening (zeros where the window leaves the image), each warp
 * gathers its rows of the im2col matrix straight from it (a table of tap offsets), and
 * the results pass through shared memory so that every pixel's channels leave in 16-byte
 * stores, after bias, residual and activation. */
#ifndef INFER_K_CONV_STEM_H
#define INFER_K_CONV_STEM_H

#include <cuda_runtime.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct k_stem_problem {
  int n, h, w, c;       /* input, N x H x W x C */
  int k, r, s;          /* filters K x R x S x C */
  int out_h, out_w;
  int pad_h, pad_w, stride_h, stride_w, dil_h, dil_w; /* symmetric pads */
  int act;              /* conv_act code (kernels/conv_act.cuh) */
  float alpha, beta;    /* the activation's parameters */
  int has_x_max;        /* X read as min(X, x_max) */
  float x_max;
  int64_t y_pitch;      /* elements from one output pixel to the next (a multiple of 8,
                           at least k); 0: k. z is dense */
} k_stem_problem;

/* The launch of one problem, fixed at build (k_stem_plan_make). */
typedef struct k_stem_plan {
  k_stem_problem p;
  int bn;     /* output channels a block: 16, 32, 48 or 64 */
  int cp;     /* channels of a tap in shared memory: 4 or 8 */
  int geo;    /* a geometry compiled fixed (kernels/conv_stem.cu), 0: from the arguments */
  int kpad;   /* reduction length, R * S * cp rounded up to 16 */
  int in_th, in_tw; /* the input window of an output tile */
  int ntn;    /* output channel blocks */
  int blocks; /* resident blocks, each walking the tiles of its channel block */
  int smem;   /* dynamic shared memory bytes */
} k_stem_plan;

/* 1 when the kernel takes p: 1 <= C <= 8, K a multiple of 8, the widened filters and
 * the input window within the shared memory the kernel is built for, act a conv_act
 * code, sizes within 32-bit indexing of one image. */
int k_conv_stem_supported(const k_stem_problem *p);

/* Build time: raises the kernel's shared-memory limit and sizes the grid to the blocks
 * the device holds at once (sm_count multiprocessors). */
cudaError_t k_stem_plan_make(const k_stem_problem *p, int sm_count, k_stem_plan *plan);

/* y = act(conv(x, w) + bias + z): x N x H x W x C, w K x R x S x C, bias K (or NULL),
 * z and y N x OH x OW x K (z NULL or y itself; y with pixels y_pitch apart); y and z
 * 16-byte aligned, x and w 2. */
cudaError_t k_conv_stem(const k_stem_plan *plan, const void *x, const void *w,
                        const void *bias, const void *z, void *y, cudaStream_t stream);

#ifdef __cplusplus
}
#endif
#endif
