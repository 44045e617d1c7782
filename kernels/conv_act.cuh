// conv_act.cuh: FusedConv's activations (conv_act of ops/conv_fused.h) on fp32 values,
// for the kernels that apply the convolution epilogue.
#pragma once

// 0 none, 1 relu, 2 clip(a, b), 3 leaky relu(a), 4 sigmoid, 5 tanh, 6 hard sigmoid(a, b)
__device__ __forceinline__ float conv_act_f(int act, float a, float b, float v) {
  switch (act) {
    case 1: return v > 0.f ? v : 0.f;
    case 2: return fminf(fmaxf(v, a), b);
    case 3: return v < 0.f ? a * v : v;
    case 4: return 1.f / (1.f + __expf(-v));
    case 5: return tanhf(v);
    case 6: return fminf(fmaxf(a * v + b, 0.f), 1.f);
    default: return v;
  }
}
