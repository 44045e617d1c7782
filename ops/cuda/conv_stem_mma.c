/* conv_stem_mma.c: the alternative "stem-mma", a float16 channels-last convolution of
 * at most 8 input channels (a network's first layer: ResNet's 7x7 stride-2 stem, VGG's
 * and SqueezeNet's first 3x3, the 3x3 stride-2 stems of MobileNet and EfficientNet) as
 * kernels/conv_stem.cu's implicit GEMM, with the whole epilogue (bias, residual, any
 * activation, FusedConv's input_max) fused. cuDNN's kernels for 3 channels, and
 * cpad8-cudnn-graph's widening to 8, reach 20-26% of the memory roofline on those
 * layers (H200 --profile). The search (conv_algo_search.c) times it against the others
 * and keeps it only where it is faster; the filters are read as they are (K x R x S x C),
 * so they need not be constants. It writes into a slice of a wider tensor (y_pitch) as
 * well. */
#include <stdlib.h>

#include "../../core/cuda_check.h"
#include "../../kernels/conv_stem.h"
#include "../../kernels/k_dtype.h"
#include "../conv_fused.h"
#include "conv_alt.h"

static infer_status stem_prepare(const cuda_exec *x, const conv_problem *p, void **state,
                                 int64_t *ws_bytes) {
  if (!p->channels_last || p->kdt != K_F16 || p->group != 1 || p->c > 8 || p->act < 0 ||
      p->act >= CONV_ACT_COUNT)
    return infer_fail(INFER_ERR_UNSUPPORTED,
                      "stem-mma: not an ungrouped fp16 channels-last convolution of at most 8 "
                      "input channels");
  k_stem_problem k = {.n = p->n, .h = p->h, .w = p->w, .c = p->c, .k = p->k, .r = p->r,
                      .s = p->s, .out_h = p->out_h, .out_w = p->out_w, .pad_h = p->pad_h,
                      .pad_w = p->pad_w, .stride_h = p->stride_h, .stride_w = p->stride_w,
                      .dil_h = p->dil_h, .dil_w = p->dil_w, .act = p->act, .alpha = p->alpha,
                      .beta = p->beta, .has_x_max = p->has_x_max, .x_max = p->x_max,
                      .y_pitch = p->y_pitch};
  if (!k_conv_stem_supported(&k))
    return infer_fail(INFER_ERR_UNSUPPORTED,
                      "stem-mma: needs output channels a multiple of 8 and a window and "
                      "filters within the kernel's shared memory");
  k_stem_plan *s = malloc(sizeof *s);
  if (!s) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory");
  cudaError_t e = k_stem_plan_make(&k, x->sm_count, s);
  if (e != cudaSuccess) {
    cudaGetLastError();
    free(s);
    return infer_fail(INFER_ERR_UNSUPPORTED, "stem-mma: %s", cudaGetErrorString(e));
  }
  *state = s;
  *ws_bytes = 0;
  return INFER_OK;
}

static infer_status stem_run(const cuda_exec *x, const void *state, const void *in, const void *w,
                             const void *bias, const void *z, void *y, void *ws) {
  (void)ws;
  CUDA_LAUNCH_TRY(k_conv_stem(state, in, w, bias, z, y, (cudaStream_t)x->stream));
  return INFER_OK;
}

const conv_alt conv_alt_stem_mma = {
    .name = "stem-mma", .prepare = stem_prepare, .run = stem_run, .release = free,
    .y_pitch = true};
