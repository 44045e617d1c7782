/* cuda_matmul.c: MatMul (numpy batching and broadcasting, 1-D operands) and Gemm
 * (transA/transB, alpha, beta, broadcast C) through cuBLAS, fp32 accumulation for
 * fp16 data; TF32 only with --precision tf32. Row-major products are computed as
 * the column-major C^T = B^T A^T, so no operand is transposed in memory. */
#include <stdlib.h>
#include <string.h>

#include "../../core/cuda_check.h"
#include "../../kernels/gemm_bias.h"
#include "../cuda_op.h"

typedef struct mm_state {
  cudaDataType_t type;
  cublasComputeType_t compute;
  int64_t m, n, k;
  bool trans_a, trans_b;
  double alpha, beta;
  /* batches: one strided call when `offsets` is NULL, else one call per batch */
  int64_t batch, stride_a, stride_b;
  int64_t *offsets; /* 2 per batch (a, b), elements */
  /* Gemm's C: rows x cols broadcast into Y before the product adds beta * Y */
  bool has_c;
  int64_t c_rows, c_cols;
} mm_state;

static void mm_release(void *p) {
  mm_state *s = p;
  if (s) free(s->offsets);
  free(s);
}

static infer_status types_for(const cuda_exec *x, infer_dtype dt, mm_state *s, const char *op) {
  switch (dt) {
    case INFER_DTYPE_FLOAT32:
      s->type = CUDA_R_32F;
      s->compute = x->precision == INFER_PRECISION_TF32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
      return INFER_OK;
    case INFER_DTYPE_FLOAT16: s->type = CUDA_R_16F; s->compute = CUBLAS_COMPUTE_32F; return INFER_OK;
    case INFER_DTYPE_FLOAT64: s->type = CUDA_R_64F; s->compute = CUBLAS_COMPUTE_64F; return INFER_OK;
    default:
      return infer_fail(INFER_ERR_UNSUPPORTED, "%s on the GPU: dtype %s is not supported", op,
                        infer_dtype_name(dt));
  }
}

/* One (possibly batched) product on the stream; a, b, c in elements of `es` bytes. */
static infer_status gemm_call(const cuda_exec *x, const mm_state *s, const void *a, const void *b,
                              void *c, int64_t batch, int64_t sa, int64_t sb, int64_t sc) {
  float af = (float)s->alpha, bf = (float)s->beta;
  const void *alpha = s->compute == CUBLAS_COMPUTE_64F ? (const void *)&s->alpha : (const void *)&af;
  const void *beta = s->compute == CUBLAS_COMPUTE_64F ? (const void *)&s->beta : (const void *)&bf;
  int lda = (int)(s->trans_a ? s->m : s->k), ldb = (int)(s->trans_b ? s->k : s->n);
  CUBLAS_TRY(cublasGemmStridedBatchedEx(
      x->cublas, s->trans_b ? CUBLAS_OP_T : CUBLAS_OP_N, s->trans_a ? CUBLAS_OP_T : CUBLAS_OP_N,
      (int)s->n, (int)s->m, (int)s->k, alpha, b, s->type, ldb, sb, a, s->type, lda, sa, beta, c,
      s->type, (int)s->n, sc, (int)batch, s->compute, CUBLAS_GEMM_DEFAULT));
  return INFER_OK;
}

static infer_status check_int_range(const mm_state *s, const char *op) {
  if (s->m > INT32_MAX || s->n > INT32_MAX || s->k > INT32_MAX || s->batch > INT32_MAX)
    return infer_fail(INFER_ERR_UNSUPPORTED, "%s on the GPU: a dim exceeds 2^31", op);
  return INFER_OK;
}

