/* movement_gather.c: Gather and GatherElements. Indices (int32 or int64) may be
 * negative (counted from the back); an index outside the axis is a runtime error,
 * checked before anything is copied, never an out-of-bounds read. */
#include <stdlib.h>
#include <string.h>

#include "movement_copy.h"
#include "movement_params.h"

static const char *const axis_attrs[] = {"axis", NULL};

static infer_status gather_parse(const node *n, void **params) {
  gather_params v;
  TRY(attr_get_int(n, "axis", 0, &v.axis));
  gather_params *p = malloc(sizeof *p);
  if (!p) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "%s: out of memory", n->op_type);
  *p = v;
  *params = p;
  return INFER_OK;
}

static infer_status check_indices_dtype(const char *op, const tensor *t) {
  if (t->dtype != INFER_DTYPE_INT64 && t->dtype != INFER_DTYPE_INT32)
    return infer_fail(INFER_ERR_INVALID_MODEL, "%s: indices must be int32 or int64, not %s", op,
                      infer_dtype_name(t->dtype));
  return INFER_OK;
}

static inline int64_t index_at(const tensor *t, int64_t i) {
  return t->dtype == INFER_DTYPE_INT64 ? ((const int64_t *)t->data)[i]
                                       : ((const int32_t *)t->data)[i];
}

/* Every index lies in [-dim, dim). */
static infer_status check_indices(const char *op, const tensor *t, int64_t dim) {
  int64_t count = dims_count(t->rank, t->dims);
  for (int64_t i = 0; i < count; i++) {
    int64_t v = index_at(t, i);
    if (v < -dim || v >= dim)
      return infer_fail(INFER_ERR_RUNTIME, "%s: index %lld (at %lld) is out of range [%lld, %lld)",
                        op, (long long)v, (long long)i, (long long)-dim, (long long)dim);
  }
  return INFER_OK;
}

/* ---- Gather (1+): out = data[:axis] + indices.shape + data[axis+1:] ------------------- */

static infer_status gather_infer(const node *n, const void *params, const tensor *const *in,
                                 tensor *const *out) {
  const tensor *x = in[0], *idx = in[1];
  size_t es;
  int axis;
  TRY(movement_elem_size("Gather", x->dtype, &es));
  TRY(check_indices_dtype("Gather", idx));
  if (x->rank == 0) return infer_fail(INFER_ERR_INVALID_MODEL, "Gather: data is a scalar");
  TRY(axis_normalize(((const gather_params *)params)->axis, x->rank, "Gather axis", &axis));
  int rank = x->rank - 1 + idx->rank;
  if (rank > INFER_MAX_RANK)
    return infer_fail(INFER_ERR_UNSUPPORTED, "Gather: output rank %d exceeds %d", rank,
                      INFER_MAX_RANK);
  int k = 0;
  for (int i = 0; i < axis; i++) out[0]->dims[k++] = x->dims[i];
  for (int i = 0; i < idx->rank; i++) out[0]->dims[k++] = idx->dims[i];
  for (int i = axis + 1; i < x->rank; i++) out[0]->dims[k++] = x->dims[i];
  out[0]->dtype = x->dtype;
  out[0]->rank = rank;
  if (tensor_nbytes(out[0]) < 0)
    return infer_fail(INFER_ERR_INVALID_MODEL, "Gather: output size overflows");
  return INFER_OK;
}

static infer_status gather_run(const node *n, const void *params, const tensor *const *in,
                               tensor *const *out, void *ws) {
  const tensor *x = in[0], *idx = in[1];
  int axis;
  TRY(axis_normalize(((const gather_params *)params)->axis, x->rank, "Gather axis", &axis));
  int64_t dim = x->dims[axis], count = dims_count(idx->rank, idx->dims);
  TRY(check_indices("Gather", idx, dim));
  int64_t outer = dims_count(axis, x->dims);
  size_t inner =
      (size_t)dims_count(x->rank - axis - 1, x->dims + axis + 1) * infer_dtype_size(x->dtype);
  const char *src = x->data;
  char *dst = out[0]->data;
  if (inner == 0) return INFER_OK;
  for (int64_t o = 0; o < outer; o++)
    for (int64_t j = 0; j < count; j++) {
      int64_t v = index_at(idx, j);
      if (v < 0) v += dim;
      memcpy(dst, src + (o * dim + v) * (int64_t)inner, inner);
      dst += inner;
    }
  return INFER_OK;
}

