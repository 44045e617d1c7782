/* index_scatter.c: ScatterElements (11+; reduction 16+) and the deprecated Scatter
 * (9-10, the same op without reduction). out = copy of data, then for every position
 * p of indices (same rank as data, each other dim no larger than data's):
 *   out[p with p[axis] = indices[p]] (reduction)= updates[p]
 * Indices are int32 or int64, negative ones count from the back. */
#include <stdlib.h>
#include <string.h>

#include "index_params.h"

static const char *const scatter_elements_attrs[] = {"axis", "reduction", NULL};
static const char *const scatter_attrs[] = {"axis", NULL};

static infer_status scatter_elements_parse(const node *n, void **params) {
  scatter_params v;
  TRY(attr_get_int(n, "axis", 0, &v.axis));
  TRY(index_parse_reduction(n, &v.reduction));
  scatter_params *p = malloc(sizeof *p);
  if (!p) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "%s: out of memory", n->op_type);
  *p = v;
  *params = p;
  return INFER_OK;
}

static infer_status scatter_elements_infer(const node *n, const void *params,
                                           const tensor *const *in, tensor *const *out) {
  const scatter_params *p = params;
  const char *op = n->op_type;
  const tensor *x = in[0], *idx = in[1], *u = in[2];
  int axis;
  TRY(index_check_reduce_dtype(op, x->dtype, p->reduction));
  TRY(index_check_indices_dtype(op, idx, true));
  if (u->dtype != x->dtype)
    return infer_fail(INFER_ERR_INVALID_MODEL, "%s: updates are %s, data is %s", op,
                      infer_dtype_name(u->dtype), infer_dtype_name(x->dtype));
  if (x->rank < 1) return infer_fail(INFER_ERR_INVALID_MODEL, "%s: data is a scalar", op);
  TRY(axis_normalize(p->axis, x->rank, "axis", &axis));
  char a[160], b[160], c[160];
  if (!dims_equal(idx->rank, idx->dims, u->rank, u->dims))
    return infer_fail(INFER_ERR_INVALID_MODEL, "%s: indices %s and updates %s differ in shape",
                      op, dims_format(idx->rank, idx->dims, a, sizeof a),
                      dims_format(u->rank, u->dims, b, sizeof b));
  bool ok = idx->rank == x->rank;
  /* the other dims of indices must fit inside data, or the writes would leave it */
  for (int i = 0; ok && i < x->rank; i++) ok = i == axis || idx->dims[i] <= x->dims[i];
  if (!ok)
    return infer_fail(INFER_ERR_INVALID_MODEL, "%s: indices %s do not fit data %s (axis %d)", op,
                      dims_format(idx->rank, idx->dims, a, sizeof a),
                      dims_format(x->rank, x->dims, c, sizeof c), axis);
  out[0]->dtype = x->dtype;
  out[0]->rank = x->rank;
  memcpy(out[0]->dims, x->dims, sizeof x->dims);
  return INFER_OK;
}

static infer_status scatter_elements_run(const node *n, const void *params,
                                         const tensor *const *in, tensor *const *out,
                                         void *ws) {
  const scatter_params *p = params;
  const tensor *x = in[0], *idx = in[1], *u = in[2];
  int axis, r = x->rank;
  TRY(axis_normalize(p->axis, r, "axis", &axis));
  size_t es = infer_dtype_size(x->dtype);
  int64_t nb = tensor_nbytes(x), count = dims_count(idx->rank, idx->dims), dim = x->dims[axis];
  char *dst = out[0]->data;
  const char *src = u->data;
  if (nb > 0 && dst != x->data) memcpy(dst, x->data, (size_t)nb);
  int64_t strides[INFER_MAX_RANK], pos[INFER_MAX_RANK] = {0}, base = 0;
  dims_strides(r, x->dims, strides);
  /* base: data offset of the current indices position with its axis coordinate 0 */
  for (int64_t i = 0; i < count; i++) {
    int64_t v;
    if (!index_resolve(index_at(idx, i), dim, &v))
      return index_out_of_range(n->op_type, index_at(idx, i), i, dim);
    index_reduce_run(x->dtype, p->reduction, dst + (base + v * strides[axis]) * (int64_t)es,
                     src + i * (int64_t)es, 1);
    for (int d = r - 1; d >= 0; d--) {
      if (d != axis) base += strides[d];
      if (++pos[d] < idx->dims[d]) break;
      if (d != axis) base -= strides[d] * idx->dims[d];
      pos[d] = 0;
    }
  }
  return INFER_OK;
}

const op_desc op_scatter_elements = {.name = "ScatterElements",
                                     .domain = "",
                                     .since = 11,
                                     .until = OP_OPSET_MAX,
                                     .min_inputs = 3,
                                     .max_inputs = 3,
                                     .min_outputs = 1,
                                     .max_outputs = 1,
                                     .attrs = scatter_elements_attrs,
                                     .parse = scatter_elements_parse,
                                     .infer = scatter_elements_infer,
                                     .run = scatter_elements_run};

/* Scatter-11 only marks the op deprecated: opset 11+ models use ScatterElements. */
const op_desc op_scatter = {.name = "Scatter",
                            .domain = "",
                            .since = 9,
                            .until = 10,
                            .min_inputs = 3,
                            .max_inputs = 3,
                            .min_outputs = 1,
                            .max_outputs = 1,
                            .attrs = scatter_attrs,
                            .parse = scatter_elements_parse,
                            .infer = scatter_elements_infer,
                            .run = scatter_elements_run};
