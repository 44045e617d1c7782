// conv_depthwise3x3.cu: 3x3 depthwise convolution of fp16 NHWC data, stride 1 or 2,
// with the conv epilogue, accumulated in fp32.
//
// One thread computes 8 consecutive channels (one 16-byte vector) of DW3_PX
// neighbouring output pixels along W. Threads are numbered channel group fastest, then
// pixel pair, then output row, so a warp's loads cover consecutive pixels of one row:
// whole 32-byte sectors, and the neighbours' overlapping columns hit L1. The filters
// were repacked tap-major in fp32 at build (9 x C), so a tap's 8 weights are two
// 16-byte loads that stay in L1. Registers stay low (no per-thread tile), which keeps
// many warps resident to cover DRAM latency: the op does 9 multiply-adds per 4 bytes
// moved and is bound by memory.
#include <limits.h>

#include "conv_act.cuh"
#include "conv_depthwise3x3.h"
#include "k_common.cuh"

#define DW3_PX 2
#define DW3_THREADS 256

struct dw3_args {
  const __half *x, *bias, *z;
  const float *wt;
  __half *y;
  int c, cg, in_h, in_w, oh, ow, ph, pw, nseg;
  unsigned total; // n * oh * nseg * cg threads
  int act;
  float alpha, beta;
  bool clamp_x; // X read as min(X, x_max)
  float x_max;
};

// 4 blocks (32 warps) per SM: 64 registers
template <int SW> __global__ void __launch_bounds__(DW3_THREADS, 4) dw3_kernel(const dw3_args a) {
  const unsigned q = blockIdx.x * DW3_THREADS + threadIdx.x;
  if (q >= a.total) return;
  const unsigned cg = q % (unsigned)a.cg, r1 = q / (unsigned)a.cg;
  const unsigned seg = r1 % (unsigned)a.nseg, r2 = r1 / (unsigned)a.nseg;
  const int oh = (int)(r2 % (unsigned)a.oh), n = (int)(r2 / (unsigned)a.oh);
  const int c = (int)cg * 8, ow0 = (int)seg * DW3_PX;
  constexpr int NCOL = (DW3_PX - 1) * SW + 3; // input columns under the outputs
  float acc[DW3_PX][8];
#pragma unroll
  for (int p = 0; p < DW3_PX; p++)
#pragma unroll
    for (int v = 0; v < 8; v++) acc[p][v] = 0.f;
  const int ih0 = oh * SW - a.ph, iw0 = ow0 * SW - a.pw;
  const int64_t row = (int64_t)a.in_w * a.c;
  const __half *xn = a.x + (int64_t)n * a.in_h * row + c;
#pragma unroll
  for (int r = 0; r < 3; r++) {
    const int ih = ih0 + r;
    if ((unsigned)ih >= (unsigned)a.in_h) continue;
    float w[3][8];
#pragma unroll
    for (int s = 0; s < 3; s++) {
      const float4 *wp = reinterpret_cast<const float4 *>(a.wt + (r * 3 + s) * a.c + c);
      const float4 lo = __ldg(wp), hi = __ldg(wp + 1);
      w[s][0] = lo.x; w[s][1] = lo.y; w[s][2] = lo.z; w[s][3] = lo.w;
      w[s][4] = hi.x; w[s][5] = hi.y; w[s][6] = hi.z; w[s][7] = hi.w;
    }
    const __half *xr = xn + ih * row;
#pragma unroll
    for (int j = 0; j < NCOL; j++) {
      const int iw = iw0 + j;
      if ((unsigned)iw >= (unsigned)a.in_w) continue;
      float xv[8];
      k_half8_unpack(__ldg(reinterpret_cast<const uint4 *>(xr + (int64_t)iw * a.c)), xv);
      if (a.clamp_x)
#pragma unroll
        for (int v = 0; v < 8; v++) xv[v] = xv[v] > a.x_max ? a.x_max : xv[v]; // NaN kept
#pragma unroll
      for (int p = 0; p < DW3_PX; p++) {
        const int s = j - p * SW; // column j is tap s of output p
        if (s >= 0 && s < 3)
#pragma unroll
          for (int v = 0; v < 8; v++) acc[p][v] = fmaf(xv[v], w[s][v], acc[p][v]);
      }
    }
  }
  float bv[8];
  if (a.bias)
    k_half8_unpack(__ldg(reinterpret_cast<const uint4 *>(a.bias + c)), bv);
  else
#pragma unroll
    for (int v = 0; v < 8; v++) bv[v] = 0.f;
  const int64_t yo = (((int64_t)n * a.oh + oh) * a.ow + ow0) * a.c + c;
#pragma unroll
  for (int p = 0; p < DW3_PX; p++) {
    if (ow0 + p >= a.ow) break;
    float o[8];
#pragma unroll
    for (int v = 0; v < 8; v++) o[v] = acc[p][v] + bv[v];
    if (a.z) { // plain load: z may be y itself
      float zv[8];
      k_half8_unpack(*reinterpret_cast<const uint4 *>(a.z + yo + (int64_t)p * a.c), zv);
#pragma unroll
      for (int v = 0; v < 8; v++) o[v] += zv[v];
    }
    conv_act_n<8>(a.act, a.alpha, a.beta, o);
    *reinterpret_cast<uint4 *>(a.y + yo + (int64_t)p * a.c) = k_half8_pack(o);
  }
}

