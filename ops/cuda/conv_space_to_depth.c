/* conv_space_to_depth.c: "s2d-cudnn-graph", a float16 channels-last convolution of few
 * input channels and stride > 1 (a network's stem: ResNet's 7x7 stride 2 over 3 colour
 * channels) run as a stride-1 convolution over its input rearranged space to depth.
 * Each sh x sw block of input pixels becomes one pixel of sh * sw * c channels (padded
 * to a multiple of 8), the filters the same way (a tap beyond the window is zero), so
 * an R x S window of stride (sh, sw) becomes a ceil(R/sh) x ceil(S/sw) window of stride 1:
 *   y[o] = sum_r x[sh*o + r - p] w[r] = sum_a sum_b x[sh*(o+a) + b - p] w[sh*a + b].
 * ResNet's stem becomes a 4x4 window over 16 channels (12 used): 256 products a pixel
 * instead of cpad8's 392, in the stride-1 shape cuDNN's tensor-core kernels are made for,
 * where for 3 channels and stride 2 they reach about 20% of the memory bandwidth (H200
 * profile, resnet18's stem 0.56 ms at b256). The filters are rearranged once at build;
 * each run rearranges the input (the convolution's zero padding included) into the
 * workspace, one pass, and runs the cudnn-graph alternative on it. The search times it,
 * rearrangement included, against every other implementation, so it is kept only where
 * it is faster. The sums are the same products (the added terms are 0 * 0), in another
 * order. */
#include <stdint.h>
#include <stdlib.h>

#include "../../core/cuda_check.h"
#include "../../kernels/conv_pad.h"
#include "../../kernels/k_dtype.h"
#include "conv_alt.h"

extern const conv_alt conv_alt_cudnn_graph; /* conv_cudnn_graph.c */

typedef struct s2d_state {
  void *inner;      /* the cudnn-graph state of the stride-1 problem */
  int64_t inner_ws; /* its scratch, after the rearranged input in ws */
  int n, h, w, c, sh, sw, ph, pw; /* the original input and stride / pads */
  int hs, ws, c_out;              /* the rearranged input */
  int64_t x_bytes;                /* its bytes, rounded to 256 */
  void *w2;                       /* filters k x ceil(r/sh) x ceil(s/sw) x c_out */
} s2d_state;

static void s2d_release(void *p) {
  s2d_state *s = p;
  if (!s) return;
  if (s->inner) conv_alt_cudnn_graph.release(s->inner);
  if (s->w2) cudaFree(s->w2);
  free(s);
}

static int ceil_div(int a, int b) { return (a + b - 1) / b; }

static infer_status s2d_prepare(const cuda_exec *x, const conv_problem *p, void **state,
                                int64_t *ws_bytes) {
  /* Few channels only: with 8 or more cuDNN's own kernels load whole vectors, and a
   * search of every strided convolution would lengthen builds for nothing. A window no
   * larger than the stride does not overlap (patch-gemm's case). */
  if (!p->channels_last || p->kdt != K_F16 || p->group != 1 || p->c >= 8 || p->c < 1 ||
      !p->w_dev || p->has_x_max || p->int8 || p->y_pitch || p->dil_h != 1 || p->dil_w != 1 ||
      (p->stride_h < 2 && p->stride_w < 2) || p->stride_h * p->stride_w * p->c > 64 ||
      (p->r <= p->stride_h && p->s <= p->stride_w))
    return infer_fail(INFER_ERR_UNSUPPORTED, "s2d-cudnn-graph: float16 channels-last, fewer "
                      "than 8 input channels, stride > 1 with an overlapping window, no "
                      "dilation, constant filters, one group only");
  s2d_state *s = calloc(1, sizeof *s);
  if (!s) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory");
  const int a = ceil_div(p->r, p->stride_h), b = ceil_div(p->s, p->stride_w);
  s->n = p->n, s->h = p->h, s->w = p->w, s->c = p->c;
  s->sh = p->stride_h, s->sw = p->stride_w, s->ph = p->pad_h, s->pw = p->pad_w;
  s->hs = p->out_h + a - 1;
  s->ws = p->out_w + b - 1;
  s->c_out = (p->stride_h * p->stride_w * p->c + 7) / 8 * 8;
  s->x_bytes = ((int64_t)p->n * s->hs * s->ws * s->c_out * 2 + 255) / 256 * 256;
  const int64_t w_bytes = (int64_t)p->k * a * b * s->c_out * 2;
  cudaStream_t stream = (cudaStream_t)x->stream;
  if (cudaMalloc(&s->w2, (size_t)w_bytes) != cudaSuccess) {
    cudaGetLastError();
    s->w2 = NULL;
    s2d_release(s);
    return infer_fail(INFER_ERR_OUT_OF_MEMORY, "s2d-cudnn-graph: no device memory");
  }
  /* the filters k x r x s x c are k images of r x s pixels: the same rearrangement
   * without padding gives the stride-1 window, the taps beyond r x s zero */
  cudaError_t e = k_space_to_depth8(p->w_dev, p->k, p->r, p->s, p->c, p->stride_h,
                                    p->stride_w, 0, 0, a, b, s->c_out, s->w2, stream);
  if (e != cudaSuccess) {
    s2d_release(s);
    return infer_fail(INFER_ERR_DEVICE, "s2d-cudnn-graph: %s", cudaGetErrorString(e));
  }
  conv_problem q = *p;
  q.c = s->c_out;
  q.h = s->hs;
  q.w = s->ws;
  q.r = a;
  q.s = b;
  q.pad_h = q.pad_w = 0;
  q.stride_h = q.stride_w = 1;
  q.w_dev = s->w2;
  infer_status st = conv_alt_cudnn_graph.prepare(x, &q, &s->inner, &s->inner_ws);
  if (st != INFER_OK) {
    s->inner = NULL;
    s2d_release(s);
    return st;
  }
  *state = s;
  *ws_bytes = s->x_bytes + s->inner_ws;
  return INFER_OK;
}

static infer_status s2d_run(const cuda_exec *x, const void *state, const void *in, const void *w,
                            const void *bias, const void *z, void *y, void *ws) {
  (void)w; /* the rearranged copy made at build */
  const s2d_state *s = state;
  char *x2 = ws;
  CUDA_LAUNCH_TRY(k_space_to_depth8(in, s->n, s->h, s->w, s->c, s->sh, s->sw, s->ph, s->pw,
                                    s->hs, s->ws, s->c_out, x2, (cudaStream_t)x->stream));
  return conv_alt_cudnn_graph.run(x, s->inner, x2, s->w2, bias, z, y,
                                  s->inner_ws > 0 ? x2 + s->x_bytes : NULL);
}

const conv_alt conv_alt_space_to_depth = {.name = "s2d-cudnn-graph", .prepare = s2d_prepare,
                                          .run = s2d_run, .release = s2d_release};
