/* norm_family.c: the normalization family's list. */
#include "op.h"

extern const op_desc op_batchnorm, op_instancenorm, op_groupnorm, op_layernorm, op_rmsnorm;

const op_desc *const ops_norm[] = {&op_batchnorm, &op_instancenorm, &op_groupnorm,
                                   &op_layernorm, &op_rmsnorm,      NULL};
