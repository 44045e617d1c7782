/* cuda_matmul.c: MatMul (numpy batching and broadcasting, 1-D operands), Gemm (transA,
 * transB, alpha, beta, broadcast C) and FusedMatMul (ops/matmul_fused.h) on the GPU.
 *
 * float16 and float32 products go through one cuBLASLt plan each (ops/cuda/gemm_lt.c,
 * algorithm timed at build): a MatMul whose B is one matrix for every batch entry is a
 * single product with the batch folded into the rows ([B, N, K] x [K, M] is one
 * (B*N) x K x M GEMM, not B small ones); equal or broadcast batches are one strided
 * batched call; other broadcasts loop over one plan. float64 goes through cuBLAS's
 * strided-batched call. Row-major products are computed as the column-major
 * C^T = B^T A^T, so no operand is transposed in memory.
 *
 * FusedMatMul's Gelu: cuBLASLt's GELU epilogue is the tanh form. It is used as such for
 * Gelu(approximate="tanh"), and for the erf form in float16 engines only, where the
 * forms' difference (at most 4.1e-4, near |x| = 2) is below half a float16 unit of the
 * results it touches (2^-11 relative); float32 engines apply the exact erf form in a
 * pass after the product. With cuda.nan_exact every activation runs as such a pass
 * (our kernels keep NaN as the Relu op does; cuBLASLt's epilogues are cuBLASLt's). */
#include <stdlib.h>
#include <string.h>

#include "../../core/cuda_check.h"
#include "../../kernels/elementwise.h"
#include "../../kernels/gemm_bias.h"
#include "../cuda_op.h"
#include "../matmul_fused.h"
#include "../matmul_params.h"
#include "gemm_lt.h"

typedef struct mm_state {
  /* float16 / float32: one plan, run once, or once per entry of `offsets` */
  gemm_plan *plan;
  int64_t loops;    /* 1, or the batch entries run one by one */
  int64_t *offsets; /* per loop: element offsets of A, B and Y */
  /* FusedMatMul's activation as a pass after the product (K_UN_GELU / K_UN_RELU with
   * post_p), or -1: the erf Gelu in float32, every activation with cuda.nan_exact */
  int post_op;
  k_ew_params post_p;
  int64_t count;    /* Y's elements */
  /* float64: cuBLAS */
  bool f64;
  int64_t m, n, k;
  bool trans_a, trans_b;
  double alpha, beta;
  int64_t batch, stride_a, stride_b;
  /* Gemm's C: rows x cols broadcast into Y before the product adds beta * Y */
  bool has_c;
  int64_t c_rows, c_cols;
} mm_state;

static void mm_release(void *p) {
  mm_state *s = p;
  if (!s) return;
  gemm_plan_release(s->plan);
  free(s->offsets);
  free(s);
}

static const char *mm_impl(const void *state) {
  const mm_state *s = state;
  return s->plan ? gemm_plan_name(s->plan) : "cublas";
}

static infer_status check_dtype(infer_dtype dt, const char *op) {
  if (dt == INFER_DTYPE_FLOAT32 || dt == INFER_DTYPE_FLOAT16 || dt == INFER_DTYPE_FLOAT64)
    return INFER_OK;
  return infer_fail(INFER_ERR_UNSUPPORTED, "%s on the GPU: dtype %s is not supported", op,
                    infer_dtype_name(dt));
}

/* float64 through cuBLAS's strided-batched call. */
static infer_status f64_call(const cuda_exec *x, const mm_state *s, const void *a, const void *b,
                             void *c, int64_t batch, int64_t sa, int64_t sb, int64_t sc) {
  int lda = (int)(s->trans_a ? s->m : s->k), ldb = (int)(s->trans_b ? s->k : s->n);
  CUBLAS_TRY(cublasGemmStridedBatchedEx(
      x->cublas, s->trans_b ? CUBLAS_OP_T : CUBLAS_OP_N, s->trans_a ? CUBLAS_OP_T : CUBLAS_OP_N,
      (int)s->n, (int)s->m, (int)s->k, &s->alpha, b, CUDA_R_64F, ldb, sb, a, CUDA_R_64F, lda, sa,
      &s->beta, c, CUDA_R_64F, (int)s->n, sc, (int)batch, CUBLAS_COMPUTE_64F,
      CUBLAS_GEMM_DEFAULT));
  return INFER_OK;
}

static infer_status check_int_range(const mm_state *s, const char *op) {
  if (s->m > INT32_MAX || s->n > INT32_MAX || s->k > INT32_MAX || s->batch > INT32_MAX)
    return infer_fail(INFER_ERR_UNSUPPORTED, "%s on the GPU: a dim exceeds 2^31", op);
  return INFER_OK;
}

