// conv_epilogue.cu: y = act(y + bias[c] + z) after a convolution, in fp32 math.
#include "conv_epilogue.h"
#include "conv_act.cuh"
#include "k_common.cuh"
#include "k_rows.cuh"

template <typename T>
__global__ void epilogue_kernel(T *y, const T *bias, const T *z, int64_t n, int64_t c,
                                int64_t inner, int act, float a, float b) {
  K_GRID_STRIDE(i, n) {
    float v = k_to_f(y[i]);
    if (bias) v += k_to_f(bias[(i / inner) % c]);
    if (z) v += k_to_f(z[i]);
    y[i] = k_from_f<T>(conv_act_f(act, a, b, v));
  }
}

// Channels-last data: rows of `channels` values through the 2-D launch of k_rows.cuh,
// V channels per access (16 bytes where the channel count and the pointers allow), the
// bias of a thread's channels loaded once for all its rows. Per element the same
// operations in the same order as epilogue_kernel, so the same bits.
template <typename T, int V>
struct epi_rows_f {
  typedef k_vec<T, V> vec;
  struct param {
    float b[V];
  };
  struct item {
    vec y, z;
  };
  T *y;
  const T *bias, *z;
  int act;
  float a, b;
  __device__ __forceinline__ param param_at(int64_t, int c) const {
    param p;
#pragma unroll
    for (int e = 0; e < V; e++) p.b[e] = bias ? k_to_f(bias[(int64_t)c * V + e]) : 0.f;
    return p;
  }
  __device__ __forceinline__ item load(int64_t i) const {
    item it;
    it.y = ((const vec *)y)[i];
    if (z) it.z = ((const vec *)z)[i];
    return it;
  }
  __device__ __forceinline__ void store(int64_t i, const item &it, const param &p) const {
    vec r;
    float v[V];
#pragma unroll
    for (int e = 0; e < V; e++) {
      v[e] = k_to_f(it.y.v[e]);
      if (bias) v[e] += p.b[e];
      if (z) v[e] += k_to_f(it.z.v[e]);
    }
    conv_act_n<V>(act, a, b, v);
#pragma unroll
    for (int e = 0; e < V; e++) r.v[e] = k_from_f<T>(v[e]);
    ((vec *)y)[i] = r;
  }
};

template <typename T, int V>
static cudaError_t epi_rows_go(void *y, const void *bias, const void *z, int64_t rows,
                               int64_t channels, int act, float a, float b, cudaStream_t s) {
  epi_rows_f<T, V> f;
  f.y = (T *)y;
  f.bias = (const T *)bias;
  f.z = (const T *)z;
  f.act = act;
  f.a = a;
  f.b = b;
  return k_rows_run(f, 1, rows, channels / V, s);
}

// Widths instantiated: 8, 2, 1 halves; 4, 1 floats.
template <typename T>
static cudaError_t epi_rows(void *y, const void *bias, const void *z, int64_t count,
                            int64_t channels, int act, float a, float b, cudaStream_t s) {
  const unsigned widths = sizeof(T) == 2 ? (1u << 8 | 1u << 2) : (1u << 4);
  const int64_t rows = count / channels;
  switch (k_rows_vec(channels, (int)sizeof(T), widths, y, z, NULL)) {
    case 8:
      if constexpr (sizeof(T) == 2) return epi_rows_go<T, 8>(y, bias, z, rows, channels, act, a, b, s);
      break;
    case 4:
      if constexpr (sizeof(T) == 4) return epi_rows_go<T, 4>(y, bias, z, rows, channels, act, a, b, s);
      break;
    case 2:
      if constexpr (sizeof(T) == 2) return epi_rows_go<T, 2>(y, bias, z, rows, channels, act, a, b, s);
      break;
    default: break;
  }
  return epi_rows_go<T, 1>(y, bias, z, rows, channels, act, a, b, s);
}

extern "C" cudaError_t k_conv_epilogue(int dtype, void *y, const void *bias, const void *z,
                                       int64_t count, int64_t channels, int64_t inner, int act,
                                       float alpha, float beta, cudaStream_t s) {
  if (count == 0) return cudaSuccess;
  // channels-last: the row kernels (every channel count; no division per element)
  if (inner == 1 && channels > 0 && channels <= 0x7fffffff && count % channels == 0) {
    if (dtype == K_F16) return epi_rows<__half>(y, bias, z, count, channels, act, alpha, beta, s);
    if (dtype == K_F32) return epi_rows<float>(y, bias, z, count, channels, act, alpha, beta, s);
  }
  unsigned blocks = k_blocks(count, 256);
  if (dtype == K_F16)
    epilogue_kernel<__half><<<blocks, 256, 0, s>>>((__half *)y, (const __half *)bias,
                                                   (const __half *)z, count, channels, inner,
                                                   act, alpha, beta);
  else if (dtype == K_F32)
    epilogue_kernel<float><<<blocks, 256, 0, s>>>((float *)y, (const float *)bias,
                                                  (const float *)z, count, channels, inner, act,
                                                  alpha, beta);
  else
    return cudaErrorInvalidValue;
  return cudaGetLastError();
}
