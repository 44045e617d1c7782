/* conv_gemm_1x1.c: a pointwise (1x1, stride 1, unpadded, ungrouped) channels-last
 * convolution is one GEMM: Y[NHW x K] = X[NHW x C] * W[K x C]^T, and cuBLASLt's
 * epilogue adds the bias, the residual (as its C matrix, beta = 1) and ReLU in the
 * same kernel. Two thirds of ResNet-50's convolutions are pointwise. Other activations
 * (MobileNet's ReLU6) follow as one pass of the epilogue kernel. fp16 only;
 * cuda_conv.c keeps it only where it times faster. Y may be a slice of a wider tensor
 * (y_pitch, D's leading dimension: a Concat's part written in place). */
#include <cublasLt.h>
#include <stdlib.h>

#include "../../core/cuda_check.h"
#include "../../kernels/conv_epilogue.h"
#include "../../kernels/k_dtype.h"
#include "conv_alt.h"

typedef struct gemm_1x1 {
  cublasLtHandle_t lt;
  cublasLtMatmulDesc_t op;
  cublasLtMatrixLayout_t a, b, d; /* W (C x K, transposed), X (C x P), Y and Z (K x P) */
  cublasLtMatmulAlgo_t algo;
  size_t ws;
  bool has_z;
  int post_act; /* an activation cuBLASLt has no epilogue for, applied after */
  float alpha, beta;
  int64_t count, channels;
} gemm_1x1;

static void g1_release(void *p) {
  gemm_1x1 *g = p;
  if (!g) return;
  if (g->a) cublasLtMatrixLayoutDestroy(g->a);
  if (g->b) cublasLtMatrixLayoutDestroy(g->b);
  if (g->d) cublasLtMatrixLayoutDestroy(g->d);
  if (g->op) cublasLtMatmulDescDestroy(g->op);
  if (g->lt) cublasLtDestroy(g->lt);
  free(g);
}

#define LT_TRY(expr)                                                                \
  do {                                                                              \
    cublasStatus_t st_ = (expr);                                                    \
    if (st_ != CUBLAS_STATUS_SUCCESS) {                                             \
      g1_release(g);                                                                \
      return infer_fail(INFER_ERR_UNSUPPORTED, "1x1 GEMM: %s failed (%d)", #expr, \
                        (int)st_);                                                  \
    }                                                                               \
  } while (0)