/* ---- MatMul ----------------------------------------------------------------------- */

static infer_status matmul_prepare(const cuda_exec *x, const node *n, const void *params,
                                   const tensor *const *in, const tensor *const *host_in,
                                   tensor *const *out, void **state, int64_t *ws_bytes) {
  const tensor *A = in[0], *B = in[1];
  mm_state *s = calloc(1, sizeof *s);
  if (!s) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory");
  *state = s;
  TRY(check_dtype(A->dtype, "MatMul"));
  /* promote 1-D operands as numpy does */
  int64_t ad[INFER_MAX_RANK + 1], bd[INFER_MAX_RANK + 1];
  int ar = A->rank, br = B->rank;
  if (ar == 1) { ad[0] = 1; ad[1] = A->dims[0]; ar = 2; } else memcpy(ad, A->dims, sizeof(int64_t) * (size_t)ar);
  if (br == 1) { bd[0] = B->dims[0]; bd[1] = 1; br = 2; } else memcpy(bd, B->dims, sizeof(int64_t) * (size_t)br);
  s->m = ad[ar - 2];
  s->k = ad[ar - 1];
  s->n = bd[br - 1];
  s->alpha = 1;
  int r = (ar > br ? ar : br) - 2; /* batch rank */
  int64_t obd[INFER_MAX_RANK], as[INFER_MAX_RANK], bs[INFER_MAX_RANK];
  int64_t batch = 1, a_full = 1, b_full = 1;
  for (int i = 0; i < r; i++) {
    int ia = i - (r - (ar - 2)), ib = i - (r - (br - 2));
    int64_t da = ia >= 0 ? ad[ia] : 1, db = ib >= 0 ? bd[ib] : 1;
    obd[i] = da > db ? da : db;
    batch *= obd[i];
    as[i] = da == 1 ? 0 : -1;
    bs[i] = db == 1 ? 0 : -1;
    a_full *= da;
    b_full *= db;
  }
  /* element strides of each batch dim in A and B (0 where broadcast) */
  int64_t sa = s->m * s->k, sb = s->k * s->n;
  for (int i = r - 1; i >= 0; i--) {
    if (as[i] != 0) { as[i] = sa; sa *= obd[i]; }
    if (bs[i] != 0) { bs[i] = sb; sb *= obd[i]; }
  }
  s->batch = batch;
  s->count = batch * s->m * s->n;
  TRY(check_int_range(s, "MatMul"));
  bool a_simple = a_full == 1 || a_full == batch, b_simple = b_full == 1 || b_full == batch;
  s->loops = 1;
  if (!a_simple || !b_simple) {
    /* a broadcast no stride expresses: one product per batch entry */
    s->loops = batch;
    s->offsets = malloc(sizeof(int64_t) * 3 * (size_t)batch);
    if (!s->offsets) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory");
    for (int64_t b = 0; b < batch; b++) {
      int64_t rem = b, oa = 0, ob = 0;
      for (int i = r - 1; i >= 0; i--) {
        int64_t idx = rem % obd[i];
        rem /= obd[i];
        oa += idx * as[i];
        ob += idx * bs[i];
      }
      s->offsets[3 * b] = oa;
      s->offsets[3 * b + 1] = ob;
      s->offsets[3 * b + 2] = b * s->m * s->n;
    }
  }
  if (A->dtype == INFER_DTYPE_FLOAT64) {
    s->f64 = true;
    s->stride_a = a_full == 1 ? 0 : s->m * s->k;
    s->stride_b = b_full == 1 ? 0 : s->k * s->n;
    return INFER_OK;
  }
  gemm_problem p = {.m = s->m, .n = s->n, .k = s->k, .batch = 1, .dt = A->dtype, .alpha = 1};
  if (s->loops == 1 && b_full == 1) {
    p.m = batch * s->m; /* A's matrices are stacked rows: one product */
  } else if (s->loops == 1) {
    p.batch = batch;
    p.stride_a = a_full == 1 ? 0 : s->m * s->k;
    p.stride_b = s->k * s->n;
    p.stride_y = s->m * s->n;
  }
  return gemm_plan_create(x, &p, &s->plan, ws_bytes);
}

static infer_status run_plan(const cuda_exec *x, const mm_state *s, const tensor *const *in,
                             const void *z, tensor *y) {
  if (s->loops == 1) return gemm_plan_run(x, s->plan, in[0]->data, in[1]->data, z, y->data);
  size_t es = infer_dtype_size(y->dtype);
  for (int64_t b = 0; b < s->loops; b++)
    TRY(gemm_plan_run(x, s->plan, (const char *)in[0]->data + es * (size_t)s->offsets[3 * b],
                      (const char *)in[1]->data + es * (size_t)s->offsets[3 * b + 1], NULL,
                      (char *)y->data + es * (size_t)s->offsets[3 * b + 2]));
  return INFER_OK;
}

