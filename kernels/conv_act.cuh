// conv_act.cuh: FusedConv's activations (conv_act of ops/conv_fused.h) on fp32 values,
// for the kernels that apply the convolution epilogue. NaN passes as through the unfused
// ops and the CPU reference (the same k_nan.h forms: fminf / fmaxf would drop it).
#pragma once

#include "k_nan.h"

// 0 none, 1 relu, 2 clip(a, b), 3 leaky relu(a), 4 sigmoid, 5 tanh, 6 hard sigmoid(a, b),
// 7 swish(a), 8 hard swish, 9 gelu (erf)
__device__ __forceinline__ float conv_act_f(int act, float a, float b, float v) {
  switch (act) {
    case 1: return K_NAN_RELU(v);
    case 2: return K_NAN_CLAMP(v, a, b);
    case 3: return v < 0.f ? a * v : v;
    case 4: return 1.f / (1.f + __expf(-v));
    case 5: return tanhf(v);
    case 6: {
      const float h = a * v + b;
      return K_NAN_CLAMP(h, 0.f, 1.f);
    }
    case 7: return v / (1.f + __expf(-a * v));
    case 8: {
      const float h = v * (1.f / 6.f) + 0.5f;
      return v * K_NAN_CLAMP(h, 0.f, 1.f);
    }
    case 9: return 0.5f * v * (1.f + erff(v * 0.70710678118654752440f));
    default: return v;
  }
}
