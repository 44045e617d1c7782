/* norm_params.h: the parsed attributes (n->params) of the normalization family
 * (ops/norm_*.c), for the CPU ops and their GPU side. Defaults live in the parse
 * functions (epsilon 1e-5 everywhere). */
#ifndef INFER_NORM_PARAMS_H
#define INFER_NORM_PARAMS_H

#include "op.h"

/* BatchNormalization (inference only: spatial 1, training_mode 0 are checked). */
typedef struct batchnorm_params {
  float epsilon;
} batchnorm_params;

/* InstanceNormalization (groups 0: one group per channel) and GroupNormalization
 * (num_groups, required and > 0). */
typedef struct groupnorm_params {
  float epsilon;
  int64_t groups;
} groupnorm_params;

/* LayerNormalization and RMSNormalization: axis -1, stash_type 1 (float32) by
 * default; the axis is not yet normalized. */
typedef struct layernorm_params {
  int64_t axis;
  float epsilon;
  int64_t stash_type;
} layernorm_params;

#endif
