// conv_epilogue.cu: y = act(y + bias[c] + z) after a convolution, in fp32 math.
#include "conv_epilogue.h"
#include "conv_act.cuh"
#include "k_common.cuh"

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

// Channels-last half data with an even channel count: two neighbouring channels per
// thread through half2 loads, the common case of fp16 convolutions.
__global__ void epilogue_half2_cl(__half2 *y, const __half2 *bias, const __half2 *z, int64_t n2,
                                  int64_t c2, int act, float a, float b) {
  K_GRID_STRIDE(i, n2) {
    float2 v = __half22float2(y[i]);
    if (bias) {
      float2 bv = __half22float2(bias[i % c2]);
      v.x += bv.x;
      v.y += bv.y;
    }
    if (z) {
      float2 zv = __half22float2(z[i]);
      v.x += zv.x;
      v.y += zv.y;
    }
    y[i] = __floats2half2_rn(conv_act_f(act, a, b, v.x), conv_act_f(act, a, b, v.y));
  }
}

extern "C" cudaError_t k_conv_epilogue(int dtype, void *y, const void *bias, const void *z,
                                       int64_t count, int64_t channels, int64_t inner, int act,
                                       float alpha, float beta, cudaStream_t s) {
  if (count == 0) return cudaSuccess;
  if (dtype == K_F16 && inner == 1 && channels % 2 == 0 && ((uintptr_t)y | (uintptr_t)bias |
                                                            (uintptr_t)z) % 4 == 0) {
    int64_t n2 = count / 2;
    epilogue_half2_cl<<<k_blocks(n2, 256), 256, 0, s>>>((__half2 *)y, (const __half2 *)bias,
                                                        (const __half2 *)z, n2, channels / 2,
                                                        act, alpha, beta);
    return cudaGetLastError();
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
