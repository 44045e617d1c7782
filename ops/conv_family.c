/* conv_family.c: the convolution family's list (kept apart from the ops, which share
 * conv.c's helpers, so that no two files call each other). */
#include "op.h"

extern const op_desc op_conv, op_conv_transpose; /* conv.c */
extern const op_desc op_fused_conv;                /* conv_fused.c */
extern const op_desc op_int8_conv;                 /* conv_int8.c */
extern const op_desc op_deform_conv;               /* conv_deform.c */
extern const op_desc op_causal_conv_with_state;    /* conv_causal_state.c */

const op_desc *const ops_conv[] = {&op_conv, &op_conv_transpose, &op_fused_conv, &op_int8_conv,
                                   &op_deform_conv, &op_causal_conv_with_state, NULL};
