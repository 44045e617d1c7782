// conv_depthwise_tiled.cuh: the kernel template of conv_depthwise_tiled.cu, included by
// the files that compile its variants (conv_depthwise_tiled_v4.cu, _v21.cu), which the
// build compiles in parallel. The design and its expected speed are described in
// conv_depthwise_tiled.cu.
#pragma once

#include <math.h>
#include <string.h>

#include "conv_act.cuh"
#include "k_common.cuh"

#define DWT_THREADS 256 // threads per block (at most)
#define DWT_MAX_TX 32   // channel groups per chunk (at most)
#define DWT_P 8         // outputs per thread along W

struct dwt_args {
  const __half *x, *w, *bias, *z;
  __half *y;
  int c, h, w_in, r, s, oh, ow, ph, pw, sh;
  int wc;      // w_in * c: elements per input row
  int64_t img; // h * w_in * c: elements per input image
  int nseg;    // strips per output row
  int items;   // n * oh * nseg
  int per_block;
  int cb; // channels per chunk: blockDim.x * V
  int act;
  float alpha, beta;
  float x_max; // INFINITY: no clamp
};

typedef void (*dwt_fn)(const dwt_args);

// The packed form of V halves.
template <int V> struct dwt_raw;
template <> struct dwt_raw<4> { typedef uint2 t; };
template <> struct dwt_raw<2> { typedef unsigned int t; };
template <> struct dwt_raw<1> { typedef unsigned short t; };

// The bits of f as a To (memcpy: well defined, and a register move on the GPU).
template <class To, class From> __device__ __forceinline__ To dwt_bits(const From &f) {
  static_assert(sizeof(To) == sizeof(From), "dwt_bits: sizes differ");
  To t;
  memcpy((void *)&t, (const void *)&f, sizeof t);
  return t;
}

template <int V> __device__ __forceinline__ typename dwt_raw<V>::t dwt_raw_zero() {
  if constexpr (V == 4)
    return make_uint2(0u, 0u);
  else
    return 0;
}

template <int V> __device__ __forceinline__ void dwt_unpack(typename dwt_raw<V>::t u, float *f) {
  if constexpr (V == 4) {
    const float2 a = __half22float2(dwt_bits<__half2>(u.x));
    const float2 b = __half22float2(dwt_bits<__half2>(u.y));
    f[0] = a.x;
    f[1] = a.y;
    f[2] = b.x;
    f[3] = b.y;
  } else if constexpr (V == 2) {
    const float2 a = __half22float2(dwt_bits<__half2>(u));
    f[0] = a.x;
    f[1] = a.y;
  } else {
    f[0] = __half2float(__ushort_as_half(u));
  }
}

template <int V> __device__ __forceinline__ typename dwt_raw<V>::t dwt_pack(const float *f) {
  if constexpr (V == 4) {
    const __half2 a = __floats2half2_rn(f[0], f[1]), b = __floats2half2_rn(f[2], f[3]);
    return make_uint2(dwt_bits<unsigned int>(a), dwt_bits<unsigned int>(b));
  } else if constexpr (V == 2) {
    const __half2 a = __floats2half2_rn(f[0], f[1]);
    return dwt_bits<unsigned int>(a);
  } else {
    return __half_as_ushort(__float2half_rn(f[0]));
  }
}

// V fp32 weights from shared memory (p is 4V-byte aligned: cb and the thread's offset
// are multiples of V).
template <int V> __device__ __forceinline__ void dwt_wload(const float *p, float *f) {
  if constexpr (V == 4) {
    const float4 a = *reinterpret_cast<const float4 *>(p);
    f[0] = a.x;
    f[1] = a.y;
    f[2] = a.z;
    f[3] = a.w;
  } else if constexpr (V == 2) {
    const float2 a = *reinterpret_cast<const float2 *>(p);
    f[0] = a.x;
    f[1] = a.y;
  } else {
    f[0] = p[0];
  }
}

// min(v, m) that keeps a NaN v (the CPU reference's `if (v > m) v = m`); m is not NaN.
__device__ __forceinline__ float dwt_min_keep_nan(float v, float m) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  float r;
  asm("min.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(v), "f"(m));
  return r;
#else
  return v > m ? m : v;
#endif
}

