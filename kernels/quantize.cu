// quantize.cu: QuantizeLinear / DequantizeLinear (quantize.h). One thread an element;
// the division is IEEE (__fdiv_rn: the build may use fast math), rounding half to even
// (rintf), as the CPU reference.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <type_traits>

#include "k_dtype.h"
#include "quantize.h"

namespace {

__device__ __forceinline__ int64_t param_index(const k_quant_layout &l, int64_t i) {
  if (l.kind == 0) return 0;
  const int64_t j = i % l.inner, oa = i / l.inner, a = oa % l.dim, o = oa / l.dim;
  if (l.kind == 1) return a;
  return (o * l.sdim + a / l.block) * l.inner + j * l.istep;
}

/* The scale and zero point of element k, whatever their dtypes. */
__device__ __forceinline__ float scale_at(const k_quant_layout &l, const void *s, int64_t k) {
  if (l.params_in_args) return l.scale0;
  switch (l.scale_dtype) {
    case K_F16: return __half2float(((const __half *)s)[k]);
    case K_BF16: return __bfloat162float(((const __nv_bfloat16 *)s)[k]);
    default: return ((const float *)s)[k];
  }
}
__device__ __forceinline__ int32_t zp_at(const k_quant_layout &l, const void *z, int64_t k) {
  if (l.params_in_args) return l.zp0;
  if (!z) return 0;
  switch (l.zp_dtype) {
    case K_U8: return ((const uint8_t *)z)[k];
    case K_I8: return ((const int8_t *)z)[k];
    case K_U16: return ((const uint16_t *)z)[k];
    case K_I16: return ((const int16_t *)z)[k];
    default: return ((const int32_t *)z)[k];
  }
}

template <typename T> __device__ __forceinline__ float load_f(const T *p, int64_t i);
template <> __device__ __forceinline__ float load_f(const float *p, int64_t i) { return p[i]; }
template <> __device__ __forceinline__ float load_f(const __half *p, int64_t i) {
  return __half2float(p[i]);
}
template <> __device__ __forceinline__ float load_f(const __nv_bfloat16 *p, int64_t i) {
  return __bfloat162float(p[i]);
}

template <typename T> __device__ __forceinline__ void store_f(T *p, int64_t i, float v);
template <> __device__ __forceinline__ void store_f(float *p, int64_t i, float v) { p[i] = v; }
template <> __device__ __forceinline__ void store_f(__half *p, int64_t i, float v) {
  p[i] = __float2half_rn(v);
}
template <> __device__ __forceinline__ void store_f(__nv_bfloat16 *p, int64_t i, float v) {
  p[i] = __float2bfloat16_rn(v);
}

template <typename X, typename Y>
__global__ void quantize_kernel(const X *x, Y *y, const void *scale, const void *zp,
                                k_quant_layout l) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < l.count;
       i += (int64_t)gridDim.x * blockDim.x) {
    int64_t k = param_index(l, i);
    float s = scale_at(l, scale, k);
    int32_t z = zp_at(l, zp, k);
    float xv;
    if constexpr (std::is_same<X, int32_t>::value)
      xv = (float)x[i];
    else
      xv = load_f(x, i);
    if (l.div_f16) xv = __half2float(__float2half_rn(xv)); /* operands and quotient */
    float q = __fdiv_rn(xv, s);
    if (l.div_f16) q = __half2float(__float2half_rn(q));
    float r = isnan(q) ? 0.0f : rintf(q) + (float)z;
    r = r >= (float)l.lo ? r : (float)l.lo; /* NaN-free here; saturate */
    r = r <= (float)l.hi ? r : (float)l.hi;
    y[i] = (Y)(int32_t)r;
  }
}

template <typename X, typename Y>
__global__ void dequantize_kernel(const X *x, Y *y, const void *scale, const void *zp,
                                  k_quant_layout l) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < l.count;
       i += (int64_t)gridDim.x * blockDim.x) {
    int64_t k = param_index(l, i);
    float s = scale_at(l, scale, k);
    int32_t z = zp_at(l, zp, k);
    float v;
    if constexpr (std::is_same<X, int32_t>::value)
      v = (float)((double)((int64_t)x[i] - z) * (double)s); /* int32: the product in double */
    else
      v = (float)((int32_t)x[i] - z) * s;
    store_f(y, i, v);
  }
}

unsigned grid_for(int64_t n) {
  int64_t b = (n + 255) / 256;
  return (unsigned)(b < 1 ? 1 : b > 65535 * 8 ? 65535 * 8 : b);
}

template <typename X>
cudaError_t quantize_to(int y_dtype, const X *x, void *y, const void *s, const void *z,
                        const k_quant_layout *l, cudaStream_t st) {
  unsigned g = grid_for(l->count);
  switch (y_dtype) {
    case K_U8: quantize_kernel<<<g, 256, 0, st>>>(x, (uint8_t *)y, s, z, *l); break;
    case K_I8: quantize_kernel<<<g, 256, 0, st>>>(x, (int8_t *)y, s, z, *l); break;
    case K_U16: quantize_kernel<<<g, 256, 0, st>>>(x, (uint16_t *)y, s, z, *l); break;
    case K_I16: quantize_kernel<<<g, 256, 0, st>>>(x, (int16_t *)y, s, z, *l); break;
    default: return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

template <typename X>
cudaError_t dequantize_to(int y_dtype, const X *x, void *y, const void *s, const void *z,
                          const k_quant_layout *l, cudaStream_t st) {
  unsigned g = grid_for(l->count);
  switch (y_dtype) {
    case K_F32: dequantize_kernel<<<g, 256, 0, st>>>(x, (float *)y, s, z, *l); break;
    case K_F16: dequantize_kernel<<<g, 256, 0, st>>>(x, (__half *)y, s, z, *l); break;
    case K_BF16: dequantize_kernel<<<g, 256, 0, st>>>(x, (__nv_bfloat16 *)y, s, z, *l); break;
    default: return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

}  // namespace

extern "C" cudaError_t k_quantize(int x_dtype, const void *x, int y_dtype, void *y,
                                  const void *scale, const void *zp, const k_quant_layout *l,
                                  cudaStream_t stream) {
  if (l->count == 0) return cudaSuccess;
  switch (x_dtype) {
    case K_F32: return quantize_to(y_dtype, (const float *)x, y, scale, zp, l, stream);
    case K_F16: return quantize_to(y_dtype, (const __half *)x, y, scale, zp, l, stream);
    case K_BF16: return quantize_to(y_dtype, (const __nv_bfloat16 *)x, y, scale, zp, l, stream);
    case K_I32: return quantize_to(y_dtype, (const int32_t *)x, y, scale, zp, l, stream);
    default: return cudaErrorInvalidValue;
  }
}

extern "C" cudaError_t k_dequantize(int x_dtype, const void *x, int y_dtype, void *y,
                                    const void *scale, const void *zp,
                                    const k_quant_layout *l, cudaStream_t stream) {
  if (l->count == 0) return cudaSuccess;
  switch (x_dtype) {
    case K_U8: return dequantize_to(y_dtype, (const uint8_t *)x, y, scale, zp, l, stream);
    case K_I8: return dequantize_to(y_dtype, (const int8_t *)x, y, scale, zp, l, stream);
    case K_U16: return dequantize_to(y_dtype, (const uint16_t *)x, y, scale, zp, l, stream);
    case K_I16: return dequantize_to(y_dtype, (const int16_t *)x, y, scale, zp, l, stream);
    case K_I32: return dequantize_to(y_dtype, (const int32_t *)x, y, scale, zp, l, stream);
    default: return cudaErrorInvalidValue;
  }
}
