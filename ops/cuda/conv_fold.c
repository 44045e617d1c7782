/* conv_fold.c: a float16 channels-last convolution of fewer than 8 input channels (a
 * network's first layer, on its colour channels) run as a convolution of a smaller
 * window over more channels: neighbouring input pixels folded into the channels
 * (kernels/conv_pad.cu's k_fold_pixels8, the channels padded to a multiple of 8), the
 * filters alike, then the cudnn-graph alternative. cuDNN's kernels for 3 channels cannot
 * load a pixel in one vector and reach about 20% of the memory bandwidth on ResNet's
 * 7x7 stride-2 stem (H200 profile: 0.56 ms of resnet18's 2.8 at b256); folded, the
 * products are the same (the added terms are 0 * 0), in the shapes cuDNN's tensor-core
 * kernels are made for. Two foldings:
 *   s2d-cudnn-graph    space to depth, for stride > 1: each stride block of pixels one
 *                      pixel, so R x S of stride (sh, sw) becomes ceil(R/sh) x ceil(S/sw)
 *                      of stride 1, y[o] = sum_a sum_b x[sh*(o+a) + b - p] w[sh*a + b]
 *                      (ResNet's stem: 4x4 over 16 channels, 12 used);
 *   wfold-cudnn-graph  each output column's S input columns side by side, so R x S of
 *                      stride (sh, sw) becomes R x 1 of stride (sh, 1) over S x C
 *                      channels (VGG's 3x3 stride-1 stem: 3x1 over 16, 9 used).
 * The filters are folded once at build; each run folds the input (the convolution's
 * zero padding included) into the workspace, one pass. The search times each, the
 * folding included, against every other implementation, so one is kept only where it is
 * faster. */
#include <stdint.h>
#include <stdlib.h>

#include "../../core/cuda_check.h"
#include "../../kernels/conv_pad.h"
#include "../../kernels/k_dtype.h"
#include "conv_alt.h"

extern const conv_alt conv_alt_cudnn_graph; /* conv_cudnn_graph.c */

/* One folding of an n x h x w x c input: fh x fw pixels, steps step_h / step_w apart,
 * become one of c_out channels of the hs x ws result (k_fold_pixels8). */
typedef struct fold_geom {
  int n, h, w, c, fh, fw, step_h, step_w, ph, pw, hs, ws, c_out;
} fold_geom;

typedef struct fold_state {
  void *inner;      /* the cudnn-graph state of the folded problem */
  int64_t inner_ws; /* its scratch, after the folded input in ws */
  fold_geom x;      /* the input's folding */
  int64_t x_bytes;  /* the folded input, rounded to 256 */
  void *w2;         /* the folded filters */
} fold_state;

static void fold_release(void *p) {
  fold_state *s = p;
  if (!s) return;
  if (s->inner) conv_alt_cudnn_graph.release(s->inner);
  if (s->w2) cudaFree(s->w2);
  free(s);
}

static cudaError_t fold(const fold_geom *g, const void *src, void *dst, cudaStream_t stream) {
  return k_fold_pixels8(src, g->n, g->h, g->w, g->c, g->fh, g->fw, g->step_h, g->step_w, g->ph,
                        g->pw, g->hs, g->ws, g->c_out, dst, stream);
}

static int ceil_div(int a, int b) { return (a + b - 1) / b; }