__global__ void dw3_repack_kernel(const __half *w, float *wt, int c) {
  K_GRID_STRIDE(i, (int64_t)9 * c) {
    const int t = (int)(i / c), ch = (int)(i % c);
    wt[i] = __half2float(w[(int64_t)ch * 9 + t]);
  }
}

extern "C" int k_dw3x3_supported(const k_dw_geom *g) {
  if (g->r != 3 || g->s != 3 || g->c % 8 || g->stride_h != g->stride_w ||
      (g->stride_w != 1 && g->stride_w != 2) || !k_conv_depthwise_supported(g))
    return 0;
  int64_t nseg = (g->out_w + DW3_PX - 1) / DW3_PX;
  int64_t total = (int64_t)g->n * g->out_h * nseg * (g->c / 8);
  // thread numbers and in-kernel int offsets within one image row
  return total + DW3_THREADS <= (int64_t)UINT_MAX && (int64_t)g->w * g->c <= INT_MAX;
}

extern "C" cudaError_t k_dw3x3_repack(const k_dw_geom *g, const void *w, float *wt,
                                      cudaStream_t s) {
  dw3_repack_kernel<<<k_blocks((int64_t)9 * g->c, 256), 256, 0, s>>>((const __half *)w, wt, g->c);
  return cudaGetLastError();
}

extern "C" cudaError_t k_dw3x3(const k_dw_geom *g, const void *x, const float *wt,
                               const void *bias, const void *z, void *y, int act, float alpha,
                               float beta, float x_max, cudaStream_t s) {
  if (!k_dw3x3_supported(g)) return cudaErrorInvalidValue;
  if (((uintptr_t)x | (uintptr_t)wt | (uintptr_t)bias | (uintptr_t)z | (uintptr_t)y) % 16)
    return cudaErrorMisalignedAddress;
  dw3_args a;
  a.x = (const __half *)x;
  a.wt = wt;
  a.bias = (const __half *)bias;
  a.z = (const __half *)z;
  a.y = (__half *)y;
  a.c = g->c;
  a.cg = g->c / 8;
  a.in_h = g->h;
  a.in_w = g->w;
  a.oh = g->out_h;
  a.ow = g->out_w;
  a.ph = g->pad_h;
  a.pw = g->pad_w;
  a.nseg = (g->out_w + DW3_PX - 1) / DW3_PX;
  a.total = (unsigned)((int64_t)g->n * g->out_h * a.nseg * a.cg);
  a.act = act;
  a.alpha = alpha;
  a.beta = beta;
  a.clamp_x = !isinf(x_max);
  a.x_max = x_max;
  unsigned blocks = (a.total + DW3_THREADS - 1) / DW3_THREADS;
  if (g->stride_w == 1)
    dw3_kernel<1><<<blocks, DW3_THREADS, 0, s>>>(a);
  else
    dw3_kernel<2><<<blocks, DW3_THREADS, 0, s>>>(a);
  return cudaGetLastError();
}
