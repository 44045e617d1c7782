/* movement_copy.c: the strided view copy and small helpers of the movement ops. */
#include "movement_copy.h"

#include <string.h>

/* Drops size-1 dims and merges dims that are contiguous with their inner
 * neighbour, so most views reduce to a few long rows. Returns the new rank, or
 * -1 when the view is empty. */
static int view_simplify(int rank, const int64_t *dims, const int64_t *strides, int64_t *d,
                         int64_t *s) {
  int r = 0;
  for (int i = 0; i < rank; i++) {
    if (dims[i] == 0) return -1;
    if (dims[i] == 1) continue;
    if (r > 0 && s[r - 1] == strides[i] * dims[i]) {
      d[r - 1] *= dims[i];
      s[r - 1] = strides[i];
      continue;
    }
    d[r] = dims[i];
    s[r] = strides[i];
    r++;
  }
  return r;
}

#define COPY_ROW(T)                                            \
  do {                                                         \
    const T *sp_ = (const T *)sp;                              \
    T *dp_ = (T *)dp;                                          \
    for (int64_t k_ = 0; k_ < n; k_++) dp_[k_] = sp_[k_ * st]; \
  } while (0)

/* One row of n elements with source stride st (elements). */
static void copy_row(char *dp, const char *sp, size_t es, int64_t n, int64_t st) {
  if (st == 1) {
    memcpy(dp, sp, (size_t)n * es);
    return;
  }
  switch (es) {
    case 1:
      COPY_ROW(uint8_t);
      break;
    case 2:
      COPY_ROW(uint16_t);
      break;
    case 4:
      COPY_ROW(uint32_t);
      break;
    case 8:
      COPY_ROW(uint64_t);
      break;
    default:
      for (int64_t k = 0; k < n; k++) memcpy(dp + k * es, sp + k * st * (int64_t)es, es);
  }
}

void movement_copy_view(void *dst, const void *src, size_t es, int rank, const int64_t *dims,
                        const int64_t *strides) {
  int64_t d[MOVEMENT_MAX_VIEW_RANK], s[MOVEMENT_MAX_VIEW_RANK];
  int r = view_simplify(rank, dims, strides, d, s);
  if (r < 0) return;
  if (r == 0) {
    memcpy(dst, src, es);
    return;
  }
  int64_t n = d[r - 1], st = s[r - 1], rows = 1;
  for (int i = 0; i < r - 1; i++) rows *= d[i];
  int64_t idx[MOVEMENT_MAX_VIEW_RANK] = {0};
  const char *sp = (const char *)src;
  char *dp = (char *)dst;
  size_t row_bytes = (size_t)n * es;
  for (int64_t row = 0; row < rows; row++) {
    copy_row(dp, sp, es, n, st);
    dp += row_bytes;
    /* odometer over the outer dims, moving sp by their strides */
    for (int i = r - 2; i >= 0; i--) {
      sp += s[i] * (int64_t)es;
      if (++idx[i] < d[i]) break;
      sp -= s[i] * d[i] * (int64_t)es;
      idx[i] = 0;
    }
  }
}

infer_status movement_elem_size(const char *op, infer_dtype dt, size_t *es) {
  *es = infer_dtype_size(dt);
  if (*es == 0)
    return infer_fail(INFER_ERR_UNSUPPORTED, "%s: dtype %s is not supported", op,
                      infer_dtype_name(dt));
  return INFER_OK;
}

infer_status movement_copy_all(const tensor *in, tensor *out) {
  int64_t bytes = tensor_nbytes(in);
  if (bytes < 0 || bytes != tensor_nbytes(out))
    return infer_fail(INFER_ERR_INTERNAL, "copy between tensors of different byte sizes");
  /* the engine may alias output and input for these view-like ops */
  if (bytes > 0 && out->data != in->data) memmove(out->data, in->data, (size_t)bytes);
  return INFER_OK;
}

void movement_same_shape(const tensor *in, tensor *out) {
  out->dtype = in->dtype;
  out->rank = in->rank;
  memcpy(out->dims, in->dims, sizeof out->dims);
}
