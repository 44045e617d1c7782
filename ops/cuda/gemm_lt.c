/* gemm_lt.c: cuBLASLt plans for row-major products with epilogues (gemm_lt.h). The
 * build asks cuBLASLt's heuristic for several candidate algorithms and times each on
 * scratch buffers, as the convolutions are chosen; the choice is kept in the algorithm
 * cache by its rank in the heuristic's list (the cache's env line pins the cuBLAS
 * version, so the list is the same when the key matches). */
#include "gemm_lt.h"

#include <cublasLt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/cuda_check.h"
#include "algo_cache.h"
#include "cuda_timing.h"

#define GEMM_CANDIDATES 8
/* products smaller than this (multiply-adds) take the heuristic's first choice untimed:
 * timing would cost more build time than it could save */
#define GEMM_TIME_MIN_MACS (1LL << 24)

struct gemm_plan {
  cublasLtHandle_t lt;
  cublasLtMatmulDesc_t op;
  cublasLtMatrixLayout_t la, lb, ld; /* Lt's A (our B), Lt's B (our A), C = D (our Y, Z) */
  cublasLtMatmulAlgo_t algo;
  size_t ws;
  float alpha, beta;
  bool has_z;
  char name[48];
};

void gemm_plan_release(gemm_plan *g) {
  if (!g) return;
  if (g->la) cublasLtMatrixLayoutDestroy(g->la);
  if (g->lb) cublasLtMatrixLayoutDestroy(g->lb);
  if (g->ld) cublasLtMatrixLayoutDestroy(g->ld);
  if (g->op) cublasLtMatmulDescDestroy(g->op);
  if (g->lt) cublasLtDestroy(g->lt);
  free(g);
}

const char *gemm_plan_name(const gemm_plan *g) { return g->name; }

#define LT_TRY(expr)                                                                     \
  do {                                                                                   \
    cublasStatus_t lt_s_ = (expr);                                                       \
    if (lt_s_ != CUBLAS_STATUS_SUCCESS)                                                  \
      return infer_fail(INFER_ERR_UNSUPPORTED, "cuBLASLt: %s failed: %s", #expr,          \
                        cublasGetStatusString(lt_s_));                                   \
  } while (0)

static infer_status layout(cublasLtMatrixLayout_t *l, cudaDataType_t t, int64_t rows,
                           int64_t cols, int64_t ld, int64_t batch, int64_t stride) {
  LT_TRY(cublasLtMatrixLayoutCreate(l, t, (uint64_t)rows, (uint64_t)cols, ld));
  if (batch > 1) {
    int32_t b = (int32_t)batch;
    LT_TRY(cublasLtMatrixLayoutSetAttribute(*l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &b, sizeof b));
    LT_TRY(cublasLtMatrixLayoutSetAttribute(*l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                                            &stride, sizeof stride));
  }
  return INFER_OK;
}

/* Bytes a matrix of `rows` rows of row stride `ld` spans, over the batch. */
static int64_t span_bytes(int64_t rows, int64_t cols, int64_t ld, int64_t batch, int64_t stride,
                          size_t es) {
  int64_t one = (rows - 1) * ld + cols;
  return (int64_t)es * (one + (batch - 1) * stride);
}

static void key_of(const gemm_problem *p, const cuda_exec *x, char *key, size_t cap) {
  snprintf(key, cap,
           "gemm-lt:m=%lld:n=%lld:k=%lld:b=%lld:t=%d%d:ld=%lld,%lld,%lld:s=%lld,%lld,%lld:"
           "dt=%d:prec=%d:bias=%d:z=%d:act=%d:cand=%d",
           (long long)p->m, (long long)p->n, (long long)p->k, (long long)p->batch, p->trans_a,
           p->trans_b, (long long)p->lda, (long long)p->ldb, (long long)p->ldy,
           (long long)p->stride_a, (long long)p->stride_b, (long long)p->stride_y, (int)p->dt,
           (int)x->precision, p->bias != NULL, p->has_z, (int)p->act, GEMM_CANDIDATES);
}

typedef struct algo_run {
  const gemm_plan *g;
  const cublasLtMatmulAlgo_t *algo;
  size_t ws;
  void *ws_buf, *y;
  const void *a, *b;
  float beta;
  cudaStream_t st;
} algo_run;

static bool algo_once(void *ctx) {
  const algo_run *r = ctx;
  const gemm_plan *g = r->g;
  return cublasLtMatmul(g->lt, g->op, &g->alpha, r->b, g->la, r->a, g->lb, &r->beta, r->y, g->ld,
                        r->y, g->ld, r->algo, r->ws ? r->ws_buf : NULL, r->ws, r->st) ==
         CUBLAS_STATUS_SUCCESS;
}