// One filter row's share of a strip. xb: the input row at the strip's first column
// iw0 and this thread's channel c0 (a position left of the row when iw0 < 0: only
// columns inside are read); column j is at xb + j * c. EDGE: only columns j in
// [jlo, jhi) lie inside the image, the others are the zero padding; without EDGE all
// NCOL do. wrow: this thread's weight of tap (r, 0), tap s at wrow[s * cb]. GEN: S is
// only a bound (6, or 7 with V = 1) and s_rt the window's width.
template <int V, int S, int SW, bool GEN, bool CLAMP, bool EDGE>
__device__ __forceinline__ void dwt_row(const __half *xb, int c, int jlo, int jhi,
                                        const float *wrow, int cb, int s_rt, float x_max,
                                        float (&acc)[DWT_P][V]) {
  constexpr int P = DWT_P, NCOL = (P - 1) * SW + S;
  typedef typename dwt_raw<V>::t raw;
  float wr[S][V];
#pragma unroll
  for (int s = 0; s < S; s++) {
    if (!GEN || s < s_rt) {
      dwt_wload<V>(wrow + s * cb, wr[s]);
    } else {
#pragma unroll
      for (int v = 0; v < V; v++) wr[s][v] = 0.f;
    }
  }
#pragma unroll
  for (int j = 0; j < NCOL; j++) {
    raw u = dwt_raw_zero<V>();
    if (!EDGE || (j >= jlo && j < jhi)) u = __ldg(reinterpret_cast<const raw *>(xb + j * c));
    float xv[V];
    dwt_unpack<V>(u, xv);
    if (CLAMP)
#pragma unroll
      for (int v = 0; v < V; v++) xv[v] = dwt_min_keep_nan(xv[v], x_max);
#pragma unroll
    for (int p = 0; p < P; p++) {
      const int s = j - p * SW; // column j is tap s of output p
      if (s >= 0 && s < S && (!GEN || s < s_rt))
#pragma unroll
        for (int v = 0; v < V; v++) acc[p][v] = fmaf(xv[v], wr[s][v], acc[p][v]);
    }
  }
}

// Strip it of channels c .. c + V - 1: wt is this thread's weight of tap 0 in shared
// memory (tap t at wt[t * cb]).
template <int V, int S, int SW, bool GEN, bool CLAMP>
__device__ __forceinline__ void dwt_strip(const dwt_args &a, const float *wt, int c, int it) {
  constexpr int P = DWT_P, NCOL = (P - 1) * SW + S;
  typedef typename dwt_raw<V>::t raw;
  const int seg = it % a.nseg, t = it / a.nseg;
  const int oh = t % a.oh, n = t / a.oh;
  const int ow0 = seg * P;
  const int ih0 = oh * a.sh - a.ph, iw0 = ow0 * SW - a.pw;
  const int rlo = ih0 < 0 ? -ih0 : 0;
  const int rhi = a.h - ih0 < a.r ? a.h - ih0 : a.r;
  const int jlo = iw0 < 0 ? -iw0 : 0;
  const int jhi = a.w_in - iw0 < NCOL ? a.w_in - iw0 : NCOL;
  float acc[P][V];
#pragma unroll
  for (int p = 0; p < P; p++)
#pragma unroll
    for (int v = 0; v < V; v++) acc[p][v] = 0.f;
  const __half *xn = a.x + (int64_t)n * a.img + c;
  const int rstep = a.s * a.cb;
  const float *wr = wt + rlo * rstep;
  // interior strips (most of them) load without bounds checks
  if (jlo == 0 && jhi == NCOL) {
#pragma unroll 1
    for (int r = rlo; r < rhi; r++, wr += rstep)
      dwt_row<V, S, SW, GEN, CLAMP, false>(xn + ((ih0 + r) * a.wc + iw0 * a.c), a.c, jlo, jhi, wr,
                                           a.cb, a.s, a.x_max, acc);
  } else {
#pragma unroll 1
    for (int r = rlo; r < rhi; r++, wr += rstep)
      dwt_row<V, S, SW, GEN, CLAMP, true>(xn + ((ih0 + r) * a.wc + iw0 * a.c), a.c, jlo, jhi, wr,
                                          a.cb, a.s, a.x_max, acc);
  }
  // Epilogue. Every z of the strip is loaded before the first store: z may be y itself,
  // and this thread is the only one to read or write these pixels.
  float bv[V];
  if (a.bias) {
    dwt_unpack<V>(__ldg(reinterpret_cast<const raw *>(a.bias + c)), bv);
  } else {
#pragma unroll
    for (int v = 0; v < V; v++) bv[v] = 0.f;
  }
  const int64_t yo = ((int64_t)(n * a.oh + oh) * a.ow + ow0) * a.c + c;
  raw zr[P];
#pragma unroll
  for (int p = 0; p < P; p++) {
    zr[p] = dwt_raw_zero<V>();
    if (a.z && ow0 + p < a.ow)
      zr[p] = *reinterpret_cast<const raw *>(a.z + yo + (int64_t)p * a.c);
  }
  // The activation takes the whole strip at once: one switch, its case a contiguous run
  // of code. A switch a pixel (8 copies of every case, twice for the clamp variants) was
  // three quarters of the kernel's 220-240 KB of machine code, and on the H200 (ncu) a
  // third of each warp's cycles went to waiting for instruction fetches.
  float o[P][V];
#pragma unroll
  for (int p = 0; p < P; p++) {
    float zv[V];
    dwt_unpack<V>(zr[p], zv); // zeros without z (and past the row's end)
#pragma unroll
    for (int v = 0; v < V; v++) o[p][v] = acc[p][v] + bv[v] + zv[v];
  }
  conv_act_n<P * V>(a.act, a.alpha, a.beta, &o[0][0]);
#pragma unroll
  for (int p = 0; p < P; p++) {
    if (ow0 + p >= a.ow) break;
    *reinterpret_cast<raw *>(a.y + yo + (int64_t)p * a.c) = dwt_pack<V>(o[p]);
  }
}

