// pool.cu: MaxPool, AveragePool (one thread per output, window clipped to the input
// once per output, as ops/pool.c) and LRN (one thread per element). Index math in
// 32 bits when the tensors are small enough, else 64.
//
// Channels-last (N x H x W x C) 2-D MaxPool / AveragePool, as the to-channels-last
// pass writes them: one thread per output pixel and group of V adjacent channels, the
// channel group varying fastest, so the threads of a warp read whole pixels with
// vector loads of V elements (16 bytes: 8 halfs, 4 floats, when C and the pointers
// allow; else 8, 4 or 2 bytes, or one element). Accumulation and the window / divisor
// arithmetic are the NCHW kernels', tap for tap, so the results are the same bits.
#include "k_reduce.cuh"
#include "pool.h"

namespace {

// Taps k in [lo, hi) with start + k*d inside [0, n) (ops/conv_util.h's win_range).
template <typename I>
__device__ __forceinline__ void p_range(I start, I d, I n, I kmax, I &lo, I &hi) {
  I l = start < 0 ? (-start + d - 1) / d : 0;
  I h = start >= n ? 0 : (n - start + d - 1) / d;
  if (h > kmax) h = kmax;
  if (l > h) l = h;
  lo = l;
  hi = h;
}

// Plane index and window starts of output element i.
template <typename I>
struct p_pos {
  I p, d0, h0, w0;
};
template <typename I>
__device__ __forceinline__ p_pos<I> p_locate(const k_pool_geom &g, I i) {
  const I OD = (I)g.out[0], OH = (I)g.out[1], OW = (I)g.out[2];
  p_pos<I> r;
  I t = i;
  const I ow = t % OW;
  t /= OW;
  const I oh = t % OH;
  t /= OH;
  const I od = t % OD;
  r.p = t / OD;
  r.d0 = od * (I)g.s[0] - (I)g.pb[0];
  r.h0 = oh * (I)g.s[1] - (I)g.pb[1];
  r.w0 = ow * (I)g.s[2] - (I)g.pb[2];
  return r;
}

template <typename T, typename A, typename I>
__global__ void maxpool_kernel(k_pool_geom g, I total, const T *__restrict__ x, T *__restrict__ y,
                               int64_t *__restrict__ idx, bool col_major, A lowest) {
  const I ID = (I)g.in[0], IH = (I)g.in[1], IW = (I)g.in[2];
  const I in_sz = ID * IH * IW;
  const I dd = (I)g.d[0], dh = (I)g.d[1], dw = (I)g.d[2];
  for (I i = (I)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += (I)gridDim.x * blockDim.x) {
    const p_pos<I> q = p_locate<I>(g, i);
    I dlo, dhi, hlo, hhi, wlo, whi;
    p_range<I>(q.d0, dd, ID, (I)g.k[0], dlo, dhi);
    p_range<I>(q.h0, dh, IH, (I)g.k[1], hlo, hhi);
    p_range<I>(q.w0, dw, IW, (I)g.k[2], wlo, whi);
    const T *xp = x + q.p * in_sz;
    A best = lowest;
    I bi = -1;
    for (I kd = dlo; kd < dhi; kd++) {
      const I id = q.d0 + kd * dd;
      for (I kh = hlo; kh < hhi; kh++) {
        const I ih = q.h0 + kh * dh;
        const T *xr = xp + (id * IH + ih) * IW;
        for (I kw = wlo; kw < whi; kw++) {
          const I iw = q.w0 + kw * dw;
          const A v = k_load_as<A>(xr[iw]);
          if (bi < 0 || K_NAN_BEATS_MAX(v, best)) { // a NaN wins and stays, as on the CPU
            best = v;
            bi = col_major ? id + ih * ID + iw * ID * IH : (id * IH + ih) * IW + iw;
          }
        }
      }
    }
    y[i] = k_store_as<T, A>(best);
    if (idx) idx[i] = bi < 0 ? (int64_t)-1 : (int64_t)q.p * in_sz + bi;
  }
}

template <typename T, typename A, typename I>
__global__ void avgpool_kernel(k_pool_geom g, I total, const T *__restrict__ x, T *__restrict__ y,
                               bool include_pad) {
  const I ID = (I)g.in[0], IH = (I)g.in[1], IW = (I)g.in[2];
  const I in_sz = ID * IH * IW;
  const I dd = (I)g.d[0], dh = (I)g.d[1], dw = (I)g.d[2];
  const I kd_ = (I)g.k[0], kh_ = (I)g.k[1], kw_ = (I)g.k[2];
  for (I i = (I)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += (I)gridDim.x * blockDim.x) {
    const p_pos<I> q = p_locate<I>(g, i);
    I dlo, dhi, hlo, hhi, wlo, whi;
    p_range<I>(q.d0, dd, ID, kd_, dlo, dhi);
    p_range<I>(q.h0, dh, IH, kh_, hlo, hhi);
    p_range<I>(q.w0, dw, IW, kw_, wlo, whi);
    const T *xp = x + q.p * in_sz;
    A sum = 0;
    for (I kd = dlo; kd < dhi; kd++) {
      const I id = q.d0 + kd * dd;
      for (I kh = hlo; kh < hhi; kh++) {
        const T *xr = xp + (id * IH + q.h0 + kh * dh) * IW + q.w0;
        for (I kw = wlo; kw < whi; kw++) sum += k_load_as<A>(xr[kw * dw]);
      }
    }
    I cnt;
    if (include_pad) {
      I a0, a1, b0, b1, c0, c1;
      p_range<I>(q.d0 + (I)g.pb[0], dd, ID + (I)g.pb[0] + (I)g.pe[0], kd_, a0, a1);
      p_range<I>(q.h0 + (I)g.pb[1], dh, IH + (I)g.pb[1] + (I)g.pe[1], kh_, b0, b1);
      p_range<I>(q.w0 + (I)g.pb[2], dw, IW + (I)g.pb[2] + (I)g.pe[2], kw_, c0, c1);
      cnt = (a1 - a0) * (b1 - b0) * (c1 - c0);
    } else {
      cnt = (dhi - dlo) * (hhi - hlo) * (whi - wlo);
    }
    y[i] = k_store_as<T, A>(cnt > 0 ? sum / (A)cnt : (A)0);
  }
}

template <typename T, typename A>
__global__ void lrn_kernel(const T *__restrict__ x, T *__restrict__ y, int64_t n, int64_t C,
                           int64_t S, int64_t before, int64_t after, A scale, A beta, A bias) {
  K_GRID_STRIDE(i, n) {
    const int64_t t = i / S, s = i - t * S;
    const int64_t c = t % C, b = t / C;
    const int64_t lo = c - before < 0 ? 0 : c - before;
    const int64_t hi = c + after >= C ? C - 1 : c + after;
    A sq = 0;
    for (int64_t k = lo; k <= hi; k++) {
      const A v = k_load_as<A>(x[(b * C + k) * S + s]);
      sq += v * v;
    }
    const A v = k_load_as<A>(x[i]);
    y[i] = k_store_as<T, A>(v / k_pow(bias + scale * sq, beta));
  }
}

// 32-bit indices when every index (with the grid stride added) stays below 2^31.
bool p_small(int64_t a, int64_t b) {
  const int64_t lim = (int64_t)1 << 30;
  return a < lim && b < lim;
}

template <typename T, typename A>
cudaError_t maxpool_go(const k_pool_geom *g, int64_t planes, const void *x, void *y, int64_t *idx,
                       bool cm, A lowest, cudaStream_t s) {
  const int64_t total = planes * g->out[0] * g->out[1] * g->out[2];
  const int64_t in_total = planes * g->in[0] * g->in[1] * g->in[2];
  if (total <= 0) return cudaSuccess;
  const unsigned b = k_blocks(total, 256);
  if (p_small(total, in_total))
    maxpool_kernel<T, A, int>
        <<<b, 256, 0, s>>>(*g, (int)total, (const T *)x, (T *)y, idx, cm, lowest);
  else
    maxpool_kernel<T, A, int64_t>
        <<<b, 256, 0, s>>>(*g, total, (const T *)x, (T *)y, idx, cm, lowest);
  return cudaGetLastError();
}

template <typename T, typename A>
cudaError_t avgpool_go(const k_pool_geom *g, int64_t planes, const void *x, void *y, bool inc,
                       cudaStream_t s) {
  const int64_t total = planes * g->out[0] * g->out[1] * g->out[2];
  const int64_t in_total = planes * g->in[0] * g->in[1] * g->in[2];
  if (total <= 0) return cudaSuccess;
  const unsigned b = k_blocks(total, 256);
  if (p_small(total, in_total + g->pb[0] + g->pb[1] + g->pb[2] + g->pe[0] + g->pe[1] + g->pe[2]))
    avgpool_kernel<T, A, int><<<b, 256, 0, s>>>(*g, (int)total, (const T *)x, (T *)y, inc);
  else
    avgpool_kernel<T, A, int64_t><<<b, 256, 0, s>>>(*g, total, (const T *)x, (T *)y, inc);
  return cudaGetLastError();
}

// V elements of T as one aligned load or store.
template <typename T, int V>
struct alignas(sizeof(T) * V) p_vec {
  T v[V];
};

// Output i (pixel (b, oh, ow), channels [c0, c0 + V)) of a channels-last 2-D pool;
// the geometry's dim 0 is the size-1 dummy. MAX: MaxPool (the first maximum or NaN, the
// lowest value for a window with no input), else AveragePool.
template <bool MAX, typename T, typename A, int V, typename I>
__global__ void pool_nhwc_kernel(k_pool_geom g, I total, I cv, const T *__restrict__ x,
                                 T *__restrict__ y, bool include_pad, A lowest) {
  const I IH = (I)g.in[1], IW = (I)g.in[2], OH = (I)g.out[1], OW = (I)g.out[2];
  const I sh = (I)g.s[1], sw = (I)g.s[2], dh = (I)g.d[1], dw = (I)g.d[2];
  const I kh_ = (I)g.k[1], kw_ = (I)g.k[2];
  const I C = cv * V;
  for (I i = (I)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += (I)gridDim.x * blockDim.x) {
    I t = i / cv;
    const I c0 = (i - t * cv) * V;
    const I ow = t % OW;
    t /= OW;
    const I oh = t % OH;
    const I b = t / OH;
    const I h0 = oh * sh - (I)g.pb[1], w0 = ow * sw - (I)g.pb[2];
    I hlo, hhi, wlo, whi;
    p_range<I>(h0, dh, IH, kh_, hlo, hhi);
    p_range<I>(w0, dw, IW, kw_, wlo, whi);
    const T *xb = x + b * IH * IW * C + c0;
    A acc[V];
#pragma unroll
    for (int v = 0; v < V; v++) acc[v] = MAX ? lowest : (A)0;
    bool first = true;
    for (I kh = hlo; kh < hhi; kh++) {
      const T *xr = xb + (h0 + kh * dh) * IW * C;
      for (I kw = wlo; kw < whi; kw++) {
        const p_vec<T, V> u = *reinterpret_cast<const p_vec<T, V> *>(xr + (w0 + kw * dw) * C);
#pragma unroll
        for (int v = 0; v < V; v++) {
          const A a = k_load_as<A>(u.v[v]);
          if constexpr (MAX) {
            if (first || K_NAN_BEATS_MAX(a, acc[v])) acc[v] = a; // NaN kept
          } else {
            acc[v] += a;
          }
        }
        first = false;
      }
    }
    p_vec<T, V> o;
    if constexpr (MAX) {
#pragma unroll
      for (int v = 0; v < V; v++) o.v[v] = k_store_as<T, A>(acc[v]);
    } else {
      I cnt;
      if (include_pad) {
        I b0, b1, c0_, c1;
        p_range<I>(h0 + (I)g.pb[1], dh, IH + (I)g.pb[1] + (I)g.pe[1], kh_, b0, b1);
        p_range<I>(w0 + (I)g.pb[2], dw, IW + (I)g.pb[2] + (I)g.pe[2], kw_, c0_, c1);
        cnt = (b1 - b0) * (c1 - c0_);
      } else {
        cnt = (hhi - hlo) * (whi - wlo);
      }
#pragma unroll
      for (int v = 0; v < V; v++) o.v[v] = k_store_as<T, A>(cnt > 0 ? acc[v] / (A)cnt : (A)0);
    }
    *reinterpret_cast<p_vec<T, V> *>(y + (int64_t)i * V) = o;
  }
}

template <bool MAX, typename T, typename A, int V>
cudaError_t pool_nhwc_launch(const k_pool_geom *g, int64_t n, int64_t c, const void *x, void *y,
                             bool inc, A lowest, cudaStream_t s) {
  const int64_t cv = c / V;
  const int64_t total = n * g->out[1] * g->out[2] * cv;
  const int64_t in_total = n * g->in[1] * g->in[2] * c;
  const unsigned b = k_blocks(total, 256);
  if (p_small(total * V, in_total + (g->pb[1] + g->pe[1] + g->pb[2] + g->pe[2]) * c))
    pool_nhwc_kernel<MAX, T, A, V, int>
        <<<b, 256, 0, s>>>(*g, (int)total, (int)cv, (const T *)x, (T *)y, inc, lowest);
  else
    pool_nhwc_kernel<MAX, T, A, V, int64_t>
        <<<b, 256, 0, s>>>(*g, total, cv, (const T *)x, (T *)y, inc, lowest);
  return cudaGetLastError();
}

// The widest V (up to 16 bytes) that divides C and keeps x and y aligned.
template <bool MAX, typename T, typename A>
cudaError_t pool_nhwc_go(const k_pool_geom *g, int64_t n, int64_t c, const void *x, void *y,
                         bool inc, A lowest, cudaStream_t s) {
  if (n <= 0 || c <= 0 || g->out[1] <= 0 || g->out[2] <= 0) return cudaSuccess;
  if (g->in[0] != 1 || g->out[0] != 1 || g->k[0] != 1) return cudaErrorInvalidValue;
  constexpr int VMAX = (int)(16 / sizeof(T));
  const uintptr_t addr = (uintptr_t)x | (uintptr_t)y;
  int v = VMAX;
  while (v > 1 && (c % v != 0 || addr % ((uintptr_t)v * sizeof(T)) != 0)) v /= 2;
  if constexpr (VMAX >= 8) {
    if (v == 8) return pool_nhwc_launch<MAX, T, A, 8>(g, n, c, x, y, inc, lowest, s);
  }
  if constexpr (VMAX >= 4) {
    if (v == 4) return pool_nhwc_launch<MAX, T, A, 4>(g, n, c, x, y, inc, lowest, s);
  }
  if (v == 2) return pool_nhwc_launch<MAX, T, A, 2>(g, n, c, x, y, inc, lowest, s);
  return pool_nhwc_launch<MAX, T, A, 1>(g, n, c, x, y, inc, lowest, s);
}

template <typename T, typename A>
cudaError_t lrn_go(int64_t n, int64_t c, int64_t s, int64_t size, float alpha, float beta,
                   float bias, const void *x, void *y, cudaStream_t st) {
  const int64_t total = n * c * s;
  if (total <= 0) return cudaSuccess;
  const int64_t before = (size - 1) / 2, after = size - 1 - before;
  const A scale = (A)alpha / (A)size;
  lrn_kernel<T, A><<<k_blocks(total, 256), 256, 0, st>>>((const T *)x, (T *)y, total, c, s, before,
                                                         after, scale, (A)beta, (A)bias);
  return cudaGetLastError();
}

}  // namespace

