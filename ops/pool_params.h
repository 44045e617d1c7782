/* pool_params.h: the parsed attributes (n->params) of the pooling family (ops/pool.c),
 * read by the CPU ops and by their GPU side (ops/cuda/cuda_pool.c). Defaults live in
 * the parse functions of ops/pool.c. GlobalAveragePool and GlobalMaxPool have none. */
#ifndef INFER_POOL_PARAMS_H
#define INFER_POOL_PARAMS_H

#include "conv_util.h"

/* MaxPool and AveragePool (the attributes one of them does not take keep their
 * defaults, 0). kernel_shape is required (w.n_kernel >= 1); the flags are 0 or 1.
 * channels_last is internal, written by the to-channels-last pass: X and Y are
 * N x H x W x C (2-D pooling, no Indices). */
typedef struct pool_params {
  win_attrs w;
  int64_t ceil_mode, count_include_pad, storage_order, channels_last;
} pool_params;

/* LRN: size is required and >= 1; alpha 1e-4, beta 0.75, bias 1 by default. */
typedef struct lrn_params {
  float alpha, beta, bias;
  int64_t size;
} lrn_params;

#endif
