/* quant_matmul.c: MatMulInteger (10) and QLinearMatMul (10, 21), the matrix products
 * over 8-bit quantized tensors, with MatMul's shape rules (matmul_dims.h).
 *
 *   MatMulInteger: Y (int32) = (A - a_zero_point) x (B - b_zero_point)
 *   QLinearMatMul: Y = saturate(round_half_even((A - a_zp) x (B - b_zp)
 *                               * a_scale * b_scale / y_scale) + y_zp)
 *
 * A's zero point (and scale) is per tensor or per row: a vector of M, or A's shape
 * with K replaced by 1 ([..., M, 1]); B's per tensor or per column: a vector of N, or
 * [..., 1, N]. y_scale and y_zero_point are per tensor. The operands are staged to
 * float minus their zero points and multiplied exactly (quant_gemm_exact); the
 * multiplier a_scale * b_scale / y_scale is formed in the scales' dtype (float16
 * scales round each step to float16, as the ONNX reference computes) and applied to
 * the int32 sum in double. */
#include <string.h>

#include "conv_util.h" /* ws_add, ws_take */
#include "matmul_dims.h"
#include "quant_gemm.h"
#include "quant_util.h"

/* A per-row (A) or per-column (B) parameter: element (matrix q, row or column r) is
 * at q * mat + r * vec (both 0 for a per-tensor one); t NULL reads as 0. */
typedef struct rc_param {
  const tensor *t;
  int64_t vec, mat;
} rc_param;

static infer_status rc_param_make(const char *op, const char *role, const tensor *t,
                                  const tensor *operand, bool rows, int64_t len, rc_param *p) {
  p->t = t;
  p->vec = p->mat = 0;
  if (!t || dims_count(t->rank, t->dims) == 1) return INFER_OK;
  if (t->rank == 1 && t->dims[0] == len) {
    p->vec = 1;
    return INFER_OK;
  }
  int r = operand->rank;
  bool ok = r >= 2 && t->rank == r && t->dims[r - 2] == (rows ? len : 1) &&
            t->dims[r - 1] == (rows ? 1 : len);
  for (int i = 0; ok && i < r - 2; i++) ok = t->dims[i] == operand->dims[i];
  if (ok) {
    p->vec = 1;
    p->mat = len;
    return INFER_OK;
  }
  char s1[96], s2[96];
  return infer_fail(INFER_ERR_INVALID_MODEL,
                    "%s: %s %s is neither a scalar nor per %s of %s (%lld %s)", op, role,
                    dims_format(t->rank, t->dims, s1, sizeof s1), rows ? "row" : "column",
                    dims_format(operand->rank, operand->dims, s2, sizeof s2), (long long)len,
                    rows ? "rows" : "columns");
}

typedef struct qmm {
  const char *op;
  bool qlinear;
  const tensor *a, *b, *y_scale, *y_zp;
  rc_param a_zp, b_zp, a_scale, b_scale;
  mm_dims d;
} qmm;

static const tensor *opt_in(const node *n, const tensor *const *in, int i) {
  return i < n->n_inputs ? in[i] : NULL;
}

static bool known(const tensor *t) {
  if (!t) return true;
  for (int i = 0; i < t->rank; i++)
    if (t->dims[i] < 0) return false;
  return true;
}

