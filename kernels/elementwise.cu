// elementwise.cu: broadcast geometry, Where, Clip and mixed-dtype Pow. The unary
// and binary op tables are in elementwise_unary.cu and elementwise_binary.cu.
#include <string.h>

#include "elementwise_impl.cuh"

// ---- geometry ---------------------------------------------------------------------

extern "C" int k_ew_geom_init(k_ew_geom *g, int out_rank, const int64_t *out_dims, int n_in,
                              const int *in_rank, const int64_t *const *in_dims) {
  memset(g, 0, sizeof *g);
  if (out_rank < 0 || out_rank > K_MAX_RANK || n_in < 1 || n_in > K_EW_MAX_IN) return -1;
  g->n_in = n_in;
  // st[0]: the output's contiguous strides; st[k + 1]: input k seen through the
  // broadcast (0 on broadcast dims)
  int64_t st[K_EW_MAX_IN + 1][K_MAX_RANK];
  int64_t n = 1;
  for (int d = out_rank - 1; d >= 0; d--) {
    if (out_dims[d] < 0) return -1;
    st[0][d] = n;
    n *= out_dims[d];
  }
  g->n = n;
  for (int k = 0; k < n_in; k++) {
    int r = in_rank[k], off = out_rank - r;
    if (r < 0 || r > out_rank) return -1;
    int64_t s = 1;
    for (int d = out_rank - 1; d >= 0; d--) {
      int j = d - off;
      if (j < 0) {
        st[k + 1][d] = 0;
        continue;
      }
      int64_t dim = in_dims[k][j];
      if (dim == out_dims[d]) st[k + 1][d] = dim == 1 ? 0 : s;
      else if (dim == 1) st[k + 1][d] = 0;
      else return -1;
      s *= dim;
    }
  }
  // Drop 1-dims; merge dim d into the previous kept one when every operand walks
  // both contiguously (this also merges dims broadcast in an input on both).
  int m = 0;
  int64_t bs[K_EW_MAX_IN + 1][K_MAX_RANK];
  for (int d = 0; d < out_rank; d++) {
    if (out_dims[d] == 1) continue;
    bool merge = m > 0;
    for (int k = 0; k <= n_in && merge; k++)
      if (bs[k][m - 1] != st[k][d] * out_dims[d]) merge = false;
    if (merge) {
      g->dims[m - 1] *= out_dims[d];
      for (int k = 0; k <= n_in; k++) bs[k][m - 1] = st[k][d];
    } else {
      g->dims[m] = out_dims[d];
      for (int k = 0; k <= n_in; k++) bs[k][m] = st[k][d];
      m++;
    }
  }
  if (m == 0) {  // a single element (or rank 0)
    g->dims[0] = 1;
    for (int k = 0; k <= n_in; k++) bs[k][0] = 0;
    bs[0][0] = 1;
    m = 1;
  }
  g->rank = m;
  g->flat = 1;
  for (int k = 0; k < n_in; k++) {
    bool scalar = true, same = true;
    for (int d = 0; d < m; d++) {
      g->strides[k][d] = bs[k + 1][d];
      if (bs[k + 1][d] != 0) scalar = false;
      if (bs[k + 1][d] != bs[0][d]) same = false;
    }
    // a single-element output: every input is one element too
    if (n == 1) scalar = true;
    g->scalar[k] = scalar;
    if (!scalar && !same) g->flat = 0;
  }
  return 0;
}

// ---- Where -----------------------------------------------------------------------------

template <typename T>
__global__ void where_flat(const uint8_t *c, const T *x, const T *y, T *o, int64_t n, int sc,
                           int sx, int sy) {
  K_GRID_STRIDE(i, n) o[i] = c[sc ? 0 : i] ? x[sx ? 0 : i] : y[sy ? 0 : i];
}

template <typename T, typename I>
__global__ void where_bcast(const uint8_t *c, const T *x, const T *y, T *o, k_ew_dgeom<I, 3> g,
                            int64_t n) {
  K_GRID_STRIDE(i, n) {
    I off[3];
    k_ew_offsets<I, 3>(g, (I)i, off);
    o[i] = c[off[0]] ? x[off[1]] : y[off[2]];
  }
}

template <typename T>
static cudaError_t where_typed(const void *c, const void *x, const void *y, void *o,
                               const k_ew_geom *g, cudaStream_t s) {
  int64_t n = g->n;
  unsigned b = k_ew_blocks(n);
  if (g->flat)
    where_flat<T><<<b, K_EW_THREADS, 0, s>>>((const uint8_t *)c, (const T *)x, (const T *)y,
                                             (T *)o, n, g->scalar[0], g->scalar[1], g->scalar[2]);
  else if (k_ew_small(g))
    where_bcast<T, uint32_t><<<b, K_EW_THREADS, 0, s>>>((const uint8_t *)c, (const T *)x,
                                                        (const T *)y, (T *)o,
                                                        k_ew_dgeom_of<uint32_t, 3>(g), n);
  else
    where_bcast<T, int64_t><<<b, K_EW_THREADS, 0, s>>>((const uint8_t *)c, (const T *)x,
                                                       (const T *)y, (T *)o,
                                                       k_ew_dgeom_of<int64_t, 3>(g), n);
  return cudaGetLastError();
}

