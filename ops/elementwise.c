/* elementwise.c: the elementwise op family list (ops/registry.c joins it). The
 * ops live in elementwise_*.c; shared machinery in elementwise.h. */
#include "elementwise.h"

extern const op_desc op_add, op_sub, op_mul, op_div, op_pow, op_mod, op_bitshift;
extern const op_desc op_max, op_min, op_sum, op_mean;
extern const op_desc op_equal, op_less, op_greater, op_less_equal, op_greater_equal;
extern const op_desc op_and, op_or, op_xor, op_not, op_where;
extern const op_desc op_sqrt, op_exp, op_log, op_neg, op_abs, op_reciprocal, op_erf;
extern const op_desc op_floor, op_ceil, op_round, op_sign;
extern const op_desc op_sin, op_cos, op_tan, op_asin, op_acos, op_atan;
extern const op_desc op_sinh, op_cosh, op_asinh, op_acosh, op_atanh;
extern const op_desc op_isnan, op_isinf, op_cast, op_castlike, op_bitcast;
extern const op_desc op_bitwise_and, op_bitwise_or, op_bitwise_xor, op_bitwise_not;

const op_desc *const ops_elementwise[] = {
    &op_add,   &op_sub,   &op_mul,   &op_div,        &op_pow,          &op_mod,
    &op_bitshift, &op_max, &op_min, &op_sum,         &op_mean,         &op_equal,
    &op_less,  &op_greater, &op_less_equal, &op_greater_equal, &op_and, &op_or,
    &op_xor,   &op_not,   &op_where, &op_sqrt,       &op_exp,          &op_log,
    &op_neg,   &op_abs,   &op_reciprocal, &op_erf,   &op_floor,        &op_ceil,
    &op_round, &op_sign,  &op_sin,   &op_cos,        &op_tan,          &op_asin,
    &op_acos,  &op_atan,  &op_sinh,  &op_cosh,       &op_asinh,        &op_acosh,
    &op_atanh, &op_isnan, &op_isinf, &op_cast,       &op_castlike,     &op_bitcast,
    &op_bitwise_and, &op_bitwise_or, &op_bitwise_xor, &op_bitwise_not, NULL};
