// elementwise_impl.cuh: device helpers shared by the elementwise_*.cu files:
// compute types, loads and stores, the dtype dispatch that tells bool from uint8,
// vectors for the contiguous fast path, and broadcast offset math.
#pragma once

#include <stdint.h>

#include <type_traits>

#include "elementwise.h"
#include "k_common.cuh"

// Category of an element type: the ops' semantics differ per category.
enum { KC_F = 0, KC_S = 1, KC_U = 2, KC_B = 3 };

// Compute type: float for f32 / f16 / bf16, double for f64, the type itself for
// integers and bool.
template <typename T> struct k_ct { typedef T type; };
template <> struct k_ct<__half> { typedef float type; };
template <> struct k_ct<__nv_bfloat16> { typedef float type; };

// Wide unsigned type for wrapping integer arithmetic (at least 32 bits, so no
// promotion to int can overflow).
template <typename T> struct k_wide {
  typedef typename std::conditional<(sizeof(T) <= 4), uint32_t, uint64_t>::type type;
};

template <typename T> __device__ __forceinline__ typename k_ct<T>::type k_ld(T v) { return v; }
template <> __device__ __forceinline__ float k_ld<__half>(__half v) { return __half2float(v); }
template <> __device__ __forceinline__ float k_ld<__nv_bfloat16>(__nv_bfloat16 v) {
  return __bfloat162float(v);
}

// Stores a computed value (float, double, integer or bool) as O. A double bound
// for a half goes through float, as the CPU backend's conversions do.
template <typename O> struct k_store {
  template <typename R> static __device__ __forceinline__ O cv(R v) { return (O)v; }
};
template <> struct k_store<__half> {
  template <typename R> static __device__ __forceinline__ __half cv(R v) {
    return __float2half_rn((float)v);
  }
};
template <> struct k_store<__nv_bfloat16> {
  template <typename R> static __device__ __forceinline__ __nv_bfloat16 cv(R v) {
    return __float2bfloat16_rn((float)v);
  }
};

// Calls MACRO(ctype, category) for the k_dtype `dt`; `fallback` for others.
#define K_EW_DISPATCH(dt, MACRO, fallback)      \
  switch (dt) {                                 \
    case K_F32: MACRO(float, KC_F); break;      \
    case K_F16: MACRO(__half, KC_F); break;     \
    case K_BF16: MACRO(__nv_bfloat16, KC_F); break; \
    case K_F64: MACRO(double, KC_F); break;     \
    case K_I8: MACRO(int8_t, KC_S); break;      \
    case K_I16: MACRO(int16_t, KC_S); break;    \
    case K_I32: MACRO(int32_t, KC_S); break;    \
    case K_I64: MACRO(int64_t, KC_S); break;    \
    case K_U8: MACRO(uint8_t, KC_U); break;     \
    case K_U16: MACRO(uint16_t, KC_U); break;   \
    case K_U32: MACRO(uint32_t, KC_U); break;   \
    case K_U64: MACRO(uint64_t, KC_U); break;   \
    case K_BOOL: MACRO(uint8_t, KC_B); break;   \
    default: fallback;                          \
  }

// Category of a dtype code, -1 if unknown.
__host__ __device__ static inline int k_ew_category(int dt) {
  switch (dt) {
    case K_F32: case K_F16: case K_BF16: case K_F64: return KC_F;
    case K_I8: case K_I16: case K_I32: case K_I64: return KC_S;
    case K_U8: case K_U16: case K_U32: case K_U64: return KC_U;
    case K_BOOL: return KC_B;
    default: return -1;
  }
}

// N elements loaded or stored as one access in the contiguous fast path.
#define K_EW_VEC 4
// (k_vec: k_common.cuh)

static inline bool k_aligned(const void *p, size_t bytes) {
  return ((uintptr_t)p % bytes) == 0;
}

#define K_EW_THREADS 256

// Blocks for n items: enough to fill the GPU several times over, the grid-stride
// loops cover the rest.
static inline unsigned k_ew_blocks(int64_t n) { return k_blocks(n, K_EW_THREADS); }

