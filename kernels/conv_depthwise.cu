// conv_depthwise.cu: depthwise convolution of fp16 channels-last data with the conv
// epilogue fused, y = act(conv(x, w) + bias + z), accumulated in fp32.
//
// The op is memory-bound, so the kernel aims at one DRAM read of x and one write of y,
// the window's reuse coming from registers, L1 and L2:
// - each thread owns V consecutive channels (8 = one 16-byte load per pixel when
//   C % 8 == 0 and the pointers are 16-byte aligned; else 2 or 1) of a strip of
//   DW_PX consecutive output pixels along W, so neighbouring threads read
//   neighbouring channels (coalesced) and the strip reuses the window's columns in
//   registers;
// - a block is blockDim.x channel groups (one chunk of at most 256 channels) by
//   blockDim.y strips of consecutive output rows, which share R - 1 input rows
//   through L1; the blocks of a chunk walk the strips grid-stride;
// - the chunk's weights sit in shared memory as fp32, tap-major ([R*S][chunk]),
//   loaded once per block; a thread takes its V weights of a tap as one or two
//   vector loads;
// - 3x3 and 5x5 windows with horizontal stride 1 or 2 (MobileNet, EfficientNet,
//   MnasNet) are unrolled at compile time: each input column is loaded once per
//   strip row and scattered into the outputs it touches. Other windows (up to 7x7)
//   and the half2 / scalar paths loop at run time.
#include <limits.h>

#include "conv_depthwise.h"
#include "conv_act.cuh"
#include "k_common.cuh"

#define DW_PX 4        // output pixels per thread along W
#define DW_THREADS 256 // threads per block (at most)
#define DW_MAX_CHUNK 256
#define DW_SMEM_FLOATS 12288 // 48 KiB of fp32 weights: no opt-in needed

struct dw_args {
  const __half *x, *w, *bias, *z;
  __half *y;
  int n, c, in_h, in_w, r, s, oh, ow, ph, pw, sh, sw;
  int act;
  float alpha, beta;
  bool clamp_x; // X read as min(X, x_max)
  float x_max;
  int nseg;   // strips per output row: ceil(ow / DW_PX)
  int strips; // n * oh * nseg
  int cb;     // channels of one chunk (blockDim.x * V)
};

// V halves at p into floats; NC: through the read-only cache (never for z, which
// may be y itself).
template <int V, bool NC> __device__ __forceinline__ void dw_load(const __half *p, float *f) {
  if constexpr (V == 8) {
    const uint4 *q = reinterpret_cast<const uint4 *>(p);
    k_half8_unpack(NC ? __ldg(q) : *q, f);
  } else if constexpr (V == 2) {
    const __half2 *q = reinterpret_cast<const __half2 *>(p);
    const float2 t = __half22float2(NC ? __ldg(q) : *q);
    f[0] = t.x;
    f[1] = t.y;
  } else {
    f[0] = __half2float(NC ? __ldg(p) : *p);
  }
}

template <int V> __device__ __forceinline__ void dw_store(__half *p, const float *f) {
  if constexpr (V == 8) {
    *reinterpret_cast<uint4 *>(p) = k_half8_pack(f);
  } else if constexpr (V == 2) {
    *reinterpret_cast<__half2 *>(p) = __floats2half2_rn(f[0], f[1]);
  } else {
    p[0] = __float2half_rn(f[0]);
  }
}

// V fp32 weights from shared memory (p is 4V-byte aligned: see dw_fill_weights).
template <int V> __device__ __forceinline__ void dw_wload(const float *p, float *f) {
  if constexpr (V == 8) {
    const float4 a = reinterpret_cast<const float4 *>(p)[0];
    const float4 b = reinterpret_cast<const float4 *>(p)[1];
    f[0] = a.x; f[1] = a.y; f[2] = a.z; f[3] = a.w;
    f[4] = b.x; f[5] = b.y; f[6] = b.z; f[7] = b.w;
  } else if constexpr (V == 2) {
    const float2 a = reinterpret_cast<const float2 *>(p)[0];
    f[0] = a.x;
    f[1] = a.y;
  } else {
    f[0] = p[0];
  }
}

