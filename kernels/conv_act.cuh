// conv_act.cuh: FusedConv's activations (conv_act of ops/conv_fused.h) on fp32 values,
// for the kernels that apply the convolution epilogue. NaN passes as through the unfused
// ops and the CPU reference (the same k_nan.h forms: fminf / fmaxf would drop it).
//
// Sigmoid and Swish divide by 1 + exp(-v) with __fdividef (the hardware reciprocal and
// one multiply) rather than IEEE division: on the H200 the expansions of EfficientNet
// ended in Swish at 14% of the memory bandwidth whichever kernel ran them, the
// division's instruction sequence being most of each output's work. __fdividef is
// within 2 ulp of the quotient (far below the fp16 outputs' rounding); where the
// divisor overflows past 2^126 it gives 0, the limit (the quotient is below 1e-36);
// -inf / inf stays NaN as in the exact form.
#pragma once

#include "k_nan.h"

// 0 none, 1 relu, 2 clip(a, b), 3 leaky relu(a), 4 sigmoid, 5 tanh, 6 hard sigmoid(a, b),
// 7 swish(a), 8 hard swish, 9 gelu (erf)
__device__ __forceinline__ float conv_act_f(int act, float a, float b, float v) {
  switch (act) {
    case 1: return K_NAN_RELU(v);
    case 2: return K_NAN_CLAMP(v, a, b);
    case 3: return v < 0.f ? a * v : v;
    case 4: return __fdividef(1.f, 1.f + __expf(-v));
    case 5: return tanhf(v);
    case 6: {
      const float h = a * v + b;
      return K_NAN_CLAMP(h, 0.f, 1.f);
    }
    case 7: return __fdividef(v, 1.f + __expf(-a * v));
    case 8: {
      const float h = v * (1.f / 6.f) + 0.5f;
      return v * K_NAN_CLAMP(h, 0.f, 1.f);
    }
    case 9: return 0.5f * v * (1.f + erff(v * 0.70710678118654752440f));
    default: return v;
  }
}

// The activation on N values, switching once for all of them rather than once a value
// (the per-value switch of an unrolled loop is N copies of the dispatch).
template <int N>
__device__ __forceinline__ void conv_act_n(int act, float al, float be, float *o) {
#define CONV_ACT_CASE(k)                                                              \
  case k:                                                                             \
    _Pragma("unroll") for (int i = 0; i < N; i++) o[i] = conv_act_f(k, al, be, o[i]); \
    break;
  switch (act) {
    case 0: break;
    CONV_ACT_CASE(1)
    CONV_ACT_CASE(2)
    CONV_ACT_CASE(3)
    CONV_ACT_CASE(4)
    CONV_ACT_CASE(5)
    CONV_ACT_CASE(6)
    CONV_ACT_CASE(7)
    CONV_ACT_CASE(8)
    CONV_ACT_CASE(9)
    default: // a code conv_act_f gains later
#pragma unroll
      for (int i = 0; i < N; i++) o[i] = conv_act_f(act, al, be, o[i]);
  }
#undef CONV_ACT_CASE
}
