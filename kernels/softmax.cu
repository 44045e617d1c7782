// softmax.cu: Softmax / LogSoftmax and ArgMax / ArgMin along one axis of
// [outer, len, inner].
// - inner == 1, len <= 1024: one warp per row, the row held in registers;
// - inner == 1, longer rows: one block per row (three passes through L2);
// - inner > 1: one thread per (outer, inner) column, coalesced across columns.
#include "k_reduce.cuh"
#include "softmax.h"

namespace {

// The shift of a row, as the CPU: its maximum, but 0 when that is -inf (an all -inf
// row then gives NaN as the CPU does); +inf and NaN stay.
template <typename A>
__device__ __forceinline__ A sm_shift(A m) {
  return (isinf(m) && m < 0) ? (A)0 : m;
}

template <typename T, typename A, bool LOG, int NV>
__global__ void sm_rows_warp(const T *__restrict__ x, T *__restrict__ y, int64_t rows, int len) {
  const int lane = threadIdx.x & 31;
  const int64_t nwarps = ((int64_t)gridDim.x * blockDim.x) >> 5;
  for (int64_t row = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5; row < rows;
       row += nwarps) {
    const T *p = x + row * len;
    T *q = y + row * len;
    A v[NV];
    A m = (A)-INFINITY;
#pragma unroll
    for (int k = 0; k < NV; k++) {
      const int i = lane + 32 * k;
      v[k] = i < len ? k_load_as<A>(p[i]) : (A)-INFINITY;
      m = k_max_op()(m, v[k]);
    }
    m = sm_shift(k_warp_reduce(m, k_max_op()));
    A s = 0;
#pragma unroll
    for (int k = 0; k < NV; k++) {
      if (lane + 32 * k < len) {
        v[k] = v[k] - m;
        if (LOG) {
          s += k_exp(v[k]);
        } else {
          v[k] = k_exp(v[k]);
          s += v[k];
        }
      }
    }
    s = k_warp_reduce(s, k_add_op());
    const A f = LOG ? k_log(s) : (A)1 / s;
#pragma unroll
    for (int k = 0; k < NV; k++) {
      const int i = lane + 32 * k;
      if (i < len) q[i] = k_store_as<T, A>(LOG ? v[k] - f : v[k] * f);
    }
  }
}

template <typename T, typename A, bool LOG>
__global__ void sm_rows_block(const T *__restrict__ x, T *__restrict__ y, int64_t rows,
                              int64_t len) {
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {  // uniform per block
    const T *p = x + row * len;
    T *q = y + row * len;
    A m = (A)-INFINITY;
    for (int64_t i = threadIdx.x; i < len; i += blockDim.x) m = k_max_op()(m, k_load_as<A>(p[i]));
    m = sm_shift(k_block_reduce(m, k_max_op(), (A)-INFINITY));
    A s = 0;
    for (int64_t i = threadIdx.x; i < len; i += blockDim.x) s += k_exp(k_load_as<A>(p[i]) - m);
    s = k_block_reduce(s, k_add_op(), (A)0);
    const A f = LOG ? k_log(s) : (A)1 / s;
    for (int64_t i = threadIdx.x; i < len; i += blockDim.x) {
      const A v = k_load_as<A>(p[i]) - m;
      q[i] = k_store_as<T, A>(LOG ? v - f : k_exp(v) * f);
    }
  }
}

template <typename T, typename A, bool LOG>
__global__ void sm_cols(const T *__restrict__ x, T *__restrict__ y, int64_t outer, int64_t len,
                        int64_t inner) {
  K_GRID_STRIDE(o, outer * inner) {
    const int64_t a = o / inner, b = o - a * inner;
    const T *p = x + a * len * inner + b;
    T *q = y + a * len * inner + b;
    A m = (A)-INFINITY;
    for (int64_t i = 0; i < len; i++) m = k_max_op()(m, k_load_as<A>(p[i * inner]));
    m = sm_shift(m);
    A s = 0;
    for (int64_t i = 0; i < len; i++) s += k_exp(k_load_as<A>(p[i * inner]) - m);
    const A f = LOG ? k_log(s) : (A)1 / s;
    for (int64_t i = 0; i < len; i++) {
      const A v = k_load_as<A>(p[i * inner]) - m;
      q[i * inner] = k_store_as<T, A>(LOG ? v - f : k_exp(v) * f);
    }
  }
}

template <typename T, typename A, bool LOG>
cudaError_t sm_launch(int64_t outer, int64_t len, int64_t inner, const void *xv, void *yv,
                      cudaStream_t s) {
  const T *x = (const T *)xv;
  T *y = (T *)yv;
  if (inner == 1 && len <= 1024) {
    const unsigned b = k_blocks(outer * 32, 256);
    const int l = (int)len;
    if (len <= 128)
      sm_rows_warp<T, A, LOG, 4><<<b, 256, 0, s>>>(x, y, outer, l);
    else if (len <= 512)
      sm_rows_warp<T, A, LOG, 16><<<b, 256, 0, s>>>(x, y, outer, l);
    else
      sm_rows_warp<T, A, LOG, 32><<<b, 256, 0, s>>>(x, y, outer, l);
  } else if (inner == 1) {
    const unsigned b = (unsigned)(outer < 65535 * 32 ? outer : 65535 * 32);
    sm_rows_block<T, A, LOG><<<b, len >= 8192 ? 1024 : 512, 0, s>>>(x, y, outer, len);
  } else {
    sm_cols<T, A, LOG><<<k_blocks(outer * inner, 256), 256, 0, s>>>(x, y, outer, len, inner);
  }
  return cudaGetLastError();
}

template <typename T, typename A>
cudaError_t sm_launch_log(int log_, int64_t outer, int64_t len, int64_t inner, const void *x,
                          void *y, cudaStream_t s) {
  return log_ ? sm_launch<T, A, true>(outer, len, inner, x, y, s)
              : sm_launch<T, A, false>(outer, len, inner, x, y, s);
}

// ---- ArgMax / ArgMin -----------------------------------------------------------------

// Whether candidate (v, i) beats the current best (bv, bi); bi < 0: none yet. A strict
// total order, so partial results merge in any order: NaN first (lowest index),
// then the value, then the index (lowest, or highest with select_last).
template <typename A>
__device__ __forceinline__ bool am_better(A v, int64_t i, A bv, int64_t bi, bool is_max,
                                          bool last) {
  if (i < 0) return false;
  if (bi < 0) return true;
  const bool vn = k_isnan(v), bn = k_isnan(bv);
  if (bn) return vn && i < bi;
  if (vn) return true;
  if (v == bv) return last ? i > bi : i < bi;
  return is_max ? v > bv : v < bv;
}

template <typename T, typename A>
__global__ void am_cols(const T *__restrict__ x, int64_t *__restrict__ y, int64_t outer,
                        int64_t len, int64_t inner, bool is_max, bool last) {
  K_GRID_STRIDE(o, outer * inner) {
    const int64_t a = o / inner, b = o - a * inner;
    const T *p = x + a * len * inner + b;
    A bv = 0;
    int64_t bi = -1;
    for (int64_t i = 0; i < len; i++) {
      const A v = k_load_as<A>(p[i * inner]);
      if (am_better(v, i, bv, bi, is_max, last)) {
        bv = v;
        bi = i;
      }
    }
    y[o] = bi < 0 ? 0 : bi;
  }
}

template <typename T, typename A>
__global__ void am_rows_warp(const T *__restrict__ x, int64_t *__restrict__ y, int64_t rows,
                             int64_t len, bool is_max, bool last) {
  const int lane = threadIdx.x & 31;
  const int64_t nwarps = ((int64_t)gridDim.x * blockDim.x) >> 5;
  for (int64_t row = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5; row < rows;
       row += nwarps) {
    const T *p = x + row * len;
    A bv = 0;
    int64_t bi = -1;
    for (int64_t i = lane; i < len; i += 32) {
      const A v = k_load_as<A>(p[i]);
      if (am_better(v, i, bv, bi, is_max, last)) {
        bv = v;
        bi = i;
      }
    }
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
      const A ov = __shfl_xor_sync(0xffffffffu, bv, o);
      const int64_t oi = __shfl_xor_sync(0xffffffffu, bi, o);
      if (am_better(ov, oi, bv, bi, is_max, last)) {
        bv = ov;
        bi = oi;
      }
    }
    if (lane == 0) y[row] = bi < 0 ? 0 : bi;
  }
}