extern "C" cudaError_t k_maxpool(int dtype, const k_pool_geom *g, int64_t planes, const void *x,
                                 void *y, int64_t *idx, int col_major, cudaStream_t stream) {
  const bool cm = col_major != 0;
  switch (dtype) {
    case K_F32: return maxpool_go<float, float>(g, planes, x, y, idx, cm, -INFINITY, stream);
    case K_F16: return maxpool_go<__half, float>(g, planes, x, y, idx, cm, -INFINITY, stream);
    case K_BF16:
      return maxpool_go<__nv_bfloat16, float>(g, planes, x, y, idx, cm, -INFINITY, stream);
    case K_F64: return maxpool_go<double, double>(g, planes, x, y, idx, cm, -INFINITY, stream);
    case K_I8: return maxpool_go<int8_t, int>(g, planes, x, y, idx, cm, INT8_MIN, stream);
    case K_U8: return maxpool_go<uint8_t, int>(g, planes, x, y, idx, cm, 0, stream);
    default: return cudaErrorInvalidValue;
  }
}

extern "C" cudaError_t k_avgpool(int dtype, const k_pool_geom *g, int64_t planes, const void *x,
                                 void *y, int include_pad, cudaStream_t stream) {
  const bool inc = include_pad != 0;
  switch (dtype) {
    case K_F32: return avgpool_go<float, float>(g, planes, x, y, inc, stream);
    case K_F16: return avgpool_go<__half, float>(g, planes, x, y, inc, stream);
    case K_BF16: return avgpool_go<__nv_bfloat16, float>(g, planes, x, y, inc, stream);
    case K_F64: return avgpool_go<double, double>(g, planes, x, y, inc, stream);
    default: return cudaErrorInvalidValue;
  }
}