/* s2d: space to depth (stride > 1); else wfold (columns side by side). */
static infer_status fold_prepare(const cuda_exec *x, const conv_problem *p, bool s2d,
                                 void **state, int64_t *ws_bytes) {
  const char *name = s2d ? "s2d-cudnn-graph" : "wfold-cudnn-graph";
  /* Few channels only: with 8 or more cuDNN's own kernels load whole vectors, and a
   * search of every such convolution would lengthen builds for nothing. */
  if (!p->channels_last || p->kdt != K_F16 || p->group != 1 || p->c >= 8 || p->c < 1 ||
      !p->w_dev || p->has_x_max || p->int8 || p->y_pitch || p->dil_h != 1 || p->dil_w != 1)
    return infer_fail(INFER_ERR_UNSUPPORTED, "%s: float16 channels-last, fewer than 8 input "
                      "channels, no dilation, constant filters, one group only", name);
  /* s2d: a window no larger than the stride does not overlap (patch-gemm's case) */
  if (s2d && ((p->stride_h < 2 && p->stride_w < 2) || p->stride_h * p->stride_w * p->c > 64 ||
              (p->r <= p->stride_h && p->s <= p->stride_w)))
    return infer_fail(INFER_ERR_UNSUPPORTED, "s2d-cudnn-graph: stride > 1 with an overlapping "
                      "window, at most 64 channels folded");
  /* wfold: columns that overlap (a window no wider than its stride is patch-gemm's or
   * s2d's case, and searching it would only lengthen the build: ViT's patch embedding) */
  if (!s2d && (p->s < 2 || p->s <= p->stride_w || p->s * p->c > 64))
    return infer_fail(INFER_ERR_UNSUPPORTED, "wfold-cudnn-graph: a window 2 to 64 / C wide "
                      "and wider than its stride");
  fold_state *s = calloc(1, sizeof *s);
  if (!s) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory");
  conv_problem q = *p; /* the folded problem */
  fold_geom wg;        /* the filters' folding: k images of r x s pixels, no padding */
  if (s2d) {
    const int a = ceil_div(p->r, p->stride_h), b = ceil_div(p->s, p->stride_w);
    s->x = (fold_geom){.n = p->n, .h = p->h, .w = p->w, .c = p->c,
                       .fh = p->stride_h, .fw = p->stride_w,
                       .step_h = p->stride_h, .step_w = p->stride_w,
                       .ph = p->pad_h, .pw = p->pad_w,
                       .hs = p->out_h + a - 1, .ws = p->out_w + b - 1};
    wg = (fold_geom){.n = p->k, .h = p->r, .w = p->s, .c = p->c,
                     .fh = p->stride_h, .fw = p->stride_w,
                     .step_h = p->stride_h, .step_w = p->stride_w, .hs = a, .ws = b};
    q.r = a;
    q.s = b;
    q.stride_h = q.stride_w = 1;
  } else {
    s->x = (fold_geom){.n = p->n, .h = p->h, .w = p->w, .c = p->c, .fh = 1, .fw = p->s,
                       .step_h = 1, .step_w = p->stride_w, .ph = p->pad_h, .pw = p->pad_w,
                       .hs = p->h + 2 * p->pad_h, .ws = p->out_w};
    wg = (fold_geom){.n = p->k, .h = p->r, .w = p->s, .c = p->c, .fh = 1, .fw = p->s,
                     .step_h = 1, .step_w = p->s, .hs = p->r, .ws = 1};
    q.s = 1;
    q.stride_w = 1;
  }
  s->x.c_out = wg.c_out = (s->x.fh * s->x.fw * p->c + 7) / 8 * 8;
  q.c = s->x.c_out;
  q.h = s->x.hs;
  q.w = s->x.ws;
  q.pad_h = q.pad_w = 0;
  s->x_bytes = ((int64_t)p->n * s->x.hs * s->x.ws * s->x.c_out * 2 + 255) / 256 * 256;
  const int64_t w_bytes = (int64_t)p->k * wg.hs * wg.ws * wg.c_out * 2;
  if (cudaMalloc(&s->w2, (size_t)w_bytes) != cudaSuccess) {
    cudaGetLastError();
    s->w2 = NULL;
    fold_release(s);
    return infer_fail(INFER_ERR_OUT_OF_MEMORY, "%s: no device memory", name);
  }
  cudaError_t e = fold(&wg, p->w_dev, s->w2, (cudaStream_t)x->stream);
  if (e != cudaSuccess) {
    fold_release(s);
    return infer_fail(INFER_ERR_DEVICE, "%s: %s", name, cudaGetErrorString(e));
  }
  q.w_dev = s->w2;
  infer_status st = conv_alt_cudnn_graph.prepare(x, &q, &s->inner, &s->inner_ws);
  if (st != INFER_OK) {
    s->inner = NULL;
    fold_release(s);
    return st;
  }
  *state = s;
  *ws_bytes = s->x_bytes + s->inner_ws;
  return INFER_OK;
}

static infer_status s2d_prepare(const cuda_exec *x, const conv_problem *p, void **state,
                                int64_t *ws_bytes) {
  return fold_prepare(x, p, true, state, ws_bytes);
}

static infer_status wfold_prepare(const cuda_exec *x, const conv_problem *p, void **state,
                                  int64_t *ws_bytes) {
  return fold_prepare(x, p, false, state, ws_bytes);
}

static infer_status fold_run(const cuda_exec *x, const void *state, const void *in, const void *w,
                             const void *bias, const void *z, void *y, void *ws) {
  (void)w; /* the folded copy made at build */
  const fold_state *s = state;
  char *x2 = ws;
  CUDA_LAUNCH_TRY(fold(&s->x, in, x2, (cudaStream_t)x->stream));
  return conv_alt_cudnn_graph.run(x, s->inner, x2, s->w2, bias, z, y,
                                  s->inner_ws > 0 ? x2 + s->x_bytes : NULL);
}

const conv_alt conv_alt_space_to_depth = {.name = "s2d-cudnn-graph", .prepare = s2d_prepare,
                                          .run = fold_run, .release = fold_release};
const conv_alt conv_alt_width_fold = {.name = "wfold-cudnn-graph", .prepare = wfold_prepare,
                                      .run = fold_run, .release = fold_release};
