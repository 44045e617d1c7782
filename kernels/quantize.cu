// quantize.cu: QuantizeLinear / DequantizeLinear (quantize.h). One thread an element,
// or 8 (per tensor); the division is IEEE (__fdiv_rn: the build may use fast math),
// rounding half to even (rintf), as the CPU reference.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <type_traits>

#include "k_common.cuh"
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

/* One element's quantization, as the CPU reference: y = saturate(rint(x / s) + z). */
__device__ __forceinline__ int32_t quant_one(float xv, float s, int32_t z, const k_quant_layout &l) {
  if (l.div_f16) xv = __half2float(__float2half_rn(xv)); /* operands and quotient */
  float q = __fdiv_rn(xv, s);
  if (l.div_f16) q = __half2float(__float2half_rn(q));
  float r = isnan(q) ? 0.0f : rintf(q) + (float)z;
  r = r >= (float)l.lo ? r : (float)l.lo; /* NaN-free here; saturate */
  r = r <= (float)l.hi ? r : (float)l.hi;
  return (int32_t)r;
}

template <typename X> __device__ __forceinline__ float quant_in(const X *x, int64_t i) {
  if constexpr (std::is_same<X, int32_t>::value)
    return (float)x[i];
  else
    return load_f(x, i);
}

/* One element's dequantization (not int32, whose product dequantize_kernel takes in
 * double): y = (q - z) * s. */
template <typename X, typename Y>
__device__ __forceinline__ Y dequant_one(X q, float s, int32_t z) {
  Y out[1];
  store_f(out, 0, (float)((int32_t)q - z) * s);
  return out[0];
}

template <typename X, typename Y>
__global__ void quantize_kernel(const X *x, Y *y, const void *scale, const void *zp,
                                k_quant_layout l) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < l.count;
       i += (int64_t)gridDim.x * blockDim.x) {
    int64_t k = param_index(l, i);
    y[i] = (Y)quant_one(quant_in(x, i), scale_at(l, scale, k), zp_at(l, zp, k), l);
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
    if constexpr (std::is_same<X, int32_t>::value)
      store_f(y, i, (float)((double)((int64_t)x[i] - z) * (double)s)); /* the product in double */
    else
      store_f(y, i, (float)((int32_t)x[i] - z) * s);
  }
}

/* Per tensor with the parameters in the arguments (a QDQ model's activations): 8
 * elements a thread, loaded and stored as one vector each (the one-element kernels
 * above reach 15-19% of the memory bandwidth on ResNet-50's activations, H100
 * profile); the same arithmetic. The count's last count % 8 elements go one a thread. */
template <bool Q, typename X, typename Y>
__global__ void per_tensor_vec8_kernel(const X *__restrict__ x, Y *__restrict__ y,
                                       k_quant_layout l) {
  const int64_t n8 = l.count / 8, stride = (int64_t)gridDim.x * blockDim.x;
  const int64_t t = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  const float s = l.scale0;
  const int32_t z = l.zp0;
  for (int64_t i = t; i < n8; i += stride) {
    const k_vec<X, 8> u = reinterpret_cast<const k_vec<X, 8> *>(x)[i];
    k_vec<Y, 8> o;
#pragma unroll
    for (int k = 0; k < 8; k++) {
      if constexpr (Q)
        o.v[k] = (Y)quant_one(quant_in(u.v, k), s, z, l);
      else
        o.v[k] = dequant_one<X, Y>(u.v[k], s, z);
    }
    reinterpret_cast<k_vec<Y, 8> *>(y)[i] = o;
  }
  const int64_t tail = n8 * 8 + t;
  if (tail < l.count) {
    if constexpr (Q)
      y[tail] = (Y)quant_one(quant_in(x, tail), s, z, l);
    else
      y[tail] = dequant_one<X, Y>(x[tail], s, z);
  }
}

unsigned grid_for(int64_t n) {
  int64_t b = (n + 255) / 256;
  return (unsigned)(b < 1 ? 1 : b > 65535 * 8 ? 65535 * 8 : b);
}

/* Q: quantize x (X) to y (Y), else dequantize: the vector kernel where the layout is
 * per tensor with its parameters in the arguments, x and y aligned for 8 elements and
 * x not int32, else one element a thread. */
template <bool Q, typename X, typename Y>
cudaError_t launch(const X *x, Y *y, const void *s, const void *z, const k_quant_layout *l,
                   cudaStream_t st) {
  if constexpr (!std::is_same<X, int32_t>::value) {
    if (l->kind == 0 && l->params_in_args && (uintptr_t)x % sizeof(k_vec<X, 8>) == 0 &&
        (uintptr_t)y % sizeof(k_vec<Y, 8>) == 0) {
      per_tensor_vec8_kernel<Q, X, Y><<<grid_for((l->count + 7) / 8), 256, 0, st>>>(x, y, *l);
      return cudaGetLastError();
    }
  }
  if constexpr (Q)
    quantize_kernel<<<grid_for(l->count), 256, 0, st>>>(x, y, s, z, *l);
  else
    dequantize_kernel<<<grid_for(l->count), 256, 0, st>>>(x, y, s, z, *l);
  return cudaGetLastError();
}

template <typename X>
cudaError_t quantize_to(int y_dtype, const X *x, void *y, const void *s, const void *z,
                        const k_quant_layout *l, cudaStream_t st) {
  switch (y_dtype) {
    case K_U8: return launch<true>(x, (uint8_t *)y, s, z, l, st);
    case K_I8: return launch<true>(x, (int8_t *)y, s, z, l, st);
    case K_U16: return launch<true>(x, (uint16_t *)y, s, z, l, st);
    case K_I16: return launch<true>(x, (int16_t *)y, s, z, l, st);
    default: return cudaErrorInvalidValue;
  }
}

template <typename X>
cudaError_t dequantize_to(int y_dtype, const X *x, void *y, const void *s, const void *z,
                          const k_quant_layout *l, cudaStream_t st) {
  switch (y_dtype) {
    case K_F32: return launch<false>(x, (float *)y, s, z, l, st);
    case K_F16: return launch<false>(x, (__half *)y, s, z, l, st);
    case K_BF16: return launch<false>(x, (__nv_bfloat16 *)y, s, z, l, st);
    default: return cudaErrorInvalidValue;
  }
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