extern "C" cudaError_t k_ew_where(int elem_size, const void *c, const void *x, const void *y,
                                  void *out, const k_ew_geom *g, cudaStream_t stream) {
  if (g->n_in != 3) return cudaErrorInvalidValue;
  if (g->n <= 0) return cudaSuccess;
  switch (elem_size) {
    case 1: return where_typed<uint8_t>(c, x, y, out, g, stream);
    case 2: return where_typed<uint16_t>(c, x, y, out, g, stream);
    case 4: return where_typed<uint32_t>(c, x, y, out, g, stream);
    case 8: return where_typed<uint64_t>(c, x, y, out, g, stream);
    default: return cudaErrorInvalidValue;
  }
}

// ---- Clip ------------------------------------------------------------------------------

template <typename T> struct clip_f {
  typedef typename k_ct<T>::type C;
  const T *lo_dev, *hi_dev;
  int has_lo, has_hi;
  double lo_v, hi_v;
  C lo, hi;
  __device__ __forceinline__ void init() {
    // a bound given by value is first rounded to T, as the CPU op stores it
    lo = has_lo ? k_ld<T>(lo_dev ? *lo_dev : k_store<T>::cv(lo_v)) : C(0);
    hi = has_hi ? k_ld<T>(hi_dev ? *hi_dev : k_store<T>::cv(hi_v)) : C(0);
  }
  __device__ __forceinline__ T operator()(T v) const {
    C x = k_ld<T>(v);
    if (has_lo && x < lo) x = lo;
    if (has_hi && x > hi) x = hi;
    return k_store<T>::cv(x);
  }
};

extern "C" int k_ew_clip_supported(int dtype) {
  int c = k_ew_category(dtype);
  return c == KC_F || c == KC_S || c == KC_U;
}

extern "C" cudaError_t k_ew_clip(int dtype, const void *x, void *y, int64_t n, const void *lo_dev,
                                 const void *hi_dev, int has_lo, int has_hi, double lo, double hi,
                                 cudaStream_t stream) {
  if (!k_ew_clip_supported(dtype)) return cudaErrorInvalidValue;
  if (n <= 0) return cudaSuccess;
  // a value bound is only meaningful for floats (Clip 6-10)
  if (k_ew_category(dtype) != KC_F && ((has_lo && !lo_dev) || (has_hi && !hi_dev)))
    return cudaErrorInvalidValue;
#define K_CLIP(T, CAT)                                                                     \
  {                                                                                        \
    clip_f<T> f;                                                                           \
    f.lo_dev = (const T *)lo_dev;                                                          \
    f.hi_dev = (const T *)hi_dev;                                                          \
    f.has_lo = has_lo;                                                                     \
    f.has_hi = has_hi;                                                                     \
    f.lo_v = lo;                                                                           \
    f.hi_v = hi;                                                                           \
    return k_ew_map_launch<clip_f<T>, T, T>(f, x, y, n, stream);                           \
  }
  K_EW_DISPATCH(dtype, K_CLIP, return cudaErrorInvalidValue)
#undef K_CLIP
  return cudaErrorInvalidValue;
}

// ---- Pow with mixed dtypes -----------------------------------------------------------
// Rare (an integer exponent for a float base, mostly), so one kernel loads and
// stores through run-time dtype switches.

__device__ double pm_ld_f64(int dt, const void *p, int64_t i) {
  switch (dt) {
    case K_F32: return ((const float *)p)[i];
    case K_F64: return ((const double *)p)[i];
    case K_F16: return __half2float(((const __half *)p)[i]);
    case K_BF16: return __bfloat162float(((const __nv_bfloat16 *)p)[i]);
    case K_I8: return ((const int8_t *)p)[i];
    case K_I16: return ((const int16_t *)p)[i];
    case K_I32: return ((const int32_t *)p)[i];
    case K_I64: return (double)((const int64_t *)p)[i];
    case K_U8: return ((const uint8_t *)p)[i];
    case K_U16: return ((const uint16_t *)p)[i];
    case K_U32: return ((const uint32_t *)p)[i];
    case K_U64: return (double)((const uint64_t *)p)[i];
    default: return 0;
  }
}

__device__ int64_t pm_ld_i64(int dt, const void *p, int64_t i) {
  switch (dt) {
    case K_I8: return ((const int8_t *)p)[i];
    case K_I16: return ((const int16_t *)p)[i];
    case K_I32: return ((const int32_t *)p)[i];
    case K_I64: return ((const int64_t *)p)[i];
    case K_U8: return ((const uint8_t *)p)[i];
    case K_U16: return ((const uint16_t *)p)[i];
    case K_U32: return ((const uint32_t *)p)[i];
    case K_U64: return (int64_t)((const uint64_t *)p)[i];
    default: return 0;
  }
}

