// norm.cu: BatchNormalization as a per-channel affine map (one thread per element, or
// rows of channels for channels-last data),
// and row normalizations (one warp per row up to 1024 elements, else one block per
// row) for Instance/Group/Layer/RMS normalization.
#include <type_traits>

#include "k_reduce.cuh"
#include "k_rows.cuh"
#include "norm.h"

namespace {

template <typename P>
__global__ void bn_params_kernel(int64_t c, int gdt, const void *g, int bdt, const void *b, int mdt,
                                 const void *m, int vdt, const void *v, double eps, P *scale,
                                 P *shift) {
  K_GRID_STRIDE(i, c) {
    const double a = k_load_any_d(gdt, g, i) / sqrt(k_load_any_d(vdt, v, i) + eps);
    scale[i] = (P)a;
    shift[i] = (P)(k_load_any_d(bdt, b, i) - k_load_any_d(mdt, m, i) * a);
  }
}

// y = x * scale + shift, then Relu when asked: the one expression both BatchNorm paths
// use, so they give the same bits. Relu acts on the stored value as the Relu op would
// (x < 0 ? 0 : x: NaN and -0 pass), so BN then Relu fused gives what the two ops give.
template <typename T, typename P>
__device__ __forceinline__ T bn_value(P x, P scale, P shift, bool relu) {
  T o = k_store_as<T, P>(x * scale + shift);
  if (relu && k_load_as<P>(o) < (P)0) o = k_store_as<T, P>((P)0);
  return o;
}

template <typename T, typename P, typename I>
__global__ void bn_apply_kernel(const T *__restrict__ x, T *__restrict__ y, I n, I c, I s,
                                const P *__restrict__ scale, const P *__restrict__ shift,
                                bool relu) {
  for (I i = (I)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (I)gridDim.x * blockDim.x) {
    const I ch = (i / s) % c;
    y[i] = bn_value<T, P>(k_load_as<P>(x[i]), scale[ch], shift[ch], relu);
  }
}

// Channels-last (s = 1: x is [n, c]): rows of c channels through the 2-D launch of
// k_rows.cuh, V channels per access, a thread's scale and shift loaded once for all its
// rows, no division per element.
template <typename T, int V>
struct bn_rows_f {
  typedef k_vec<T, V> vec;
  struct param {
    float scale[V], shift[V];
  };
  typedef vec item;
  const T *x;
  T *y;
  const float *scale, *shift;
  bool relu;
  __device__ __forceinline__ param param_at(int64_t, int c) const {
    param p;
#pragma unroll
    for (int e = 0; e < V; e++) {
      p.scale[e] = scale[(int64_t)c * V + e];
      p.shift[e] = shift[(int64_t)c * V + e];
    }
    return p;
  }
  __device__ __forceinline__ item load(int64_t i) const { return ((const vec *)x)[i]; }
  __device__ __forceinline__ void store(int64_t i, const item &v, const param &p) const {
    vec r;
#pragma unroll
    for (int e = 0; e < V; e++)
      r.v[e] = bn_value<T, float>(k_load_as<float>(v.v[e]), p.scale[e], p.shift[e], relu);
    ((vec *)y)[i] = r;
  }
};

template <typename T, int V>
cudaError_t bn_rows_go(int64_t n, int64_t c, const void *x, void *y, const void *scale,
                       const void *shift, bool relu, cudaStream_t st) {
  bn_rows_f<T, V> f;
  f.x = (const T *)x;
  f.y = (T *)y;
  f.scale = (const float *)scale;
  f.shift = (const float *)shift;
  f.relu = relu;
  return k_rows_run(f, 1, n, c / V, st);
}

// Widths instantiated: 8, 2, 1 for 2-byte types; 4, 1 floats.
template <typename T>
cudaError_t bn_rows(int64_t n, int64_t c, const void *x, void *y, const void *scale,
                    const void *shift, bool relu, cudaStream_t st) {
  const unsigned widths = sizeof(T) == 2 ? (1u << 8 | 1u << 2) : (1u << 4);
  switch (k_rows_vec(c, (int)sizeof(T), widths, x, y, NULL)) {
    case 8:
      if constexpr (sizeof(T) == 2) return bn_rows_go<T, 8>(n, c, x, y, scale, shift, relu, st);
      break;
    case 4:
      if constexpr (sizeof(T) == 4) return bn_rows_go<T, 4>(n, c, x, y, scale, shift, relu, st);
      break;
    case 2:
      if constexpr (sizeof(T) == 2) return bn_rows_go<T, 2>(n, c, x, y, scale, shift, relu, st);
      break;
    default: break;
  }
  return bn_rows_go<T, 1>(n, c, x, y, scale, shift, relu, st);
}

template <typename T, typename P>
cudaError_t bn_go(int64_t n, int64_t c, int64_t s, const void *x, void *y, const void *scale,
                  const void *shift, bool relu, cudaStream_t st) {
  const int64_t total = n * c * s;
  if (total <= 0) return cudaSuccess;
  if constexpr (std::is_same<P, float>::value) {
    if (s == 1 && c <= 0x7fffffff) return bn_rows<T>(n, c, x, y, scale, shift, relu, st);
  }
  const unsigned b = k_blocks(total, 256);
  if (total < ((int64_t)1 << 30))
    bn_apply_kernel<T, P, uint32_t><<<b, 256, 0, st>>>((const T *)x, (T *)y, (uint32_t)total,
                                                       (uint32_t)c, (uint32_t)s, (const P *)scale,
                                                       (const P *)shift, relu);
  else
    bn_apply_kernel<T, P, int64_t><<<b, 256, 0, st>>>((const T *)x, (T *)y, total, c, s,
                                                      (const P *)scale, (const P *)shift, relu);
  return cudaGetLastError();
}

// Per-row part of an affine index (K_AFF_GROUP), computed once per row.
__device__ __forceinline__ int64_t n_aff_row(const k_norm_affine &a, int64_t row) {
  return a.mode == K_AFF_GROUP ? (row % a.groups) * a.mul : 0;
}
__device__ __forceinline__ int64_t n_aff(const k_norm_affine &a, int64_t row_part, int64_t row,
                                         int64_t i, int64_t len) {
  switch (a.mode) {
    case K_AFF_DENSE: return i;
    case K_AFF_GROUP: return row_part + (a.step ? (i / a.s) * a.step : 0);
    default: {
      int64_t e = row * len + i, off = 0;
      for (int d = a.rank - 1; d >= 0; d--) {
        const int64_t q = e / a.dims[d];
        off += (e - q * a.dims[d]) * a.strides[d];
        e = q;
      }
      return off;
    }
  }
}

template <bool PER_WARP, typename A>
__device__ __forceinline__ A n_sum(A v) {
  if constexpr (PER_WARP)
    return k_warp_reduce(v, k_add_op());
  else
    return k_block_reduce(v, k_add_op(), (A)0);
}

template <typename T, typename A, bool PER_WARP>
__global__ void norm_rows_kernel(const T *__restrict__ x, T *__restrict__ y, int64_t rows,
                                 int64_t len, const T *__restrict__ scale, k_norm_affine sa,
                                 const T *__restrict__ bias, k_norm_affine ba, int mean_dt,
                                 void *mean_out, int inv_dt, void *inv_out, A eps, bool rms) {
  const int tid = PER_WARP ? (int)(threadIdx.x & 31) : (int)threadIdx.x;
  const int nt = PER_WARP ? 32 : (int)blockDim.x;
  const int64_t first =
      PER_WARP ? ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5 : (int64_t)blockIdx.x;
  const int64_t step = PER_WARP ? ((int64_t)gridDim.x * blockDim.x) >> 5 : (int64_t)gridDim.x;
  for (int64_t row = first; row < rows; row += step) {  // uniform per warp / per block
    const T *p = x + row * len;
    T *q = y + row * len;
    A mean = 0;
    if (!rms) {
      A s = 0;
      for (int64_t i = tid; i < len; i += nt) s += k_load_as<A>(p[i]);
      s = n_sum<PER_WARP>(s);
      mean = len > 0 ? s / (A)len : (A)0;
    }
    A sq = 0;
    for (int64_t i = tid; i < len; i += nt) {
      const A d = k_load_as<A>(p[i]) - mean;
      sq += d * d;
    }
    sq = n_sum<PER_WARP>(sq);
    const A inv = (A)1 / k_sqrt((len > 0 ? sq / (A)len : (A)0) + eps);
    if (tid == 0) {
      if (mean_out) k_store_any(mean_dt, mean_out, row, (double)mean);
      if (inv_out) k_store_any(inv_dt, inv_out, row, (double)inv);
    }
    const int64_t srow = n_aff_row(sa, row), brow = n_aff_row(ba, row);
    for (int64_t i = tid; i < len; i += nt) {
      const A sc = scale ? k_load_as<A>(scale[n_aff(sa, srow, row, i, len)]) : (A)1;
      const A bi = bias ? k_load_as<A>(bias[n_aff(ba, brow, row, i, len)]) : (A)0;
      q[i] = k_store_as<T, A>((k_load_as<A>(p[i]) - mean) * inv * sc + bi);
    }
  }
}

// Rows that fit in a warp's registers (up to 32 x 8 vectors of 16 bytes), with a dense
// scale and bias or none: one warp per row reads the row once in 16-byte pieces, reduces
// mean and variance from registers (two passes over registers, exact), and writes once.
template <typename T> struct vec_of;
template <> struct vec_of<float> {
  static constexpr int E = 4;
  static __device__ __forceinline__ void unpack(const uint4 &u, float *f) {
    f[0] = __uint_as_float(u.x); f[1] = __uint_as_float(u.y);
    f[2] = __uint_as_float(u.z); f[3] = __uint_as_float(u.w);
  }
  static __device__ __forceinline__ uint4 pack(const float *f) {
    return make_uint4(__float_as_uint(f[0]), __float_as_uint(f[1]), __float_as_uint(f[2]),
                      __float_as_uint(f[3]));
  }
};
template <> struct vec_of<__half> {
  static constexpr int E = 8;
  static __device__ __forceinline__ void unpack(const uint4 &u, float *f) { k_half8_unpack(u, f); }
  static __device__ __forceinline__ uint4 pack(const float *f) { return k_half8_pack(f); }
};

template <typename T, int V>
__global__ void norm_rows_vec_kernel(const T *__restrict__ x, T *__restrict__ y, int64_t rows,
                                     int len, const T *__restrict__ scale,
                                     const T *__restrict__ bias, float eps, bool rms) {
  using VT = vec_of<T>;
  constexpr int E = VT::E;
  const int lane = threadIdx.x & 31;
  const int64_t row = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
  if (row >= rows) return; // whole warps: rows are per warp
  const int nv = len / E;
  const uint4 *p = reinterpret_cast<const uint4 *>(x + row * len);
  float v[V * E];
  float s = 0.f;
#pragma unroll
  for (int j = 0; j < V; j++) {
    const int idx = lane + 32 * j;
    if (idx < nv) {
      VT::unpack(p[idx], v + j * E);
#pragma unroll
      for (int e = 0; e < E; e++) s += v[j * E + e];
    }
  }
  const float mean = rms ? 0.f : k_warp_reduce(s, k_add_op()) / (float)len;
  float sq = 0.f;
#pragma unroll
  for (int j = 0; j < V; j++)
    if (lane + 32 * j < nv)
#pragma unroll
      for (int e = 0; e < E; e++) {
        const float d = v[j * E + e] - mean;
        sq += d * d;
      }
  const float inv = rsqrtf(k_warp_reduce(sq, k_add_op()) / (float)len + eps);
  uint4 *q = reinterpret_cast<uint4 *>(y + row * len);
#pragma unroll
  for (int j = 0; j < V; j++) {
    const int idx = lane + 32 * j;
    if (idx >= nv) continue;
    float sc[E], bi[E], o[E];
    if (scale) VT::unpack(reinterpret_cast<const uint4 *>(scale)[idx], sc);
    if (bias) VT::unpack(reinterpret_cast<const uint4 *>(bias)[idx], bi);
#pragma unroll
    for (int e = 0; e < E; e++)
      o[e] = (v[j * E + e] - mean) * inv * (scale ? sc[e] : 1.f) + (bias ? bi[e] : 0.f);
    q[idx] = VT::pack(o);
  }
}

template <typename T>
bool norm_vec_go(int64_t rows, int64_t len, const void *x, void *y, const void *scale,
                 const void *bias, float eps, bool rms, cudaStream_t s) {
  constexpr int E = vec_of<T>::E;
  const int64_t nv = len / E;
  const unsigned blocks = (unsigned)((rows + 7) / 8);
  if (rows > ((int64_t)1 << 33)) return false;
#define K_NORM_VEC(V)                                                                          norm_rows_vec_kernel<T, V><<<blocks, 256, 0, s>>>((const T *)x, (T *)y, rows, (int)len,                                                      (const T *)scale, (const T *)bias, eps, rms)
  if (nv <= 32) K_NORM_VEC(1);
  else if (nv <= 64) K_NORM_VEC(2);
  else if (nv <= 128) K_NORM_VEC(4);
  else if (nv <= 256) K_NORM_VEC(8);
  else return false;
#undef K_NORM_VEC
  return true;
}

bool aligned16(const void *p) { return ((uintptr_t)p & 15) == 0; }

template <typename T, typename A>
cudaError_t norm_go(int64_t rows, int64_t len, const void *x, void *y, const void *scale,
                    const k_norm_affine *sa, const void *bias, const k_norm_affine *ba, int mean_dt,
                    void *mean_out, int inv_dt, void *inv_out, float eps, bool rms,
                    cudaStream_t s) {
  k_norm_affine none = {};
  none.mode = K_AFF_DENSE;
  const k_norm_affine &sav = scale && sa ? *sa : none, &bav = bias && ba ? *ba : none;
  if constexpr (std::is_same<T, float>::value || std::is_same<T, __half>::value) {
    constexpr int E = vec_of<T>::E;
    if (!mean_out && !inv_out && sav.mode == K_AFF_DENSE && bav.mode == K_AFF_DENSE &&
        len > 0 && len % E == 0 && aligned16(x) && aligned16(y) && (!scale || aligned16(scale)) &&
        (!bias || aligned16(bias)) &&
        norm_vec_go<T>(rows, len, x, y, scale, bias, eps, rms, s))
      return cudaGetLastError();
  }
  if (len <= 1024) {
    norm_rows_kernel<T, A, true><<<k_blocks(rows * 32, 256), 256, 0, s>>>(
        (const T *)x, (T *)y, rows, len, (const T *)scale, sav, (const T *)bias, bav, mean_dt,
        mean_out, inv_dt, inv_out, (A)eps, rms);
  } else {
    const unsigned blocks = (unsigned)(rows < 65535 * 32 ? rows : 65535 * 32);
    norm_rows_kernel<T, A, false><<<blocks, len >= 8192 ? 1024 : 512, 0, s>>>(
        (const T *)x, (T *)y, rows, len, (const T *)scale, sav, (const T *)bias, bav, mean_dt,
        mean_out, inv_dt, inv_out, (A)eps, rms);
  }
  return cudaGetLastError();
}

}  // namespace

