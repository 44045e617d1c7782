/* index_onehot.c: OneHot (9+; negative axis 11+). out has indices' shape with a new
 * axis of size depth at `axis`; out[.., d, ..] = values[1] (on) where d equals the
 * index there, else values[0] (off). Indices of any numeric dtype (floats truncate
 * toward zero, as a cast to int64); negative ones count from depth. An index outside
 * [-depth, depth) gives a row of only off values: the spec defines that (and the ONNX
 * backend test test_onehot_out_of_range_indices checks it), so it is not an error.
 * depth is read from its input, so the shape is known once depth is (OP_NEEDS_DATA
 * before). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "index_params.h"

static const char *const onehot_attrs[] = {"axis", NULL};

static infer_status onehot_parse(const node *n, void **params) {
  onehot_params v;
  TRY(attr_get_int(n, "axis", -1, &v.axis));
  onehot_params *p = malloc(sizeof *p);
  if (!p) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "OneHot: out of memory");
  *p = v;
  *params = p;
  return INFER_OK;
}

infer_status onehot_depth(const tensor *depth, int64_t *d) {
  if (!index_dtype_numeric(depth->dtype))
    return infer_fail(INFER_ERR_INVALID_MODEL, "OneHot: depth must be numeric, not %s",
                      infer_dtype_name(depth->dtype));
  if (depth->rank > 1 || dims_count(depth->rank, depth->dims) != 1)
    return infer_fail(INFER_ERR_INVALID_MODEL, "OneHot: depth must hold exactly one value");
  if (!depth->data) return OP_NEEDS_DATA;
  if (dtype_is_float(depth->dtype)) {
    double v = tensor_get_f64(depth, 0);
    if (!(v >= 1 && v < 9.2e18))
      return infer_fail(INFER_ERR_INVALID_MODEL, "OneHot: depth %g is not a positive count", v);
    *d = (int64_t)v;
  } else {
    *d = tensor_get_i64(depth, 0);
    if (*d < 1) /* a uint64 above INT64_MAX reads negative too */
      return infer_fail(INFER_ERR_INVALID_MODEL, "OneHot: depth %lld is not a positive count",
                        (long long)*d);
  }
  return INFER_OK;
}

static infer_status onehot_shape(const node *n, const onehot_params *p, const tensor *const *in,
                                 int *axis, int64_t *depth) {
  const tensor *idx = in[0], *vals = in[2];
  if (!index_dtype_numeric(idx->dtype))
    return infer_fail(INFER_ERR_UNSUPPORTED, "OneHot: indices of dtype %s are not supported",
                      infer_dtype_name(idx->dtype));
  if (infer_dtype_size(vals->dtype) == 0)
    return infer_fail(INFER_ERR_UNSUPPORTED, "OneHot: values of dtype %s are not supported",
                      infer_dtype_name(vals->dtype));
  if (vals->rank != 1 || vals->dims[0] != 2)
    return infer_fail(INFER_ERR_INVALID_MODEL, "OneHot: values must be [off, on] (shape 2)");
  if (idx->rank + 1 > INFER_MAX_RANK)
    return infer_fail(INFER_ERR_UNSUPPORTED, "OneHot: output rank %d exceeds %d", idx->rank + 1,
                      INFER_MAX_RANK);
  if (n->opset < 11 && p->axis < -1)
    return infer_fail(INFER_ERR_INVALID_MODEL, "OneHot: axis %lld: negative axes other than -1 "
                      "need opset 11", (long long)p->axis);
  TRY(axis_normalize(p->axis, idx->rank + 1, "OneHot axis", axis));
  return onehot_depth(in[1], depth);
}

static infer_status onehot_infer(const node *n, const void *params, const tensor *const *in,
                                 tensor *const *out) {
  const tensor *idx = in[0];
  int axis;
  int64_t depth;
  TRY(onehot_shape(n, params, in, &axis, &depth));
  int k = 0;
  for (int i = 0; i <= idx->rank; i++)
    out[0]->dims[k++] = i == axis ? depth : idx->dims[i - (i > axis)];
  out[0]->rank = idx->rank + 1;
  out[0]->dtype = in[2]->dtype;
  if (tensor_nbytes(out[0]) < 0)
    return infer_fail(INFER_ERR_INVALID_MODEL, "OneHot: output size overflows");
  return INFER_OK;
}

/* The class of element i, or -1 when it lies outside [-depth, depth). */
static int64_t class_of(const tensor *idx, int64_t i, int64_t depth) {
  int64_t v;
  if (dtype_is_float(idx->dtype)) {
    double d = trunc(tensor_get_f64(idx, i));
    if (!(d >= (double)-depth && d < (double)depth)) return -1;
    v = (int64_t)d;
  } else {
    v = tensor_get_i64(idx, i);
    if (idx->dtype == INFER_DTYPE_UINT64 && v < 0) return -1; /* above INT64_MAX */
    if (v < -depth || v >= depth) return -1;
  }
  return v < 0 ? v + depth : v;
}

static infer_status onehot_run(const node *n, const void *params, const tensor *const *in,
                               tensor *const *out, void *ws) {
  const tensor *idx = in[0];
  int axis;
  int64_t depth;
  TRY(onehot_shape(n, params, in, &axis, &depth));
  size_t es = infer_dtype_size(in[2]->dtype);
  const char *off = in[2]->data, *on = off + es;
  char *y = out[0]->data;
  int64_t outer = dims_count(axis, idx->dims);
  int64_t inner = dims_count(idx->rank - axis, idx->dims + axis);
  int64_t total = dims_count(out[0]->rank, out[0]->dims);
  for (int64_t i = 0; i < total; i++) memcpy(y + i * (int64_t)es, off, es);
  for (int64_t o = 0; o < outer; o++)
    for (int64_t j = 0; j < inner; j++) {
      int64_t c = class_of(idx, o * inner + j, depth);
      if (c >= 0) memcpy(y + ((o * depth + c) * inner + j) * (int64_t)es, on, es);
    }
  return INFER_OK;
}

const op_desc op_onehot = {.name = "OneHot",
                           .domain = "",
                           .since = 9,
                           .until = OP_OPSET_MAX,
                           .min_inputs = 3,
                           .max_inputs = 3,
                           .min_outputs = 1,
                           .max_outputs = 1,
                           .attrs = onehot_attrs,
                           .parse = onehot_parse,
                           .infer = onehot_infer,
                           .run = onehot_run};