__device__ __forceinline__ int64_t pm_f2i(double d, int64_t lo, int64_t hi) {
  if (d != d) return 0;
  if (d <= (double)lo) return lo;
  if (d >= (double)hi) return hi;
  return (int64_t)d;
}
__device__ __forceinline__ uint64_t pm_f2u(double d, uint64_t hi) {
  if (!(d > 0)) return 0;
  if (d >= (double)hi) return hi;
  return (uint64_t)d;
}

// Floats round to nearest (double -> half in one rounding); integers saturate
// with NaN -> 0.
__device__ void pm_st_f64(int dt, void *p, int64_t i, double v) {
  switch (dt) {
    case K_F32: ((float *)p)[i] = (float)v; break;
    case K_F64: ((double *)p)[i] = v; break;
    case K_F16: ((__half *)p)[i] = __double2half(v); break;
    case K_BF16: ((__nv_bfloat16 *)p)[i] = __double2bfloat16(v); break;
    case K_I8: ((int8_t *)p)[i] = (int8_t)pm_f2i(v, INT8_MIN, INT8_MAX); break;
    case K_I16: ((int16_t *)p)[i] = (int16_t)pm_f2i(v, INT16_MIN, INT16_MAX); break;
    case K_I32: ((int32_t *)p)[i] = (int32_t)pm_f2i(v, INT32_MIN, INT32_MAX); break;
    case K_I64: ((int64_t *)p)[i] = pm_f2i(v, INT64_MIN, INT64_MAX); break;
    case K_U8: ((uint8_t *)p)[i] = (uint8_t)pm_f2u(v, UINT8_MAX); break;
    case K_U16: ((uint16_t *)p)[i] = (uint16_t)pm_f2u(v, UINT16_MAX); break;
    case K_U32: ((uint32_t *)p)[i] = (uint32_t)pm_f2u(v, UINT32_MAX); break;
    case K_U64: ((uint64_t *)p)[i] = pm_f2u(v, UINT64_MAX); break;
    default: break;
  }
}

// Integers wrap.
__device__ void pm_st_i64(int dt, void *p, int64_t i, int64_t v, bool uns) {
  uint64_t u = (uint64_t)v;
  switch (dt) {
    case K_F32: ((float *)p)[i] = uns ? (float)u : (float)v; break;
    case K_F64: ((double *)p)[i] = uns ? (double)u : (double)v; break;
    case K_F16:
    case K_BF16: pm_st_f64(dt, p, i, uns ? (double)u : (double)v); break;
    case K_I8: ((int8_t *)p)[i] = (int8_t)u; break;
    case K_I16: ((int16_t *)p)[i] = (int16_t)u; break;
    case K_I32: ((int32_t *)p)[i] = (int32_t)u; break;
    case K_I64: ((int64_t *)p)[i] = v; break;
    case K_U8: ((uint8_t *)p)[i] = (uint8_t)u; break;
    case K_U16: ((uint16_t *)p)[i] = (uint16_t)u; break;
    case K_U32: ((uint32_t *)p)[i] = (uint32_t)u; break;
    case K_U64: ((uint64_t *)p)[i] = u; break;
    default: break;
  }
}

__global__ void pow_mixed_kernel(int ta, const void *a, int tb, const void *b, void *y,
                                 k_ew_dgeom<int64_t, 2> g, int64_t n) {
  int ca = k_ew_category(ta), cb = k_ew_category(tb);
  bool ints = ca != KC_F && cb != KC_F;
  bool ux = ca == KC_U, uy = cb == KC_U;
  K_GRID_STRIDE(i, n) {
    int64_t off[2];
    k_ew_offsets<int64_t, 2>(g, i, off);
    if (ints) {
      int64_t x = pm_ld_i64(ta, a, off[0]), e = pm_ld_i64(tb, b, off[1]);
      int64_t r = uy || e >= 0 ? (int64_t)k_ipow_u((uint64_t)x, (uint64_t)e) : k_ipow_s(x, e);
      pm_st_i64(ta, y, i, r, ux);
    } else {
      pm_st_f64(ta, y, i, pow(pm_ld_f64(ta, a, off[0]), pm_ld_f64(tb, b, off[1])));
    }
  }
}

extern "C" int k_ew_pow_mixed_supported(int base_dtype, int exp_dtype) {
  int ca = k_ew_category(base_dtype), cb = k_ew_category(exp_dtype);
  return ca >= 0 && ca != KC_B && cb >= 0 && cb != KC_B;
}

extern "C" cudaError_t k_ew_pow_mixed(int base_dtype, const void *a, int exp_dtype, const void *b,
                                      void *y, const k_ew_geom *g, cudaStream_t stream) {
  if (!k_ew_pow_mixed_supported(base_dtype, exp_dtype) || g->n_in != 2)
    return cudaErrorInvalidValue;
  if (g->n <= 0) return cudaSuccess;
  pow_mixed_kernel<<<k_ew_blocks(g->n), K_EW_THREADS, 0, stream>>>(
      base_dtype, a, exp_dtype, b, y, k_ew_dgeom_of<int64_t, 2>(g), g->n);
  return cudaGetLastError();
}
