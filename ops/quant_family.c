/* quant_family.c: the quantization family's list. */
#include "op.h"

extern const op_desc op_quantize_linear, op_dequantize_linear, op_dynamic_quantize_linear,
    op_conv_integer, op_qlinear_conv, op_matmul_integer, op_qlinear_matmul;

const op_desc *const ops_quant[] = {&op_quantize_linear, &op_dequantize_linear,
                                    &op_dynamic_quantize_linear, &op_conv_integer,
                                    &op_qlinear_conv,    &op_matmul_integer,
                                    &op_qlinear_matmul,  NULL};
