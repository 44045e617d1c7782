/* conv_channel_pad.c: "cpad8-cudnn-graph", a float16 channels-last convolution of fewer
 * than 8 input channels (a network's first layer: 3 colour channels) run as the same
 * convolution of 8, the extra channels zero in the input and in the filters. cuDNN's
 * kernels for 3 channels cannot load a pixel in one vector and reach 20-25% of the
 * memory bandwidth on ResNet's and VGG's stems (H200 profile); with 8 the usual tensor-
 * core kernels apply. The padded filters are made once at build; each run widens the
 * input (one pass: 3 halves read, 8 written per pixel) into the workspace and runs the
 * cudnn-graph alternative on it. The search times it, pad included, against every other
 * implementation, so it is kept only where it is faster. The result is the same sum:
 * the added terms are 0 * 0. */
#include <stdint.h>
#include <stdlib.h>

#include "../../core/cuda_check.h"
#include "../../kernels/conv_pad.h"
#include "../../kernels/k_dtype.h"
#include "conv_alt.h"

extern const conv_alt conv_alt_cudnn_graph; /* conv_cudnn_graph.c */

typedef struct cpad_state {
  void *inner;      /* the cudnn-graph state of the 8-channel problem */
  int64_t inner_ws; /* its scratch, after the widened input in ws */
  int64_t pixels;   /* input pixels, n * h * w */
  int c;            /* input channels */
  int64_t x_bytes;  /* the widened input, rounded to 256 */
  void *w8;         /* filters k x r x s x 8 */
} cpad_state;

static void cpad_release(void *p) {
  cpad_state *s = p;
  if (!s) return;
  if (s->inner) conv_alt_cudnn_graph.release(s->inner);
  if (s->w8) cudaFree(s->w8);
  free(s);
}

static infer_status cpad_prepare(const cuda_exec *x, const conv_problem *p, void **state,
                                 int64_t *ws_bytes) {
  if (!p->channels_last || p->kdt != K_F16 || p->group != 1 || p->c >= 8 || p->c < 1 ||
      !p->w_dev || p->has_x_max)
    return infer_fail(INFER_ERR_UNSUPPORTED, "cpad8-cudnn-graph: float16 channels-last, "
                      "fewer than 8 input channels, constant filters, one group only");
  cpad_state *s = calloc(1, sizeof *s);
  if (!s) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory");
  s->c = p->c;
  s->pixels = (int64_t)p->n * p->h * p->w;
  s->x_bytes = (s->pixels * 8 * 2 + 255) / 256 * 256;
  const int64_t taps = (int64_t)p->k * p->r * p->s;
  cudaStream_t stream = (cudaStream_t)x->stream;
  if (cudaMalloc(&s->w8, (size_t)(taps * 8 * 2)) != cudaSuccess) {
    cudaGetLastError();
    s->w8 = NULL;
    cpad_release(s);
    return infer_fail(INFER_ERR_OUT_OF_MEMORY, "cpad8-cudnn-graph: no device memory");
  }
  /* the filters' rows (k, r, s) of c channels are pixels of the same widening */
  cudaError_t e = k_pad_channels8(p->w_dev, taps, p->c, s->w8, stream);
  if (e != cudaSuccess) {
    cpad_release(s);
    return infer_fail(INFER_ERR_DEVICE, "cpad8-cudnn-graph: %s", cudaGetErrorString(e));
  }
  conv_problem q = *p;
  q.c = 8;
  q.w_dev = s->w8;
  infer_status st = conv_alt_cudnn_graph.prepare(x, &q, &s->inner, &s->inner_ws);
  if (st != INFER_OK) {
    s->inner = NULL;
    cpad_release(s);
    return st;
  }
  *state = s;
  *ws_bytes = s->x_bytes + s->inner_ws;
  return INFER_OK;
}

static infer_status cpad_run(const cuda_exec *x, const void *state, const void *in, const void *w,
                             const void *bias, const void *z, void *y, void *ws) {
  (void)w; /* the widened copy made at build */
  const cpad_state *s = state;
  char *x8 = ws;
  CUDA_LAUNCH_TRY(k_pad_channels8(in, s->pixels, s->c, x8, (cudaStream_t)x->stream));
  return conv_alt_cudnn_graph.run(x, s->inner, x8, s->w8, bias, z, y,
                                  s->inner_ws > 0 ? x8 + s->x_bytes : NULL);
}

const conv_alt conv_alt_channel_pad = {.name = "cpad8-cudnn-graph", .prepare = cpad_prepare,
                                       .run = cpad_run, .release = cpad_release};