template <typename T, typename A>
cudaError_t am_launch(bool is_max, bool last, int64_t outer, int64_t len, int64_t inner,
                      const void *xv, int64_t *y, cudaStream_t s) {
  const T *x = (const T *)xv;
  if (inner == 1 && len >= 64)
    am_rows_warp<T, A><<<k_blocks(outer * 32, 256), 256, 0, s>>>(x, y, outer, len, is_max, last);
  else
    am_cols<T, A>
        <<<k_blocks(outer * inner, 256), 256, 0, s>>>(x, y, outer, len, inner, is_max, last);
  return cudaGetLastError();
}

}  // namespace

extern "C" cudaError_t k_softmax(int dtype, int log_, int64_t outer, int64_t len, int64_t inner,
                                 const void *x, void *y, cudaStream_t stream) {
  if (outer * len * inner <= 0) return cudaSuccess;
  switch (dtype) {
    case K_F32: return sm_launch_log<float, float>(log_, outer, len, inner, x, y, stream);
    case K_F16: return sm_launch_log<__half, float>(log_, outer, len, inner, x, y, stream);
    case K_BF16: return sm_launch_log<__nv_bfloat16, float>(log_, outer, len, inner, x, y, stream);
    case K_F64: return sm_launch_log<double, double>(log_, outer, len, inner, x, y, stream);
    default: return cudaErrorInvalidValue;
  }
}

extern "C" cudaError_t k_argminmax(int dtype, int is_max, int select_last, int64_t outer,
                                   int64_t len, int64_t inner, const void *x, int64_t *y,
                                   cudaStream_t stream) {
  if (outer * inner <= 0) return cudaSuccess;
  if (len < 1) return cudaErrorInvalidValue;
  const bool mx = is_max != 0, last = select_last != 0;
#define K_AM(T, A) return am_launch<T, A>(mx, last, outer, len, inner, x, y, stream)
  switch (dtype) {
    case K_F32: K_AM(float, float);
    case K_F16: K_AM(__half, float);
    case K_BF16: K_AM(__nv_bfloat16, float);
    case K_F64: K_AM(double, double);
    case K_I8: K_AM(int8_t, int64_t);
    case K_U8: K_AM(uint8_t, int64_t);
    case K_I16: K_AM(int16_t, int64_t);
    case K_U16: K_AM(uint16_t, int64_t);
    case K_I32: K_AM(int32_t, int64_t);
    case K_U32: K_AM(uint32_t, int64_t);
    case K_I64: K_AM(int64_t, int64_t);
    case K_U64: K_AM(uint64_t, int64_t);
    default: return cudaErrorInvalidValue;
  }
#undef K_AM
}
