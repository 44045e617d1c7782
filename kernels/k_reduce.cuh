// k_reduce.cuh: device helpers shared by the pooling, normalization, reduction and
// softmax kernels: loads into an accumulator type, stores back with the CPU
// reference's conversion rules, warp and block reductions.
#pragma once

#include <math.h>
#include <stdint.h>

#include <type_traits>

#include "k_common.cuh"

// v as the accumulator type A (float, double or int64_t).
template <typename A, typename T>
__device__ __forceinline__ A k_load_as(T v) {
  return (A)v;
}
template <>
__device__ __forceinline__ float k_load_as<float, __half>(__half v) {
  return __half2float(v);
}
template <>
__device__ __forceinline__ float k_load_as<float, __nv_bfloat16>(__nv_bfloat16 v) {
  return __bfloat162float(v);
}
template <>
__device__ __forceinline__ double k_load_as<double, __half>(__half v) {
  return (double)__half2float(v);
}
template <>
__device__ __forceinline__ double k_load_as<double, __nv_bfloat16>(__nv_bfloat16 v) {
  return (double)__bfloat162float(v);
}

// An accumulator back to the element type T. Floating accumulators stored into an
// integer type follow tensor_set_f64: NaN -> 0, saturation to int64, then the C
// conversion (wrapping) to T.
template <typename T, typename A>
__device__ __forceinline__ T k_store_as(A v) {
  if constexpr (std::is_integral<T>::value) {
    if constexpr (std::is_integral<A>::value) {
      return (T)v;
    } else {
      double d = (double)v;
      int64_t i = d != d                        ? 0
                  : (d > -9.2e18 && d < 9.2e18) ? (int64_t)d
                                                : (d > 0 ? INT64_MAX : INT64_MIN);
      return (T)i;
    }
  } else if constexpr (std::is_same<A, float>::value) {
    return k_from_f<T>(v);
  } else {
    return (T)v;  // double -> double
  }
}

// Element i of a float vector of a run-time dtype (small per-channel parameters).
__device__ __forceinline__ double k_load_any_d(int dt, const void *p, int64_t i) {
  switch (dt) {
    case K_F16: return (double)__half2float(((const __half *)p)[i]);
    case K_BF16: return (double)__bfloat162float(((const __nv_bfloat16 *)p)[i]);
    case K_F64: return ((const double *)p)[i];
    default: return (double)((const float *)p)[i];
  }
}

// Stores v at element i of a float vector of a run-time dtype.
__device__ __forceinline__ void k_store_any(int dt, void *p, int64_t i, double v) {
  switch (dt) {
    case K_F16: ((__half *)p)[i] = __float2half_rn((float)v); break;
    case K_BF16: ((__nv_bfloat16 *)p)[i] = __float2bfloat16_rn((float)v); break;
    case K_F64: ((double *)p)[i] = v; break;
    default: ((float *)p)[i] = (float)v; break;
  }
}

__device__ __forceinline__ bool k_isnan(float v) { return v != v; }
__device__ __forceinline__ bool k_isnan(double v) { return v != v; }
__device__ __forceinline__ bool k_isnan(int64_t) { return false; }
__device__ __forceinline__ bool k_isnan(int) { return false; }

__device__ __forceinline__ float k_exp(float v) { return expf(v); }
__device__ __forceinline__ double k_exp(double v) { return exp(v); }
__device__ __forceinline__ float k_log(float v) { return logf(v); }
__device__ __forceinline__ double k_log(double v) { return log(v); }
__device__ __forceinline__ float k_sqrt(float v) { return sqrtf(v); }
__device__ __forceinline__ double k_sqrt(double v) { return sqrt(v); }

__device__ __forceinline__ float k_pow(float a, float b) { return powf(a, b); }
__device__ __forceinline__ double k_pow(double a, double b) { return pow(a, b); }

struct k_add_op {
  template <typename A>
  __device__ __forceinline__ A operator()(A a, A b) const {
    return a + b;
  }
};
// NaN-propagating maximum (a NaN, once met, stays).
struct k_max_op {
  template <typename A>
  __device__ __forceinline__ A operator()(A a, A b) const {
    return K_NAN_MAX(b, a);
  }
};

// Reduction over the 32 lanes of a warp; every lane gets the result.
template <typename A, typename F>
__device__ __forceinline__ A k_warp_reduce(A v, F f) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v = f(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

// Reduction over the whole block (blockDim.x a multiple of 32, at most 1024); every
// thread gets the result. All threads of the block must call it; it may be called
// repeatedly (it synchronizes before reusing its shared buffer).
template <typename A, typename F>
__device__ __forceinline__ A k_block_reduce(A v, F f, A ident) {
  __shared__ A k_red_buf[33];
  v = k_warp_reduce(v, f);
  const int lane = threadIdx.x & 31, w = threadIdx.x >> 5, nw = (blockDim.x + 31) >> 5;
  __syncthreads();  // a previous call may still be reading k_red_buf[32]
  if (lane == 0) k_red_buf[w] = v;
  __syncthreads();
  if (w == 0) {
    A t = lane < nw ? k_red_buf[lane] : ident;
    t = k_warp_reduce(t, f);
    if (lane == 0) k_red_buf[32] = t;
  }
  __syncthreads();
  return k_red_buf[32];
}