// Shared weights of chunk `chunk`: sw[t * cb + cl] = w[(c0 + cl) * rs + t], zero past
// C. The global reads are contiguous (the chunk's filters are).
__device__ __forceinline__ void dw_fill_weights(const dw_args &a, float *sw, int chunk, int tid,
                                                int nthreads) {
  const int rs = a.r * a.s, c0 = chunk * a.cb;
  const int left = a.c - c0;
  const int valid = (left < a.cb ? left : a.cb) * rs;
  const __half *src = a.w + (int64_t)c0 * rs;
  for (int i = tid; i < a.cb * rs; i += nthreads) {
    const int cl = i / rs, t = i - cl * rs;
    sw[t * a.cb + cl] = i < valid ? __half2float(src[i]) : 0.f;
  }
}

// One thread's work: channels chunk * cb + tx * V .. + V - 1 of the strips
// bx * bdy + ty, + gdx * bdy, ... R, S, SW > 0: that window and horizontal stride,
// unrolled; 0: the run-time a.r, a.s, a.sw.
template <int V, int R, int S, int SW>
__device__ __forceinline__ void dw_strips(const dw_args &a, const float *sw, int chunk, int tx,
                                          int ty, int bx, int bdy, int gdx) {
  const int c = chunk * a.cb + tx * V;
  if (c >= a.c) return; // C % V == 0: the whole vector is inside
  const float *wt = sw + tx * V; // tap t's weights at wt[t * cb]
  float bv[V];
  if (a.bias)
    dw_load<V, true>(a.bias + c, bv);
  else
#pragma unroll
    for (int v = 0; v < V; v++) bv[v] = 0.f;
  const int64_t row = (int64_t)a.in_w * a.c; // elements per input row
  for (int64_t st = (int64_t)bx * bdy + ty; st < a.strips; st += (int64_t)gdx * bdy) {
    // strips run output row fastest, so a block's strips are vertical neighbours
    const unsigned q = (unsigned)st;
    const int oh = (int)(q % (unsigned)a.oh);
    const unsigned q2 = q / (unsigned)a.oh;
    const int seg = (int)(q2 % (unsigned)a.nseg);
    const int n = (int)(q2 / (unsigned)a.nseg);
    const int ow0 = seg * DW_PX;
    float acc[DW_PX][V];
#pragma unroll
    for (int p = 0; p < DW_PX; p++)
#pragma unroll
      for (int v = 0; v < V; v++) acc[p][v] = 0.f;
    const int ih0 = oh * a.sh - a.ph;
    const __half *xn = a.x + (int64_t)n * a.in_h * row + c;
    if constexpr (R > 0) {
      constexpr int NCOL = (DW_PX - 1) * SW + S; // input columns under the strip
      const int iw0 = ow0 * SW - a.pw;
#pragma unroll
      for (int r = 0; r < R; r++) {
        const int ih = ih0 + r;
        if ((unsigned)ih >= (unsigned)a.in_h) continue;
        const __half *xr = xn + ih * row;
        float wr[S][V];
#pragma unroll
        for (int s = 0; s < S; s++) dw_wload<V>(wt + (r * S + s) * a.cb, wr[s]);
#pragma unroll
        for (int j = 0; j < NCOL; j++) {
          const int iw = iw0 + j;
          if ((unsigned)iw >= (unsigned)a.in_w) continue;
          float xv[V];
          dw_load<V, true>(xr + (int64_t)iw * a.c, xv);
          if (a.clamp_x)
#pragma unroll
            for (int v = 0; v < V; v++) xv[v] = xv[v] > a.x_max ? a.x_max : xv[v]; // NaN kept
          // column j is tap s = j - p * SW of output p
#pragma unroll
          for (int p = 0; p < DW_PX; p++) {
            const int s = j - p * SW;
            if (s >= 0 && s < S)
#pragma unroll
              for (int v = 0; v < V; v++) acc[p][v] = fmaf(xv[v], wr[s][v], acc[p][v]);
          }
        }
      }
    } else {
      const int iw0 = ow0 * a.sw - a.pw;
      for (int r = 0; r < a.r; r++) {
        const int ih = ih0 + r;
        if ((unsigned)ih >= (unsigned)a.in_h) continue;
        const __half *xr = xn + ih * row;
        for (int s = 0; s < a.s; s++) {
          float wv[V];
          dw_wload<V>(wt + (r * a.s + s) * a.cb, wv);
#pragma unroll
          for (int p = 0; p < DW_PX; p++) {
            const int iw = iw0 + p * a.sw + s;
            if ((unsigned)iw >= (unsigned)a.in_w) continue;
            float xv[V];
            dw_load<V, true>(xr + (int64_t)iw * a.c, xv);
            if (a.clamp_x)
#pragma unroll
              for (int v = 0; v < V; v++) xv[v] = xv[v] > a.x_max ? a.x_max : xv[v]; // NaN kept
#pragma unroll
            for (int v = 0; v < V; v++) acc[p][v] = fmaf(xv[v], wv[v], acc[p][v]);
          }
        }
      }
    }
    const int64_t yo = (((int64_t)n * a.oh + oh) * a.ow + ow0) * a.c + c;
#pragma unroll
    for (int p = 0; p < DW_PX; p++) {
      if (ow0 + p >= a.ow) break;
      float o[V];
#pragma unroll
      for (int v = 0; v < V; v++) o[v] = acc[p][v] + bv[v];
      if (a.z) {
        float zv[V];
        dw_load<V, false>(a.z + yo + (int64_t)p * a.c, zv);
#pragma unroll
        for (int v = 0; v < V; v++) o[v] += zv[v];
      }
      conv_act_n<V>(a.act, a.alpha, a.beta, o);
      dw_store<V>(a.y + yo + (int64_t)p * a.c, o);
    }
  }
}

