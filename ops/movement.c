/* movement.c: the movement family list, and Transpose and Concat. */
#include <stdlib.h>
#include <string.h>

#include "movement_copy.h"
#include "movement_params.h"

/* Pad and Resize live in ops/pad.c and ops/resize.c; this family lists them. */
#include "pad_resize.h"

/* ---- Transpose (1+): out.dims[i] = in.dims[perm[i]]; perm defaults to reversed ---- */

static const char *const transpose_attrs[] = {"perm", NULL};

static infer_status transpose_parse(const node *n, void **params) {
  const int64_t *v;
  int count;
  TRY(attr_get_ints(n, "perm", &v, &count));
  if (count > INFER_MAX_RANK)
    return infer_fail(INFER_ERR_UNSUPPORTED, "Transpose: perm has %d entries, more than %d", count,
                      INFER_MAX_RANK);
  transpose_params *p = malloc(sizeof *p);
  if (!p) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "Transpose: out of memory");
  p->n = count;
  if (count > 0) memcpy(p->perm, v, (size_t)count * sizeof *v);
  *params = p;
  return INFER_OK;
}

/* (movement_params.h) */
infer_status transpose_resolve_perm(const transpose_params *p, int rank, int *perm) {
  bool seen[INFER_MAX_RANK] = {false};
  if (p->n < 0) {
    for (int i = 0; i < rank; i++) perm[i] = rank - 1 - i;
    return INFER_OK;
  }
  if (p->n != rank)
    return infer_fail(INFER_ERR_INVALID_MODEL, "Transpose: perm has %d entries for rank %d", p->n,
                      rank);
  for (int i = 0; i < rank; i++) {
    int64_t a = p->perm[i];
    if (a < 0 || a >= rank || seen[a])
      return infer_fail(INFER_ERR_INVALID_MODEL, "Transpose: perm is not a permutation of 0..%d",
                        rank - 1);
    seen[a] = true;
    perm[i] = (int)a;
  }
  return INFER_OK;
}

static infer_status transpose_infer(const node *n, const void *params, const tensor *const *in,
                                    tensor *const *out) {
  int perm[INFER_MAX_RANK];
  size_t es;
  TRY(movement_elem_size("Transpose", in[0]->dtype, &es));
  TRY(transpose_resolve_perm(params, in[0]->rank, perm));
  out[0]->dtype = in[0]->dtype;
  out[0]->rank = in[0]->rank;
  for (int i = 0; i < in[0]->rank; i++) out[0]->dims[i] = in[0]->dims[perm[i]];
  return INFER_OK;
}

static infer_status transpose_run(const node *n, const void *params, const tensor *const *in,
                                  tensor *const *out, void *ws) {
  int perm[INFER_MAX_RANK];
  int64_t in_strides[INFER_MAX_RANK], strides[INFER_MAX_RANK];
  TRY(transpose_resolve_perm(params, in[0]->rank, perm));
  dims_strides(in[0]->rank, in[0]->dims, in_strides);
  for (int i = 0; i < in[0]->rank; i++) strides[i] = in_strides[perm[i]];
  movement_copy_view(out[0]->data, in[0]->data, infer_dtype_size(in[0]->dtype), out[0]->rank,
                     out[0]->dims, strides);
  return INFER_OK;
}

const op_desc op_transpose = {.name = "Transpose",
                              .domain = "",
                              .since = 1,
                              .until = OP_OPSET_MAX,
                              .min_inputs = 1,
                              .max_inputs = 1,
                              .min_outputs = 1,
                              .max_outputs = 1,
                              .attrs = transpose_attrs,
                              .parse = transpose_parse,
                              .infer = transpose_infer,
                              .run = transpose_run};

/* ---- Concat (1+; axis defaults to 1 before opset 4, negative since 11) -------------- */

#define CONCAT_MAX_INPUTS (1 << 20)

static const char *const axis_attrs[] = {"axis", NULL};

static infer_status concat_parse(const node *n, void **params) {
  concat_params v;
  if (n->opset >= 4 && !node_attr(n, "axis"))
    return infer_fail(INFER_ERR_INVALID_MODEL, "Concat: attribute 'axis' is required");
  TRY(attr_get_int(n, "axis", 1, &v.axis));
  concat_params *p = malloc(sizeof *p);
  if (!p) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "Concat: out of memory");
  *p = v;
  *params = p;
  return INFER_OK;
}