extern "C" cudaError_t k_bn_params(int64_t c, int gamma_dt, const void *gamma, int beta_dt,
                                   const void *beta, int mean_dt, const void *mean, int var_dt,
                                   const void *var, double eps, int out_dt, void *out_scale,
                                   void *out_shift, cudaStream_t stream) {
  if (c <= 0) return cudaSuccess;
  const unsigned b = k_blocks(c, 256);
  if (out_dt == K_F64)
    bn_params_kernel<double><<<b, 256, 0, stream>>>(c, gamma_dt, gamma, beta_dt, beta, mean_dt,
                                                    mean, var_dt, var, eps, (double *)out_scale,
                                                    (double *)out_shift);
  else if (out_dt == K_F32)
    bn_params_kernel<float><<<b, 256, 0, stream>>>(c, gamma_dt, gamma, beta_dt, beta, mean_dt, mean,
                                                   var_dt, var, eps, (float *)out_scale,
                                                   (float *)out_shift);
  else
    return cudaErrorInvalidValue;
  return cudaGetLastError();
}

extern "C" cudaError_t k_bn_apply_act(int dtype, int64_t n, int64_t c, int64_t s, const void *x,
                                      void *y, const void *scale, const void *shift, int act,
                                      cudaStream_t stream) {
  if (act != 0 && act != 1) return cudaErrorInvalidValue;
  const bool relu = act == 1;
  switch (dtype) {
    case K_F32: return bn_go<float, float>(n, c, s, x, y, scale, shift, relu, stream);
    case K_F16: return bn_go<__half, float>(n, c, s, x, y, scale, shift, relu, stream);
    case K_BF16: return bn_go<__nv_bfloat16, float>(n, c, s, x, y, scale, shift, relu, stream);
    case K_F64: return bn_go<double, double>(n, c, s, x, y, scale, shift, relu, stream);
    default: return cudaErrorInvalidValue;
  }
}

