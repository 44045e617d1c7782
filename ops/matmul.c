/* matmul.c: MatMul (numpy semantics: 1-D operands, batch broadcasting) and Gemm
 * (transA, transB, alpha, beta, C broadcast to M x N).
 *
 * float32 goes to cpu_sgemm; float16/bfloat16 are staged to float32 in the
 * workspace; float64 uses a plain double GEMM; the integer types a direct loop
 * with wrapping 64-bit accumulation (they are rare and small). */
#include <stdlib.h>
#include <string.h>

#include "conv_util.h"
#include "cpu_gemm.h"
#include "matmul_dims.h"
#include "matmul_params.h"

static bool mm_dtype_ok(infer_dtype t) {
  return dtype_is_float(t) || t == INFER_DTYPE_INT32 || t == INFER_DTYPE_INT64 ||
         t == INFER_DTYPE_UINT32 || t == INFER_DTYPE_UINT64;
}
static bool is_half(infer_dtype t) { return t == INFER_DTYPE_FLOAT16 || t == INFER_DTYPE_BFLOAT16; }
static bool shape_known(const tensor *t) {
  for (int i = 0; i < t->rank; i++)
    if (t->dims[i] < 0) return false;
  return true;
}

/* Integer C = op(A) op(B) over element offsets into typed tensors, generic access. */
static void int_gemm(const tensor *a, int64_t ao, bool ta, const tensor *b, int64_t bo, bool tb,
                     tensor *y, int64_t yo, int64_t m, int64_t n, int64_t k, double alpha,
                     double beta, bool add_y) {
  for (int64_t i = 0; i < m; i++)
    for (int64_t j = 0; j < n; j++) {
      uint64_t acc = 0; /* unsigned: wraps like the fixed-width types do */
      for (int64_t p = 0; p < k; p++) {
        int64_t av = tensor_get_i64(a, ao + (ta ? p * m + i : i * k + p));
        int64_t bv = tensor_get_i64(b, bo + (tb ? j * k + p : p * n + j));
        acc += (uint64_t)av * (uint64_t)bv;
      }
      int64_t yi = yo + i * n + j;
      if (alpha == 1 && (!add_y || beta == 1)) {
        uint64_t r = acc + (add_y ? (uint64_t)tensor_get_i64(y, yi) : 0);
        tensor_set_i64(y, yi, (int64_t)r);
      } else {
        double r = alpha * (double)(int64_t)acc + (add_y ? beta * tensor_get_f64(y, yi) : 0);
        tensor_set_f64(y, yi, r);
      }
    }
}

/* ---- MatMul ------------------------------------------------------------------- */

infer_status matmul_dims_make(const char *op, const tensor *a, const tensor *b, mm_dims *d) {
  char s1[96], s2[96];
  if (a->rank < 1 || b->rank < 1)
    return infer_fail(INFER_ERR_INVALID_MODEL, "%s: operands %s and %s must have rank >= 1", op,
                      dims_format(a->rank, a->dims, s1, sizeof s1),
                      dims_format(b->rank, b->dims, s2, sizeof s2));
  memset(d, 0, sizeof *d);
  int64_t ak = a->dims[a->rank - 1];
  d->m = a->rank == 1 ? 1 : a->dims[a->rank - 2];
  d->k = ak;
  int64_t bk = b->rank == 1 ? b->dims[0] : b->dims[b->rank - 2];
  d->n = b->rank == 1 ? 1 : b->dims[b->rank - 1];
  if (ak != bk)
    return infer_fail(INFER_ERR_INVALID_MODEL, "%s: inner dims of %s and %s differ", op,
                      dims_format(a->rank, a->dims, s1, sizeof s1),
                      dims_format(b->rank, b->dims, s2, sizeof s2));
  int ar = a->rank > 2 ? a->rank - 2 : 0, br = b->rank > 2 ? b->rank - 2 : 0;
  if (broadcast_shapes(ar, a->dims, br, b->dims, &d->brank, d->bdims) != INFER_OK)
    return infer_fail(INFER_ERR_INVALID_MODEL, "%s: batch dims of %s and %s do not broadcast",
                      op, dims_format(a->rank, a->dims, s1, sizeof s1),
                      dims_format(b->rank, b->dims, s2, sizeof s2));
  broadcast_strides(ar, a->dims, d->brank, d->a_bstride);
  broadcast_strides(br, b->dims, d->brank, d->b_bstride);
  d->batch = dims_count(d->brank, d->bdims);
  int64_t na = dims_count(ar, a->dims), nb = dims_count(br, b->dims);
  if (d->batch < 0 || na < 0 || nb < 0)
    return infer_fail(INFER_ERR_INVALID_MODEL, "%s: sizes overflow", op);
  d->a_batched = na > 1;
  d->b_batched = nb > 1;
  return INFER_OK;
}

