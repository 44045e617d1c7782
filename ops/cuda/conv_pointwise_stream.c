/* conv_pointwise_stream.c: a pointwise fp16 channels-last convolution with at most 256
 * input channels as kernels/conv_pointwise_stream.cu's streaming kernel (filters kept in
 * shared memory, pixel tiles streamed through, every FusedConv epilogue fused): the
 * expansions that cuBLASLt and wmma-1x1 write at a fraction of the memory bandwidth.
 * cuda_conv.c keeps it where it times faster. It also writes into a slice of a wider
 * tensor (y_pitch: a Concat's part). */
#include <stdlib.h>

#include "../../core/cuda_check.h"
#include "../../kernels/conv_pointwise_stream.h"
#include "../../kernels/k_dtype.h"
#include "conv_alt.h"

static infer_status pws_prepare(const cuda_exec *x, const conv_problem *p, void **state,
                                int64_t *ws_bytes) {
  /* strided: ResNet's downsampling shortcuts (1x1, stride 2), read subsampled */
  if (!p->channels_last || p->kdt != K_F16 || p->r != 1 || p->s != 1 || p->stride_h < 1 ||
      p->stride_h != p->stride_w || p->dil_h != 1 || p->dil_w != 1 || p->pad_h || p->pad_w ||
      p->group != 1 || p->has_x_max)
    return infer_fail(INFER_ERR_UNSUPPORTED, "pw-stream: not a pointwise fp16 convolution");
  k_pw_problem k = {.pixels = (int64_t)p->n * p->out_h * p->out_w, .channels = p->c,
                    .out_channels = p->k, .act = p->act, .alpha = p->alpha, .beta = p->beta,
                    .stride = p->stride_h, .in_h = p->h, .in_w = p->w, .y_pitch = p->y_pitch};
  if (!k_conv_pointwise_stream_supported(&k))
    return infer_fail(INFER_ERR_UNSUPPORTED,
                      "pw-stream: needs channel counts that are multiples of 8, at most 256 in");
  k_pws_plan *s = malloc(sizeof *s);
  if (!s) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory");
  cudaError_t e = k_pws_plan_make(&k, x->sm_count, s);
  if (e != cudaSuccess) {
    free(s);
    return infer_fail(INFER_ERR_UNSUPPORTED, "pw-stream: %s", cudaGetErrorString(e));
  }
  *state = s;
  *ws_bytes = 0;
  return INFER_OK;
}

static infer_status pws_run(const cuda_exec *x, const void *state, const void *in, const void *w,
                            const void *bias, const void *z, void *y, void *ws) {
  (void)ws;
  CUDA_LAUNCH_TRY(k_conv_pointwise_stream(state, in, w, bias, z, y, (cudaStream_t)x->stream));
  return INFER_OK;
}

static void pws_release(void *state) { free(state); }

const conv_alt conv_alt_pointwise_stream = {
    .name = "pw-stream", .prepare = pws_prepare, .run = pws_run, .release = pws_release,
    .y_pitch = true};