static infer_status zero_fill(const cuda_exec *x, tensor *y) {
  CUDA_TRY(cudaMemsetAsync(y->data, 0, (size_t)tensor_nbytes(y), (cudaStream_t)x->stream));
  return INFER_OK;
}

static infer_status matmul_run(const cuda_exec *x, const node *n, const void *params,
                               const void *state, const tensor *const *in, tensor *const *out) {
  const mm_state *s = state;
  if (s->m == 0 || s->n == 0 || s->batch == 0) return INFER_OK;
  if (s->k == 0) return zero_fill(x, out[0]);
  if (!s->f64) return run_plan(x, s, in, NULL, out[0]);
  size_t es = 8;
  if (!s->offsets)
    return f64_call(x, s, in[0]->data, in[1]->data, out[0]->data, s->batch, s->stride_a,
                    s->stride_b, s->m * s->n);
  for (int64_t b = 0; b < s->batch; b++)
    TRY(f64_call(x, s, (const char *)in[0]->data + es * (size_t)s->offsets[3 * b],
                 (const char *)in[1]->data + es * (size_t)s->offsets[3 * b + 1],
                 (char *)out[0]->data + es * (size_t)s->offsets[3 * b + 2], 1, 0, 0, 0));
  return INFER_OK;
}

/* ---- Gemm --------------------------------------------------------------------------- */

static infer_status gemm_prepare(const cuda_exec *x, const node *n, const void *params,
                                 const tensor *const *in, const tensor *const *host_in,
                                 tensor *const *out, void **state, int64_t *ws_bytes) {
  mm_state *s = calloc(1, sizeof *s);
  if (!s) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory");
  *state = s;
  TRY(check_dtype(in[0]->dtype, "Gemm"));
  const gemm_params *gp = params;
  float alpha = gp->alpha, beta = gp->beta;
  int64_t ta = gp->trans_a, tb = gp->trans_b;
  s->alpha = alpha;
  s->trans_a = ta != 0;
  s->trans_b = tb != 0;
  s->m = out[0]->dims[0];
  s->n = out[0]->dims[1];
  s->k = s->trans_a ? in[0]->dims[0] : in[0]->dims[1];
  s->batch = 1;
  s->loops = 1;
  s->count = s->m * s->n;
  TRY(check_int_range(s, "Gemm"));
  const tensor *C = n->n_inputs > 2 ? in[2] : NULL;
  if (C && beta != 0) {
    s->has_c = true;
    s->beta = beta;
    /* C broadcasts unidirectionally to M x N */
    int64_t rows = C->rank == 2 ? C->dims[0] : 1, cols = C->rank >= 1 ? C->dims[C->rank - 1] : 1;
    if ((rows != 1 && rows != s->m) || (cols != 1 && cols != s->n) || C->rank > 2)
      return infer_fail(INFER_ERR_INVALID_MODEL, "Gemm: C does not broadcast to %lldx%lld",
                        (long long)s->m, (long long)s->n);
    s->c_rows = rows;
    s->c_cols = cols;
  }
  if (in[0]->dtype == INFER_DTYPE_FLOAT64) {
    s->f64 = true;
    return INFER_OK;
  }
  /* C, broadcast into Y first, is the epilogue's Z, read in place */
  gemm_problem p = {.m = s->m, .n = s->n, .k = s->k, .batch = 1, .trans_a = s->trans_a,
                    .trans_b = s->trans_b, .dt = in[0]->dtype, .alpha = alpha,
                    .beta = (float)s->beta, .has_z = s->has_c};
  return gemm_plan_create(x, &p, &s->plan, ws_bytes);
}

static infer_status gemm_run(const cuda_exec *x, const node *n, const void *params,
                             const void *state, const tensor *const *in, tensor *const *out) {
  const mm_state *s = state;
  if (s->m == 0 || s->n == 0) return INFER_OK;
  size_t es = infer_dtype_size(in[0]->dtype);
  if (s->has_c)
    CUDA_LAUNCH_TRY(k_fill_broadcast_2d((int)es, in[2]->data, s->c_rows, s->c_cols, out[0]->data,
                                        s->m, s->n, (cudaStream_t)x->stream));
  if (s->k == 0) {
    if (!s->has_c) return zero_fill(x, out[0]);
    if (s->beta != 1) return infer_fail(INFER_ERR_UNSUPPORTED, "Gemm on the GPU: K = 0 with beta != 1");
    return INFER_OK;
  }
  if (!s->f64) return gemm_plan_run(x, s->plan, in[0]->data, in[1]->data, out[0]->data, out[0]->data);
  mm_state call = *s;
  call.beta = s->has_c ? s->beta : 0;
  return f64_call(x, &call, in[0]->data, in[1]->data, out[0]->data, 1, 0, 0, 0);
}

