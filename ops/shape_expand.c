/* shape_expand.c: Expand (8+): broadcast the input against a shape given as data.
 * The broadcast is bidirectional: a 1 in `shape` keeps the input's dim. */
#include "movement_copy.h"

static infer_status expand_infer(const node *n, const void *params, const tensor *const *in,
                                 tensor *const *out) {
  size_t es;
  int64_t shape[INFER_MAX_RANK];
  int ns;
  TRY(movement_elem_size("Expand", in[0]->dtype, &es));
  if (in[1]->dtype != INFER_DTYPE_INT64 || in[1]->rank != 1)
    return infer_fail(INFER_ERR_INVALID_MODEL, "Expand: shape must be a 1-D int64 tensor");
  if (!in[1]->data) return OP_NEEDS_DATA;
  TRY(tensor_read_ints(in[1], "Expand shape", shape, INFER_MAX_RANK, &ns));
  for (int i = 0; i < ns; i++)
    if (shape[i] < 0)
      return infer_fail(INFER_ERR_INVALID_MODEL, "Expand: negative dim %lld in shape",
                        (long long)shape[i]);
  TRY(broadcast_shapes(in[0]->rank, in[0]->dims, ns, shape, &out[0]->rank, out[0]->dims));
  if (dims_count(out[0]->rank, out[0]->dims) < 0)
    return infer_fail(INFER_ERR_INVALID_MODEL, "Expand: output size overflows");
  out[0]->dtype = in[0]->dtype;
  return INFER_OK;
}

static infer_status expand_run(const node *n, const void *params, const tensor *const *in,
                               tensor *const *out, void *ws) {
  int64_t strides[INFER_MAX_RANK];
  broadcast_strides(in[0]->rank, in[0]->dims, out[0]->rank, strides);
  movement_copy_view(out[0]->data, in[0]->data, infer_dtype_size(in[0]->dtype), out[0]->rank,
                     out[0]->dims, strides);
  return INFER_OK;
}

const op_desc op_expand = {.name = "Expand",
                           .domain = "",
                           .since = 8,
                           .until = OP_OPSET_MAX,
                           .min_inputs = 2,
                           .max_inputs = 2,
                           .min_outputs = 1,
                           .max_outputs = 1,
                           .infer = expand_infer,
                           .run = expand_run};
