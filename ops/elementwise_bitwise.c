/* elementwise_bitwise.c: BitwiseAnd, BitwiseOr, BitwiseXor (numpy broadcasting)
 * and BitwiseNot on all integer dtypes (opset 18). */
#include "elementwise.h"

#define BITWISE_OP(name, EXPR)                                                     \
  EW_SINT_TYPES(EW_ARITH_X, name, EXPR)                                            \
  EW_UINT_TYPES(EW_ARITH_X, name, EXPR)                                            \
  static const ew_binary_fn name##_table[EW_DTYPE_SLOTS] = {                       \
      EW_SINT_TYPES(EW_ENTRY_X, name, 0) EW_UINT_TYPES(EW_ENTRY_X, name, 0)};

/* in U (unsigned) so the operations never touch a sign bit */
BITWISE_OP(bit_and, (U)x & (U)y)
BITWISE_OP(bit_or, (U)x | (U)y)
BITWISE_OP(bit_xor, (U)x ^ (U)y)

#define INTS (EW_SINTS | EW_UINTS)
EW_BINARY_OP(op_bitwise_and, "BitwiseAnd", 18, OP_OPSET_MAX, bit_and_table, INTS,
             INFER_DTYPE_UNDEFINED);
EW_BINARY_OP(op_bitwise_or, "BitwiseOr", 18, OP_OPSET_MAX, bit_or_table, INTS,
             INFER_DTYPE_UNDEFINED);
EW_BINARY_OP(op_bitwise_xor, "BitwiseXor", 18, OP_OPSET_MAX, bit_xor_table, INTS,
             INFER_DTYPE_UNDEFINED);

EW_SINT_TYPES(EW_UNARY_INT_X, bit_not, ~(U)x)
EW_UINT_TYPES(EW_UNARY_INT_X, bit_not, ~(U)x)
static const ew_unary_impl bit_not_impl = {"BitwiseNot",
                                           {EW_SINT_TYPES(EW_UNARY_ENTRY_X, bit_not, 0)
                                                EW_UINT_TYPES(EW_UNARY_ENTRY_X, bit_not, 0)},
                                           0};
EW_UNARY_OP(op_bitwise_not, "BitwiseNot", 18, OP_OPSET_MAX, bit_not_impl, NULL, NULL);
