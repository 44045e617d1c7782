// k_common.cuh: helpers shared by the kernels: typed loads/stores through float,
// grid sizing, and a dtype dispatch macro.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>

#include "k_dtype.h"
#include "k_nan.h" // the NaN-keeping Relu / Clip / Max / Min every kernel shares

// Converting every element type to and from float (or double for f64/i64
// precision where it matters) keeps each kernel written once.
template <typename T> __device__ __forceinline__ float k_to_f(T v) { return (float)v; }
template <> __device__ __forceinline__ float k_to_f<__half>(__half v) { return __half2float(v); }
template <> __device__ __forceinline__ float k_to_f<__nv_bfloat16>(__nv_bfloat16 v) {
  return __bfloat162float(v);
}
template <typename T> __device__ __forceinline__ T k_from_f(float v) { return (T)v; }
template <> __device__ __forceinline__ __half k_from_f<__half>(float v) { return __float2half_rn(v); }
template <> __device__ __forceinline__ __nv_bfloat16 k_from_f<__nv_bfloat16>(float v) {
  return __float2bfloat16_rn(v);
}

// Eight halves in one 16-byte vector to floats and back (the channels-last kernels'
// unit of access: 8 consecutive channels).
__device__ __forceinline__ void k_half8_unpack(const uint4 &u, float *f) {
  const __half2 *h = reinterpret_cast<const __half2 *>(&u);
#pragma unroll
  for (int i = 0; i < 4; i++) {
    const float2 t = __half22float2(h[i]);
    f[2 * i] = t.x;
    f[2 * i + 1] = t.y;
  }
}

__device__ __forceinline__ uint4 k_half8_pack(const float *f) {
  uint4 u;
  __half2 *h = reinterpret_cast<__half2 *>(&u);
#pragma unroll
  for (int i = 0; i < 4; i++) h[i] = __floats2half2_rn(f[2 * i], f[2 * i + 1]);
  return u;
}

// N elements of T as one aligned access (N * sizeof(T) of 4, 8 or 16 bytes loads or
// stores in one instruction).
template <typename T, int N> struct alignas(sizeof(T) * N) k_vec { T v[N]; };

static inline unsigned k_blocks(int64_t n, int threads) {
  int64_t b = (n + threads - 1) / threads;
  // grid-stride loops cover the rest
  return (unsigned)(b < 1 ? 1 : (b > 65535 * 32 ? 65535 * 32 : b));
}

#define K_GRID_STRIDE(i, n) \
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < (n); i += (int64_t)gridDim.x * blockDim.x)

// Calls MACRO(ctype) for the element type `dt`; `fallback` runs for others.
#define K_DISPATCH_ALL(dt, MACRO, fallback)  \
  switch (dt) {                              \
    case K_F32: MACRO(float); break;         \
    case K_F16: MACRO(__half); break;        \
    case K_BF16: MACRO(__nv_bfloat16); break;\
    case K_F64: MACRO(double); break;        \
    case K_I8: MACRO(int8_t); break;         \
    case K_U8: MACRO(uint8_t); break;        \
    case K_BOOL: MACRO(uint8_t); break;      \
    case K_I16: MACRO(int16_t); break;       \
    case K_U16: MACRO(uint16_t); break;      \
    case K_I32: MACRO(int32_t); break;       \
    case K_U32: MACRO(uint32_t); break;      \
    case K_I64: MACRO(int64_t); break;       \
    case K_U64: MACRO(uint64_t); break;      \
    default: fallback;                       \
  }
