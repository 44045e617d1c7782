// k_reduce_ops.cuh: the Reduce* family's element ops shared by kernels/reduce.cu (rows,
// columns, strided) and kernels/reduce_mid.cu (channels-last spatial): how an element
// enters the accumulator, how two accumulators combine, how a kind finishes.
#pragma once

#include "k_reduce.cuh"
#include "reduce.h"

namespace {

// How each element enters the accumulator, and how two accumulators combine.
enum { R_ADD, R_ADDSQ, R_ADDABS, R_ADDEXP, R_MUL, R_MAX, R_MIN };
// What happens to the accumulator at the end.
enum { F_NONE, F_MEAN, F_SQRT, F_LOG, F_LOGSHIFT };

__device__ __forceinline__ float r_add(float a, float b) { return a + b; }
__device__ __forceinline__ double r_add(double a, double b) { return a + b; }
__device__ __forceinline__ int64_t r_add(int64_t a, int64_t b) {
  return (int64_t)((uint64_t)a + (uint64_t)b);  // wraps like the CPU's uint64 arithmetic
}
__device__ __forceinline__ float r_mul(float a, float b) { return a * b; }
__device__ __forceinline__ double r_mul(double a, double b) { return a * b; }
__device__ __forceinline__ int64_t r_mul(int64_t a, int64_t b) {
  return (int64_t)((uint64_t)a * (uint64_t)b);
}
__device__ __forceinline__ float r_abs(float v) { return fabsf(v); }
__device__ __forceinline__ double r_abs(double v) { return fabs(v); }
__device__ __forceinline__ int64_t r_abs(int64_t v) {
  return v < 0 ? (int64_t)(0 - (uint64_t)v) : v;
}
__device__ __forceinline__ float r_exp(float v) { return expf(v); }
__device__ __forceinline__ double r_exp(double v) { return exp(v); }
__device__ __forceinline__ float r_sqrt(float v) { return sqrtf(v); }
__device__ __forceinline__ double r_sqrt(double v) { return sqrt(v); }
__device__ __forceinline__ float r_log(float v) { return logf(v); }
__device__ __forceinline__ double r_log(double v) { return log(v); }
__device__ __forceinline__ float r_finite_or0(float v) { return isfinite(v) ? v : 0.0f; }
__device__ __forceinline__ double r_finite_or0(double v) { return isfinite(v) ? v : 0.0; }

template <int OP, typename A>
__device__ __forceinline__ A r_comb(A a, A b) {
  if constexpr (OP == R_MUL)
    return r_mul(a, b);
  else if constexpr (OP == R_MAX)
    return K_NAN_MAX(b, a);
  else if constexpr (OP == R_MIN)
    return K_NAN_MIN(b, a);
  else
    return r_add(a, b);
}
template <int OP>
struct r_comb_f {
  template <typename A>
  __device__ __forceinline__ A operator()(A a, A b) const {
    return r_comb<OP, A>(a, b);
  }
};

template <int OP, typename A>
__device__ __forceinline__ A r_pre(A v, A shift) {
  if constexpr (OP == R_ADDSQ)
    return r_mul(v, v);
  else if constexpr (OP == R_ADDABS)
    return r_abs(v);
  else if constexpr (OP == R_ADDEXP)
    return r_exp(v - shift);
  else
    return v;
}

template <typename T, typename A>
__device__ __forceinline__ T r_finish(A acc, int fin, int64_t count, A shift) {
  if constexpr (std::is_integral<A>::value) {
    if (fin == F_MEAN) return k_store_as<T, double>(count ? (double)acc / (double)count : 0.0);
    return k_store_as<T, A>(acc);
  } else {
    switch (fin) {
      case F_MEAN: acc = acc / (A)count; break;  // 0 / 0 = NaN on an empty set, as the CPU
      case F_SQRT: acc = r_sqrt(acc); break;
      case F_LOG: acc = r_log(acc); break;
      case F_LOGSHIFT: acc = r_log(acc) + shift; break;
      default: break;
    }
    return k_store_as<T, A>(acc);
  }
}

// The op, finish and accumulator of a kind; integer L2/LogSum/LogSumExp use double.
inline void r_plan(int kind, bool is_int, int *op, int *fin, bool *dacc) {
  *fin = F_NONE;
  *dacc = false;
  switch (kind) {
    case K_RED_SUM: *op = R_ADD; break;
    case K_RED_MEAN:
      *op = R_ADD;
      *fin = F_MEAN;
      break;
    case K_RED_MAX: *op = R_MAX; break;
    case K_RED_MIN: *op = R_MIN; break;
    case K_RED_PROD: *op = R_MUL; break;
    case K_RED_L1: *op = R_ADDABS; break;
    case K_RED_L2:
      *op = R_ADDSQ;
      *fin = F_SQRT;
      *dacc = is_int;
      break;
    case K_RED_SUMSQ: *op = R_ADDSQ; break;
    case K_RED_LOGSUM:
      *op = R_ADD;
      *fin = F_LOG;
      *dacc = is_int;
      break;
    default:
      *op = R_ADDEXP;
      *fin = F_LOGSHIFT;
      *dacc = is_int;
      break;
  }
}

}  // namespace