// Broadcast offsets with index type I (uint32_t when every index fits, else
// int64_t): dims and strides of the coalesced geometry.
template <typename I, int NIN> struct k_ew_dgeom {
  int rank;
  I dims[K_MAX_RANK];
  I st[NIN][K_MAX_RANK];
};

template <typename I, int NIN> static k_ew_dgeom<I, NIN> k_ew_dgeom_of(const k_ew_geom *g) {
  k_ew_dgeom<I, NIN> d;
  d.rank = g->rank;
  for (int i = 0; i < K_MAX_RANK; i++) {
    d.dims[i] = i < g->rank ? (I)g->dims[i] : (I)1;
    for (int k = 0; k < NIN; k++) d.st[k][i] = i < g->rank ? (I)g->strides[k][i] : (I)0;
  }
  return d;
}

// off[k] = offset of output element i in input k.
template <typename I, int NIN>
__device__ __forceinline__ void k_ew_offsets(const k_ew_dgeom<I, NIN> &g, I i, I (&off)[NIN]) {
#pragma unroll
  for (int k = 0; k < NIN; k++) off[k] = 0;
  I rem = i;
#pragma unroll
  for (int d = K_MAX_RANK - 1; d >= 1; d--) {
    if (d < g.rank) {
      I q = rem / g.dims[d];
      I idx = rem - q * g.dims[d];
      rem = q;
#pragma unroll
      for (int k = 0; k < NIN; k++) off[k] += idx * g.st[k][d];
    }
  }
#pragma unroll
  for (int k = 0; k < NIN; k++) off[k] += rem * g.st[k][0];
}

// Indices fit in 32 bits (every input has at most n elements).
static inline bool k_ew_small(const k_ew_geom *g) { return g->n <= (int64_t)INT32_MAX; }

// ---- generic kernels: F is a functor with init() (run once per thread) and
// O operator()(T...) ------------------------------------------------------------------

// y[i] = f(x[i]) over contiguous x, y; `vec`: both are aligned for K_EW_VEC-wide
// accesses.
template <class F, typename T, typename O>
__global__ void k_ew_map(F f, const T *x, O *y, int64_t n, int vec) {
  f.init();
  int64_t start = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  int64_t step = (int64_t)gridDim.x * blockDim.x;
  int64_t done = 0;
  if (vec) {
    int64_t nv = n / K_EW_VEC;
    const k_vec<T, K_EW_VEC> *xv = (const k_vec<T, K_EW_VEC> *)x;
    k_vec<O, K_EW_VEC> *yv = (k_vec<O, K_EW_VEC> *)y;
    for (int64_t i = start; i < nv; i += step) {
      k_vec<T, K_EW_VEC> a = xv[i];
      k_vec<O, K_EW_VEC> r;
#pragma unroll
      for (int j = 0; j < K_EW_VEC; j++) r.v[j] = f(a.v[j]);
      yv[i] = r;
    }
    done = nv * K_EW_VEC;
  }
  for (int64_t i = done + start; i < n; i += step) y[i] = f(x[i]);
}

template <class F, typename T, typename O>
static cudaError_t k_ew_map_launch(const F &f, const void *x, void *y, int64_t n, cudaStream_t s) {
  if (n <= 0) return cudaSuccess;
  int vec = k_aligned(x, sizeof(T) * K_EW_VEC) && k_aligned(y, sizeof(O) * K_EW_VEC);
  int64_t work = vec ? n / K_EW_VEC + K_EW_VEC : n;
  k_ew_map<F, T, O><<<k_ew_blocks(work), K_EW_THREADS, 0, s>>>(f, (const T *)x, (O *)y, n, vec);
  return cudaGetLastError();
}

