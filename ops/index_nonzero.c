/* index_nonzero.c: NonZero (9+): the coordinates of the non-zero elements of X, in C
 * order, as int64 [rank(X), count] (numpy.nonzero stacked). The count depends on X's
 * values, so the output shape is known only once X is (OP_NEEDS_DATA before).
 * A float is non-zero unless it is +0 or -0 (NaN is non-zero). A scalar X counts as
 * shape [1] (as numpy and ONNX Runtime do): the output is [1, 0 or 1]. */
#include <string.h>

#include "index_params.h"

/* Element i is not zero (every dtype; for floats the sign bit does not count). */
static bool is_nonzero(const tensor *x, int64_t i) {
  const unsigned char *p = x->data;
  switch (x->dtype) {
    case INFER_DTYPE_FLOAT32: return ((const float *)p)[i] != 0;
    case INFER_DTYPE_FLOAT64: return ((const double *)p)[i] != 0;
    case INFER_DTYPE_FLOAT16:
    case INFER_DTYPE_BFLOAT16: return (((const uint16_t *)p)[i] & 0x7fff) != 0;
    default: {
      size_t es = infer_dtype_size(x->dtype);
      for (size_t b = 0; b < es; b++)
        if (p[(size_t)i * es + b]) return true;
      return false;
    }
  }
}

static infer_status nonzero_infer(const node *n, const void *params, const tensor *const *in,
                                  tensor *const *out) {
  const tensor *x = in[0];
  if (infer_dtype_size(x->dtype) == 0)
    return infer_fail(INFER_ERR_UNSUPPORTED, "NonZero: dtype %s is not supported",
                      infer_dtype_name(x->dtype));
  if (dims_count(x->rank, x->dims) < 0)
    return infer_fail(INFER_ERR_INVALID_MODEL, "NonZero: input size overflows");
  out[0]->dtype = INFER_DTYPE_INT64;
  out[0]->rank = 2;
  out[0]->dims[0] = x->rank > 0 ? x->rank : 1;
  if (!x->data) return OP_NEEDS_DATA;
  int64_t count = dims_count(x->rank, x->dims), nz = 0;
  for (int64_t i = 0; i < count; i++) nz += is_nonzero(x, i);
  out[0]->dims[1] = nz;
  return INFER_OK;
}

static infer_status nonzero_run(const node *n, const void *params, const tensor *const *in,
                                tensor *const *out, void *ws) {
  const tensor *x = in[0];
  int r = x->rank;
  int64_t count = dims_count(r, x->dims), nz = out[0]->dims[1], c = 0;
  int64_t pos[INFER_MAX_RANK] = {0}, *y = out[0]->data;
  for (int64_t i = 0; i < count; i++) {
    if (is_nonzero(x, i)) {
      if (c >= nz) return infer_fail(INFER_ERR_INTERNAL, "NonZero: more non-zeros than inferred");
      for (int d = 0; d < r; d++) y[d * nz + c] = pos[d];
      if (r == 0) y[c] = 0;
      c++;
    }
    for (int d = r - 1; d >= 0; d--) {
      if (++pos[d] < x->dims[d]) break;
      pos[d] = 0;
    }
  }
  if (c != nz) return infer_fail(INFER_ERR_INTERNAL, "NonZero: fewer non-zeros than inferred");
  return INFER_OK;
}

const op_desc op_nonzero = {.name = "NonZero",
                            .domain = "",
                            .since = 9,
                            .until = OP_OPSET_MAX,
                            .min_inputs = 1,
                            .max_inputs = 1,
                            .min_outputs = 1,
                            .max_outputs = 1,
                            .infer = nonzero_infer,
                            .run = nonzero_run};
