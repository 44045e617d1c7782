/* index.c: the index family list (ops/index_params.h): ops that pick, scatter, sort,
 * count or rearrange elements by index, and Einsum (index-notation contraction,
 * ops/einsum.c). */
#include "op.h"

extern const op_desc op_topk, op_nonzero, op_gather_nd, op_scatter_nd, op_scatter_elements,
    op_scatter, op_onehot, op_cumsum, op_cumprod, op_depth_to_space, op_space_to_depth, op_einsum,
    op_tensor_scatter;

const op_desc *const ops_index[] = {
    &op_topk,   &op_nonzero, &op_gather_nd, &op_scatter_nd,     &op_scatter_elements, &op_scatter,
    &op_onehot, &op_cumsum,  &op_cumprod,   &op_depth_to_space, &op_space_to_depth,   &op_einsum,
    &op_tensor_scatter, NULL,
};