// y[i] = f(a[.], b[.]) where each input is contiguous like y or one element
// (sa / sb set).
template <class F, typename T, typename O>
__global__ void k_ew_zip(F f, const T *a, const T *b, O *y, int64_t n, int sa, int sb, int vec) {
  f.init();
  int64_t start = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  int64_t step = (int64_t)gridDim.x * blockDim.x;
  int64_t done = 0;
  if (vec) {
    int64_t nv = n / K_EW_VEC;
    const k_vec<T, K_EW_VEC> *av = (const k_vec<T, K_EW_VEC> *)a;
    const k_vec<T, K_EW_VEC> *bv = (const k_vec<T, K_EW_VEC> *)b;
    k_vec<O, K_EW_VEC> *yv = (k_vec<O, K_EW_VEC> *)y;
    k_vec<T, K_EW_VEC> va, vb;
    if (sa)
#pragma unroll
      for (int j = 0; j < K_EW_VEC; j++) va.v[j] = a[0];
    if (sb)
#pragma unroll
      for (int j = 0; j < K_EW_VEC; j++) vb.v[j] = b[0];
    for (int64_t i = start; i < nv; i += step) {
      if (!sa) va = av[i];
      if (!sb) vb = bv[i];
      k_vec<O, K_EW_VEC> r;
#pragma unroll
      for (int j = 0; j < K_EW_VEC; j++) r.v[j] = f(va.v[j], vb.v[j]);
      yv[i] = r;
    }
    done = nv * K_EW_VEC;
  }
  for (int64_t i = done + start; i < n; i += step) y[i] = f(a[sa ? 0 : i], b[sb ? 0 : i]);
}

// General broadcast. `vec`: the innermost dim is a multiple of K_EW_VEC and every
// pointer walked along it (stride 1; an input's innermost stride is always 0 or 1)
// is aligned, so each thread does K_EW_VEC neighbours with one offset computation.
template <class F, typename T, typename O, typename I>
__global__ void k_ew_zip_bcast(F f, const T *a, const T *b, O *y, k_ew_dgeom<I, 2> g, int64_t n,
                               int vec, int a_inner, int b_inner) {
  f.init();
  if (vec) {
    int64_t nq = n / K_EW_VEC;
    K_GRID_STRIDE(q, nq) {
      I off[2];
      k_ew_offsets<I, 2>(g, (I)(q * K_EW_VEC), off);
      k_vec<T, K_EW_VEC> va, vb;
      if (a_inner) {
        va = *(const k_vec<T, K_EW_VEC> *)(a + off[0]);
      } else {
        T s = a[off[0]];
#pragma unroll
        for (int j = 0; j < K_EW_VEC; j++) va.v[j] = s;
      }
      if (b_inner) {
        vb = *(const k_vec<T, K_EW_VEC> *)(b + off[1]);
      } else {
        T s = b[off[1]];
#pragma unroll
        for (int j = 0; j < K_EW_VEC; j++) vb.v[j] = s;
      }
      k_vec<O, K_EW_VEC> r;
#pragma unroll
      for (int j = 0; j < K_EW_VEC; j++) r.v[j] = f(va.v[j], vb.v[j]);
      ((k_vec<O, K_EW_VEC> *)y)[q] = r;
    }
    return;
  }
  K_GRID_STRIDE(i, n) {
    I off[2];
    k_ew_offsets<I, 2>(g, (I)i, off);
    y[i] = f(a[off[0]], b[off[1]]);
  }
}

// k_ew_zip over n elements; sa / sb: that input is one element.
template <class F, typename T, typename O>
static cudaError_t k_ew_zip_flat_launch(const F &f, const void *a, const void *b, void *y,
                                        int64_t n, int sa, int sb, cudaStream_t s) {
  if (n <= 0) return cudaSuccess;
  int vec = (sa || k_aligned(a, sizeof(T) * K_EW_VEC)) &&
            (sb || k_aligned(b, sizeof(T) * K_EW_VEC)) && k_aligned(y, sizeof(O) * K_EW_VEC);
  int64_t work = vec ? n / K_EW_VEC + K_EW_VEC : n;
  k_ew_zip<F, T, O><<<k_ew_blocks(work), K_EW_THREADS, 0, s>>>(f, (const T *)a, (const T *)b,
                                                                (O *)y, n, sa, sb, vec);
  return cudaGetLastError();
}