// grid (blocks per chunk, chunks), block (channel groups, strips); dynamic shared
// memory: the chunk's weights, cb * R * S floats.
template <int V, int R, int S, int SW>
__global__ void __launch_bounds__(DW_THREADS, 2) dw_kernel(const dw_args a) {
  extern __shared__ float4 dw_smem[]; // float4: 16-byte aligned
  float *sw = reinterpret_cast<float *>(dw_smem);
  dw_fill_weights(a, sw, blockIdx.y, threadIdx.y * blockDim.x + threadIdx.x,
                  blockDim.x * blockDim.y);
  __syncthreads();
  dw_strips<V, R, S, SW>(a, sw, blockIdx.y, threadIdx.x, threadIdx.y, blockIdx.x, blockDim.y,
                         gridDim.x);
}

// The launch shape: threads per chunk (tx) and strips per block (ty), chunks, blocks
// per chunk; false when g is out of range.
struct dw_plan {
  int v, tx, ty, chunks, nseg, strips;
  unsigned bpc;
  size_t smem;
};

static bool dw_make_plan(const k_dw_geom *g, int v, int sm_count, dw_plan *p) {
  if (g->n < 1 || g->c < 1 || g->h < 1 || g->w < 1 || g->r < 1 || g->r > 7 || g->s < 1 ||
      g->s > 7 || g->out_h < 1 || g->out_w < 1 || g->pad_h < 0 || g->pad_w < 0 ||
      g->stride_h < 1 || g->stride_w < 1 || g->c > (1 << 24))
    return false;
  int64_t eh = (int64_t)g->h + 2 * (int64_t)g->pad_h - g->r;
  int64_t ew = (int64_t)g->w + 2 * (int64_t)g->pad_w - g->s;
  if (eh < 0 || ew < 0 || eh / g->stride_h + 1 != g->out_h || ew / g->stride_w + 1 != g->out_w)
    return false;
  // in-kernel int arithmetic: n * h, oh * sh + r, ow * sw + the strip's columns
  if ((int64_t)g->n * g->h > INT_MAX || (int64_t)g->out_h * g->stride_h + g->r > INT_MAX ||
      ((int64_t)g->out_w + DW_PX) * g->stride_w + g->s > INT_MAX)
    return false;
  int nseg = (g->out_w + DW_PX - 1) / DW_PX;
  int64_t strips = (int64_t)g->n * g->out_h * nseg;
  if (strips > INT_MAX) return false;
  int rs = g->r * g->s;
  int cb_max = DW_SMEM_FLOATS / rs < DW_MAX_CHUNK ? DW_SMEM_FLOATS / rs : DW_MAX_CHUNK;
  int tx_max = cb_max / v; // >= 250 / 8 for a 7x7 window
  int cg = g->c / v;
  int k = (cg + tx_max - 1) / tx_max; // chunks, then balanced
  p->v = v;
  p->tx = (cg + k - 1) / k;
  p->chunks = (cg + p->tx - 1) / p->tx;
  if (p->chunks > 65535) return false;
  p->ty = DW_THREADS / p->tx > 1 ? DW_THREADS / p->tx : 1;
  p->nseg = nseg;
  p->strips = (int)strips;
  // a few waves of resident blocks; each block loops over its strips
  int64_t need = (strips + p->ty - 1) / p->ty;
  int64_t cap = ((int64_t)(sm_count > 0 ? sm_count : 1) * 8 + p->chunks - 1) / p->chunks;
  p->bpc = (unsigned)(need < cap ? need : cap);
  p->smem = (size_t)p->tx * v * rs * sizeof(float);
  return true;
}

