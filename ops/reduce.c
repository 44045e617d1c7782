/* reduce.c: the reduction op family list: Reduce*, ArgMax/ArgMin, Softmax and
 * LogSoftmax (they all reduce along axes). */
#include "op.h"

extern const op_desc op_reduce_sum_1, op_reduce_sum_13, op_reduce_mean_1, op_reduce_mean_18,
    op_reduce_max_1, op_reduce_max_18, op_reduce_min_1, op_reduce_min_18, op_reduce_prod_1,
    op_reduce_prod_18, op_reduce_l1_1, op_reduce_l1_18, op_reduce_l2_1, op_reduce_l2_18,
    op_reduce_sum_square_1, op_reduce_sum_square_18, op_reduce_log_sum_1, op_reduce_log_sum_18,
    op_reduce_log_sum_exp_1, op_reduce_log_sum_exp_18;
extern const op_desc op_argmax, op_argmin;
extern const op_desc op_softmax_1, op_softmax_13, op_logsoftmax_1, op_logsoftmax_13;

const op_desc *const ops_reduce[] = {
    &op_reduce_sum_1,        &op_reduce_sum_13,        &op_reduce_mean_1,
    &op_reduce_mean_18,      &op_reduce_max_1,         &op_reduce_max_18,
    &op_reduce_min_1,        &op_reduce_min_18,        &op_reduce_prod_1,
    &op_reduce_prod_18,      &op_reduce_l1_1,          &op_reduce_l1_18,
    &op_reduce_l2_1,         &op_reduce_l2_18,         &op_reduce_sum_square_1,
    &op_reduce_sum_square_18, &op_reduce_log_sum_1,    &op_reduce_log_sum_18,
    &op_reduce_log_sum_exp_1, &op_reduce_log_sum_exp_18, &op_argmax,
    &op_argmin,              &op_softmax_1,            &op_softmax_13,
    &op_logsoftmax_1,        &op_logsoftmax_13,        NULL};
