/* reduce_util.h: element access and small helpers shared by the normalization,
 * reduction, softmax, Pad and Resize reference kernels (internal to ops/).
 *
 * The float32 case is tested first so the common path is one predictable branch
 * and a direct load; the other dtypes go through the generic tensor accessors. */
#ifndef INFER_REDUCE_UTIL_H
#define INFER_REDUCE_UTIL_H

#include <math.h>
#include <string.h>

#include "op.h"

static inline double nr_load(const tensor *t, int64_t i) {
  if (t->dtype == INFER_DTYPE_FLOAT32) return ((const float *)t->data)[i];
  return tensor_get_f64(t, i);
}

static inline void nr_store(tensor *t, int64_t i, double v) {
  if (t->dtype == INFER_DTYPE_FLOAT32)
    ((float *)t->data)[i] = (float)v;
  else
    tensor_set_f64(t, i, v);
}

/* A required input must be present (an omitted "" input arrives as NULL). */
static inline infer_status nr_require(const tensor *t, const char *op, const char *name) {
  if (!t) return infer_fail(INFER_ERR_INVALID_MODEL, "%s: required input %s is missing", op, name);
  return INFER_OK;
}

/* Copies the shape of `src` into `dst` (dtype left alone). */
static inline void nr_copy_shape(tensor *dst, const tensor *src) {
  dst->rank = src->rank;
  memcpy(dst->dims, src->dims, sizeof dst->dims);
}

/* Product of dims[from..to); callers have validated the full shape already, so
 * a partial product cannot overflow. */
static inline int64_t nr_span(const int64_t *dims, int from, int to) {
  int64_t n = 1;
  for (int i = from; i < to; i++) n *= dims[i];
  return n;
}

/* Checks that a shape's element count is representable; error names `what`. */
static inline infer_status nr_check_count(const tensor *t, const char *what) {
  if (t->rank < 0 || t->rank > INFER_MAX_RANK)
    return infer_fail(INFER_ERR_INVALID_MODEL, "%s: invalid rank %d", what, t->rank);
  if (dims_count(t->rank, t->dims) < 0) {
    char buf[160];
    return infer_fail(INFER_ERR_INVALID_MODEL, "%s: invalid shape %s", what,
                      dims_format(t->rank, t->dims, buf, sizeof buf));
  }
  return INFER_OK;
}

#endif
