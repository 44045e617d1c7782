/* conv_alt.h: other implementations of one 2-D FusedConv than cuDNN's legacy API
 * (ops/cuda/cuda_conv.c), whose search (conv_algo_search.c) times each against its own
 * choice at build and keeps the fastest. Each lives in its own file and says in prepare what it takes. */
#ifndef INFER_CONV_ALT_H
#define INFER_CONV_ALT_H

#include <stdbool.h>

#include "../cuda_op.h"

/* One 2-D convolution with its epilogue y = act(conv(x, w) + bias + z). Sizes are
 * logical (N, C, H, W whatever the layout); pads are symmetric (asymmetric ones were
 * applied by a pad kernel before, and h, w are then the padded sizes). */
typedef struct conv_problem {
  int n, c, h, w;      /* input */
  int k, r, s;         /* filters: count, kernel height, width */
  int group;
  int out_h, out_w;
  int pad_h, pad_w, stride_h, stride_w, dil_h, dil_w;
  bool channels_last;  /* x, y, z N x H x W x C and w K x R x S x C/g; else NCHW, K x C/g x R x S */
  int kdt;             /* K_F16 or K_F32 (kernels/k_dtype.h) */
  infer_precision precision;
  int act;             /* conv_act (ops/conv_fused.h) */
  float alpha, beta;
  bool has_bias, has_z;
  const void *bias_dev; /* the bias's device address when it is a weight (fixed at build) */
  const void *w_dev;    /* the filters' device address when they are weights, else NULL */
  /* X is read as min(X, x_max) (FusedConv's input_max, pass defer-clip): only the
   * alternatives that say so take it, cuDNN does not */
  bool has_x_max;
  float x_max;
  /* config cuda.nan_exact (cuda_op.h): the activation must not go into a library call;
   * an implementation applies it with k_conv_epilogue (NaN kept) or refuses the problem */
  bool nan_exact;
  /* Elements from one output pixel to the next, when y is a slice of a wider channels-
   * last tensor (a Concat's output written in place: engine/cuda/cuda_concat_in_place.c);
   * 0: dense (k). Only the alternatives whose y_pitch flag is set are given one; z stays
   * dense. */
  int64_t y_pitch;
  /* Int8Conv (ops/cuda/conv_int8.c): x and w are int8, the convolution sums in int32 and
   * is multiplied by scale_dev (float32, one per output channel, device memory fixed at
   * build) before the bias; y, bias and z are kdt. Only cudnn-graph takes it. */
  bool int8;
  const float *scale_dev;
  /* Int8Conv writing int8 (its y_scale, ops/conv_int8.c): with int8, y is int8, the
   * epilogue's result times y_inv_dev (float32, one per output channel, device memory
   * fixed at build) rounded and saturated by cuDNN. Only cudnn-graph takes it. */
  bool y_int8;
  const float *y_inv_dev;
} conv_problem;

typedef struct conv_alt {
  const char *name;
  /* Build time: INFER_ERR_UNSUPPORTED when it does not take p (the caller then
   * ignores it); may create descriptors and search. *ws_bytes: scratch its run needs. */
  infer_status (*prepare)(const cuda_exec *x, const conv_problem *p, void **state,
                          int64_t *ws_bytes);
  /* Enqueues on x->stream only. bias and z are NULL when absent; ws has ws_bytes. */
  infer_status (*run)(const cuda_exec *x, const void *state, const void *in, const void *w,
                      const void *bias, const void *z, void *y, void *ws);
  void (*release)(void *state);
  /* whether prepare takes a problem with y_pitch set (and refuses the ones it cannot
   * write so) */
  bool y_pitch;
} conv_alt;

/* The alternatives, NULL-terminated (ops/cuda/conv_alts.c). */
extern const conv_alt *const conv_alts[];

#endif
