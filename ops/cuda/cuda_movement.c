/* cuda_movement.c: the GPU side of ops/movement.c (Transpose, Concat) and the
 * movement family's list (its other ops are in cuda_movement_split.c,
 * cuda_movement_slice.c, cuda_movement_gather.c, cuda_movement_tile.c, cuda_pad.c and
 * cuda_resize.c, as on the CPU). */
#include "../../kernels/copy.h"
#include "../movement_params.h"
#include "cuda_movement_util.h"

/* ---- Transpose ------------------------------------------------------------------------------ */

typedef struct perm_state {
  int perm[INFER_MAX_RANK];
} perm_state;

static infer_status transpose_prepare(const cuda_exec *x, const node *n, const void *params,
                                      const tensor *const *in, const tensor *const *host_in,
                                      tensor *const *out, void **state, int64_t *ws_bytes) {
  perm_state *s;
  int64_t es;
  TRY(mv_elem_size("Transpose", in[0], &es));
  if (!params) return infer_fail(INFER_ERR_INTERNAL, "Transpose: attributes were not parsed");
  MV_NEW_STATE(s, sizeof *s);
  return transpose_resolve_perm(params, in[0]->rank, s->perm); /* movement_params.h */
}

static infer_status transpose_run(const cuda_exec *x, const node *n, const void *params,
                                  const void *state, const tensor *const *in, tensor *const *out) {
  const perm_state *s = state;
  int64_t own[INFER_MAX_RANK], strides[INFER_MAX_RANK];
  dims_strides(in[0]->rank, in[0]->dims, own);
  for (int i = 0; i < in[0]->rank; i++) strides[i] = own[s->perm[i]];
  CUDA_LAUNCH_TRY(k_copy_view((int64_t)infer_dtype_size(in[0]->dtype), out[0]->rank,
                              out[0]->dims, strides, NULL, in[0]->data, out[0]->data,
                              MV_STREAM(x)));
  return INFER_OK;
}

static const cuda_op cuda_transpose = {.name = "Transpose", .prepare = transpose_prepare,
                                       .run = transpose_run};

/* ---- Concat: one strided copy per input into its slice of the output (none for a part
 * already written there) ----------------------------------------------------------------- */

static infer_status concat_prepare(const cuda_exec *x, const node *n, const void *params,
                                   const tensor *const *in, const tensor *const *host_in,
                                   tensor *const *out, void **state, int64_t *ws_bytes) {
  mv_axis_state *s;
  int64_t es;
  const concat_params *p = params;
  TRY(mv_elem_size("Concat", out[0], &es));
  if (!p) return infer_fail(INFER_ERR_INTERNAL, "Concat: attributes were not parsed");
  MV_NEW_STATE(s, sizeof *s);
  TRY(axis_normalize(p->axis, out[0]->rank, "Concat axis", &s->axis));
  for (int k = 0; k < n->n_inputs; k++)
    if (!in[k] || in[k]->dtype != out[0]->dtype)
      return infer_fail(INFER_ERR_INVALID_MODEL, "Concat: input %d is missing or differs", k);
  return INFER_OK;
}

static infer_status concat_run(const cuda_exec *x, const node *n, const void *params,
                               const void *state, const tensor *const *in, tensor *const *out) {
  const tensor *o = out[0];
  int axis = ((const mv_axis_state *)state)->axis;
  int64_t es = (int64_t)infer_dtype_size(o->dtype);
  int64_t outer = dims_count(axis, o->dims);
  int64_t inner = dims_count(o->rank - axis - 1, o->dims + axis + 1);
  int64_t out_row = o->dims[axis] * inner, offset = 0;
  for (int k = 0; k < n->n_inputs; k++) {
    int64_t row = in[k]->dims[axis] * inner;
    /* a part its producer wrote in place lies at its slice already (the engine placed it
     * there: engine/cuda/cuda_concat_in_place.c); no other part can start at that byte */
    bool in_place = in[k]->data == (const void *)((const char *)o->data + offset * es);
    if (row > 0 && outer > 0 && !in_place) {
      int64_t dims[2] = {outer, row}, is[2] = {row, 1}, os[2] = {out_row, 1};
      CUDA_LAUNCH_TRY(k_copy_view(es, 2, dims, is, os, in[k]->data,
                                  (char *)o->data + offset * es, MV_STREAM(x)));
    }
    offset += row;
  }
  return INFER_OK;
}

static const cuda_op cuda_concat = {.name = "Concat", .prepare = concat_prepare, .run = concat_run};

/* ---- the family ------------------------------------------------------------------------- */

extern const cuda_op cuda_split, cuda_slice, cuda_gather, cuda_gather_elements, cuda_tile,
    cuda_trilu, cuda_pad, cuda_resize, cuda_row_gather;

const cuda_op *const cuda_ops_movement[] = {
    &cuda_transpose,       &cuda_concat, &cuda_split, &cuda_slice, &cuda_gather,
    &cuda_gather_elements, &cuda_tile,   &cuda_trilu, &cuda_pad,   &cuda_resize,
    &cuda_row_gather,      NULL,
};
