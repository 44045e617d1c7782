// pad_resize.cu: Pad (one thread per output element, index math in 32 bits when
// the tensors allow it), Resize nearest (table lookup per axis) and the separable
// linear/cubic Resize pass.
#include "k_common.cuh"
#include "pad_resize.h"

// ---- Pad ---------------------------------------------------------------------------------

template <typename S> struct pad_args {
  int rank, mode;
  // innermost first
  S od[K_MAX_RANK], xs[K_MAX_RANK], lo[K_MAX_RANK], ext[K_MAX_RANK], pb[K_MAX_RANK];
};

// Position in the kept region of region-relative coordinate t; -1 for the constant.
template <typename S> __device__ __forceinline__ S pad_map(int mode, S t, S ext) {
  if (t >= 0 && t < ext) return t;
  switch (mode) {
    case K_PAD_EDGE: return t < 0 ? 0 : ext - 1;
    case K_PAD_WRAP: return ((t % ext) + ext) % ext;
    case K_PAD_REFLECT: {
      if (ext == 1) return 0;
      S period = 2 * (ext - 1), m = ((t % period) + period) % period;
      return m < ext ? m : period - m;
    }
    default: return -1;
  }
}

template <typename T, typename S>
__global__ void pad_kernel(pad_args<S> g, T cv, const T *cv_dev, const T *__restrict__ src,
                           T *__restrict__ dst, S n) {
  const T c = cv_dev ? *cv_dev : cv;
  for (S i = (S)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (S)gridDim.x * blockDim.x) {
    S rem = i, off = 0;
    bool constant = false;
    for (int k = 0; k < g.rank; k++) {
      S q = rem / g.od[k], o = rem - q * g.od[k];
      rem = q;
      S s = pad_map<S>(g.mode, o - g.pb[k], g.ext[k]);
      if (s < 0) {
        constant = true;
        break;
      }
      off += (g.lo[k] + s) * g.xs[k];
    }
    dst[i] = constant ? c : src[off];
  }
}

template <typename T, typename S>
static cudaError_t pad_launch(int mode, int rank, const int64_t *in_dims, const int64_t *out_dims,
                              const int64_t *lo, const int64_t *ext, const int64_t *pb,
                              const void *cval, const void *cval_dev, const void *src, void *dst,
                              int64_t n, cudaStream_t st) {
  pad_args<S> g;
  g.rank = rank;
  g.mode = mode;
  int64_t xs = 1;
  for (int k = 0; k < rank; k++) {
    int d = rank - 1 - k;
    g.od[k] = (S)out_dims[d];
    g.xs[k] = (S)xs;
    g.lo[k] = (S)lo[d];
    g.ext[k] = (S)ext[d];
    g.pb[k] = (S)pb[d];
    xs *= in_dims[d];
  }
  T cv;
  memcpy(&cv, cval, sizeof cv);
  pad_kernel<T, S><<<k_blocks(n, 256), 256, 0, st>>>(g, cv, (const T *)cval_dev, (const T *)src,
                                                      (T *)dst, (S)n);
  return cudaGetLastError();
}

template <typename T>
static cudaError_t pad_typed(int mode, int rank, const int64_t *in_dims, const int64_t *out_dims,
                             const int64_t *lo, const int64_t *ext, const int64_t *pb,
                             const void *cval, const void *cval_dev, const void *src, void *dst,
                             cudaStream_t st) {
  int64_t n = 1, m = 1, span = 0;
  for (int d = 0; d < rank; d++) {
    n *= out_dims[d];
    m *= in_dims[d];
    span += out_dims[d] + (pb[d] > 0 ? pb[d] : -pb[d]);
  }
  if (n == 0) return cudaSuccess;
  // 32-bit signed math: output and input counts, and the region coordinates, fit
  if (n <= INT32_MAX && m <= INT32_MAX && span <= INT32_MAX / 4)
    return pad_launch<T, int32_t>(mode, rank, in_dims, out_dims, lo, ext, pb, cval, cval_dev, src,
                                  dst, n, st);
  return pad_launch<T, int64_t>(mode, rank, in_dims, out_dims, lo, ext, pb, cval, cval_dev, src,
                                dst, n, st);
}

