/* norm.c: the normalization ops' shared checks (the family list: norm_family.c). */
#include "norm_util.h"

infer_status norm_check_vector(const tensor *t, int64_t count, const char *op,
                               const char *name) {
  char buf[160];
  if (!t) return infer_fail(INFER_ERR_INVALID_MODEL, "%s: input %s is missing", op, name);
  if (!dtype_is_float(t->dtype))
    return infer_fail(INFER_ERR_UNSUPPORTED, "%s: %s dtype %s is not supported", op, name,
                      infer_dtype_name(t->dtype));
  if (t->rank < 0 || t->rank > INFER_MAX_RANK || dims_count(t->rank, t->dims) != count)
    return infer_fail(INFER_ERR_INVALID_MODEL, "%s: %s has shape %s, expected %lld elements",
                      op, name,
                      t->rank >= 0 && t->rank <= INFER_MAX_RANK
                          ? dims_format(t->rank, t->dims, buf, sizeof buf)
                          : "?",
                      (long long)count);
  return INFER_OK;
}
