// cast.cu: any-to-any element type conversion through double (exact for every
// integer up to 2^53 and every float type; int64 <-> int64 goes direct).
#include "cast.h"
#include "k_common.cuh"

template <typename T> __device__ __forceinline__ double to_d(T v) { return (double)v; }
template <> __device__ __forceinline__ double to_d<__half>(__half v) { return (double)__half2float(v); }
template <> __device__ __forceinline__ double to_d<__nv_bfloat16>(__nv_bfloat16 v) {
  return (double)__bfloat162float(v);
}

template <typename T> struct limits;
#define K_LIMITS(T, lo, hi) \
  template <> struct limits<T> { static __device__ double low() { return lo; } static __device__ double high() { return hi; } };
K_LIMITS(int8_t, -128.0, 127.0)
K_LIMITS(uint8_t, 0.0, 255.0)
K_LIMITS(int16_t, -32768.0, 32767.0)
K_LIMITS(uint16_t, 0.0, 65535.0)
K_LIMITS(int32_t, -2147483648.0, 2147483647.0)
K_LIMITS(uint32_t, 0.0, 4294967295.0)
K_LIMITS(int64_t, -9223372036854775808.0, 9223372036854774784.0)
K_LIMITS(uint64_t, 0.0, 18446744073709549568.0)

template <typename D> __device__ __forceinline__ D from_d(double v) {
  if (v != v) return (D)0;
  if (v < limits<D>::low()) return (D)limits<D>::low();
  if (v > limits<D>::high()) return (D)limits<D>::high();
  return (D)v;
}
template <> __device__ __forceinline__ float from_d<float>(double v) { return (float)v; }
template <> __device__ __forceinline__ double from_d<double>(double v) { return v; }
template <> __device__ __forceinline__ __half from_d<__half>(double v) { return __float2half_rn((float)v); }
template <> __device__ __forceinline__ __nv_bfloat16 from_d<__nv_bfloat16>(double v) {
  return __float2bfloat16_rn((float)v);
}

template <typename S, typename D>
__global__ void cast_kernel(const S *src, D *dst, int64_t n) {
  K_GRID_STRIDE(i, n) dst[i] = from_d<D>(to_d<S>(src[i]));
}
template <typename S>
__global__ void cast_to_bool(const S *src, uint8_t *dst, int64_t n) {
  K_GRID_STRIDE(i, n) dst[i] = to_d<S>(src[i]) != 0.0;
}
__global__ void cast_i64_i64(const int64_t *src, int64_t *dst, int64_t n) {
  K_GRID_STRIDE(i, n) dst[i] = src[i];
}

template <typename S>
static cudaError_t cast_from(const S *src, int dst_dtype, void *dst, int64_t n, cudaStream_t st) {
  unsigned b = k_blocks(n, 256);
#define K_CAST_TO(D) cast_kernel<S, D><<<b, 256, 0, st>>>(src, (D *)dst, n)
  switch (dst_dtype) {
    case K_BOOL: cast_to_bool<S><<<b, 256, 0, st>>>(src, (uint8_t *)dst, n); break;
    case K_F32: K_CAST_TO(float); break;
    case K_F16: K_CAST_TO(__half); break;
    case K_BF16: K_CAST_TO(__nv_bfloat16); break;
    case K_F64: K_CAST_TO(double); break;
    case K_I8: K_CAST_TO(int8_t); break;
    case K_U8: K_CAST_TO(uint8_t); break;
    case K_I16: K_CAST_TO(int16_t); break;
    case K_U16: K_CAST_TO(uint16_t); break;
    case K_I32: K_CAST_TO(int32_t); break;
    case K_U32: K_CAST_TO(uint32_t); break;
    case K_I64: K_CAST_TO(int64_t); break;
    case K_U64: K_CAST_TO(uint64_t); break;
    default: return cudaErrorInvalidValue;
  }
#undef K_CAST_TO
  return cudaGetLastError();
}

extern "C" cudaError_t k_cast(int src_dtype, const void *src, int dst_dtype, void *dst, int64_t n,
                              cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  if (src_dtype == K_I64 && dst_dtype == K_I64) {
    cast_i64_i64<<<k_blocks(n, 256), 256, 0, stream>>>((const int64_t *)src, (int64_t *)dst, n);
    return cudaGetLastError();
  }
#define K_CAST_FROM(S) return cast_from<S>((const S *)src, dst_dtype, dst, n, stream)
  K_DISPATCH_ALL(src_dtype, K_CAST_FROM, return cudaErrorInvalidValue)
#undef K_CAST_FROM
}
