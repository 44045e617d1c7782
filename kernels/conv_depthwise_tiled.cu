// conv_depthwise_tiled.cu: depthwise convolution of fp16 channels-last (NHWC) data,
// windows up to 7x7, strides 1 or 2, with the conv epilogue y = act(conv(x, w) + bias +
// z) fused and FusedConv's input clamp, accumulated in fp32. The kernel template is in
// conv_depthwise_tiled.cuh, its variants in conv_depthwise_tiled_v4.cu and _v21.cu;
// this file plans and launches.
//
// Work: a thread owns V consecutive channels (V = 4: one 8-byte load per pixel when
// C % 4 == 0; else 2 or 1) of a strip of P = 8 consecutive output pixels along W in one
// output row. For each filter row it loads the strip's (P - 1) * SW + S input columns
// once each, converts them to fp32 and multiplies every column into all the outputs
// whose window covers it (tap s = j - p * SW), so an input element costs one load and V
// conversions per filter row instead of one per tap; the row's S x V weights sit in
// registers, read from shared memory (fp32, tap-major, filled once per block) at the
// start of the row. Strips whose columns all lie inside the image (5 of 7 at W = 56,
// 7x7) load without bounds checks.
//
// Blocks: 256 threads over (strip, channel group) pairs of one channel chunk (at most
// 32 * V channels; bigger C takes several chunks, grid y), pairs numbered strip-major
// so that a warp's lanes read neighbouring channels of one or two neighbouring pixels
// (whole 32-byte sectors) and every lane has work whatever C is. Strips are numbered
// n, output row, strip along W, and each block computes one contiguous run of them, so
// a block sweeps down its part of the image and the R - 1 input rows that consecutive
// output rows share are still in L1; the grid is one full wave of resident blocks (the
// occupancy asked at build), every block with the same number of strips.
//
// Why V = 4 and P = 8: the 32 accumulators plus S x 4 weights (28 for 7x7) plus the
// row's loads in flight fit 128 registers (2 blocks, 16 warps per SM) without spills;
// 16 pixels per thread (64 accumulators) spilled under -Xptxas -v, and 8 channels
// would also double the weight registers. A warp's 8-byte loads still cover 256
// contiguous bytes.
//
// What it should reach (H200: 4.3 TB/s; 132 SMs x 128 fp32 FMA per clock at 1.98 GHz
// = 33.4 T FMA/s). ConvNeXt-T's N = 128, 56 x 56, C = 96, 7x7 pad 3: x and y are 77 MB
// each, 154 MB = 36 us at the memory roofline; but 49 FMAs per output are 1.89 G FMAs =
// 56 us at the fp32 FMA peak: in fp32 arithmetic the layer is bound by the FMA pipe
// (12.25 FMA per byte moved against the machine's 7.8), not by memory. Per filter row
// an interior thread issues 224 FMAs, 56 fp16->fp32 conversions, 14 loads, 7 shared
// loads and some 40 address and loop instructions (PTX count): about 65 % of its issue
// slots are FMAs; with the edge strips and the epilogue about 90 us, 40 % of the
// memory roofline (the general kernel: 630 us). 60 % on 7x7 would take fp16 products
// (HFMA2, twice the rate) or tensor cores. 5x5 (25 FMA per output) sits near the
// balance point: EfficientNet-B0's N = 128, 28 x 28, C = 240 moves 96 MB (22 us) with
// 0.6 G FMAs (18 us at peak, ~29 us at 65 %), about 75 % of the roofline; 3x3 is
// memory-bound: ShuffleNetV2's N = 128, C = 116, 28 -> 14 stride 2 moves 29 MB (6.8
// us) for about 3 us of issue.
#include <limits.h>
#include <math.h>

#include "conv_depthwise_tiled.cuh"
#include "conv_depthwise_tiled.h"

// The compiled variant for (v, s, horizontal stride): an index into dwt_fns_v4 (0..7)
// or, from 8 on, into dwt_fns_v21.
static int dwt_variant(int v, int s, int sw) {
  if (v == 1) return 8 + 8 + (sw == 2);
  int k = (sw == 2 ? 4 : 0) + (s == 3 ? 0 : s == 5 ? 1 : s == 7 ? 2 : 3);
  return v == 4 ? k : 8 + k;
}

static dwt_fn dwt_variant_fn(int k) {
  if (k >= 0 && k < 8) return dwt_fns_v4[k];
  if (k >= 8 && k < 18) return dwt_fns_v21[k - 8];
  return NULL;
}

