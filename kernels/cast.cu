// cast.cu: any-to-any element type conversion with the CPU Cast's rules
// (ops/elementwise_convert.c):
// - float -> float rounds once to nearest even (double -> half / bfloat16 too);
// - float -> integer truncates, saturates out-of-range values, NaN -> 0;
// - integer -> integer wraps (C conversion through uint64, as numpy's astype);
// - integer -> float rounds once (int64 -> float32 directly, not via double);
//   int64 -> float16 / bfloat16 goes through double as the CPU does;
// - anything -> bool is v != 0 (NaN -> true); bool reads as 0 / 1.
// Also the graph edges: float32 NCHW -> float16 NHWC in one pass, and 8-bit images
// (uint8 NHWC) normalized into float32 / float16, NCHW or NHWC.
#include <type_traits>

#include "cast.h"
#include "k_common.cuh"

template <typename T> struct k_is_flt : std::false_type {};
template <> struct k_is_flt<float> : std::true_type {};
template <> struct k_is_flt<double> : std::true_type {};
template <> struct k_is_flt<__half> : std::true_type {};
template <> struct k_is_flt<__nv_bfloat16> : std::true_type {};

// Exact for every float type.
template <typename T> __device__ __forceinline__ double to_d(T v) { return (double)v; }
template <> __device__ __forceinline__ double to_d<__half>(__half v) { return (double)__half2float(v); }
template <> __device__ __forceinline__ double to_d<__nv_bfloat16>(__nv_bfloat16 v) {
  return (double)__bfloat162float(v);
}

// Integer limits as int64 / uint64 (std::numeric_limits is host-only without
// --expt-relaxed-constexpr).
template <typename D> struct ilim;
#define K_ILIM(T, LO, HI) \
  template <> struct ilim<T> { static constexpr int64_t lo = LO; static constexpr uint64_t hi = HI; };
K_ILIM(int8_t, INT8_MIN, INT8_MAX)
K_ILIM(uint8_t, 0, UINT8_MAX)
K_ILIM(int16_t, INT16_MIN, INT16_MAX)
K_ILIM(uint16_t, 0, UINT16_MAX)
K_ILIM(int32_t, INT32_MIN, INT32_MAX)
K_ILIM(uint32_t, 0, UINT32_MAX)
K_ILIM(int64_t, INT64_MIN, INT64_MAX)
K_ILIM(uint64_t, 0, UINT64_MAX)
#undef K_ILIM

// double -> integer D: truncation, saturation, NaN -> 0. The bounds compare as
// doubles exactly as the CPU's f2i / f2u do ((double)INT64_MAX is 2^63, so
// anything >= 2^63 gives INT64_MAX).
template <typename D> __device__ __forceinline__ D f2int(double d) {
  if constexpr (std::is_signed<D>::value) {
    const int64_t lo = ilim<D>::lo, hi = (int64_t)ilim<D>::hi;
    if (d != d) return (D)0;
    if (d <= (double)lo) return (D)lo;
    if (d >= (double)hi) return (D)hi;
    return (D)(int64_t)d;
  } else {
    const uint64_t hi = ilim<D>::hi;
    if (!(d > 0)) return (D)0; // NaN, negatives (truncation of (-1, 0) is 0 anyway)
    if (d >= (double)hi) return (D)hi;
    return (D)(uint64_t)d;
  }
}

// Float source S -> D (D not bool).
template <typename S, typename D> __device__ __forceinline__ D conv_f(S v) {
  if constexpr (std::is_same<D, double>::value) {
    return to_d<S>(v);
  } else if constexpr (std::is_same<D, float>::value) {
    if constexpr (std::is_same<S, double>::value) return (float)v; // one rounding
    else return k_to_f<S>(v);                                      // exact
  } else if constexpr (std::is_same<D, __half>::value) {
    if constexpr (std::is_same<S, double>::value) return __double2half(v);
    else if constexpr (std::is_same<S, __half>::value) return v;
    else return __float2half_rn(k_to_f<S>(v)); // float / bfloat16: exact in float
  } else if constexpr (std::is_same<D, __nv_bfloat16>::value) {
    if constexpr (std::is_same<S, double>::value) return __double2bfloat16(v);
    else if constexpr (std::is_same<S, __nv_bfloat16>::value) return v;
    else return __float2bfloat16_rn(k_to_f<S>(v));
  } else {
    return f2int<D>(to_d<S>(v));
  }
}

