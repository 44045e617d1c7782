/* movement_crop_pad.c: CenterCropPad (18): each listed axis (`axes`, default all)
 * cropped or zero-padded to the size in `shape`, centred: a crop drops
 * floor((in - out) / 2) at the front, a pad adds floor((out - in) / 2) there (the
 * odd element goes to the back), as the ONNX reference does. The output shape comes
 * from `shape`'s values. Any dtype (bytes are copied; padding is zero bytes). */
#include <stdlib.h>
#include <string.h>

#include "movement_copy.h"

typedef struct crop_pad_params {
  int n_axes; /* -1: all axes */
  int64_t axes[INFER_MAX_RANK];
} crop_pad_params;

static const char *const crop_pad_attrs[] = {"axes", NULL};

static infer_status crop_pad_parse(const node *n, void **params) {
  const int64_t *v;
  int count;
  TRY(attr_get_ints(n, "axes", &v, &count));
  if (count > INFER_MAX_RANK)
    return infer_fail(INFER_ERR_INVALID_MODEL, "CenterCropPad: %d axes", count);
  crop_pad_params *p = malloc(sizeof *p);
  if (!p) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "CenterCropPad: out of memory");
  p->n_axes = count;
  for (int i = 0; i < count; i++) p->axes[i] = v[i];
  *params = p;
  return INFER_OK;
}

/* Output dims, and per axis the input offset (crop) and output offset (pad) where the
 * kept block starts, and its length. */
typedef struct crop_pad_plan {
  int64_t out[INFER_MAX_RANK], in_off[INFER_MAX_RANK], out_off[INFER_MAX_RANK],
      len[INFER_MAX_RANK];
} crop_pad_plan;

static infer_status crop_pad_make(const crop_pad_params *p, const tensor *x, const tensor *shape,
                                  crop_pad_plan *pl) {
  int r = x->rank, na = p->n_axes < 0 ? r : p->n_axes, axes[INFER_MAX_RANK];
  bool seen[INFER_MAX_RANK] = {false};
  for (int i = 0; i < na; i++) {
    if (p->n_axes < 0)
      axes[i] = i;
    else
      TRY(axis_normalize(p->axes[i], r, "CenterCropPad axes entry", &axes[i]));
    if (seen[axes[i]])
      return infer_fail(INFER_ERR_INVALID_MODEL, "CenterCropPad: axis %d is repeated", axes[i]);
    seen[axes[i]] = true;
  }
  if (!dtype_is_signed_int(shape->dtype) || shape->rank != 1 || shape->dims[0] != na)
    return infer_fail(INFER_ERR_INVALID_MODEL,
                      "CenterCropPad: shape must be a 1-D integer tensor of %d entries", na);
  if (!shape->data) return OP_NEEDS_DATA;
  for (int a = 0; a < r; a++) {
    pl->out[a] = pl->len[a] = x->dims[a];
    pl->in_off[a] = pl->out_off[a] = 0;
  }
  for (int i = 0; i < na; i++) {
    int a = axes[i];
    int64_t want = tensor_get_i64(shape, i), dim = x->dims[a];
    if (want < 0)
      return infer_fail(INFER_ERR_INVALID_MODEL, "CenterCropPad: size %lld for axis %d",
                        (long long)want, a);
    pl->out[a] = want;
    pl->len[a] = want < dim ? want : dim;
    if (want < dim) pl->in_off[a] = (dim - want) / 2;
    else pl->out_off[a] = (want - dim) / 2;
  }
  return INFER_OK;
}

static infer_status crop_pad_infer(const node *n, const void *params, const tensor *const *in,
                                   tensor *const *out) {
  size_t es;
  TRY(movement_elem_size("CenterCropPad", in[0]->dtype, &es));
  crop_pad_plan pl;
  TRY(crop_pad_make(params, in[0], in[1], &pl));
  movement_same_shape(in[0], out[0]);
  memcpy(out[0]->dims, pl.out, sizeof(int64_t) * (size_t)in[0]->rank);
  if (tensor_nbytes(out[0]) < 0)
    return infer_fail(INFER_ERR_INVALID_MODEL, "CenterCropPad: output too large");
  return INFER_OK;
}

static infer_status crop_pad_run(const node *n, const void *params, const tensor *const *in,
                                 tensor *const *out, void *ws) {
  const tensor *x = in[0];
  tensor *y = out[0];
  crop_pad_plan pl;
  infer_status st = crop_pad_make(params, x, in[1], &pl);
  if (st == OP_NEEDS_DATA) return infer_fail(INFER_ERR_RUNTIME, "CenterCropPad: shape not known");
  TRY(st);
  size_t es = infer_dtype_size(x->dtype);
  memset(y->data, 0, (size_t)tensor_nbytes(y));
  int r = x->rank;
  if (dims_count(r, pl.len) == 0) return INFER_OK;
  if (r == 0) {
    memcpy(y->data, x->data, es);
    return INFER_OK;
  }
  int64_t xs[INFER_MAX_RANK], ys[INFER_MAX_RANK], idx[INFER_MAX_RANK] = {0};
  dims_strides(r, x->dims, xs);
  dims_strides(r, pl.out, ys);
  int64_t rows = dims_count(r - 1, pl.len);
  size_t row = (size_t)pl.len[r - 1] * es;
  for (int64_t k = 0; k < rows; k++) {
    int64_t xo = pl.in_off[r - 1], yo = pl.out_off[r - 1];
    for (int a = 0; a < r - 1; a++) {
      xo += (pl.in_off[a] + idx[a]) * xs[a];
      yo += (pl.out_off[a] + idx[a]) * ys[a];
    }
    memcpy((char *)y->data + (size_t)yo * es, (const char *)x->data + (size_t)xo * es, row);
    for (int a = r - 2; a >= 0; a--) {
      if (++idx[a] < pl.len[a]) break;
      idx[a] = 0;
    }
  }
  return INFER_OK;
}

const op_desc op_center_crop_pad = {.name = "CenterCropPad",
                                    .domain = "",
                                    .since = 18,
                                    .until = OP_OPSET_MAX,
                                    .min_inputs = 2,
                                    .max_inputs = 2,
                                    .min_outputs = 1,
                                    .max_outputs = 1,
                                    .attrs = crop_pad_attrs,
                                    .parse = crop_pad_parse,
                                    .infer = crop_pad_infer,
                                    .run = crop_pad_run};