extern "C" int k_conv_depthwise_supported(const k_dw_geom *g) {
  dw_plan p; // the scalar path has the most chunks; the others take what it takes
  return dw_make_plan(g, 1, 1, &p);
}

extern "C" cudaError_t k_conv_depthwise(const k_dw_geom *g, const void *x, const void *w,
                                        const void *bias, const void *z, void *y, int act,
                                        float alpha, float beta, float x_max, int sm_count,
                                        cudaStream_t s) {
  uintptr_t al = (uintptr_t)x | (uintptr_t)y | (uintptr_t)bias | (uintptr_t)z;
  int v = g->c % 8 == 0 && al % 16 == 0 ? 8 : g->c % 2 == 0 && al % 4 == 0 ? 2 : 1;
  if (sm_count <= 0) {
    int dev = 0;
    cudaError_t e = cudaGetDevice(&dev);
    if (e == cudaSuccess)
      e = cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, dev);
    if (e != cudaSuccess) return e;
  }
  dw_plan p;
  if (!dw_make_plan(g, v, sm_count, &p)) return cudaErrorInvalidValue;
  dw_args a;
  a.x = (const __half *)x;
  a.w = (const __half *)w;
  a.bias = (const __half *)bias;
  a.z = (const __half *)z;
  a.y = (__half *)y;
  a.n = g->n;
  a.c = g->c;
  a.in_h = g->h;
  a.in_w = g->w;
  a.r = g->r;
  a.s = g->s;
  a.oh = g->out_h;
  a.ow = g->out_w;
  a.ph = g->pad_h;
  a.pw = g->pad_w;
  a.sh = g->stride_h;
  a.sw = g->stride_w;
  a.act = act;
  a.alpha = alpha;
  a.beta = beta;
  a.clamp_x = !isinf(x_max);
  a.x_max = x_max;
  a.nseg = p.nseg;
  a.strips = p.strips;
  a.cb = p.tx * v;
  dim3 grid(p.bpc, (unsigned)p.chunks), block((unsigned)p.tx, (unsigned)p.ty);
#define DW_GO(V_, R_, S_, SW_) dw_kernel<V_, R_, S_, SW_><<<grid, block, p.smem, s>>>(a)
  int r = g->r, k = g->s, sw = g->stride_w;
  if (v == 8) {
    if (r == 3 && k == 3 && sw == 1)
      DW_GO(8, 3, 3, 1);
    else if (r == 3 && k == 3 && sw == 2)
      DW_GO(8, 3, 3, 2);
    else if (r == 5 && k == 5 && sw == 1)
      DW_GO(8, 5, 5, 1);
    else if (r == 5 && k == 5 && sw == 2)
      DW_GO(8, 5, 5, 2);
    else
      DW_GO(8, 0, 0, 0);
  } else if (v == 2) {
    DW_GO(2, 0, 0, 0);
  } else {
    DW_GO(1, 0, 0, 0);
  }
#undef DW_GO
  return cudaGetLastError();
}