extern "C" int k_dwt_supported(const k_dw_geom *g) {
  if (g->n < 1 || g->c < 1 || g->h < 1 || g->w < 1 || g->r < 1 || g->r > 7 || g->s < 1 ||
      g->s > 7 || g->out_h < 1 || g->out_w < 1 || g->pad_h < 0 || g->pad_w < 0 ||
      g->pad_h > 64 || g->pad_w > 64 || g->stride_h < 1 || g->stride_h > 2 ||
      g->stride_w < 1 || g->stride_w > 2 || g->c > (1 << 24))
    return 0;
  int64_t eh = (int64_t)g->h + 2 * (int64_t)g->pad_h - g->r;
  int64_t ew = (int64_t)g->w + 2 * (int64_t)g->pad_w - g->s;
  if (eh < 0 || ew < 0 || eh / g->stride_h + 1 != g->out_h || ew / g->stride_w + 1 != g->out_w)
    return 0;
  // in-kernel int arithmetic: element offsets within one padded input image (rows
  // -pad_h .. h + pad_h, columns up to a strip's last, out_w + P past the end at
  // stride 2 plus the window), strip numbers with one block's run past the end, and
  // the output row n * out_h + oh
  int64_t span = ((int64_t)g->h + 2 * g->pad_h + 8) * ((int64_t)g->w + 2 * g->pad_w + 48) * g->c;
  int64_t items = (int64_t)g->n * g->out_h * ((g->out_w + DWT_P - 1) / DWT_P);
  return span <= INT_MAX && items * DWT_MAX_TX * 2 + DWT_THREADS <= INT_MAX;
}

extern "C" cudaError_t k_dwt_plan_make(const k_dw_geom *g, int v, int sm_count,
                                       k_dwt_plan *p) {
  if (!k_dwt_supported(g) || (v != 4 && v != 2 && v != 1) || g->c % v)
    return cudaErrorInvalidValue;
  p->v = v;
  p->p = DWT_P;
  p->nseg = (g->out_w + DWT_P - 1) / DWT_P;
  p->items = (int)((int64_t)g->n * g->out_h * p->nseg);
  int cg = g->c / v;
  int k = (cg + DWT_MAX_TX - 1) / DWT_MAX_TX; // chunks, then balanced
  p->tx = (cg + k - 1) / k;
  p->chunks = (cg + p->tx - 1) / p->tx;
  if (p->chunks > 65535) return cudaErrorInvalidValue;
  p->threads = DWT_THREADS;
  p->smem = (size_t)p->tx * v * g->r * g->s * sizeof(float);
  p->kernel = dwt_variant(v, g->s, g->stride_w);
  dwt_fn fn = dwt_variant_fn(p->kernel);
  int bps = 0;
  cudaError_t e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&bps, fn, p->threads, p->smem);
  if (e != cudaSuccess) return e;
  if (bps < 1) return cudaErrorInvalidConfiguration;
  // one full wave of resident blocks, each with the same run of strips, none empty
  int64_t resident = (int64_t)(sm_count > 0 ? sm_count : 1) * bps;
  int64_t nb = resident / p->chunks > 1 ? resident / p->chunks : 1;
  int64_t per = (p->items + nb - 1) / nb;
  p->per_block = (int)per;
  p->blocks = (unsigned)((p->items + per - 1) / per);
  return cudaSuccess;
}

extern "C" cudaError_t k_dwt(const k_dw_geom *g, const k_dwt_plan *p, const void *x,
                             const void *w, const void *bias, const void *z, void *y, int act,
                             float alpha, float beta, float x_max, cudaStream_t s) {
  dwt_fn fn = dwt_variant_fn(p->kernel);
  if (!fn || p->kernel != dwt_variant(p->v, g->s, g->stride_w) || g->c % p->v)
    return cudaErrorInvalidValue;
  if (((uintptr_t)x | (uintptr_t)y | (uintptr_t)bias | (uintptr_t)z) % (uintptr_t)(2 * p->v))
    return cudaErrorMisalignedAddress;
  dwt_args a;
  a.x = (const __half *)x;
  a.w = (const __half *)w;
  a.bias = (const __half *)bias;
  a.z = (const __half *)z;
  a.y = (__half *)y;
  a.c = g->c;
  a.h = g->h;
  a.w_in = g->w;
  a.r = g->r;
  a.s = g->s;
  a.oh = g->out_h;
  a.ow = g->out_w;
  a.ph = g->pad_h;
  a.pw = g->pad_w;
  a.sh = g->stride_h;
  a.wc = g->w * g->c;
  a.img = (int64_t)g->h * g->w * g->c;
  a.nseg = p->nseg;
  a.items = p->items;
  a.per_block = p->per_block;
  a.cb = p->tx * p->v;
  a.act = act;
  a.alpha = alpha;
  a.beta = beta;
  a.x_max = x_max;
  void *args[] = {&a};
  return cudaLaunchKernel((const void *)fn, dim3(p->blocks, (unsigned)p->chunks),
                          dim3((unsigned)p->threads), args, p->smem, s);
}