// Integer source S (bool already read as 0 / 1) -> D (D not bool).
template <typename S, typename D> __device__ __forceinline__ D conv_i(S v) {
  constexpr bool u64 = std::is_same<S, uint64_t>::value;
  constexpr bool wide = sizeof(S) == 8;
  if constexpr (std::is_same<D, float>::value) {
    if constexpr (u64) return __ull2float_rn(v);
    else if constexpr (wide) return __ll2float_rn(v);
    else return (float)v; // int32 and narrower: one rounding
  } else if constexpr (std::is_same<D, double>::value) {
    if constexpr (u64) return __ull2double_rn(v);
    else if constexpr (wide) return __ll2double_rn(v);
    else return (double)v; // exact
  } else if constexpr (std::is_same<D, __half>::value) {
    // 32-bit values are exact in float up to 2^24 and overflow half well before
    // float rounds them, so one rounding either way
    if constexpr (u64) return __double2half(__ull2double_rn(v));
    else if constexpr (wide) return __double2half(__ll2double_rn(v));
    else return __float2half_rn((float)v);
  } else if constexpr (std::is_same<D, __nv_bfloat16>::value) {
    if constexpr (u64) return __double2bfloat16(__ull2double_rn(v));
    else if constexpr (wide) return __double2bfloat16(__ll2double_rn(v));
    else if constexpr (sizeof(S) <= 2) return __float2bfloat16_rn((float)v); // exact in float
    else return __double2bfloat16((double)v);                                 // exact in double
  } else {
    // wraps modulo 2^bits(D)
    return (D)(uint64_t)v;
  }
}

template <typename S, typename D, bool SRC_BOOL>
__global__ void cast_kernel(const S *src, D *dst, int64_t n) {
  K_GRID_STRIDE(i, n) {
    S v = src[i];
    if constexpr (SRC_BOOL) v = (S)(v != 0);
    if constexpr (k_is_flt<S>::value) dst[i] = conv_f<S, D>(v);
    else dst[i] = conv_i<S, D>(v);
  }
}

template <typename S>
__global__ void cast_to_bool(const S *src, uint8_t *dst, int64_t n) {
  K_GRID_STRIDE(i, n) {
    if constexpr (k_is_flt<S>::value) dst[i] = to_d<S>(src[i]) != 0.0; // NaN -> 1
    else dst[i] = src[i] != (S)0;
  }
}

template <typename S, bool SRC_BOOL>
static cudaError_t cast_from(const S *src, int dst_dtype, void *dst, int64_t n, cudaStream_t st) {
  unsigned b = k_blocks(n, 256);
#define K_CAST_TO(D) cast_kernel<S, D, SRC_BOOL><<<b, 256, 0, st>>>(src, (D *)dst, n)
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
  if (src_dtype == K_BOOL) return cast_from<uint8_t, true>((const uint8_t *)src, dst_dtype, dst, n, stream);
#define K_CAST_FROM(S) return cast_from<S, false>((const S *)src, dst_dtype, dst, n, stream)
  K_DISPATCH_ALL(src_dtype, K_CAST_FROM, return cudaErrorInvalidValue)
#undef K_CAST_FROM
  return cudaErrorInvalidValue;
}

// One thread per pixel: its C source values sit H*W apart (neighbouring threads read
// neighbouring pixels: coalesced), its C results are contiguous.
__global__ void cast_nchw_to_nhwc_kernel(const float *src, __half *dst, int64_t n, int64_t c,
                                         int64_t hw) {
  K_GRID_STRIDE(p, n * hw) {
    int64_t b = p / hw, i = p % hw;
    const float *s = src + b * c * hw + i;
    __half *d = dst + p * c;
    for (int64_t k = 0; k < c; k++) d[k] = __float2half_rn(s[k * hw]);
  }
}

extern "C" cudaError_t k_cast_f32_nchw_to_f16_nhwc(const float *src, void *dst, int64_t n,
                                                   int64_t c, int64_t hw, cudaStream_t stream) {
  if (n * hw == 0 || c == 0) return cudaSuccess;
  cast_nchw_to_nhwc_kernel<<<k_blocks(n * hw, 256), 256, 0, stream>>>(src, (__half *)dst, n, c,
                                                                       hw);
  return cudaGetLastError();
}

// 8-bit images: ToTensor's division by 255, then Normalize's subtraction and division,
// in float32 (IEEE division: the CPU's numbers), rounded once to the storage type.
template <typename D> __device__ __forceinline__ D image_store(float v) {
  if constexpr (std::is_same<D, __half>::value) return __float2half_rn(v);
  else return v;
}

// The per-channel mean and std go to shared memory first (copied with constant indices):
// indexed by a run-time channel, the by-value parameter struct would be copied to each thread's local memory (128
// bytes per thread; on the H200 that made MobileNetV2's b256 conversion ~1 ms, about
// twice its 38 MB copy).
#define IMAGE_NORM_SHARED(c, norm)                                \
  __shared__ float mean_s[K_IMAGE_MAX_CHANNELS], std_s[K_IMAGE_MAX_CHANNELS]; \
  if (threadIdx.x == 0) { /* constant indices: read from the parameter bank */ \
    _Pragma("unroll") for (int j_ = 0; j_ < K_IMAGE_MAX_CHANNELS; j_++) {       \
      mean_s[j_] = (norm).mean[j_];                                             \
      std_s[j_] = (norm).std[j_];                                               \
    }                                                                           \
  }                                                                             \
  (void)(c);                                                                    \
  __syncthreads()

