/* cuda_movement_util.h: what the GPU side of the shape and movement families shares
 * (ops/cuda/cuda_shape_*.c, cuda_movement*.c, cuda_pad.c, cuda_resize.c: one file per
 * CPU file ops/shape_*.c, movement*.c, pad.c, resize.c).
 *
 * Everything moves elements by size, so every fixed-size dtype works, in fp32 and
 * fp16 storage alike (values that come from attributes or constants are converted
 * to the storage dtype at prepare time). Shapes are static on the GPU: what the
 * CPU computes per run from shapes and constant inputs (Slice starts, Pad pads,
 * Resize scales and filter taps, Split sizes) is computed once in prepare, from the
 * node's params (../movement_params.h, ../shape_params.h, ../slice_plan.h,
 * ../pad_plan.h, ../resize_plan.h) and the host copies of the constants, by the CPU
 * op's own functions where it has them; a non-constant input of that kind is
 * INFER_ERR_UNSUPPORTED. */
#ifndef INFER_CUDA_MOVEMENT_UTIL_H
#define INFER_CUDA_MOVEMENT_UTIL_H

#include <stdlib.h>

#include "../../core/cuda_check.h"
#include "../cuda_op.h"

#define MV_STREAM(x) ((cudaStream_t)(x)->stream)

/* Allocates the zeroed state *s of `bytes` and hands it to *state (the engine frees it). */
#define MV_NEW_STATE(s, bytes)                                                \
  do {                                                                        \
    (s) = calloc(1, (bytes));                                                 \
    if (!(s)) return infer_fail(INFER_ERR_OUT_OF_MEMORY, "out of memory");    \
    *state = (s);                                                             \
  } while (0)

/* The element size of t's dtype; INFER_ERR_UNSUPPORTED naming op when it has none. */
infer_status mv_elem_size(const char *op, const tensor *t, int64_t *es);

/* Element i of host tensor t (its own dtype), converted to dtype `to`, into dst. */
void mv_elem_convert(const tensor *t, int64_t i, infer_dtype to, void *dst);

/* v in dtype `to` into dst. */
void mv_elem_from_f64(infer_dtype to, double v, void *dst);

/* Input i is present (not omitted, not beyond the node's inputs). */
static inline bool mv_input_given(const node *n, const tensor *const *in, int i) {
  return i < n->n_inputs && in[i];
}

/* A device buffer owned by a node's state (released with mv_dev_buf_release). */
typedef struct mv_dev_buf {
  void *p;
  int64_t bytes;
} mv_dev_buf;

void mv_dev_buf_release(void *s);

/* A new device buffer *dev (at least 1 byte) holding the `bytes` of host. */
infer_status mv_upload(const void *host, int64_t bytes, void **dev);

/* a and b have a fixed-size dtype and the same byte count. */
infer_status mv_same_bytes_check(const node *n, const tensor *a, const tensor *b);

/* Enqueues the copy of all bytes of a into b (nothing when they alias). */
infer_status mv_copy_bytes(const cuda_exec *x, const tensor *a, tensor *b);

/* The state of the ops that keep one normalized axis (Concat, Gather, GatherElements). */
typedef struct mv_axis_state {
  int axis;
} mv_axis_state;

/* The ops that only relabel the shape (Reshape, Flatten, Squeeze, Unsqueeze,
 * Identity): a device-to-device copy; aliasing the buffers is the planner's business. */
infer_status mv_view_prepare(const cuda_exec *x, const node *n, const void *params,
                             const tensor *const *in, const tensor *const *host_in,
                             tensor *const *out, void **state, int64_t *ws_bytes);
infer_status mv_view_run(const cuda_exec *x, const node *n, const void *params,
                         const void *state, const tensor *const *in, tensor *const *out);

/* Expand and Tile, broadcast views of the input: checks a fixed-size dtype, the same
 * dtype out and at least the input's rank. */
infer_status mv_broadcast_view_prepare(const cuda_exec *x, const node *n, const void *params,
                                       const tensor *const *in, const tensor *const *host_in,
                                       tensor *const *out, void **state, int64_t *ws_bytes);

#endif