/* ---- FusedMatMul ---------------------------------------------------------------------- */

static infer_status fused_prepare(const cuda_exec *x, const node *n, const void *params,
                                  const tensor *const *in, const tensor *const *host_in,
                                  tensor *const *out, void **state, int64_t *ws_bytes) {
  const fused_matmul_params *fp = params;
  mm_state *s = calloc(1, sizeof *s);
  if (!s) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory");
  *state = s;
  const tensor *A = in[0], *bias = n->n_inputs > 2 ? in[2] : NULL;
  const tensor *Z = n->n_inputs > 3 ? in[3] : NULL;
  if (A->dtype != INFER_DTYPE_FLOAT32 && A->dtype != INFER_DTYPE_FLOAT16)
    return infer_fail(INFER_ERR_UNSUPPORTED, "FusedMatMul on the GPU: dtype %s",
                      infer_dtype_name(A->dtype));
  if (bias && (!bias->data || !host_in[2]))
    return infer_fail(INFER_ERR_UNSUPPORTED, "FusedMatMul on the GPU: the bias must be a weight");
  s->k = A->dims[A->rank - 1];
  s->n = out[0]->dims[out[0]->rank - 1];
  s->count = dims_count(out[0]->rank, out[0]->dims);
  s->m = s->n ? s->count / s->n : 0;
  s->batch = 1;
  s->loops = 1;
  TRY(check_int_range(s, "FusedMatMul"));
  gemm_act act = GEMM_ACT_NONE;
  bool fp16 = A->dtype == INFER_DTYPE_FLOAT16, lib = !cuda_nan_exact(x);
  s->post_op = -1;
  memset(&s->post_p, 0, sizeof s->post_p);
  switch (fp->act) {
    case MATMUL_ACT_RELU:
      if (lib) act = GEMM_ACT_RELU;
      else s->post_op = K_UN_RELU;
      break;
    case MATMUL_ACT_GELU_TANH:
      if (lib) act = GEMM_ACT_GELU_TANH;
      else s->post_op = K_UN_GELU, s->post_p.mode = 1;
      break;
    case MATMUL_ACT_GELU:
      /* the tanh epilogue only where float16 hides the difference (top of the file) */
      if (fp16 && lib) act = GEMM_ACT_GELU_TANH;
      else s->post_op = K_UN_GELU;
      break;
    default: break;
  }
  gemm_problem p = {.m = s->m, .n = s->n, .k = s->k, .batch = 1, .trans_b = fp->trans_b,
                    .dt = A->dtype, .alpha = fp->alpha, .beta = 1,
                    .bias = bias ? bias->data : NULL, .has_z = Z != NULL, .act = act};
  return gemm_plan_create(x, &p, &s->plan, ws_bytes);
}

static infer_status fused_run(const cuda_exec *x, const node *n, const void *params,
                              const void *state, const tensor *const *in, tensor *const *out) {
  const mm_state *s = state;
  if (s->m == 0 || s->n == 0) return INFER_OK;
  const void *z = n->n_inputs > 3 && in[3] ? in[3]->data : NULL;
  if (s->k == 0) return infer_fail(INFER_ERR_UNSUPPORTED, "FusedMatMul on the GPU: K = 0");
  TRY(gemm_plan_run(x, s->plan, in[0]->data, in[1]->data, z, out[0]->data));
  if (s->post_op >= 0)
    CUDA_LAUNCH_TRY(k_ew_unary(s->post_op, (int)out[0]->dtype, out[0]->data, out[0]->data,
                               s->count, &s->post_p, (cudaStream_t)x->stream));
  return INFER_OK;
}

static const cuda_op cuda_matmul = {.name = "MatMul", .prepare = matmul_prepare,
                                    .run = matmul_run, .release = mm_release,
                                    .needs = CUDA_NEEDS_CUBLAS, .impl = mm_impl};
static const cuda_op cuda_gemm = {.name = "Gemm", .prepare = gemm_prepare, .run = gemm_run,
                                  .release = mm_release, .needs = CUDA_NEEDS_CUBLAS,
                                  .impl = mm_impl};
static const cuda_op cuda_fused_matmul = {.name = "FusedMatMul", .domain = "infer",
                                          .prepare = fused_prepare, .run = fused_run,
                                          .release = mm_release, .needs = CUDA_NEEDS_CUBLAS,
                                          .impl = mm_impl};
const cuda_op *const cuda_ops_matmul[] = {&cuda_matmul, &cuda_gemm, &cuda_fused_matmul, NULL};
