/* conv_patch_gemm.c: a non-overlapping channels-last convolution (kernel = stride, no
 * padding, ungrouped: ViT's 16x16 patch embedding, ConvNeXt's and Swin's stems) is a
 * rearrangement of the input into patches (kernels/conv_patch.cu) and one GEMM:
 * Y[NHoWo x K] = P[NHoWo x RSC] . W[K x RSC]^T, the filters being K x R x S x C already
 * (to-channels-last's layout). cuBLASLt's epilogue adds the bias, the residual and ReLU;
 * other activations follow in one epilogue pass. cuDNN is slow on such shapes (three
 * input channels, large strides): conv_algo_search.c times this against it. */
#include <stdlib.h>

#include "../../core/cuda_check.h"
#include "../../kernels/conv_epilogue.h"
#include "../../kernels/conv_patch.h"
#include "../../kernels/k_dtype.h"
#include "conv_alt.h"
#include "gemm_lt.h"

typedef struct patch_gemm {
  gemm_plan *plan;
  int64_t n, h, w, c, r, s, patch_bytes, count, channels;
  int post_act;
  float alpha, beta;
} patch_gemm;

static void pg_release(void *state) {
  patch_gemm *g = state;
  if (!g) return;
  gemm_plan_release(g->plan);
  free(g);
}

static infer_status pg_prepare(const cuda_exec *x, const conv_problem *p, void **state,
                               int64_t *ws_bytes) {
  if (!p->channels_last || p->kdt != K_F16 || p->group != 1 || p->r != p->stride_h ||
      p->s != p->stride_w || p->pad_h || p->pad_w || p->dil_h != 1 || p->dil_w != 1 ||
      p->h % p->r || p->w % p->s || p->has_x_max || !p->w_dev || (p->has_bias && !p->bias_dev) ||
      (p->r == 1 && p->s == 1))
    return infer_fail(INFER_ERR_UNSUPPORTED, "patch GEMM: not a non-overlapping fp16 convolution");
  patch_gemm *g = calloc(1, sizeof *g);
  if (!g) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory");
  g->n = p->n;
  g->h = p->h;
  g->w = p->w;
  g->c = p->c;
  g->r = p->r;
  g->s = p->s;
  int64_t rows = (int64_t)p->n * (p->h / p->r) * (p->w / p->s), depth = (int64_t)p->r * p->s * p->c;
  g->patch_bytes = (rows * depth * 2 + 255) / 256 * 256;
  g->count = rows * p->k;
  g->channels = p->k;
  /* cuda.nan_exact: ReLU too follows as our epilogue pass (cuBLASLt's may drop NaN) */
  bool lib_relu = p->act == 1 && !p->nan_exact;
  g->post_act = p->act > 1 || (p->act == 1 && !lib_relu) ? p->act : 0;
  g->alpha = p->alpha;
  g->beta = p->beta;
  gemm_problem q = {.m = rows, .n = p->k, .k = depth, .batch = 1, .trans_b = true,
                    .dt = INFER_DTYPE_FLOAT16, .alpha = 1, .beta = 1,
                    .bias = p->has_bias ? p->bias_dev : NULL, .has_z = p->has_z,
                    .act = lib_relu ? GEMM_ACT_RELU : GEMM_ACT_NONE};
  int64_t gws = 0;
  infer_status st = gemm_plan_create(x, &q, &g->plan, &gws);
  if (st != INFER_OK) {
    pg_release(g);
    return st;
  }
  *ws_bytes = g->patch_bytes + gws;
  *state = g;
  return INFER_OK;
}

static infer_status pg_run(const cuda_exec *x, const void *state, const void *in, const void *w,
                           const void *bias, const void *z, void *y, void *ws) {
  (void)bias; /* set in the plan at build */
  const patch_gemm *g = state;
  cudaStream_t st = (cudaStream_t)x->stream;
  CUDA_LAUNCH_TRY(k_conv_patches(2, in, g->n, g->h, g->w, g->c, g->r, g->s, ws, st));
  TRY(gemm_plan_run_ws(x, g->plan, ws, w, z, y, (char *)ws + g->patch_bytes));
  if (g->post_act)
    CUDA_LAUNCH_TRY(k_conv_epilogue(K_F16, y, NULL, NULL, g->count, g->channels, 1, g->post_act,
                                    g->alpha, g->beta, st));
  return INFER_OK;
}

const conv_alt conv_alt_patch_gemm = {
    .name = "patch-gemm", .prepare = pg_prepare, .run = pg_run, .release = pg_release};
