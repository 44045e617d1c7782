/* elementwise_compare.c: comparisons (Equal, Less, Greater, LessOrEqual,
 * GreaterOrEqual) and logic (And, Or, Xor) with numpy broadcasting; all give
 * bool. Comparisons with NaN are false, as in IEEE and numpy. Strings (Equal
 * opset 19) are not a tensor dtype here and are rejected as unsupported. */
#include "elementwise.h"

#define CMP_OP(name, EXPR)                          \
  EW_FLOAT_TYPES(EW_CMP_X, name, EXPR)              \
  EW_SINT_TYPES(EW_CMP_X, name, EXPR)               \
  EW_UINT_TYPES(EW_CMP_X, name, EXPR)               \
  EW_BOOL_TYPES(EW_CMP_X, name, EXPR)               \
  static const ew_binary_fn name##_table[EW_DTYPE_SLOTS] = {  \
      EW_FLOAT_TYPES(EW_ENTRY_X, name, 0) EW_SINT_TYPES(EW_ENTRY_X, name, 0) \
          EW_UINT_TYPES(EW_ENTRY_X, name, 0) EW_BOOL_TYPES(EW_ENTRY_X, name, 0)};

CMP_OP(eq, x == y)
CMP_OP(lt, x < y)
CMP_OP(gt, x > y)
CMP_OP(le, x <= y)
CMP_OP(ge, x >= y)

EW_BOOL_TYPES(EW_CMP_X, and, (x != 0) & (y != 0))
EW_BOOL_TYPES(EW_CMP_X, or, (x != 0) | (y != 0))
EW_BOOL_TYPES(EW_CMP_X, xor, (x != 0) ^ (y != 0))
static const ew_binary_fn and_table[EW_DTYPE_SLOTS] = {EW_BOOL_TYPES(EW_ENTRY_X, and, 0)};
static const ew_binary_fn or_table[EW_DTYPE_SLOTS] = {EW_BOOL_TYPES(EW_ENTRY_X, or, 0)};
static const ew_binary_fn xor_table[EW_DTYPE_SLOTS] = {EW_BOOL_TYPES(EW_ENTRY_X, xor, 0)};

#define B INFER_DTYPE_BOOL
/* Opset 7 introduced numpy broadcasting for all of these (1-6: broadcast attr). */
EW_BINARY_OP(op_equal, "Equal", 7, OP_OPSET_MAX, eq_table, EW_ALL, B);
EW_BINARY_OP(op_less, "Less", 7, OP_OPSET_MAX, lt_table, EW_ALL, B);
EW_BINARY_OP(op_greater, "Greater", 7, OP_OPSET_MAX, gt_table, EW_ALL, B);
EW_BINARY_OP(op_less_equal, "LessOrEqual", 12, OP_OPSET_MAX, le_table, EW_ALL, B);
EW_BINARY_OP(op_greater_equal, "GreaterOrEqual", 12, OP_OPSET_MAX, ge_table, EW_ALL, B);
EW_BINARY_OP(op_and, "And", 7, OP_OPSET_MAX, and_table, EW_BOOL, B);
EW_BINARY_OP(op_or, "Or", 7, OP_OPSET_MAX, or_table, EW_BOOL, B);
EW_BINARY_OP(op_xor, "Xor", 7, OP_OPSET_MAX, xor_table, EW_BOOL, B);