/* Roles, dtypes and shapes of either op's inputs. */
static infer_status qmm_make(const node *n, const tensor *const *in, qmm *q) {
  memset(q, 0, sizeof *q);
  const tensor *a_zp, *b_zp, *a_scale = NULL, *b_scale = NULL;
  q->qlinear = strcmp(n->op_type, "QLinearMatMul") == 0;
  const char *op = q->op = q->qlinear ? "QLinearMatMul" : "MatMulInteger";
  if (q->qlinear) {
    q->a = in[0], a_scale = in[1], a_zp = in[2];
    q->b = in[3], b_scale = in[4], b_zp = in[5];
    q->y_scale = in[6], q->y_zp = in[7];
    if (!a_scale || !b_scale || !q->y_scale)
      return infer_fail(INFER_ERR_INVALID_MODEL, "%s: a_scale, b_scale and y_scale are required",
                        op);
  } else {
    q->a = in[0], q->b = in[1], a_zp = opt_in(n, in, 2), b_zp = opt_in(n, in, 3);
  }
  TRY(quant_check_int_dtype(op, "A", q->a->dtype, false));
  TRY(quant_check_int_dtype(op, "B", q->b->dtype, false));
  if (a_zp && a_zp->dtype != q->a->dtype)
    return infer_fail(INFER_ERR_INVALID_MODEL, "%s: A is %s but a_zero_point is %s", op,
                      infer_dtype_name(q->a->dtype), infer_dtype_name(a_zp->dtype));
  if (b_zp && b_zp->dtype != q->b->dtype)
    return infer_fail(INFER_ERR_INVALID_MODEL, "%s: B is %s but b_zero_point is %s", op,
                      infer_dtype_name(q->b->dtype), infer_dtype_name(b_zp->dtype));
  if (q->qlinear) {
    const tensor *sc[3] = {a_scale, b_scale, q->y_scale};
    static const char *const names[3] = {"a_scale", "b_scale", "y_scale"};
    for (int i = 0; i < 3; i++) {
      if (n->opset < 21 && sc[i]->dtype != INFER_DTYPE_FLOAT32)
        return infer_fail(INFER_ERR_INVALID_MODEL, "%s: %s must be float32 before opset 21", op,
                          names[i]);
      TRY(quant_check_scale_dtype(op, names[i], sc[i]->dtype));
    }
    if (q->y_zp) TRY(quant_check_int_dtype(op, "y_zero_point", q->y_zp->dtype, false));
  }
  TRY(matmul_dims_make(op, q->a, q->b, &q->d));
  int64_t m = q->d.m, nn = q->d.n;
  TRY(rc_param_make(op, "a_zero_point", a_zp, q->a, true, m, &q->a_zp));
  TRY(rc_param_make(op, "b_zero_point", b_zp, q->b, false, nn, &q->b_zp));
  if (q->qlinear) {
    TRY(rc_param_make(op, "a_scale", a_scale, q->a, true, m, &q->a_scale));
    TRY(rc_param_make(op, "b_scale", b_scale, q->b, false, nn, &q->b_scale));
    TRY(quant_check_scalar(op, "y_scale", q->y_scale));
    if (q->y_zp) TRY(quant_check_scalar(op, "y_zero_point", q->y_zp));
  }
  return INFER_OK;
}

static infer_status qmm_infer(const node *n, const void *params, const tensor *const *in,
                              tensor *const *out) {
  for (int i = 0; i < n->n_inputs; i++)
    if (!known(in[i])) return OP_NEEDS_DATA;
  qmm q;
  TRY(qmm_make(n, in, &q));
  tensor *y = out[0];
  y->dtype = !q.qlinear ? INFER_DTYPE_INT32 : q.y_zp ? q.y_zp->dtype : q.a->dtype;
  int r = q.d.brank;
  memcpy(y->dims, q.d.bdims, sizeof(int64_t) * (size_t)r);
  if (q.a->rank > 1) y->dims[r++] = q.d.m;
  if (q.b->rank > 1) y->dims[r++] = q.d.n;
  y->rank = r;
  if (tensor_nbytes(y) < 0) return infer_fail(INFER_ERR_INVALID_MODEL, "%s: output too large", q.op);
  return INFER_OK;
}

/* Workspace: A and B staged (float), one GEMM chunk (m x n floats), and for
 * QLinearMatMul the int32 sums of one batch entry. */
static int64_t qmm_ws(const qmm *q) {
  int64_t total = 0, mn;
  if (!size_mul(q->d.m, q->d.n, &mn)) return -1;
  bool ok = ws_add(&total, dims_count(q->a->rank, q->a->dims), 4) &&
            ws_add(&total, dims_count(q->b->rank, q->b->dims), 4) && ws_add(&total, mn, 4) &&
            ws_add(&total, q->qlinear ? mn : 0, 4);
  return ok ? total : -1;
}

static int64_t qmm_workspace(const node *n, const void *params, const tensor *const *in,
                             tensor *const *out) {
  qmm q;
  if (qmm_make(n, in, &q) != INFER_OK) return -1;
  return qmm_ws(&q);
}