static infer_status mm_dims_make(const tensor *a, const tensor *b, mm_dims *d) {
  if (a->dtype != b->dtype)
    return infer_fail(INFER_ERR_INVALID_MODEL, "MatMul: A is %s but B is %s",
                      infer_dtype_name(a->dtype), infer_dtype_name(b->dtype));
  if (!mm_dtype_ok(a->dtype))
    return infer_fail(INFER_ERR_UNSUPPORTED, "MatMul: dtype %s", infer_dtype_name(a->dtype));
  return matmul_dims_make("MatMul", a, b, d);
}

static infer_status matmul_infer(const node *n, const void *params, const tensor *const *in,
                                 tensor *const *out) {
  const tensor *a = in[0], *b = in[1];
  if (!shape_known(a) || !shape_known(b)) return OP_NEEDS_DATA;
  mm_dims d;
  TRY(mm_dims_make(a, b, &d));
  tensor *y = out[0];
  y->dtype = a->dtype;
  int r = d.brank;
  memcpy(y->dims, d.bdims, sizeof(int64_t) * (size_t)r);
  if (a->rank > 1) y->dims[r++] = d.m;
  if (b->rank > 1) y->dims[r++] = d.n;
  y->rank = r;
  if (tensor_nbytes(y) < 0) return infer_fail(INFER_ERR_INVALID_MODEL, "MatMul: output too large");
  return INFER_OK;
}

static int64_t matmul_workspace(const node *n, const void *params, const tensor *const *in,
                                tensor *const *out) {
  if (!is_half(in[0]->dtype)) return 0;
  int64_t total = 0;
  ws_add(&total, dims_count(in[0]->rank, in[0]->dims), 4);
  ws_add(&total, dims_count(in[1]->rank, in[1]->dims), 4);
  ws_add(&total, dims_count(out[0]->rank, out[0]->dims), 4);
  return total;
}

void mm_batch_offsets(const mm_dims *d, int64_t i, int64_t *ao, int64_t *bo) {
  int64_t oa = 0, ob = 0;
  for (int j = d->brank - 1; j >= 0; j--) {
    int64_t ix = i % d->bdims[j];
    i /= d->bdims[j];
    oa += ix * d->a_bstride[j];
    ob += ix * d->b_bstride[j];
  }
  *ao = oa;
  *bo = ob;
}

static void matmul_f32(const mm_dims *d, const float *a, const float *b, float *y) {
  int64_t mk = d->m * d->k, kn = d->k * d->n, mn = d->m * d->n;
  if (!d->b_batched) {
    /* one B for every batch entry: stack A's matrices into one tall GEMM (A's
     * broadcast stride is then exactly its matrix layout) */
    if (!d->a_batched && d->batch > 1) {
      for (int64_t i = 0; i < d->batch; i++)
        cpu_sgemm(false, false, d->m, d->n, d->k, 1.0f, a, d->k, b, d->n, 0.0f, y + i * mn, d->n);
      return;
    }
    cpu_sgemm(false, false, d->batch * d->m, d->n, d->k, 1.0f, a, d->k, b, d->n, 0.0f, y, d->n);
    return;
  }
  for (int64_t i = 0; i < d->batch; i++) {
    int64_t ao, bo;
    mm_batch_offsets(d, i, &ao, &bo);
    cpu_sgemm(false, false, d->m, d->n, d->k, 1.0f, a + ao * mk, d->k, b + bo * kn, d->n, 0.0f,
              y + i * mn, d->n);
  }
}

