/* reduce_params.h: the parsed attributes (n->params) of the reduction family
 * (ops/reduce_ops.c, reduce_arg.c, reduce_softmax.c), read by the CPU ops and by
 * their GPU side (ops/cuda/cuda_reduce.c), and what both derive from them and the
 * input's shape. Defaults live in the parse functions. */
#ifndef INFER_REDUCE_PARAMS_H
#define INFER_REDUCE_PARAMS_H

#include "op.h"

enum reduce_kind {
  RK_SUM,
  RK_MEAN,
  RK_MAX,
  RK_MIN,
  RK_PROD,
  RK_L1,
  RK_L2,
  RK_SUMSQ,
  RK_LOGSUM,
  RK_LOGSUMEXP
};

/* Reduce*: axes from the attribute (opsets before ReduceSum 13 / the others 18) or
 * from the optional second input (axes_from_input); keepdims 1, noop_with_empty_axes
 * 0 by default. */
typedef struct reduce_params {
  enum reduce_kind kind;
  bool keepdims;
  bool noop_with_empty_axes;
  bool axes_from_input;
  int n_axes; /* attribute axes; -1 when absent */
  int64_t axes[INFER_MAX_RANK];
} reduce_params;

/* Which dims of a rank-`rank` input are reduced (mask[i] = true): from p's attribute
 * axes, or with axes_from_input from `axes`, the axes input as host data (NULL when
 * not given; OP_NEEDS_DATA when its data is not known yet). Empty axes reduce
 * everything, or nothing with noop_with_empty_axes. */
infer_status reduce_axes_mask(const node *n, const reduce_params *p, const tensor *axes, int rank,
                              bool *mask);

/* ArgMax / ArgMin: axis 0, keepdims 1, select_last_index 0 by default. */
typedef struct arg_params {
  int64_t axis;
  bool keepdims;
  bool last;
  bool is_max;
} arg_params;

/* Softmax / LogSoftmax: axis 1 before opset 13, -1 from 13. */
typedef struct softmax_params {
  int64_t axis;
  bool log;
} softmax_params;

/* The softmax of x as [outer, len, inner]: `len` elements at stride `inner` (opset
 * 13+ along the axis, before that x coerced to 2-D at the axis; a scalar normalizes
 * over itself). */
infer_status softmax_geometry(const node *n, const softmax_params *p, const tensor *x,
                              int64_t *outer, int64_t *len, int64_t *inner);

#endif