static infer_status matmul_prepare(const cuda_exec *x, const node *n, const void *params,
                                   const tensor *const *in, const tensor *const *host_in,
                                   tensor *const *out, void **state, int64_t *ws_bytes) {
  const tensor *A = in[0], *B = in[1];
  mm_state *s = calloc(1, sizeof *s);
  if (!s) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory");
  *state = s;
  TRY(types_for(x, A->dtype, s, "MatMul"));
  /* promote 1-D operands as numpy does */
  int64_t ad[INFER_MAX_RANK + 1], bd[INFER_MAX_RANK + 1];
  int ar = A->rank, br = B->rank;
  if (ar == 1) { ad[0] = 1; ad[1] = A->dims[0]; ar = 2; } else memcpy(ad, A->dims, sizeof(int64_t) * (size_t)ar);
  if (br == 1) { bd[0] = B->dims[0]; bd[1] = 1; br = 2; } else memcpy(bd, B->dims, sizeof(int64_t) * (size_t)br);
  s->m = ad[ar - 2];
  s->k = ad[ar - 1];
  s->n = bd[br - 1];
  s->alpha = 1;
  s->beta = 0;
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
  TRY(check_int_range(s, "MatMul"));
  bool a_simple = a_full == 1 || a_full == batch, b_simple = b_full == 1 || b_full == batch;
  if (a_simple && b_simple) {
    s->stride_a = a_full == 1 ? 0 : s->m * s->k;
    s->stride_b = b_full == 1 ? 0 : s->k * s->n;
    return INFER_OK;
  }
  s->offsets = malloc(sizeof(int64_t) * 2 * (size_t)batch);
  if (!s->offsets) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory");
  for (int64_t b = 0; b < batch; b++) {
    int64_t rem = b, oa = 0, ob = 0;
    for (int i = r - 1; i >= 0; i--) {
      int64_t idx = rem % obd[i];
      rem /= obd[i];
      oa += idx * as[i];
      ob += idx * bs[i];
    }
    s->offsets[2 * b] = oa;
    s->offsets[2 * b + 1] = ob;
  }
  return INFER_OK;
}

static infer_status matmul_run(const cuda_exec *x, const node *n, const void *params,
                               const void *state, const tensor *const *in, tensor *const *out) {
  const mm_state *s = state;
  if (s->m == 0 || s->n == 0 || s->batch == 0) return INFER_OK;
  if (s->k == 0) {
    CUDA_TRY(cudaMemsetAsync(out[0]->data, 0, (size_t)tensor_nbytes(out[0]), (cudaStream_t)x->stream));
    return INFER_OK;
  }
  size_t es = infer_dtype_size(in[0]->dtype);
  if (!s->offsets)
    return gemm_call(x, s, in[0]->data, in[1]->data, out[0]->data, s->batch, s->stride_a,
                     s->stride_b, s->m * s->n);
  for (int64_t b = 0; b < s->batch; b++)
    TRY(gemm_call(x, s, (const char *)in[0]->data + es * (size_t)s->offsets[2 * b],
                  (const char *)in[1]->data + es * (size_t)s->offsets[2 * b + 1],
                  (char *)out[0]->data + es * (size_t)(b * s->m * s->n), 1, 0, 0, 0));
  return INFER_OK;
}

static infer_status gemm_prepare(const cuda_exec *x, const node *n, const void *params,
                                 const tensor *const *in, const tensor *const *host_in,
                                 tensor *const *out, void **state, int64_t *ws_bytes) {
  mm_state *s = calloc(1, sizeof *s);
  if (!s) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory");
  *state = s;
  TRY(types_for(x, in[0]->dtype, s, "Gemm"));
  float alpha, beta;
  int64_t ta, tb;
  TRY(attr_get_float(n, "alpha", 1.0f, &alpha));
  TRY(attr_get_float(n, "beta", 1.0f, &beta));
  TRY(attr_get_int(n, "transA", 0, &ta));
  TRY(attr_get_int(n, "transB", 0, &tb));
  s->alpha = alpha;
  s->trans_a = ta != 0;
  s->trans_b = tb != 0;
  s->m = out[0]->dims[0];
  s->n = out[0]->dims[1];
  s->k = s->trans_a ? in[0]->dims[0] : in[0]->dims[1];
  s->batch = 1;
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
  return INFER_OK;
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
    if (!s->has_c)
      CUDA_TRY(cudaMemsetAsync(out[0]->data, 0, (size_t)tensor_nbytes(out[0]), (cudaStream_t)x->stream));
    else if (s->beta != 1)
      return infer_fail(INFER_ERR_UNSUPPORTED, "Gemm on the GPU: K = 0 with beta != 1");
    return INFER_OK;
  }
  return gemm_call(x, s, in[0]->data, in[1]->data, out[0]->data, 1, 0, 0, 0);
}

static const cuda_op cuda_matmul = {.name = "MatMul", .prepare = matmul_prepare,
                                    .run = matmul_run, .release = mm_release,
                                    .needs = CUDA_NEEDS_CUBLAS};
static const cuda_op cuda_gemm = {.name = "Gemm", .prepare = gemm_prepare, .run = gemm_run,
                                  .release = mm_release, .needs = CUDA_NEEDS_CUBLAS};
const cuda_op *const cuda_ops_matmul[] = {&cuda_matmul, &cuda_gemm, NULL};