static infer_status matmul_run(const node *n, const void *params, const tensor *const *in,
                               tensor *const *out, void *ws) {
  const tensor *a = in[0], *b = in[1];
  tensor *y = out[0];
  mm_dims d;
  TRY(mm_dims_make(a, b, &d));
  int64_t mk = d.m * d.k, kn = d.k * d.n, mn = d.m * d.n;
  switch (a->dtype) {
    case INFER_DTYPE_FLOAT32:
      matmul_f32(&d, a->data, b->data, y->data);
      break;
    case INFER_DTYPE_FLOAT16:
    case INFER_DTYPE_BFLOAT16: {
      char *cur = ws;
      int64_t na = dims_count(a->rank, a->dims), nb = dims_count(b->rank, b->dims);
      int64_t ny = dims_count(y->rank, y->dims);
      float *af = ws_take(&cur, na, 4), *bf = ws_take(&cur, nb, 4), *yf = ws_take(&cur, ny, 4);
      stage_to_f32(a->data, a->dtype, na, af);
      stage_to_f32(b->data, b->dtype, nb, bf);
      matmul_f32(&d, af, bf, yf);
      stage_from_f32(yf, y->dtype, ny, y->data);
      break;
    }
    case INFER_DTYPE_FLOAT64:
      for (int64_t i = 0; i < d.batch; i++) {
        int64_t ao, bo;
        mm_batch_offsets(&d, i, &ao, &bo);
        ref_dgemm(false, false, d.m, d.n, d.k, 1.0, (const double *)a->data + ao * mk, d.k,
                  (const double *)b->data + bo * kn, d.n, 0.0, (double *)y->data + i * mn, d.n);
      }
      break;
    default:
      for (int64_t i = 0; i < d.batch; i++) {
        int64_t ao, bo;
        mm_batch_offsets(&d, i, &ao, &bo);
        int_gemm(a, ao * mk, false, b, bo * kn, false, y, i * mn, d.m, d.n, d.k, 1, 0, false);
      }
      break;
  }
  return INFER_OK;
}

/* ---- Gemm ----------------------------------------------------------------------- */

static const char *const gemm_attr_names[] = {"alpha",  "beta",   "broadcast",
                                              "transA", "transB", NULL};

static infer_status gemm_parse(const node *n, void **params) {
  gemm_params *p = calloc(1, sizeof *p);
  if (!p) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "Gemm: out of memory");
  int64_t bc;
  infer_status s = attr_get_float(n, "alpha", 1.0f, &p->alpha);
  if (s == INFER_OK) s = attr_get_float(n, "beta", 1.0f, &p->beta);
  if (s == INFER_OK) s = attr_get_int(n, "transA", 0, &p->trans_a);
  if (s == INFER_OK) s = attr_get_int(n, "transB", 0, &p->trans_b);
  /* opset < 7: broadcast=0 demands C of exactly M x N; the broadcasting path
   * computes the same result for that case, so the flag needs no branch. */
  if (s == INFER_OK) s = attr_get_int(n, "broadcast", 0, &bc);
  if (s != INFER_OK) {
    free(p);
    return s;
  }
  p->trans_a = p->trans_a != 0;
  p->trans_b = p->trans_b != 0;
  *params = p;
  return INFER_OK;
}

typedef struct gemm_dims {
  int64_t m, n, k;
  int64_t c_rows, c_cols; /* C seen as c_rows x c_cols, each 1 or M / N */
} gemm_dims;