template <class F, typename T, typename O>
static cudaError_t k_ew_zip_launch(const F &f, const void *a, const void *b, void *y,
                                   const k_ew_geom *g, cudaStream_t s) {
  int64_t n = g->n;
  if (n <= 0) return cudaSuccess;
  if (g->flat) {
    return k_ew_zip_flat_launch<F, T, O>(f, a, b, y, n, g->scalar[0], g->scalar[1], s);
  } else {
    int r = g->rank - 1;
    int a_inner = g->strides[0][r] != 0, b_inner = g->strides[1][r] != 0;
    int vec = g->dims[r] % K_EW_VEC == 0 && (!a_inner || k_aligned(a, sizeof(T) * K_EW_VEC)) &&
              (!b_inner || k_aligned(b, sizeof(T) * K_EW_VEC)) &&
              k_aligned(y, sizeof(O) * K_EW_VEC);
    unsigned blocks = k_ew_blocks(vec ? n / K_EW_VEC : n);
    if (k_ew_small(g))
      k_ew_zip_bcast<F, T, O, uint32_t><<<blocks, K_EW_THREADS, 0, s>>>(
          f, (const T *)a, (const T *)b, (O *)y, k_ew_dgeom_of<uint32_t, 2>(g), n, vec, a_inner,
          b_inner);
    else
      k_ew_zip_bcast<F, T, O, int64_t><<<blocks, K_EW_THREADS, 0, s>>>(
          f, (const T *)a, (const T *)b, (O *)y, k_ew_dgeom_of<int64_t, 2>(g), n, vec, a_inner,
          b_inner);
  }
  return cudaGetLastError();
}

// ---- binary ops: a struct per op with ok<CAT>(), to_bool and f<CAT>(x, y) on the
// compute type; bin_f makes it a functor over storage types -------------------------

template <class OP, typename T, int CAT> struct bin_f {
  typedef typename std::conditional<OP::to_bool, uint8_t, T>::type O;
  __device__ __forceinline__ void init() {}
  __device__ __forceinline__ O operator()(T a, T b) const {
    return k_store<O>::cv(OP::template f<CAT>(k_ld<T>(a), k_ld<T>(b)));
  }
};

template <class OP, typename T, int CAT>
static cudaError_t bin_typed(const void *a, const void *b, void *y, const k_ew_geom *g,
                             cudaStream_t s) {
  if constexpr (!OP::template ok<CAT>()) {
    return cudaErrorInvalidValue;
  } else {
    typedef bin_f<OP, T, CAT> F;
    return k_ew_zip_launch<F, T, typename F::O>(F(), a, b, y, g, s);
  }
}

template <class OP> static int bin_ok(int dt) {
#define K_OK(T, CAT) return OP::template ok<CAT>();
  K_EW_DISPATCH(dt, K_OK, return 0)
#undef K_OK
  return 0;
}

template <class OP>
static cudaError_t bin_run(int dt, const void *a, const void *b, void *y, const k_ew_geom *g,
                           cudaStream_t s) {
#define K_RUN(T, CAT) return bin_typed<OP, T, CAT>(a, b, y, g, s);
  K_EW_DISPATCH(dt, K_RUN, return cudaErrorInvalidValue)
#undef K_RUN
  return cudaErrorInvalidValue;
}

// Integer power wrapping modulo 2^64; a negative exponent gives the integer part
// of the true result, as C would.
__device__ __forceinline__ uint64_t k_ipow_u(uint64_t b, uint64_t e) {
  uint64_t r = 1;
  for (; e; e >>= 1, b *= b)
    if (e & 1) r *= b;
  return r;
}
__device__ __forceinline__ int64_t k_ipow_s(int64_t b, int64_t e) {
  if (e < 0) return b == 1 ? 1 : b == -1 ? ((e & 1) ? -1 : 1) : 0;
  return (int64_t)k_ipow_u((uint64_t)b, (uint64_t)e);
}

// The comparison and logic ops live in elementwise_compare.cu (compiled apart).
int k_ew_compare_supported(int op, int dtype);
cudaError_t k_ew_compare(int op, int dtype, const void *a, const void *b, void *y,
                         const k_ew_geom *g, cudaStream_t stream);
