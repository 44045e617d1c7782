/* elementwise_iter.c: the broadcast row iterator and the generic infer/run
 * drivers for binary and unary elementwise ops. */
#include <string.h>

#include "elementwise.h"

bool ew_dtype_known(infer_dtype dt) {
  return dt != INFER_DTYPE_STRING && infer_dtype_size(dt) != 0 && (int)dt < EW_DTYPE_SLOTS;
}

infer_status ew_check_dtype(const char *op, const char *role, infer_dtype dt, unsigned mask) {
  if ((int)dt >= 0 && (int)dt < EW_DTYPE_SLOTS && (mask & EW_BIT(dt)) && ew_dtype_known(dt))
    return INFER_OK;
  return infer_fail(INFER_ERR_UNSUPPORTED, "%s: %s dtype %s (%d) is not supported", op, role,
                    infer_dtype_name(dt), (int)dt);
}

bool ew_iter_init(ew_iter *it, tensor *out, int n_in, const tensor *const *in) {
  int r = out->rank, k_ops = n_in + 1;
  int64_t es[EW_MAX_OPERANDS], st[EW_MAX_OPERANDS][INFER_MAX_RANK];
  memset(it, 0, sizeof *it);
  it->n_ops = k_ops;
  if (dims_count(r, out->dims) <= 0) return false;
  es[0] = (int64_t)infer_dtype_size(out->dtype);
  it->ptr[0] = out->data;
  dims_strides(r, out->dims, st[0]);
  for (int k = 0; k < n_in; k++) {
    es[k + 1] = (int64_t)infer_dtype_size(in[k]->dtype);
    it->ptr[k + 1] = in[k]->data;
    broadcast_strides(in[k]->rank, in[k]->dims, r, st[k + 1]);
  }
  /* Drop 1-dims, then merge dim d into the previous kept one whenever every
   * operand walks both contiguously (stride[prev] == stride[d] * dims[d]; this
   * also merges dims broadcast in both). */
  int m = 0;
  for (int d = 0; d < r; d++) {
    if (out->dims[d] == 1) continue;
    bool merge = m > 0;
    for (int k = 0; k < k_ops && merge; k++)
      if (it->bstride[k][m - 1] != st[k][d] * out->dims[d]) merge = false;
    if (merge) {
      it->dims[m - 1] *= out->dims[d];
      for (int k = 0; k < k_ops; k++) it->bstride[k][m - 1] = st[k][d];
    } else {
      it->dims[m] = out->dims[d];
      for (int k = 0; k < k_ops; k++) it->bstride[k][m] = st[k][d];
      m++;
    }
  }
  if (m == 0) { /* a single element */
    it->dims[0] = 1;
    for (int k = 0; k < k_ops; k++) it->bstride[k][0] = 0;
    m = 1;
  }
  it->rank = m;
  it->n = it->dims[m - 1];
  for (int k = 0; k < k_ops; k++) {
    it->inner[k] = it->bstride[k][m - 1];
    for (int d = 0; d < m; d++) it->bstride[k][d] *= es[k];
  }
  it->inner[0] = 1;
  it->rows_left = dims_count(m - 1, it->dims);
  return true;
}

bool ew_iter_next(ew_iter *it) {
  if (--it->rows_left <= 0) return false;
  for (int d = it->rank - 2; d >= 0; d--) {
    if (++it->idx[d] < it->dims[d]) {
      for (int k = 0; k < it->n_ops; k++) it->ptr[k] += it->bstride[k][d];
      return true;
    }
    it->idx[d] = 0;
    for (int k = 0; k < it->n_ops; k++) it->ptr[k] -= it->bstride[k][d] * (it->dims[d] - 1);
  }
  return false;
}

infer_status ew_broadcast_all(const char *op, int n, const tensor *const *in, tensor *out) {
  int rank = in[0]->rank;
  int64_t dims[INFER_MAX_RANK];
  memcpy(dims, in[0]->dims, sizeof dims);
  for (int i = 1; i < n; i++) {
    int r2;
    int64_t d2[INFER_MAX_RANK];
    infer_status s = broadcast_shapes(rank, dims, in[i]->rank, in[i]->dims, &r2, d2);
    if (s != INFER_OK) return infer_fail_prefix(s, "%s input %d", op, i);
    rank = r2;
    memcpy(dims, d2, sizeof dims);
  }
  out->rank = rank;
  memcpy(out->dims, dims, sizeof dims);
  return INFER_OK;
}