static infer_status gemm_dims_make(const gemm_params *p, const tensor *a, const tensor *b,
                                   const tensor *c, gemm_dims *d) {
  char s1[96], s2[96];
  if (a->dtype != b->dtype || (c && c->dtype != a->dtype))
    return infer_fail(INFER_ERR_INVALID_MODEL, "Gemm: A is %s, B is %s%s%s",
                      infer_dtype_name(a->dtype), infer_dtype_name(b->dtype), c ? ", C is " : "",
                      c ? infer_dtype_name(c->dtype) : "");
  if (!mm_dtype_ok(a->dtype))
    return infer_fail(INFER_ERR_UNSUPPORTED, "Gemm: dtype %s", infer_dtype_name(a->dtype));
  if (a->rank != 2 || b->rank != 2)
    return infer_fail(INFER_ERR_INVALID_MODEL, "Gemm: A %s and B %s must be 2-D",
                      dims_format(a->rank, a->dims, s1, sizeof s1),
                      dims_format(b->rank, b->dims, s2, sizeof s2));
  d->m = p->trans_a ? a->dims[1] : a->dims[0];
  d->k = p->trans_a ? a->dims[0] : a->dims[1];
  int64_t kb = p->trans_b ? b->dims[1] : b->dims[0];
  d->n = p->trans_b ? b->dims[0] : b->dims[1];
  if (kb != d->k)
    return infer_fail(INFER_ERR_INVALID_MODEL,
                      "Gemm: A %s and B %s (transA %d, transB %d) have different inner dims",
                      dims_format(a->rank, a->dims, s1, sizeof s1),
                      dims_format(b->rank, b->dims, s2, sizeof s2), (int)p->trans_a,
                      (int)p->trans_b);
  d->c_rows = d->c_cols = 1;
  if (c) {
    bool ok = c->rank <= 2;
    if (ok && c->rank >= 1) {
      d->c_cols = c->dims[c->rank - 1];
      ok = d->c_cols == 1 || d->c_cols == d->n;
    }
    if (ok && c->rank == 2) {
      d->c_rows = c->dims[0];
      ok = d->c_rows == 1 || d->c_rows == d->m;
    }
    if (!ok)
      return infer_fail(INFER_ERR_INVALID_MODEL, "Gemm: C %s does not broadcast to %lldx%lld",
                        dims_format(c->rank, c->dims, s1, sizeof s1), (long long)d->m,
                        (long long)d->n);
  }
  int64_t t;
  if (!size_mul(d->m, d->n, &t) || !size_mul(d->m, d->k, &t) || !size_mul(d->k, d->n, &t))
    return infer_fail(INFER_ERR_INVALID_MODEL, "Gemm: sizes overflow");
  return INFER_OK;
}

#define GEMM_C(n, in) ((n)->n_inputs > 2 ? (in)[2] : NULL)

static infer_status gemm_infer(const node *n, const void *params, const tensor *const *in,
                               tensor *const *out) {
  const tensor *a = in[0], *b = in[1], *c = GEMM_C(n, in);
  if (!shape_known(a) || !shape_known(b) || (c && !shape_known(c))) return OP_NEEDS_DATA;
  gemm_dims d;
  TRY(gemm_dims_make(params, a, b, c, &d));
  tensor *y = out[0];
  y->dtype = a->dtype;
  y->rank = 2;
  y->dims[0] = d.m;
  y->dims[1] = d.n;
  return INFER_OK;
}

static int64_t gemm_workspace(const node *n, const void *params, const tensor *const *in,
                              tensor *const *out) {
  if (!is_half(in[0]->dtype)) return 0;
  int64_t total = 0;
  ws_add(&total, dims_count(2, in[0]->dims), 4);
  ws_add(&total, dims_count(2, in[1]->dims), 4);
  ws_add(&total, dims_count(2, out[0]->dims), 4);
  return total;
}

/* Writes C broadcast to M x N into y as float/double (rows x cols of 1 or M/N). */
#define DEFINE_FILL_C(NAME, T)                                                                 \
  static void NAME(const gemm_dims *d, const tensor *c, T *y) {                                \
    for (int64_t i = 0; i < d->m; i++) {                                                       \
      int64_t row = (d->c_rows == 1 ? 0 : i) * d->c_cols;                                      \
      T *yr = y + i * d->n;                                                                    \
      if (c->dtype == INFER_DTYPE_FLOAT32) { /* the common bias case, no per-element switch */ \
        const float *cf = (const float *)c->data + row;                                        \
        for (int64_t j = 0; j < d->n; j++) yr[j] = (T)cf[d->c_cols == 1 ? 0 : j];              \
      } else {                                                                                 \
        for (int64_t j = 0; j < d->n; j++)                                                     \
          yr[j] = (T)tensor_get_f64(c, row + (d->c_cols == 1 ? 0 : j));                        \
      }                                                                                        \
    }                                                                                          \
  }
