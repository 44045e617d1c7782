/* conv_depthwise_tiled.c: the alternative "depthwise-tiled-nhwc", a depthwise
 * convolution (group = C = K, one filter per channel) of fp16 channels-last data with
 * windows up to 7x7, strides 1 or 2, as one pass of kernels/conv_depthwise_tiled.cu
 * with the epilogue (bias, residual, activation) and FusedConv's input_max fused. Its
 * threads keep a strip of outputs in registers and load each input column once per
 * filter row, which the 7x7 windows of ConvNeXt and the 5x5 ones of EfficientNet
 * need (the general kernel, conv_depthwise.c, loads one per tap there). cuda_conv.c
 * times it against the others at build and keeps it where it is fastest. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "../../core/cuda_check.h"
#include "../../kernels/conv_depthwise_tiled.h"
#include "../../kernels/k_dtype.h"
#include "../conv_fused.h"
#include "conv_alt.h"

typedef struct dwt_state {
  k_dw_geom g;
  int act;
  float alpha, beta;
  float x_max; /* INFINITY: no input clamp */
  /* the launch shapes for 4, 2 and 1 channels per thread (plan[0], [1], [2]); the
   * run takes the widest that C and the pointers' alignment allow */
  k_dwt_plan plan[3];
  bool has_plan[3];
} dwt_state;

static const int dwt_widths[3] = {4, 2, 1};

static infer_status dwt_prepare(const cuda_exec *x, const conv_problem *p, void **state,
                                int64_t *ws_bytes) {
  if (!p->channels_last || p->kdt != K_F16 || p->group != p->c || p->k != p->c ||
      p->dil_h != 1 || p->dil_w != 1 || p->act < 0 || p->act >= CONV_ACT_COUNT)
    return infer_fail(INFER_ERR_UNSUPPORTED,
                      "depthwise-tiled: not a depthwise fp16 channels-last convolution");
  k_dw_geom g = {.n = p->n, .c = p->c, .h = p->h, .w = p->w, .r = p->r, .s = p->s,
                 .out_h = p->out_h, .out_w = p->out_w, .pad_h = p->pad_h, .pad_w = p->pad_w,
                 .stride_h = p->stride_h, .stride_w = p->stride_w};
  if (!k_dwt_supported(&g))
    return infer_fail(INFER_ERR_UNSUPPORTED,
                      "depthwise-tiled: not a window up to 7x7 with strides 1 or 2 "
                      "within the kernel's index range");
  dwt_state *s = calloc(1, sizeof *s);
  if (!s) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory");
  s->g = g;
  s->act = p->act;
  s->alpha = p->alpha;
  s->beta = p->beta;
  s->x_max = p->has_x_max ? p->x_max : INFINITY;
  for (int i = 0; i < 3; i++) {
    if (g.c % dwt_widths[i]) continue;
    cudaError_t e = k_dwt_plan_make(&g, dwt_widths[i], x->sm_count, &s->plan[i]);
    if (e != cudaSuccess) {
      cudaGetLastError();
      free(s);
      return infer_fail(INFER_ERR_UNSUPPORTED, "depthwise-tiled: no launch shape (%d channels "
                        "per thread): %s", dwt_widths[i], cudaGetErrorString(e));
    }
    s->has_plan[i] = true;
  }
  *state = s;
  *ws_bytes = 0;
  return INFER_OK;
}

static infer_status dwt_run(const cuda_exec *x, const void *state, const void *in, const void *w,
                            const void *bias, const void *z, void *y, void *ws) {
  (void)ws;
  const dwt_state *s = state;
  uintptr_t al = (uintptr_t)in | (uintptr_t)y | (uintptr_t)bias | (uintptr_t)z;
  int i = 0; /* 1 channel per thread always has a plan and takes any alignment */
  while (i < 2 && !(s->has_plan[i] && al % (uintptr_t)(2 * dwt_widths[i]) == 0)) i++;
  CUDA_LAUNCH_TRY(k_dwt(&s->g, &s->plan[i], in, w, bias, z, y, s->act, s->alpha, s->beta,
                        s->x_max, (cudaStream_t)x->stream));
  return INFER_OK;
}

const conv_alt conv_alt_depthwise_tiled = {
    .name = "depthwise-tiled-nhwc", .prepare = dwt_prepare, .run = dwt_run, .release = free};