/* Milliseconds per run of one algorithm (cuda_time_runs); -1 on failure. */
static float time_algo(const cuda_exec *x, gemm_plan *g, const cublasLtMatmulAlgo_t *algo,
                       size_t ws, void *ws_buf, const void *a, const void *b, void *y) {
  algo_run r = {.g = g, .algo = algo, .ws = ws, .ws_buf = ws_buf, .y = y, .a = a, .b = b,
                .beta = g->has_z ? g->beta : 0, .st = (cudaStream_t)x->stream};
  return cuda_time_runs(x->stream, algo_once, &r);
}

/* Times the candidates on scratch operands (filled with a non-zero pattern: zeros can
 * run faster than real data) and returns the fastest's rank, or 0 when timing fails. */
static int fastest(const cuda_exec *x, gemm_plan *g, const gemm_problem *p,
                   const cublasLtMatmulHeuristicResult_t *res, int found) {
  size_t es = infer_dtype_size(p->dt);
  int64_t arows = p->trans_a ? p->k : p->m, acols = p->trans_a ? p->m : p->k;
  int64_t brows = p->trans_b ? p->n : p->k, bcols = p->trans_b ? p->k : p->n;
  int64_t ab = span_bytes(arows, acols, p->lda, p->batch, p->stride_a, es);
  int64_t bb = span_bytes(brows, bcols, p->ldb, p->batch, p->stride_b, es);
  int64_t yb = span_bytes(p->m, p->n, p->ldy, p->batch, p->stride_y, es);
  size_t ws_max = 0;
  for (int i = 0; i < found; i++)
    if (res[i].workspaceSize > ws_max) ws_max = res[i].workspaceSize;
  char *buf = NULL;
  int64_t total = ab + bb + yb + (int64_t)ws_max + 3 * 256;
  if (cudaMalloc((void **)&buf, (size_t)total) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  /* 0x3c3c is 1.06 in float16 and 0.011 in float32: finite products either way */
  cudaMemsetAsync(buf, 0x3c, (size_t)(ab + bb + 512), (cudaStream_t)x->stream);
  char *a = buf, *b = a + (ab + 255) / 256 * 256, *y = b + (bb + 255) / 256 * 256;
  char *w = y + (yb + 255) / 256 * 256;
  int best = 0;
  float best_ms = -1;
  for (int i = 0; i < found; i++) {
    float ms = time_algo(x, g, &res[i].algo, res[i].workspaceSize, w, a, b, y);
    if (ms >= 0 && (best_ms < 0 || ms < best_ms)) {
      best_ms = ms;
      best = i;
    }
  }
  cudaFree(buf);
  cudaGetLastError();
  return best;
}

static infer_status plan_descriptors(const cuda_exec *x, const gemm_problem *p, gemm_plan *g) {
  cudaDataType_t t = p->dt == INFER_DTYPE_FLOAT16 ? CUDA_R_16F : CUDA_R_32F;
  cublasComputeType_t ct = p->dt == INFER_DTYPE_FLOAT32 && x->precision == INFER_PRECISION_TF32
                               ? CUBLAS_COMPUTE_32F_FAST_TF32
                               : CUBLAS_COMPUTE_32F;
  LT_TRY(cublasLtCreate(&g->lt));
  LT_TRY(cublasLtMatmulDescCreate(&g->op, ct, CUDA_R_32F));
  cublasOperation_t ta = p->trans_b ? CUBLAS_OP_T : CUBLAS_OP_N; /* Lt's A is our B */
  cublasOperation_t tb = p->trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  LT_TRY(cublasLtMatmulDescSetAttribute(g->op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
  LT_TRY(cublasLtMatmulDescSetAttribute(g->op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
  cublasLtEpilogue_t epi =
      p->act == GEMM_ACT_RELU        ? (p->bias ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_RELU)
      : p->act == GEMM_ACT_GELU_TANH ? (p->bias ? CUBLASLT_EPILOGUE_GELU_BIAS : CUBLASLT_EPILOGUE_GELU)
      : p->bias                      ? CUBLASLT_EPILOGUE_BIAS
                                     : CUBLASLT_EPILOGUE_DEFAULT;
  LT_TRY(cublasLtMatmulDescSetAttribute(g->op, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi));
  if (p->bias) {
    /* a weight: its device address is fixed at build, so the shared descriptor holds it */
    LT_TRY(cublasLtMatmulDescSetAttribute(g->op, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &t, sizeof t));
    LT_TRY(cublasLtMatmulDescSetAttribute(g->op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &p->bias,
                                          sizeof p->bias));
  }
  /* the column-major views of gemm_lt.h: D (n x m) = op(B) (n x k) . op(A) (k x m) */
  TRY(layout(&g->la, t, p->trans_b ? p->k : p->n, p->trans_b ? p->n : p->k, p->ldb, p->batch,
             p->stride_b));
  TRY(layout(&g->lb, t, p->trans_a ? p->m : p->k, p->trans_a ? p->k : p->m, p->lda, p->batch,
             p->stride_a));
  TRY(layout(&g->ld, t, p->n, p->m, p->ldy, p->batch, p->stride_y));
  return INFER_OK;
}

infer_status gemm_plan_create(const cuda_exec *x, const gemm_problem *p_in, gemm_plan **out,
                              int64_t *ws_bytes) {
  *out = NULL;
  *ws_bytes = 0;
  gemm_problem p = *p_in;
  if (p.dt != INFER_DTYPE_FLOAT16 && p.dt != INFER_DTYPE_FLOAT32)
    return infer_fail(INFER_ERR_UNSUPPORTED, "cuBLASLt GEMM: dtype %s", infer_dtype_name(p.dt));
  if (p.batch < 1) p.batch = 1;
  if (!p.lda) p.lda = p.trans_a ? p.m : p.k;
  if (!p.ldb) p.ldb = p.trans_b ? p.k : p.n;
  if (!p.ldy) p.ldy = p.n;
  if (p.m > INT32_MAX || p.n > INT32_MAX || p.k > INT32_MAX || p.batch > INT32_MAX)
    return infer_fail(INFER_ERR_UNSUPPORTED, "cuBLASLt GEMM: a dim exceeds 2^31");
  gemm_plan *g = calloc(1, sizeof *g);
  if (!g) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory");
  g->alpha = p.alpha;
  g->beta = p.beta;
  g->has_z = p.has_z;
  snprintf(g->name, sizeof g->name, "cublaslt%s%s%s%s", p.batch > 1 ? "-batched" : "",
           p.bias ? "+bias" : "", p.has_z ? "+add" : "",
           p.act == GEMM_ACT_RELU ? "+relu" : p.act == GEMM_ACT_GELU_TANH ? "+gelu" : "");
  infer_status st = plan_descriptors(x, &p, g);
  cublasLtMatmulPreference_t pref = NULL;
  cublasLtMatmulHeuristicResult_t res[GEMM_CANDIDATES];
  int found = 0;
  if (st == INFER_OK) {
    size_t max_ws = (size_t)(x->ws_limit > 0 && x->ws_limit < (64 << 20) ? x->ws_limit : 64 << 20);
    if (cublasLtMatmulPreferenceCreate(&pref) != CUBLAS_STATUS_SUCCESS ||
        cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                             &max_ws, sizeof max_ws) != CUBLAS_STATUS_SUCCESS ||
        cublasLtMatmulAlgoGetHeuristic(g->lt, g->op, g->la, g->lb, g->ld, g->ld, pref,
                                       GEMM_CANDIDATES, res, &found) != CUBLAS_STATUS_SUCCESS ||
        found < 1)
      st = infer_fail(INFER_ERR_UNSUPPORTED, "cuBLASLt has no algorithm for a %lldx%lldx%lld "
                      "product (batch %lld, %s)", (long long)p.m, (long long)p.n, (long long)p.k,
                      (long long)p.batch, infer_dtype_name(p.dt));
  }
  if (pref) cublasLtMatmulPreferenceDestroy(pref);
  if (st != INFER_OK) {
    gemm_plan_release(g);
    return st;
  }
  int ok = 0;
  for (int i = 0; i < found; i++) ok += res[i].state == CUBLAS_STATUS_SUCCESS;
  found = ok < found ? ok : found; /* the heuristic lists usable ones first */
  char key[ALGO_CACHE_KEY_MAX + 1];
  key_of(&p, x, key, sizeof key);
  int64_t v[4];
  int pick = 0;
  if (algo_cache_get(x->algo_cache, key, v) && v[0] >= 0 && v[0] < found &&
      v[1] == (int64_t)res[v[0]].workspaceSize) {
    pick = (int)v[0];
  } else {
    double macs = (double)p.m * (double)p.n * (double)p.k * (double)p.batch;
    if (found > 1 && macs >= (double)GEMM_TIME_MIN_MACS) pick = fastest(x, g, &p, res, found);
    int64_t put[4] = {pick, (int64_t)res[pick].workspaceSize, found, 0};
    algo_cache_put(x->algo_cache, key, put);
  }
  g->algo = res[pick].algo;
  g->ws = res[pick].workspaceSize;
  *ws_bytes = (int64_t)g->ws;
  *out = g;
  return INFER_OK;
}

infer_status gemm_plan_run_ws(const cuda_exec *x, const gemm_plan *g, const void *a,
                              const void *b, const void *z, void *y, void *ws) {
  float beta = g->has_z ? g->beta : 0;
  CUBLAS_TRY(cublasLtMatmul(g->lt, g->op, &g->alpha, b, g->la, a, g->lb, &beta,
                            g->has_z ? z : y, g->ld, y, g->ld, &g->algo, g->ws ? ws : NULL,
                            g->ws, (cudaStream_t)x->stream));
  return INFER_OK;
}

infer_status gemm_plan_run(const cuda_exec *x, const gemm_plan *g, const void *a, const void *b,
                           const void *z, void *y) {
  return gemm_plan_run_ws(x, g, a, b, z, y, x->ws);
}