static inline int64_t rc_int(const rc_param *p, int64_t mat, int64_t rc) {
  return quant_int_at(p->t, mat * p->mat + rc * p->vec);
}
static inline float rc_float(const rc_param *p, int64_t mat, int64_t rc) {
  return quant_float_at(p->t, mat * p->mat + rc * p->vec);
}

static infer_status qmm_run(const node *n, const void *params, const tensor *const *in,
                            tensor *const *out, void *ws) {
  qmm q;
  TRY(qmm_make(n, in, &q));
  const mm_dims *d = &q.d;
  int64_t m = d->m, nn = d->n, k = d->k, mk = m * k, kn = k * nn, mn = m * nn;
  int64_t na = dims_count(q.a->rank, q.a->dims), nb = dims_count(q.b->rank, q.b->dims);
  char *cur = ws;
  float *af = ws_take(&cur, na, 4), *bf = ws_take(&cur, nb, 4), *part = ws_take(&cur, mn, 4);
  int32_t *acc = ws_take(&cur, q.qlinear ? mn : 0, 4);
  /* stage: A's element (matrix, row i, p), B's (matrix, p, column j) */
  int64_t a_mats = mk ? na / mk : 0, b_mats = kn ? nb / kn : 0, e = 0;
  for (int64_t mat = 0; mat < a_mats; mat++)
    for (int64_t i = 0; i < m; i++) {
      int64_t z = rc_int(&q.a_zp, mat, i);
      for (int64_t p = 0; p < k; p++, e++) af[e] = (float)(quant_int_at(q.a, e) - z);
    }
  e = 0;
  for (int64_t mat = 0; mat < b_mats; mat++)
    for (int64_t p = 0; p < k; p++)
      for (int64_t j = 0; j < nn; j++, e++)
        bf[e] = (float)(quant_int_at(q.b, e) - rc_int(&q.b_zp, mat, j));
  float amax = quant_absmax(af, na), bmax = quant_absmax(bf, nb);

  tensor *y = out[0];
  int64_t lo = 0, hi = 0, yz = quant_int_at(q.y_zp, 0);
  float ysc = 1;
  infer_dtype sdt = INFER_DTYPE_FLOAT32;
  if (q.qlinear) {
    quant_range(y->dtype, &lo, &hi);
    ysc = quant_float_at(q.y_scale, 0);
    sdt = q.a_scale.t->dtype;
  }
  for (int64_t bi = 0; bi < d->batch; bi++) {
    int64_t ao, bo;
    mm_batch_offsets(d, bi, &ao, &bo);
    int32_t *sums = q.qlinear ? acc : (int32_t *)y->data + bi * mn;
    quant_gemm_exact(m, nn, k, af + ao * mk, k, bf + bo * kn, nn, amax, bmax, part, sums, nn);
    if (!q.qlinear) continue;
    for (int64_t i = 0; i < m; i++) {
      float as = rc_float(&q.a_scale, ao, i);
      for (int64_t j = 0; j < nn; j++) {
        float mult = quant_round_to(sdt, quant_round_to(sdt, as * rc_float(&q.b_scale, bo, j)) / ysc);
        int64_t v = quant_round_saturate((double)sums[i * nn + j] * (double)mult, yz, lo, hi);
        quant_int_set(y, bi * mn + i * nn + j, v);
      }
    }
  }
  return INFER_OK;
}

const op_desc op_matmul_integer = {.name = "MatMulInteger",
                                   .domain = "",
                                   .since = 10,
                                   .until = OP_OPSET_MAX,
                                   .min_inputs = 2,
                                   .max_inputs = 4,
                                   .min_outputs = 1,
                                   .max_outputs = 1,
                                   .infer = qmm_infer,
                                   .run = qmm_run,
                                   .workspace = qmm_workspace};

const op_desc op_qlinear_matmul = {.name = "QLinearMatMul",
                                   .domain = "",
                                   .since = 10,
                                   .until = OP_OPSET_MAX,
                                   .min_inputs = 8,
                                   .max_inputs = 8,
                                   .min_outputs = 1,
                                   .max_outputs = 1,
                                   .infer = qmm_infer,
                                   .run = qmm_run,
                                   .workspace = qmm_workspace};
