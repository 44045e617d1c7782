/* cuda_shape_expand.c: the GPU side of ops/shape_expand.c: Expand, a broadcast view of
 * the input. */
#include "../../kernels/copy.h"
#include "cuda_movement_util.h"

/* ---- Expand ------------------------------------------------------------------------------ */

static infer_status expand_run(const cuda_exec *x, const node *n, const void *params,
                               const void *state, const tensor *const *in, tensor *const *out) {
  int64_t strides[INFER_MAX_RANK];
  broadcast_strides(in[0]->rank, in[0]->dims, out[0]->rank, strides);
  CUDA_LAUNCH_TRY(k_copy_view((int64_t)infer_dtype_size(in[0]->dtype), out[0]->rank,
                              out[0]->dims, strides, NULL, in[0]->data, out[0]->data,
                              MV_STREAM(x)));
  return INFER_OK;
}

const cuda_op cuda_expand = {.name = "Expand", .prepare = mv_broadcast_view_prepare,
                             .run = expand_run};
