/* conv_depthwise.c: a depthwise convolution (one filter per channel: group = C = K),
 * the 3x3 and 5x5 layers of MobileNet, EfficientNet and MnasNet, on fp16
 * channels-last data as one pass of kernels/conv_depthwise.cu with the epilogue
 * (bias, residual, activation) fused. The op is memory-bound, and cuDNN's grouped
 * convolutions reach a fifth of the memory roofline there; cuda_conv.c keeps this one
 * where it times faster. Both kernels here (and only they) take FusedConv's
 * input_max, the clamp that pass defer-clip moves into them. */
#include <math.h>
#include <stdlib.h>

#include "../../core/cuda_check.h"
#include "../../kernels/conv_depthwise.h"
#include "../../kernels/conv_depthwise3x3.h"
#include "../../kernels/k_dtype.h"
#include "../conv_fused.h"
#include "conv_alt.h"

typedef struct dw_state {
  k_dw_geom g;
  int act;
  float alpha, beta;
  float x_max; /* INFINITY: no input clamp */
} dw_state;

static infer_status dw_prepare(const cuda_exec *x, const conv_problem *p, void **state,
                               int64_t *ws_bytes) {
  (void)x;
  if (!p->channels_last || p->kdt != K_F16 || p->group != p->c || p->k != p->c ||
      p->dil_h != 1 || p->dil_w != 1 || p->r < 1 || p->r > 7 || p->s < 1 || p->s > 7 ||
      p->act < 0 || p->act >= CONV_ACT_COUNT)
    return infer_fail(INFER_ERR_UNSUPPORTED,
                      "depthwise: not a depthwise fp16 channels-last convolution");
  k_dw_geom g = {.n = p->n, .c = p->c, .h = p->h, .w = p->w, .r = p->r, .s = p->s,
                 .out_h = p->out_h, .out_w = p->out_w, .pad_h = p->pad_h, .pad_w = p->pad_w,
                 .stride_h = p->stride_h, .stride_w = p->stride_w};
  if (!k_conv_depthwise_supported(&g))
    return infer_fail(INFER_ERR_UNSUPPORTED, "depthwise: sizes out of the kernel's range");
  dw_state *s = malloc(sizeof *s);
  if (!s) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory");
  s->g = g;
  s->act = p->act;
  s->alpha = p->alpha;
  s->beta = p->beta;
  s->x_max = p->has_x_max ? p->x_max : INFINITY;
  *state = s;
  *ws_bytes = 0;
  return INFER_OK;
}

static infer_status dw_run(const cuda_exec *x, const void *state, const void *in, const void *w,
                           const void *bias, const void *z, void *y, void *ws) {
  (void)ws;
  const dw_state *s = state;
  CUDA_LAUNCH_TRY(k_conv_depthwise(&s->g, in, w, bias, z, y, s->act, s->alpha, s->beta,
                                   s->x_max, x->sm_count, (cudaStream_t)x->stream));
  return INFER_OK;
}

static void dw_release(void *state) { free(state); }

const conv_alt conv_alt_depthwise = {
    .name = "depthwise-nhwc", .prepare = dw_prepare, .run = dw_run, .release = dw_release};

/* The 3x3 kernel (kernels/conv_depthwise3x3.cu) holds no tile per thread and reads
 * its filters repacked tap-major in fp32, made here once from the weights. */
typedef struct dw3_state {
  dw_state base;
  float *wt; /* device: 9 x C */
} dw3_state;

static void dw3_release(void *state) {
  dw3_state *s = state;
  if (!s) return;
  if (s->wt) cudaFree(s->wt);
  free(s);
}

static infer_status dw3_prepare(const cuda_exec *x, const conv_problem *p, void **state,
                                int64_t *ws_bytes) {
  void *base = NULL;
  if (!p->w_dev)
    return infer_fail(INFER_ERR_UNSUPPORTED, "depthwise 3x3: the filters are not weights");
  infer_status st = dw_prepare(x, p, &base, ws_bytes);
  if (st != INFER_OK) return st;
  dw3_state *s = calloc(1, sizeof *s);
  if (!s) {
    free(base);
    return infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory");
  }
  s->base = *(dw_state *)base;
  free(base);
  if (!k_dw3x3_supported(&s->base.g)) {
    free(s);
    return infer_fail(INFER_ERR_UNSUPPORTED, "depthwise 3x3: not a 3x3 stride 1/2 window, C %% 8");
  }
  cudaError_t e = cudaMalloc((void **)&s->wt, (size_t)9 * (size_t)p->c * sizeof(float));
  if (e == cudaSuccess)
    e = k_dw3x3_repack(&s->base.g, p->w_dev, s->wt, (cudaStream_t)x->stream);
  if (e != cudaSuccess) {
    cudaGetLastError();
    dw3_release(s);
    return infer_fail(INFER_ERR_OUT_OF_MEMORY, "depthwise 3x3: repacked filters: %s",
                      cudaGetErrorString(e));
  }
  *state = s;
  return INFER_OK;
}

static infer_status dw3_run(const cuda_exec *x, const void *state, const void *in, const void *w,
                            const void *bias, const void *z, void *y, void *ws) {
  (void)w; /* repacked at build */
  (void)ws;
  const dw3_state *s = state;
  CUDA_LAUNCH_TRY(k_dw3x3(&s->base.g, in, s->wt, bias, z, y, s->base.act, s->base.alpha,
                          s->base.beta, s->base.x_max, (cudaStream_t)x->stream));
  return INFER_OK;
}

const conv_alt conv_alt_depthwise3x3 = {.name = "depthwise3x3-nhwc",
                                        .prepare = dw3_prepare,
                                        .run = dw3_run,
                                        .release = dw3_release};