const op_desc op_gather = {.name = "Gather",
                           .domain = "",
                           .since = 1,
                           .until = OP_OPSET_MAX,
                           .min_inputs = 2,
                           .max_inputs = 2,
                           .min_outputs = 1,
                           .max_outputs = 1,
                           .attrs = axis_attrs,
                           .parse = gather_parse,
                           .infer = gather_infer,
                           .run = gather_run};

/* ---- GatherElements (11+): out[i..] = data[i.. with i_axis = indices[i..]] ------------- */

static infer_status gather_elements_infer(const node *n, const void *params,
                                          const tensor *const *in, tensor *const *out) {
  const tensor *x = in[0], *idx = in[1];
  size_t es;
  int axis;
  TRY(movement_elem_size("GatherElements", x->dtype, &es));
  TRY(check_indices_dtype("GatherElements", idx));
  if (x->rank == 0) return infer_fail(INFER_ERR_INVALID_MODEL, "GatherElements: data is a scalar");
  TRY(axis_normalize(((const gather_params *)params)->axis, x->rank, "GatherElements axis", &axis));
  bool ok = idx->rank == x->rank;
  /* other dims of indices must fit inside data, or the copy would read outside it */
  for (int i = 0; ok && i < x->rank; i++) ok = i == axis || idx->dims[i] <= x->dims[i];
  if (!ok) {
    char a[160], b[160];
    return infer_fail(INFER_ERR_INVALID_MODEL,
                      "GatherElements: indices %s do not fit data %s (axis %d)",
                      dims_format(idx->rank, idx->dims, a, sizeof a),
                      dims_format(x->rank, x->dims, b, sizeof b), axis);
  }
  movement_same_shape(idx, out[0]);
  out[0]->dtype = x->dtype;
  return INFER_OK;
}

static infer_status gather_elements_run(const node *n, const void *params, const tensor *const *in,
                                        tensor *const *out, void *ws) {
  const tensor *x = in[0], *idx = in[1];
  int axis, r = x->rank;
  TRY(axis_normalize(((const gather_params *)params)->axis, r, "GatherElements axis", &axis));
  int64_t dim = x->dims[axis], count = dims_count(idx->rank, idx->dims);
  TRY(check_indices("GatherElements", idx, dim));
  int64_t strides[INFER_MAX_RANK], pos[INFER_MAX_RANK] = {0}, base = 0;
  dims_strides(r, x->dims, strides);
  size_t es = infer_dtype_size(x->dtype);
  const char *src = x->data;
  char *dst = out[0]->data;
  /* base: data offset of the current index position with the axis coordinate 0 */
  for (int64_t i = 0; i < count; i++) {
    int64_t v = index_at(idx, i);
    if (v < 0) v += dim;
    memcpy(dst + i * (int64_t)es, src + (base + v * strides[axis]) * (int64_t)es, es);
    for (int d = r - 1; d >= 0; d--) {
      if (d != axis) base += strides[d];
      if (++pos[d] < idx->dims[d]) break;
      if (d != axis) base -= strides[d] * idx->dims[d];
      pos[d] = 0;
    }
  }
  return INFER_OK;
}

const op_desc op_gather_elements = {.name = "GatherElements",
                                    .domain = "",
                                    .since = 11,
                                    .until = OP_OPSET_MAX,
                                    .min_inputs = 2,
                                    .max_inputs = 2,
                                    .min_outputs = 1,
                                    .max_outputs = 1,
                                    .attrs = axis_attrs,
                                    .parse = gather_parse,
                                    .infer = gather_elements_infer,
                                    .run = gather_elements_run};