extern "C" cudaError_t k_pad(int elem_size, int mode, int rank, const int64_t *in_dims,
                             const int64_t *out_dims, const int64_t *lo, const int64_t *ext,
                             const int64_t *pb, const void *cval, const void *cval_dev,
                             const void *src, void *dst, cudaStream_t stream) {
  if (rank < 0 || rank > K_MAX_RANK || mode < 0 || mode > 3) return cudaErrorInvalidValue;
#define K_PAD_ARGS mode, rank, in_dims, out_dims, lo, ext, pb, cval, cval_dev, src, dst, stream
  switch (elem_size) {
    case 1: return pad_typed<uint8_t>(K_PAD_ARGS);
    case 2: return pad_typed<uint16_t>(K_PAD_ARGS);
    case 4: return pad_typed<uint32_t>(K_PAD_ARGS);
    case 8: return pad_typed<uint64_t>(K_PAD_ARGS);
    default: return cudaErrorInvalidValue;
  }
#undef K_PAD_ARGS
}

// ---- Resize, nearest -----------------------------------------------------------------------

struct nearest_args {
  int rank;
  int64_t od[K_MAX_RANK], xs[K_MAX_RANK], tbase[K_MAX_RANK];  // innermost first
};

template <typename T>
__global__ void resize_nearest_kernel(nearest_args g, const int64_t *__restrict__ table, T ext,
                                      const T *__restrict__ src, T *__restrict__ dst, int64_t n) {
  K_GRID_STRIDE(i, n) {
    int64_t rem = i, off = 0;
    bool outside = false;
    for (int k = 0; k < g.rank; k++) {
      int64_t q = rem / g.od[k], o = rem - q * g.od[k];
      rem = q;
      int64_t s = table[g.tbase[k] + o];
      if (s < 0) {
        outside = true;
        break;
      }
      off += s * g.xs[k];
    }
    dst[i] = outside ? ext : src[off];
  }
}

template <typename T>
static cudaError_t nearest_typed(const nearest_args &g, const int64_t *table, const void *ext,
                                 const void *src, void *dst, int64_t n, cudaStream_t st) {
  T e;
  memcpy(&e, ext, sizeof e);
  resize_nearest_kernel<T><<<k_blocks(n, 256), 256, 0, st>>>(g, table, e, (const T *)src,
                                                              (T *)dst, n);
  return cudaGetLastError();
}

extern "C" cudaError_t k_resize_nearest(int elem_size, int rank, const int64_t *in_dims,
                                        const int64_t *out_dims, const int64_t *table_dev,
                                        const void *ext, const void *src, void *dst,
                                        cudaStream_t stream) {
  if (rank < 1 || rank > K_MAX_RANK) return cudaErrorInvalidValue;
  nearest_args g;
  g.rank = rank;
  int64_t n = 1, xs = 1, base[K_MAX_RANK], b = 0;
  for (int d = 0; d < rank; d++) {
    base[d] = b;
    b += out_dims[d];
    n *= out_dims[d];
  }
  for (int k = 0; k < rank; k++) {
    int d = rank - 1 - k;
    g.od[k] = out_dims[d];
    g.xs[k] = xs;
    g.tbase[k] = base[d];
    xs *= in_dims[d];
  }
  if (n == 0) return cudaSuccess;
  switch (elem_size) {
    case 1: return nearest_typed<uint8_t>(g, table_dev, ext, src, dst, n, stream);
    case 2: return nearest_typed<uint16_t>(g, table_dev, ext, src, dst, n, stream);
    case 4: return nearest_typed<uint32_t>(g, table_dev, ext, src, dst, n, stream);
    case 8: return nearest_typed<uint64_t>(g, table_dev, ext, src, dst, n, stream);
    default: return cudaErrorInvalidValue;
  }
}

// ---- Resize, one linear/cubic pass ---------------------------------------------------------

// Accumulation type per element type: float for the 16/32-bit floats, else double.
template <typename T> struct rz_acc { typedef double type; };
template <> struct rz_acc<float> { typedef float type; };
template <> struct rz_acc<__half> { typedef float type; };
template <> struct rz_acc<__nv_bfloat16> { typedef float type; };

template <typename A, typename S> __device__ __forceinline__ A rz_load(S v) { return (A)v; }
template <> __device__ __forceinline__ float rz_load<float, __half>(__half v) {
  return __half2float(v);
}
template <> __device__ __forceinline__ float rz_load<float, __nv_bfloat16>(__nv_bfloat16 v) {
  return __bfloat162float(v);
}

