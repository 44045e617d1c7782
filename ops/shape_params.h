/* shape_params.h: the parsed attributes (n->params) of the shape family
 * (ops/shape_*.c), read by the CPU ops and by their GPU side (ops/cuda/), and what
 * both derive from them. Defaults live in the parse functions. Size, Identity,
 * Expand and Range have no attributes; Dropout's parse only checks its own. */
#ifndef INFER_SHAPE_PARAMS_H
#define INFER_SHAPE_PARAMS_H

#include "op.h"

/* Shape (start/end since 15): start 0; end the rank when absent (has_end false). */
typedef struct shape_params {
  int64_t start, end;
  bool has_end;
} shape_params;

/* The dims [*s, *e) of a rank-`rank` input that Shape returns: negative values
 * count from the back, both ends clamp into [0, rank], and *e >= *s. */
void shape_range(const shape_params *p, int rank, int64_t *s, int64_t *e);

/* Constant: which one of its value attributes the node has. */
typedef enum constant_kind {
  CONSTANT_TENSOR,
  CONSTANT_FLOAT,
  CONSTANT_FLOATS,
  CONSTANT_INT,
  CONSTANT_INTS
} constant_kind;

typedef struct constant_params {
  constant_kind kind;
} constant_params;

/* The constant's value: *shape gets its dtype, rank and dims, *data its bytes in
 * that dtype (pointing into n's attribute: do not free). */
infer_status constant_source(const node *n, const constant_params *p, tensor *shape,
                             const void **data);

/* ConstantOfShape: the fill element (attribute `value`; float32 0 when absent). */
typedef struct cos_params {
  infer_dtype dtype;
  uint8_t value[8]; /* the element's bytes */
} cos_params;

/* Reshape: allowzero (14+) 0 or 1, 0 by default. */
typedef struct reshape_params {
  int64_t allowzero;
} reshape_params;

/* Flatten: axis 1 by default (negative since 11), not yet normalized. */
typedef struct flatten_params {
  int64_t axis;
} flatten_params;

/* Squeeze / Unsqueeze before opset 13: the `axes` attribute; n = -1 when absent
 * (from 13 the axes are an input). */
typedef struct axes_params {
  int n;
  int64_t axes[INFER_MAX_RANK];
} axes_params;

/* Dropout 12+ in training mode drops nothing when its ratio is exactly 0 (scale 1, mask
 * all true: torch exports attention dropout of p = 0 that way, Swin's): true when
 * training (a known training_mode input, one bool) is off or ratio (a known ratio
 * input) is 0. ratio NULL: absent (0.5). */
static inline bool dropout_drops_nothing(const tensor *ratio, const tensor *training) {
  if (!training || !*(const uint8_t *)training->data) return true;
  return ratio && ratio->data && dims_count(ratio->rank, ratio->dims) == 1 &&
         dtype_is_float(ratio->dtype) && tensor_get_f64(ratio, 0) == 0.0;
}

#endif