DEFINE_FILL_C(fill_c_f32, float)
DEFINE_FILL_C(fill_c_f64, double)

static infer_status gemm_run(const node *n, const void *params, const tensor *const *in,
                             tensor *const *out, void *ws) {
  const gemm_params *p = params;
  const tensor *a = in[0], *b = in[1], *c = GEMM_C(n, in);
  tensor *y = out[0];
  gemm_dims d;
  TRY(gemm_dims_make(p, a, b, c, &d));
  bool use_c = c && p->beta != 0.0f;
  int64_t lda = a->dims[1], ldb = b->dims[1];
  switch (a->dtype) {
    case INFER_DTYPE_FLOAT32:
    case INFER_DTYPE_FLOAT16:
    case INFER_DTYPE_BFLOAT16: {
      const float *af = a->data, *bf = b->data;
      float *yf = y->data;
      if (is_half(a->dtype)) {
        char *cur = ws;
        float *as = ws_take(&cur, d.m * d.k, 4), *bs = ws_take(&cur, d.k * d.n, 4);
        yf = ws_take(&cur, d.m * d.n, 4);
        stage_to_f32(a->data, a->dtype, d.m * d.k, as);
        stage_to_f32(b->data, b->dtype, d.k * d.n, bs);
        af = as;
        bf = bs;
      }
      if (use_c) fill_c_f32(&d, c, yf);
      cpu_sgemm(p->trans_a, p->trans_b, d.m, d.n, d.k, p->alpha, af, lda, bf, ldb,
                use_c ? p->beta : 0.0f, yf, d.n);
      if (is_half(a->dtype)) stage_from_f32(yf, y->dtype, d.m * d.n, y->data);
      break;
    }
    case INFER_DTYPE_FLOAT64:
      if (use_c) fill_c_f64(&d, c, y->data);
      ref_dgemm(p->trans_a, p->trans_b, d.m, d.n, d.k, p->alpha, a->data, lda, b->data, ldb,
                use_c ? p->beta : 0.0, y->data, d.n);
      break;
    default:
      if (use_c)
        for (int64_t i = 0; i < d.m; i++)
          for (int64_t j = 0; j < d.n; j++)
            tensor_set_i64(
                y, i * d.n + j,
                tensor_get_i64(c, (d.c_rows == 1 ? 0 : i) * d.c_cols + (d.c_cols == 1 ? 0 : j)));
      int_gemm(a, 0, p->trans_a, b, 0, p->trans_b, y, 0, d.m, d.n, d.k, p->alpha, p->beta, use_c);
      break;
  }
  return INFER_OK;
}

const op_desc op_matmul = {.name = "MatMul",
                           .domain = "",
                           .since = 1,
                           .until = OP_OPSET_MAX,
                           .min_inputs = 2,
                           .max_inputs = 2,
                           .min_outputs = 1,
                           .max_outputs = 1,
                           .infer = matmul_infer,
                           .run = matmul_run,
                           .workspace = matmul_workspace};

const op_desc op_gemm = {.name = "Gemm",
                         .domain = "",
                         .since = 1,
                         .until = OP_OPSET_MAX,
                         .min_inputs = 2,
                         .max_inputs = 3,
                         .min_outputs = 1,
                         .max_outputs = 1,
                         .attrs = gemm_attr_names,
                         .parse = gemm_parse,
                         .infer = gemm_infer,
                         .run = gemm_run,
                         .workspace = gemm_workspace};

const op_desc *const ops_matmul[] = {&op_matmul, &op_gemm, NULL};