static infer_status concat_infer(const node *n, const void *params, const tensor *const *in,
                                 tensor *const *out) {
  const tensor *t0 = in[0];
  int axis, r = t0 ? t0->rank : 0;
  size_t es;
  if (!t0) return infer_fail(INFER_ERR_INVALID_MODEL, "Concat: input 0 is missing");
  TRY(movement_elem_size("Concat", t0->dtype, &es));
  if (r == 0) return infer_fail(INFER_ERR_INVALID_MODEL, "Concat: inputs must have rank >= 1");
  TRY(axis_normalize(((const concat_params *)params)->axis, r, "Concat axis", &axis));
  movement_same_shape(t0, out[0]);
  for (int k = 1; k < n->n_inputs; k++) {
    const tensor *t = in[k];
    char a[160], b[160];
    if (!t) return infer_fail(INFER_ERR_INVALID_MODEL, "Concat: input %d is missing", k);
    if (t->dtype != t0->dtype)
      return infer_fail(INFER_ERR_INVALID_MODEL, "Concat: input %d is %s, input 0 is %s", k,
                        infer_dtype_name(t->dtype), infer_dtype_name(t0->dtype));
    bool ok = t->rank == r;
    for (int i = 0; ok && i < r; i++) ok = i == axis || t->dims[i] == t0->dims[i];
    if (!ok)
      return infer_fail(
          INFER_ERR_INVALID_MODEL, "Concat: input %d has shape %s, input 0 has %s (axis %d)", k,
          dims_format(t->rank, t->dims, a, sizeof a), dims_format(r, t0->dims, b, sizeof b), axis);
    if (!size_add(out[0]->dims[axis], t->dims[axis], &out[0]->dims[axis]))
      return infer_fail(INFER_ERR_INVALID_MODEL, "Concat: output size overflows");
  }
  if (tensor_nbytes(out[0]) < 0)
    return infer_fail(INFER_ERR_INVALID_MODEL, "Concat: output size overflows");
  return INFER_OK;
}

static infer_status concat_run(const node *n, const void *params, const tensor *const *in,
                               tensor *const *out, void *ws) {
  int axis;
  const tensor *o = out[0];
  TRY(axis_normalize(((const concat_params *)params)->axis, o->rank, "Concat axis", &axis));
  size_t es = infer_dtype_size(o->dtype);
  int64_t outer = dims_count(axis, o->dims);
  int64_t inner = dims_count(o->rank - axis - 1, o->dims + axis + 1) * (int64_t)es;
  int64_t out_row = o->dims[axis] * inner, offset = 0;
  /* each input contributes one block of dims[axis]*inner bytes per outer row */
  for (int k = 0; k < n->n_inputs; k++) {
    int64_t row = in[k]->dims[axis] * inner;
    const char *src = in[k]->data;
    char *dst = (char *)o->data + offset;
    if (row > 0)
      for (int64_t i = 0; i < outer; i++) memcpy(dst + i * out_row, src + i * row, (size_t)row);
    offset += row;
  }
  return INFER_OK;
}

const op_desc op_concat = {.name = "Concat",
                           .domain = "",
                           .since = 1,
                           .until = OP_OPSET_MAX,
                           .min_inputs = 1,
                           .max_inputs = CONCAT_MAX_INPUTS,
                           .min_outputs = 1,
                           .max_outputs = 1,
                           .attrs = axis_attrs,
                           .parse = concat_parse,
                           .infer = concat_infer,
                           .run = concat_run};

/* ---- the family -------------------------------------------------------------------------- */

extern const op_desc op_split, op_slice, op_gather, op_gather_elements, op_tile, op_trilu,
    op_row_gather;

const op_desc *const ops_movement[] = {
    &op_transpose, &op_concat, &op_split, &op_slice,  &op_gather, &op_gather_elements,
    &op_tile,      &op_trilu,  &op_pad,   &op_resize, &op_row_gather, NULL,
};