static infer_status g1_prepare(const cuda_exec *x, const conv_problem *p, void **state,
                               int64_t *ws_bytes) {
  (void)x;
  if (!p->channels_last || p->kdt != K_F16 || p->r != 1 || p->s != 1 || p->stride_h != 1 ||
      p->stride_w != 1 || p->pad_h || p->pad_w || p->group != 1 ||
      (p->has_bias && !p->bias_dev) || p->has_x_max)
    return infer_fail(INFER_ERR_UNSUPPORTED, "1x1 GEMM: not a pointwise fp16 convolution");
  gemm_1x1 *g = calloc(1, sizeof *g);
  if (!g) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory");
  g->has_z = p->has_z;
  /* cuda.nan_exact: ReLU too follows as our epilogue pass (cuBLASLt's may drop NaN) */
  bool relu = p->act == 1 && !p->nan_exact;
  g->post_act = p->act > 1 || (p->act == 1 && !relu) ? p->act : 0;
  /* a slice of a wider tensor (y_pitch: D's leading dimension) only where nothing but
   * the GEMM writes it: no residual as C, no activation pass after */
  if (p->y_pitch && (p->has_z || g->post_act || p->y_pitch < p->k)) {
    free(g);
    return infer_fail(INFER_ERR_UNSUPPORTED, "1x1 GEMM: a strided output with a residual or "
                      "an activation cuBLASLt has no epilogue for");
  }
  g->alpha = p->alpha;
  g->beta = p->beta;
  g->channels = p->k;
  g->count = (int64_t)p->n * p->out_h * p->out_w * p->k;
  uint64_t rows = (uint64_t)p->n * (uint64_t)p->h * (uint64_t)p->w;
  LT_TRY(cublasLtCreate(&g->lt));
  LT_TRY(cublasLtMatmulDescCreate(&g->op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
  LT_TRY(cublasLtMatmulDescSetAttribute(g->op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
  LT_TRY(cublasLtMatmulDescSetAttribute(g->op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
  cublasLtEpilogue_t epi = p->has_bias ? (relu ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_BIAS)
                                       : (relu ? CUBLASLT_EPILOGUE_RELU : CUBLASLT_EPILOGUE_DEFAULT);
  LT_TRY(cublasLtMatmulDescSetAttribute(g->op, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi));
  if (p->has_bias) {
    /* a weight: its device address is fixed at build, so the shared descriptor holds it */
    cudaDataType_t bt = CUDA_R_16F;
    LT_TRY(cublasLtMatmulDescSetAttribute(g->op, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &bt,
                                          sizeof bt));
    LT_TRY(cublasLtMatmulDescSetAttribute(g->op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &p->bias_dev,
                                          sizeof p->bias_dev));
  }
  /* column-major views: W row-major K x C is C x K (ld C), used transposed; X row-major
   * P x C is C x P (ld C); Y row-major P x K is K x P (ld K) */
  LT_TRY(cublasLtMatrixLayoutCreate(&g->a, CUDA_R_16F, (uint64_t)p->c, (uint64_t)p->k, p->c));
  LT_TRY(cublasLtMatrixLayoutCreate(&g->b, CUDA_R_16F, (uint64_t)p->c, rows, p->c));
  LT_TRY(cublasLtMatrixLayoutCreate(&g->d, CUDA_R_16F, (uint64_t)p->k, rows,
                                    p->y_pitch ? p->y_pitch : p->k));
  cublasLtMatmulPreference_t pref;
  LT_TRY(cublasLtMatmulPreferenceCreate(&pref));
  size_t max_ws = (size_t)64 << 20;
  cublasLtMatmulHeuristicResult_t res;
  int found = 0;
  cublasStatus_t st =
      cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &max_ws,
                                           sizeof max_ws);
  if (st == CUBLAS_STATUS_SUCCESS)
    st = cublasLtMatmulAlgoGetHeuristic(g->lt, g->op, g->a, g->b, g->d, g->d, pref, 1, &res,
                                        &found);
  cublasLtMatmulPreferenceDestroy(pref);
  if (st != CUBLAS_STATUS_SUCCESS || found < 1 || res.state != CUBLAS_STATUS_SUCCESS) {
    g1_release(g);
    return infer_fail(INFER_ERR_UNSUPPORTED, "1x1 GEMM: cuBLASLt has no algorithm");
  }
  g->algo = res.algo;
  g->ws = res.workspaceSize;
  *ws_bytes = (int64_t)g->ws;
  *state = g;
  return INFER_OK;
}

static infer_status g1_run(const cuda_exec *x, const void *state, const void *in, const void *w,
                           const void *bias, const void *z, void *y, void *ws) {
  (void)bias; /* set in the descriptor at build */
  const gemm_1x1 *g = state;
  const float one = 1, zero = 0;
  CUBLAS_TRY(cublasLtMatmul(g->lt, g->op, &one, w, g->a, in, g->b, g->has_z ? &one : &zero,
                            g->has_z ? z : y, g->d, y, g->d, &g->algo, g->ws ? ws : NULL, g->ws,
                            (cudaStream_t)x->stream));
  if (g->post_act)
    CUDA_LAUNCH_TRY(k_conv_epilogue(K_F16, y, NULL, NULL, g->count, g->channels, 1, g->post_act,
                                    g->alpha, g->beta, (cudaStream_t)x->stream));
  return INFER_OK;
}

const conv_alt conv_alt_gemm_1x1 = {
    .name = "cublaslt-1x1", .prepare = g1_prepare, .run = g1_run, .release = g1_release,
    .y_pitch = true};