#define IMAGE_VEC 8 // elements per thread: one 8-byte load, one 16-byte fp16 store

// NHWC to NHWC: the same element order; each thread converts IMAGE_VEC consecutive
// elements (its first channel found once), vector loads and stores where aligned.
template <typename D>
__global__ void image_nhwc_kernel(const uint8_t *src, D *dst, int64_t total, int c,
                                  k_image_norm norm, bool aligned) {
  IMAGE_NORM_SHARED(c, norm);
  int64_t groups = (total + IMAGE_VEC - 1) / IMAGE_VEC;
  K_GRID_STRIDE(g, groups) {
    int64_t i0 = g * IMAGE_VEC;
    int k = (int)(i0 % c);
    if (aligned && i0 + IMAGE_VEC <= total) {
      uint2 raw = *reinterpret_cast<const uint2 *>(src + i0);
      const uint8_t *b = reinterpret_cast<const uint8_t *>(&raw);
      alignas(16) D v[IMAGE_VEC];
#pragma unroll
      for (int j = 0; j < IMAGE_VEC; j++) {
        v[j] = image_store<D>(((float)b[j] / 255.0f - mean_s[k]) / std_s[k]);
        k = k + 1 == c ? 0 : k + 1;
      }
      if constexpr (std::is_same<D, __half>::value) {
        *reinterpret_cast<uint4 *>(dst + i0) = *reinterpret_cast<const uint4 *>(v);
      } else {
        reinterpret_cast<float4 *>(dst + i0)[0] = *reinterpret_cast<const float4 *>(v);
        reinterpret_cast<float4 *>(dst + i0)[1] = *reinterpret_cast<const float4 *>(v + 4);
      }
    } else {
      for (int64_t i = i0; i < total && i < i0 + IMAGE_VEC; i++) {
        dst[i] = image_store<D>(((float)src[i] / 255.0f - mean_s[k]) / std_s[k]);
        k = k + 1 == c ? 0 : k + 1;
      }
    }
  }
}

// NHWC to NCHW: one thread per pixel; its C bytes are contiguous, and neighbouring
// threads write neighbouring elements of each channel plane.
template <typename D>
__global__ void image_nchw_kernel(const uint8_t *src, D *dst, int64_t pixels, int64_t hw, int c,
                                  k_image_norm norm) {
  IMAGE_NORM_SHARED(c, norm);
  K_GRID_STRIDE(p, pixels) {
    int64_t b = p / hw, j = p % hw;
    const uint8_t *s = src + p * c;
    D *d = dst + b * c * hw + j;
    for (int k = 0; k < c; k++)
      d[k * hw] = image_store<D>(((float)s[k] / 255.0f - mean_s[k]) / std_s[k]);
  }
}

extern "C" cudaError_t k_image_u8_nhwc(const uint8_t *src, int dst_dtype, void *dst, int dst_nhwc,
                                       int64_t n, int64_t hw, int c, const k_image_norm *norm,
                                       cudaStream_t stream) {
  if (c < 1 || c > K_IMAGE_MAX_CHANNELS || (dst_dtype != K_F32 && dst_dtype != K_F16))
    return cudaErrorInvalidValue;
  int64_t pixels = n * hw;
  if (pixels == 0) return cudaSuccess;
  if (dst_nhwc) {
    int64_t total = pixels * c;
    unsigned b = k_blocks((total + IMAGE_VEC - 1) / IMAGE_VEC, 256);
    bool aligned = ((uintptr_t)src % 8) == 0 && ((uintptr_t)dst % 16) == 0;
    if (dst_dtype == K_F16)
      image_nhwc_kernel<__half><<<b, 256, 0, stream>>>(src, (__half *)dst, total, c, *norm, aligned);
    else
      image_nhwc_kernel<float><<<b, 256, 0, stream>>>(src, (float *)dst, total, c, *norm, aligned);
  } else {
    unsigned b = k_blocks(pixels, 256);
    if (dst_dtype == K_F16)
      image_nchw_kernel<__half><<<b, 256, 0, stream>>>(src, (__half *)dst, pixels, hw, c, *norm);
    else
      image_nchw_kernel<float><<<b, 256, 0, stream>>>(src, (float *)dst, pixels, hw, c, *norm);
  }
  return cudaGetLastError();
}
