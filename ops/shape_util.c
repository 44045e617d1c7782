/* shape_util.c: axis, broadcast and stride arithmetic shared by the op files. */
#include "op.h"

infer_status axis_normalize(int64_t axis, int rank, const char *what, int *out) {
  if (axis < -rank || axis >= rank || (rank == 0 && axis != 0))
    return infer_fail(INFER_ERR_INVALID_MODEL, "%s %lld is out of range for rank %d", what,
                      (long long)axis, rank);
  *out = (int)(axis < 0 ? axis + rank : axis);
  return INFER_OK;
}

infer_status broadcast_shapes(int ra, const int64_t *a, int rb, const int64_t *b, int *rank,
                              int64_t *dims) {
  int r = ra > rb ? ra : rb;
  for (int i = 0; i < r; i++) {
    int64_t da = i < r - ra ? 1 : a[i - (r - ra)];
    int64_t db = i < r - rb ? 1 : b[i - (r - rb)];
    if (da != db && da != 1 && db != 1) {
      char sa[128], sb[128];
      return infer_fail(INFER_ERR_INVALID_MODEL, "shapes %s and %s do not broadcast",
                        dims_format(ra, a, sa, sizeof sa), dims_format(rb, b, sb, sizeof sb));
    }
    dims[i] = da == 1 ? db : da;
  }
  *rank = r;
  return INFER_OK;
}

void dims_strides(int rank, const int64_t *dims, int64_t *strides) {
  int64_t s = 1;
  for (int i = rank - 1; i >= 0; i--) {
    strides[i] = s;
    s *= dims[i];
  }
}

void broadcast_strides(int in_rank, const int64_t *in_dims, int out_rank, int64_t *strides) {
  int64_t own[INFER_MAX_RANK];
  dims_strides(in_rank, in_dims, own);
  for (int i = 0; i < out_rank; i++) {
    int j = i - (out_rank - in_rank);
    strides[i] = (j < 0 || in_dims[j] == 1) ? 0 : own[j];
  }
}

infer_status tensor_read_ints(const tensor *t, const char *what, int64_t *v, int cap,
                              int *count) {
  if (t->dtype != INFER_DTYPE_INT64 && t->dtype != INFER_DTYPE_INT32)
    return infer_fail(INFER_ERR_INVALID_MODEL, "%s must be int64 or int32, not %s", what,
                      infer_dtype_name(t->dtype));
  if (t->rank > 1) return infer_fail(INFER_ERR_INVALID_MODEL, "%s must be 1-D", what);
  int64_t n = dims_count(t->rank, t->dims);
  if (n < 0 || n > cap)
    return infer_fail(INFER_ERR_UNSUPPORTED, "%s has %lld entries, more than %d", what,
                      (long long)n, cap);
  for (int64_t i = 0; i < n; i++) v[i] = tensor_get_i64(t, i);
  *count = (int)n;
  return INFER_OK;
}