extern "C" cudaError_t k_bn_apply(int dtype, int64_t n, int64_t c, int64_t s, const void *x,
                                  void *y, const void *scale, const void *shift,
                                  cudaStream_t stream) {
  return k_bn_apply_act(dtype, n, c, s, x, y, scale, shift, 0, stream);
}

extern "C" cudaError_t k_norm_rows(int dtype, int64_t rows, int64_t len, const void *x, void *y,
                                   const void *scale, const k_norm_affine *scale_aff,
                                   const void *bias, const k_norm_affine *bias_aff, int mean_dt,
                                   void *mean_out, int inv_dt, void *inv_out, float eps, int rms,
                                   cudaStream_t stream) {
  if (rows <= 0) return cudaSuccess;
  const bool r = rms != 0;
#define K_NORM(T, A)                                                                         \
  return norm_go<T, A>(rows, len, x, y, scale, scale_aff, bias, bias_aff, mean_dt, mean_out, \
                       inv_dt, inv_out, eps, r, stream)
  switch (dtype) {
    case K_F32: K_NORM(float, float);
    case K_F16: K_NORM(__half, float);
    case K_BF16: K_NORM(__nv_bfloat16, float);
    case K_F64: K_NORM(double, double);
    default: return cudaErrorInvalidValue;
  }
#undef K_NORM
}