extern "C" cudaError_t k_maxpool_nhwc(int dtype, const k_pool_geom *g, int64_t n, int64_t c,
                                      const void *x, void *y, cudaStream_t stream) {
  switch (dtype) {
    case K_F32: return pool_nhwc_go<true, float, float>(g, n, c, x, y, false, -INFINITY, stream);
    case K_F16: return pool_nhwc_go<true, __half, float>(g, n, c, x, y, false, -INFINITY, stream);
    case K_BF16:
      return pool_nhwc_go<true, __nv_bfloat16, float>(g, n, c, x, y, false, -INFINITY, stream);
    case K_F64:
      return pool_nhwc_go<true, double, double>(g, n, c, x, y, false, -INFINITY, stream);
    default: return cudaErrorInvalidValue;
  }
}

extern "C" cudaError_t k_avgpool_nhwc(int dtype, const k_pool_geom *g, int64_t n, int64_t c,
                                      const void *x, void *y, int include_pad,
                                      cudaStream_t stream) {
  const bool inc = include_pad != 0;
  switch (dtype) {
    case K_F32: return pool_nhwc_go<false, float, float>(g, n, c, x, y, inc, 0.0f, stream);
    case K_F16: return pool_nhwc_go<false, __half, float>(g, n, c, x, y, inc, 0.0f, stream);
    case K_BF16:
      return pool_nhwc_go<false, __nv_bfloat16, float>(g, n, c, x, y, inc, 0.0f, stream);
    case K_F64: return pool_nhwc_go<false, double, double>(g, n, c, x, y, inc, 0.0, stream);
    default: return cudaErrorInvalidValue;
  }
}

extern "C" cudaError_t k_lrn(int dtype, int64_t n, int64_t c, int64_t s, int64_t size, float alpha,
                             float beta, float bias, const void *x, void *y, cudaStream_t stream) {
  if (size < 1) return cudaErrorInvalidValue;
  switch (dtype) {
    case K_F32: return lrn_go<float, float>(n, c, s, size, alpha, beta, bias, x, y, stream);
    case K_F16: return lrn_go<__half, float>(n, c, s, size, alpha, beta, bias, x, y, stream);
    case K_BF16:
      return lrn_go<__nv_bfloat16, float>(n, c, s, size, alpha, beta, bias, x, y, stream);
    case K_F64: return lrn_go<double, double>(n, c, s, size, alpha, beta, bias, x, y, stream);
    default: return cudaErrorInvalidValue;
  }
}
