/* cuda_movement_gather.c: the GPU side of ops/movement_gather.c: Gather and
 * GatherElements. Indices are run-time data: an index out of range writes zeros (see
 * kernels/gather.h). */
#include "../../kernels/gather.h"
#include "../movement_params.h"
#include "cuda_movement_util.h"

/* ---- Gather and GatherElements ----------------------------------------------------------- */

static infer_status gather_common(const node *n, const gather_params *p, const tensor *const *in,
                                  int *axis) {
  int64_t es;
  TRY(mv_elem_size(n->op_type, in[0], &es));
  if (in[1]->dtype != INFER_DTYPE_INT64 && in[1]->dtype != INFER_DTYPE_INT32)
    return infer_fail(INFER_ERR_INVALID_MODEL, "%s: indices must be int32 or int64", n->op_type);
  if (in[0]->rank == 0)
    return infer_fail(INFER_ERR_INVALID_MODEL, "%s: data is a scalar", n->op_type);
  if (!p) return infer_fail(INFER_ERR_INTERNAL, "%s: attributes were not parsed", n->op_type);
  return axis_normalize(p->axis, in[0]->rank, "axis", axis);
}

static infer_status gather_prepare(const cuda_exec *x, const node *n, const void *params,
                                   const tensor *const *in, const tensor *const *host_in,
                                   tensor *const *out, void **state, int64_t *ws_bytes) {
  mv_axis_state *s;
  MV_NEW_STATE(s, sizeof *s);
  return gather_common(n, params, in, &s->axis);
}

static infer_status gather_run(const cuda_exec *x, const node *n, const void *params,
                               const void *state, const tensor *const *in, tensor *const *out) {
  const tensor *t = in[0], *idx = in[1];
  int axis = ((const mv_axis_state *)state)->axis;
  CUDA_LAUNCH_TRY(k_gather((int64_t)infer_dtype_size(t->dtype), t->data, (int)idx->dtype,
                           idx->data, out[0]->data, dims_count(axis, t->dims), t->dims[axis],
                           dims_count(idx->rank, idx->dims),
                           dims_count(t->rank - axis - 1, t->dims + axis + 1), MV_STREAM(x)));
  return INFER_OK;
}

const cuda_op cuda_gather = {.name = "Gather", .prepare = gather_prepare, .run = gather_run};

static infer_status gather_elements_prepare(const cuda_exec *x, const node *n, const void *params,
                                            const tensor *const *in, const tensor *const *host_in,
                                            tensor *const *out, void **state, int64_t *ws_bytes) {
  mv_axis_state *s;
  MV_NEW_STATE(s, sizeof *s);
  TRY(gather_common(n, params, in, &s->axis));
  if (infer_dtype_size(in[0]->dtype) > 8 || in[1]->rank != in[0]->rank)
    return infer_fail(INFER_ERR_UNSUPPORTED, "GatherElements on the GPU: unsupported shapes/dtype");
  for (int d = 0; d < in[0]->rank; d++)
    if (d != s->axis && in[1]->dims[d] > in[0]->dims[d])
      return infer_fail(INFER_ERR_INVALID_MODEL, "GatherElements: indices do not fit data");
  return INFER_OK;
}

static infer_status gather_elements_run(const cuda_exec *x, const node *n, const void *params,
                                        const void *state, const tensor *const *in,
                                        tensor *const *out) {
  const tensor *t = in[0], *idx = in[1];
  CUDA_LAUNCH_TRY(k_gather_elements((int)infer_dtype_size(t->dtype), t->rank, t->dims, idx->dims,
                                    ((const mv_axis_state *)state)->axis, t->data, (int)idx->dtype,
                                    idx->data, out[0]->data, MV_STREAM(x)));
  return INFER_OK;
}

const cuda_op cuda_gather_elements = {.name = "GatherElements",
                                      .prepare = gather_elements_prepare,
                                      .run = gather_elements_run};