// A block's work: the (strip, channel group) pairs q0 + threadIdx.x, + blockDim.x, ...
// below q1, numbered strip-major (pair q: strip q / ncg, group q % ncg), so that a
// warp's lanes are neighbouring channels of one or two neighbouring strips and every
// lane has work.
template <int V, int S, int SW, bool GEN, bool CLAMP>
__device__ __forceinline__ void dwt_pairs(const dwt_args &a, const float *sw, int c0, int ncg,
                                          int q0, int q1) {
  for (int q = q0 + (int)threadIdx.x; q < q1; q += (int)blockDim.x) {
    const int it = q / ncg, g = q - it * ncg;
    dwt_strip<V, S, SW, GEN, CLAMP>(a, sw + g * V, c0 + g * V, it);
  }
}

// grid (blocks per chunk, chunks), block DWT_THREADS; dynamic shared memory: the
// chunk's weights, cb * R * S floats, tap-major. 2 blocks per SM: at most 128
// registers; the run-time windows (GEN: even ones, and odd C), whose predicated taps
// need a few more, 1 (no spills).
template <int V, int S, int SW, bool GEN>
__global__ void __launch_bounds__(DWT_THREADS, GEN ? 1 : 2) dwt_kernel(const dwt_args a) {
  extern __shared__ float4 dwt_smem[]; // float4: 16-byte aligned
  float *sw = reinterpret_cast<float *>(dwt_smem);
  const int rs = a.r * a.s, c0 = blockIdx.y * a.cb;
  // sw[t * cb + cl] = w[(c0 + cl) * rs + t]: consecutive threads write consecutive
  // banks; the strided global reads are the filters' few KB, from L2
  for (int i = threadIdx.x; i < a.cb * rs; i += blockDim.x) {
    const int t = i / a.cb, cl = i - t * a.cb;
    sw[i] = c0 + cl < a.c ? __half2float(a.w[(int64_t)(c0 + cl) * rs + t]) : 0.f;
  }
  __syncthreads();
  // the chunk's channel groups (the last chunk may have fewer), its strips
  const int left = (a.c - c0) / V, ncg = left < a.cb / V ? left : a.cb / V;
  const int first = (int)blockIdx.x * a.per_block;
  const int last = a.items - first < a.per_block ? a.items : first + a.per_block;
  if (isinf(a.x_max))
    dwt_pairs<V, S, SW, GEN, false>(a, sw, c0, ncg, first * ncg, last * ncg);
  else
    dwt_pairs<V, S, SW, GEN, true>(a, sw, c0, ncg, first * ncg, last * ncg);
}

// The variants of one V, in the order dwt_variant (conv_depthwise_tiled.cu) numbers
// them: S = 3, 5, 7, then the other widths up to 6 (GEN: 1, 2, 4, 6) as a run-time
// size, for horizontal stride 1, then 2.
#define DWT_VARIANTS(V_)                                                                   \
  dwt_kernel<V_, 3, 1, false>, dwt_kernel<V_, 5, 1, false>, dwt_kernel<V_, 7, 1, false>,     \
      dwt_kernel<V_, 6, 1, true>, dwt_kernel<V_, 3, 2, false>, dwt_kernel<V_, 5, 2, false>, \
      dwt_kernel<V_, 7, 2, false>, dwt_kernel<V_, 6, 2, true>

// Defined by the variant files: V = 4 (8 variants), V = 2 (8) then V = 1 (GEN only:
// stride 1, 2).
extern const dwt_fn dwt_fns_v4[8];
extern const dwt_fn dwt_fns_v21[10];
