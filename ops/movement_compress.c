/* movement_compress.c: Compress (9, 11): the slices of `input` along `axis` (or its
 * elements, flattened, when axis is absent) whose entry in the 1-D bool `condition`
 * is true. A condition shorter than the axis drops the slices past its end (as the
 * spec allows); a longer one is an error. The output size depends on the condition's
 * values, so it is known once they are. Any dtype (bytes are copied). */
#include <stdlib.h>
#include <string.h>

#include "movement_copy.h"

typedef struct compress_params {
  bool has_axis;
  int64_t axis;
} compress_params;

static const char *const compress_attrs[] = {"axis", NULL};

static infer_status compress_parse(const node *n, void **params) {
  compress_params t = {node_attr(n, "axis") != NULL, 0};
  TRY(attr_get_int(n, "axis", 0, &t.axis));
  compress_params *p = malloc(sizeof *p);
  if (!p) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "Compress: out of memory");
  *p = t;
  *params = p;
  return INFER_OK;
}

/* x as outer x len x inner around the axis (flattened: 1 x count x 1). */
static infer_status compress_geom(const compress_params *p, const tensor *x, int *axis,
                                  int64_t *outer, int64_t *len, int64_t *inner) {
  if (!p->has_axis) {
    *axis = -1;
    *outer = *inner = 1;
    *len = dims_count(x->rank, x->dims);
    return INFER_OK;
  }
  TRY(axis_normalize(p->axis, x->rank, "Compress axis", axis));
  *outer = dims_count(*axis, x->dims);
  *len = x->dims[*axis];
  *inner = dims_count(x->rank - *axis - 1, x->dims + *axis + 1);
  return INFER_OK;
}

static infer_status compress_infer(const node *n, const void *params, const tensor *const *in,
                                   tensor *const *out) {
  const tensor *x = in[0], *c = in[1];
  size_t es;
  TRY(movement_elem_size("Compress", x->dtype, &es));
  if (c->dtype != INFER_DTYPE_BOOL || c->rank != 1)
    return infer_fail(INFER_ERR_INVALID_MODEL, "Compress: condition must be a 1-D bool tensor");
  int axis;
  int64_t outer, len, inner;
  TRY(compress_geom(params, x, &axis, &outer, &len, &inner));
  if (c->dims[0] > len)
    return infer_fail(INFER_ERR_INVALID_MODEL,
                      "Compress: condition has %lld entries, more than the %lld %s",
                      (long long)c->dims[0], (long long)len, axis < 0 ? "elements" : "slices");
  if (!c->data) return OP_NEEDS_DATA;
  int64_t kept = 0;
  for (int64_t i = 0; i < c->dims[0]; i++) kept += ((const uint8_t *)c->data)[i] != 0;
  tensor *y = out[0];
  movement_same_shape(x, y);
  if (axis < 0) {
    y->rank = 1;
    y->dims[0] = kept;
  } else {
    y->dims[axis] = kept;
  }
  return INFER_OK;
}

static infer_status compress_run(const node *n, const void *params, const tensor *const *in,
                                 tensor *const *out, void *ws) {
  const tensor *x = in[0], *c = in[1];
  int axis;
  int64_t outer, len, inner;
  TRY(compress_geom(params, x, &axis, &outer, &len, &inner));
  size_t row = (size_t)inner * infer_dtype_size(x->dtype);
  const uint8_t *keep = c->data;
  const char *src = x->data;
  char *dst = out[0]->data;
  if (row == 0) return INFER_OK;
  for (int64_t o = 0; o < outer; o++)
    for (int64_t i = 0; i < c->dims[0]; i++)
      if (keep[i]) {
        memcpy(dst, src + (size_t)(o * len + i) * row, row);
        dst += row;
      }
  return INFER_OK;
}

const op_desc op_compress = {.name = "Compress",
                             .domain = "",
                             .since = 9,
                             .until = OP_OPSET_MAX,
                             .min_inputs = 2,
                             .max_inputs = 2,
                             .min_outputs = 1,
                             .max_outputs = 1,
                             .attrs = compress_attrs,
                             .parse = compress_parse,
                             .infer = compress_infer,
                             .run = compress_run};
