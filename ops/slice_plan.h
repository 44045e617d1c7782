/* slice_plan.h: what the CPU Slice (ops/movement_slice.c) shares with the GPU one
 * (ops/cuda/cuda_movement_slice.c): the parsed attributes and the resolution of starts,
 * ends, axes and steps into a per-axis start, step and length. */
#ifndef INFER_SLICE_PLAN_H
#define INFER_SLICE_PLAN_H

#include "op.h"

/* The node's params (n->params of a Slice node). */
typedef struct slice_params {
  int n, n_axes; /* opset < 10: counts of starts/ends and axes (-1: no axes) */
  int64_t starts[INFER_MAX_RANK], ends[INFER_MAX_RANK], axes[INFER_MAX_RANK];
} slice_params;

/* The effective start and step of every axis, and the output dims. */
typedef struct slice_plan {
  int64_t start[INFER_MAX_RANK], step[INFER_MAX_RANK], dims[INFER_MAX_RANK];
} slice_plan;

/* The plan of slicing x (only its shape is read): opset < 10 from p, 10+ from the
 * starts, ends, axes and steps in in[1..4] as host data (absent: NULL or beyond
 * n->n_inputs); in[0] is not read. OP_NEEDS_DATA when the values are not known yet. */
infer_status slice_make_plan(const node *n, const slice_params *p, const tensor *x,
                             const tensor *const *in, slice_plan *pl);

/* The plan as a strided view of a contiguous input of the given dims: the element
 * offset of the first output element and the input stride of every output axis. */
void slice_plan_view(const slice_plan *pl, int rank, const int64_t *dims, int64_t *offset,
                     int64_t *strides);

#endif
