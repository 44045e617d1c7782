/* conv_fused.h: what Conv and FusedConv (com.microsoft, the form ONNX Runtime
 * writes and our pass fuse-conv-epilogue produces) share: the parsed attributes
 * and Conv's entry points, which FusedConv calls before its epilogue
 *   Y = activation(Conv(X, W, B) + Z)      (Z optional, same shape as Y).
 * The GPU side (ops/cuda/cuda_conv.c) reads the same params. */
#ifndef INFER_CONV_FUSED_H
#define INFER_CONV_FUSED_H

#include <math.h>

#include "../kernels/k_nan.h"
#include "conv_util.h"

typedef struct conv_params {
  win_attrs w;
  int64_t group;
  int n_output_padding, n_output_shape; /* ConvTranspose; -1 absent */
  int64_t output_padding[WIN_MAX_SPATIAL], output_shape[WIN_MAX_SPATIAL + 2];
} conv_params;

typedef enum conv_act {
  CONV_ACT_NONE = 0,
  CONV_ACT_RELU,
  CONV_ACT_CLIP,         /* min(max(v, alpha), beta) */
  CONV_ACT_LEAKY_RELU,   /* v < 0 ? alpha * v : v */
  CONV_ACT_SIGMOID,
  CONV_ACT_TANH,
  CONV_ACT_HARD_SIGMOID, /* max(0, min(1, alpha * v + beta)) */
  CONV_ACT_SWISH,        /* v * sigmoid(alpha * v) (SiLU: alpha 1) */
  CONV_ACT_HARD_SWISH,   /* v * max(0, min(1, v / 6 + 1 / 2)) */
  CONV_ACT_GELU,         /* 0.5 v (1 + erf(v / sqrt 2)) */
  CONV_ACT_COUNT
} conv_act;

/* FusedConv's params: Conv's first, so Conv's functions take them as they are. */
typedef struct fused_conv_params {
  conv_params conv;
  conv_act act;
  float alpha, beta;
  /* internal (pass to-channels-last, GPU only): X, Z, Y are N, H, W, C and W is
   * M, kH, kW, C/group */
  bool channels_last;
  /* internal (pass defer-clip, with channels_last): X is read as min(X, input_max);
   * INFINITY when absent */
  float input_max;
} fused_conv_params;

/* Int8Conv's (ops/conv_int8.c): FusedConv's, then y_scale (> 0: Y is int8, quantized by
 * it; 0: Y is S's float dtype). The GPU side reads them too (ops/cuda/conv_int8.c). */
typedef struct int8_conv_params {
  fused_conv_params f;
  float y_scale;
} int8_conv_params;

/* Sizes of one Conv/ConvTranspose problem, from the input shapes. */
typedef struct conv_dims {
  int64_t n, c, m, cg, mg, group, kernel; /* kernel = prod(k) */
  win_geom g;                             /* Conv: X -> Y; ConvTranspose: the Y -> X forward view */
  bool pointwise;                         /* 1x1, stride 1, unpadded: X is its own im2col */
} conv_dims;

/* Conv's geometry from X, W and B (in[2], may be NULL): ranks, group and kernel
 * checks, not dtypes, so the quantized convolutions (ops/quant_conv.c) share it.
 * `op` names the op in messages. */
infer_status conv_dims_make(const char *op, const conv_params *p, const tensor *const *in,
                            conv_dims *d);

infer_status conv_parse_common(const node *n, const char *op, bool transpose, size_t size,
                               void **params);
infer_status conv_infer(const node *n, const void *params, const tensor *const *in,
                        tensor *const *out);
int64_t conv_workspace(const node *n, const void *params, const tensor *const *in,
                       tensor *const *out);
infer_status conv_run(const node *n, const void *params, const tensor *const *in,
                      tensor *const *out, void *ws);

/* FusedConv's parse (attributes named in messages as `op`), infer, workspace and run,
 * which Int8Conv (ops/conv_int8.c) runs on float copies of its integer operands. The
 * inputs are X, W, [B], [Z] whatever n's own input list is. */
infer_status fused_conv_parse_as(const node *n, const char *op, void **params);
infer_status fused_conv_infer(const node *n, const void *params, const tensor *const *in,
                              tensor *const *out);
int64_t fused_conv_workspace(const node *n, const void *params, const tensor *const *in,
                             tensor *const *out);
infer_status fused_conv_run(const node *n, const void *params, const tensor *const *in,
                            tensor *const *out, void *ws);

/* The activation applied to one value (the CPU reference of the epilogue). NaN passes
 * as through the unfused ops (kernels/k_nan.h; kernels/conv_act.cuh is the GPU's). */
static inline double conv_act_apply(conv_act a, float alpha, float beta, double v) {
  switch (a) {
    case CONV_ACT_RELU: return K_NAN_RELU(v);
    case CONV_ACT_CLIP: return K_NAN_CLAMP(v, alpha, beta);
    case CONV_ACT_LEAKY_RELU: return v < 0 ? alpha * v : v;
    case CONV_ACT_SIGMOID: return 1 / (1 + exp(-v));
    case CONV_ACT_TANH: return tanh(v);
    case CONV_ACT_HARD_SIGMOID: {
      double h = alpha * v + beta;
      return K_NAN_CLAMP(h, 0, 1);
    }
    case CONV_ACT_SWISH: return v / (1 + exp(-alpha * v));
    case CONV_ACT_HARD_SWISH: {
      double h = v / 6 + 0.5;
      return v * K_NAN_CLAMP(h, 0, 1);
    }
    case CONV_ACT_GELU: return 0.5 * v * (1 + erf(v * 0.70710678118654752440));
    default: return v;
  }
}

#endif
