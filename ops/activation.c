/* activation.c: the activation op family list (ops/registry.c joins it). The
 * ops live in activation_*.c and share elementwise.h. */
#include "elementwise.h"

extern const op_desc op_relu, op_leaky_relu, op_prelu, op_clip6, op_clip11, op_sigmoid;
extern const op_desc op_hard_sigmoid, op_hard_swish, op_tanh, op_gelu, op_softplus;
extern const op_desc op_elu, op_selu, op_celu, op_softsign, op_mish, op_thresholded_relu;
extern const op_desc op_swish, op_swiglu, op_shrink;

const op_desc *const ops_activation[] = {
    &op_relu,   &op_leaky_relu, &op_prelu, &op_clip6, &op_clip11,      &op_sigmoid,
    &op_hard_sigmoid, &op_hard_swish, &op_tanh, &op_gelu, &op_softplus, &op_elu,
    &op_selu,   &op_celu,       &op_softsign, &op_mish, &op_thresholded_relu, &op_swish,
    &op_swiglu, &op_shrink,     NULL};