// Integers: truncate toward zero through int64 (NaN -> 0, saturating at int64), as
// the CPU's tensor_set_f64 does; floats convert.
template <typename D> struct rz_store {
  template <typename A> static __device__ __forceinline__ D of(A v) {
    double x = (double)v;
    int64_t r = x != x ? 0 : x >= 9.2e18 ? INT64_MAX : x <= -9.2e18 ? INT64_MIN : (int64_t)x;
    return (D)r;
  }
};
template <> struct rz_store<float> {
  template <typename A> static __device__ __forceinline__ float of(A v) { return (float)v; }
};
template <> struct rz_store<double> {
  template <typename A> static __device__ __forceinline__ double of(A v) { return (double)v; }
};
template <> struct rz_store<__half> {
  template <typename A> static __device__ __forceinline__ __half of(A v) {
    return __float2half_rn((float)v);
  }
};
template <> struct rz_store<__nv_bfloat16> {
  template <typename A> static __device__ __forceinline__ __nv_bfloat16 of(A v) {
    return __float2bfloat16_rn((float)v);
  }
};

template <typename S, typename D, typename A>
__global__ void resize_pass_kernel(const S *__restrict__ src, D *__restrict__ dst, int64_t outer,
                                   int64_t in_a, int64_t out_a, int64_t inner, int taps,
                                   const int64_t *__restrict__ idx, const double *__restrict__ w,
                                   const uint8_t *__restrict__ outside, A extrapolation) {
  int64_t n = outer * out_a * inner;
  K_GRID_STRIDE(i, n) {
    int64_t t = i / inner, j = i - t * inner;
    int64_t b = t / out_a, o = t - b * out_a;
    A acc;
    if (outside[o]) {
      acc = extrapolation;
    } else {
      acc = (A)0;
      const S *base = src + b * in_a * inner + j;
      const int64_t *ix = idx + o * taps;
      const double *wt = w + o * taps;
      for (int k = 0; k < taps; k++) {
        A wk = (A)wt[k];
        if (wk == (A)0) continue;
        acc += wk * rz_load<A, S>(base[ix[k] * inner]);
      }
    }
    dst[i] = rz_store<D>::of(acc);
  }
}

template <typename T>
static cudaError_t pass_typed(int src_acc, int dst_acc, const void *src, void *dst, int64_t outer,
                              int64_t in_a, int64_t out_a, int64_t inner, int taps,
                              const int64_t *idx, const double *w, const uint8_t *outside,
                              double extrapolation, cudaStream_t st) {
  typedef typename rz_acc<T>::type A;
  int64_t n = outer * out_a * inner;
  if (n <= 0) return cudaSuccess;
  unsigned b = k_blocks(n, 256);
  A e = (A)extrapolation;
#define K_PASS(S, D)                                                                          \
  resize_pass_kernel<S, D, A><<<b, 256, 0, st>>>((const S *)src, (D *)dst, outer, in_a, out_a, \
                                                 inner, taps, idx, w, outside, e)
  if (!src_acc && !dst_acc) K_PASS(T, T);
  else if (!src_acc && dst_acc) K_PASS(T, A);
  else if (src_acc && !dst_acc) K_PASS(A, T);
  else K_PASS(A, A);
#undef K_PASS
  return cudaGetLastError();
}

extern "C" int k_resize_acc_bytes(int dtype) {
  switch (dtype) {
    case K_F32: case K_F16: case K_BF16: return 4;
    case K_F64: case K_I8: case K_U8: case K_I16: case K_U16: case K_I32: case K_U32:
    case K_I64: case K_U64: return 8;
    default: return 0;
  }
}

extern "C" cudaError_t k_resize_pass(int dtype, int src_acc, int dst_acc, const void *src,
                                     void *dst, int64_t outer, int64_t in_a, int64_t out_a,
                                     int64_t inner, int taps, const int64_t *idx, const double *w,
                                     const uint8_t *outside, double extrapolation,
                                     cudaStream_t stream) {
  if (taps < 1) return cudaErrorInvalidValue;
#define K_PASS_T(T)                                                                            \
  return pass_typed<T>(src_acc, dst_acc, src, dst, outer, in_a, out_a, inner, taps, idx, w,   \
                       outside, extrapolation, stream)
  switch (dtype) {
    case K_F32: K_PASS_T(float);
    case K_F16: K_PASS_T(__half);
    case K_BF16: K_PASS_T(__nv_bfloat16);
    case K_F64: K_PASS_T(double);
    case K_I8: K_PASS_T(int8_t);
    case K_U8: K_PASS_T(uint8_t);
    case K_I16: K_PASS_T(int16_t);
    case K_U16: K_PASS_T(uint16_t);
    case K_I32: K_PASS_T(int32_t);
    case K_U32: K_PASS_T(uint32_t);
    case K_I64: K_PASS_T(int64_t);
    case K_U64: K_PASS_T(uint64_t);
    default: return cudaErrorInvalidValue;
  }
#undef K_PASS_T
}
