/* conv_depthwise.c: a depthwise convolution (one filter per channel: group = C = K),
 * the 3x3 and 5x5 layers of MobileNet, EfficientNet and MnasNet, on fp16
 * channels-last data as one pass of kernels/conv_depthwise.cu with the epilogue
 * (bias, residual, activation) fused. The op is memory-bound, and cuDNN's grouped
 * convolutions reach a fifth of the memory roofline there; cuda_conv.c keeps this one
 * where it times faster. */
#include <stdlib.h>

#include "../../engine/cuda/cuda_check.h"
#include "../../kernels/conv_depthwise.h"
#include "../../kernels/k_dtype.h"
#include "conv_alt.h"

typedef struct dw_state {
  k_dw_geom g;
  int act;
  float alpha, beta;
} dw_state;

static infer_status dw_prepare(const cuda_exec *x, const conv_problem *p, void **state,
                               int64_t *ws_bytes) {
  (void)x;
  if (!p->channels_last || p->kdt != K_F16 || p->group != p->c || p->k != p->c ||
      p->dil_h != 1 || p->dil_w != 1 || p->r < 1 || p->r > 7 || p->s < 1 || p->s > 7 ||
      p->act < 0 || p->act > 6)
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
  *state = s;
  *ws_bytes = 0;
  return INFER_OK;
}

static infer_status dw_run(const cuda_exec *x, const void *state, const void *in, const void *w,
                           const void *bias, const void *z, void *y, void *ws) {
  (void)ws;
  const dw_state *s = state;
  CUDA_LAUNCH_TRY(k_conv_depthwise(&s->g, in, w, bias, z, y, s->act, s->alpha, s->beta,
                                   x->sm_count, (cudaStream_t)x->stream));
  return INFER_OK;
}

static void dw_release(void *state) { free(state); }

const conv_alt conv_alt_depthwise = {
    .name = "depthwise-nhwc", .prepare = dw_prepare, .run = dw_run, .release = dw_release};