infer_status ew_binary_infer(const char *op, unsigned mask, infer_dtype out_dt,
                             const tensor *const *in, tensor *const *out) {
  TRY(ew_same_dtypes(op, 2, in));
  TRY(ew_check_dtype(op, "input", in[0]->dtype, mask));
  TRY(ew_broadcast_all(op, 2, in, out[0]));
  out[0]->dtype = out_dt != INFER_DTYPE_UNDEFINED ? out_dt : in[0]->dtype;
  return INFER_OK;
}

infer_status ew_same_dtypes(const char *op, int n, const tensor *const *in) {
  for (int i = 1; i < n; i++)
    if (in[i] && in[i]->dtype != in[0]->dtype)
      return infer_fail(INFER_ERR_INVALID_MODEL, "%s: input %d is %s but input 0 is %s", op, i,
                        infer_dtype_name(in[i]->dtype), infer_dtype_name(in[0]->dtype));
  return INFER_OK;
}

void ew_copy_shape(tensor *out, const tensor *in, infer_dtype dt) {
  out->dtype = dt;
  out->rank = in->rank;
  memcpy(out->dims, in->dims, sizeof out->dims);
}

infer_status ew_run_binary(const ew_binary_fn *table, const char *op, const tensor *a,
                           const tensor *b, tensor *out) {
  ew_binary_fn fn = (int)a->dtype < EW_DTYPE_SLOTS ? table[a->dtype] : NULL;
  if (!fn)
    return infer_fail(INFER_ERR_UNSUPPORTED, "%s: dtype %s is not supported", op,
                      infer_dtype_name(a->dtype));
  const tensor *in[2] = {a, b};
  ew_iter it;
  if (ew_iter_init(&it, out, 2, in)) do
      fn(it.ptr[0], it.ptr[1], it.ptr[2], it.n, it.inner[1], it.inner[2]);
    while (ew_iter_next(&it));
  return INFER_OK;
}

/* ---- unary ----------------------------------------------------------------------- */

infer_status ew_unary_infer(const ew_unary_impl *u, const tensor *const *in, tensor *const *out) {
  infer_dtype dt = in[0]->dtype;
  if ((int)dt < 0 || (int)dt >= EW_DTYPE_SLOTS || !u->fn[dt])
    return infer_fail(INFER_ERR_UNSUPPORTED, "%s: input dtype %s (%d) is not supported",
                      u->name, infer_dtype_name(dt), (int)dt);
  ew_copy_shape(out[0], in[0], u->out_dtype != INFER_DTYPE_UNDEFINED ? u->out_dtype : dt);
  return INFER_OK;
}

infer_status ew_unary_run(const ew_unary_impl *u, const void *params, const tensor *const *in,
                          tensor *const *out) {
  static const ew_unary_params no_params = {0};
  infer_dtype dt = in[0]->dtype;
  if ((int)dt < 0 || (int)dt >= EW_DTYPE_SLOTS || !u->fn[dt])
    return infer_fail(INFER_ERR_UNSUPPORTED, "%s: input dtype %s is not supported", u->name,
                      infer_dtype_name(dt));
  int64_t n = dims_count(in[0]->rank, in[0]->dims);
  if (n > 0) u->fn[dt](out[0]->data, in[0]->data, n, params ? params : &no_params);
  return INFER_OK;
}

void ew_unary_via_f32(void *o, const void *a, int64_t n, const ew_unary_params *p,
                      infer_dtype dt, ew_unary_fn f32_fn) {
  enum { CHUNK = 256 };
  float buf[CHUNK];
  uint16_t *dst = o;
  const uint16_t *src = a;
  bool half = dt == INFER_DTYPE_FLOAT16;
  for (int64_t off = 0; off < n; off += CHUNK) {
    int64_t m = n - off < CHUNK ? n - off : CHUNK;
    for (int64_t i = 0; i < m; i++)
      buf[i] = half ? half_to_float(src[off + i]) : bf16_to_float(src[off + i]);
    f32_fn(buf, buf, m, p);
    for (int64_t i = 0; i < m; i++)
      dst[off + i] = half ? float_to_half(buf[i]) : float_to_bf16(buf[i]);
  }
}
