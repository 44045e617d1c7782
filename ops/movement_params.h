/* movement_params.h: the parsed attributes (n->params) of the data-movement family
 * (ops/movement*.c), read by the CPU ops and by their GPU side (ops/cuda/), and what
 * both derive from them and the input's shape. Defaults live in the parse functions.
 * Slice, Pad and Resize have their own headers (slice_plan.h, pad_plan.h,
 * resize_plan.h); Tile has no attributes. */
#ifndef INFER_MOVEMENT_PARAMS_H
#define INFER_MOVEMENT_PARAMS_H

#include "op.h"

/* Transpose: perm as written; n = -1 when absent (the dims reversed). */
typedef struct transpose_params {
  int n;
  int64_t perm[INFER_MAX_RANK];
} transpose_params;

/* The permutation for an input of rank `rank`: out dim i is in dim perm[i].
 * INVALID_MODEL when perm does not fit the rank or is not a permutation. */
infer_status transpose_resolve_perm(const transpose_params *p, int rank, int *perm);

/* Concat: axis (required from opset 4; 1 before), not yet normalized. */
typedef struct concat_params {
  int64_t axis;
} concat_params;

/* Split: axis 0 by default; the part sizes from the `split` attribute (n_split >= 0,
 * opsets 2-12; as many as outputs), else the `split` input, else num_outputs (18+;
 * 0 when absent, else equal to the output count: ceil-sized parts), else equal
 * parts. */
typedef struct split_params {
  int64_t axis;
  int64_t num_outputs; /* 0: not given */
  int n_split;         /* -1: no split attribute */
  int64_t split[];
} split_params;

/* Gather and GatherElements: axis 0 by default, not yet normalized. */
typedef struct gather_params {
  int64_t axis;
} gather_params;

/* Trilu: upper 1 (default) keeps the upper triangle, 0 the lower. */
typedef struct trilu_params {
  int64_t upper;
} trilu_params;

#endif
