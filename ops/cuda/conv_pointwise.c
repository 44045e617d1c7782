/* conv_pointwise.c: a pointwise (1x1, stride 1, unpadded, ungrouped) fp16
 * channels-last convolution as our own tensor-core kernel (kernels/conv_pointwise.cu)
 * with every FusedConv epilogue in it. Beside cublaslt-1x1 (conv_gemm_1x1.c), whose
 * epilogues stop at ReLU: MobileNet's ReLU6 expansions otherwise take a second pass
 * over their output. cuda_conv.c keeps it where it times faster. */
#include <stdlib.h>

#include "../../core/cuda_check.h"
#include "../../kernels/conv_pointwise.h"
#include "../../kernels/k_dtype.h"
#include "conv_alt.h"

static infer_status pw_prepare(const cuda_exec *x, const conv_problem *p, void **state,
                               int64_t *ws_bytes) {
  (void)x;
  if (!p->channels_last || p->kdt != K_F16 || p->r != 1 || p->s != 1 || p->stride_h != 1 ||
      p->stride_w != 1 || p->pad_h || p->pad_w || p->group != 1 || p->has_x_max)
    return infer_fail(INFER_ERR_UNSUPPORTED, "wmma 1x1: not a pointwise fp16 convolution");
  k_pw_problem k = {.pixels = (int64_t)p->n * p->h * p->w, .channels = p->c,
                    .out_channels = p->k, .act = p->act, .alpha = p->alpha, .beta = p->beta};
  if (!k_conv_pointwise_supported(&k))
    return infer_fail(INFER_ERR_UNSUPPORTED,
                      "wmma 1x1: needs channel counts that are multiples of 8");
  cudaError_t e = k_conv_pointwise_init();
  if (e != cudaSuccess)
    return infer_fail(INFER_ERR_UNSUPPORTED, "wmma 1x1: %s", cudaGetErrorString(e));
  k_pw_problem *s = malloc(sizeof *s);
  if (!s) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory");
  *s = k;
  *state = s;
  *ws_bytes = 0;
  return INFER_OK;
}

static infer_status pw_run(const cuda_exec *x, const void *state, const void *in, const void *w,
                           const void *bias, const void *z, void *y, void *ws) {
  (void)ws;
  CUDA_LAUNCH_TRY(k_conv_pointwise(state, in, w, bias, z, y, (cudaStream_t)x->stream));
  return INFER_OK;
}

static void pw_release(void *state) { free(state); }

const conv_alt conv_alt_pointwise = {
    .name = "wmma-1x1", .prepare = pw_prepare, .run = pw_run, .release = pw_release};
