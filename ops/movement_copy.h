/* movement_copy.h: dtype-agnostic copies shared by the shape and movement ops.
 *
 * Every data-movement op here (Transpose, Slice, Expand, Tile, ...) is a strided
 * view of its input written out in C order; one routine does that for all of them,
 * by element size only, so every dtype (bool, float16, int8..uint64, ...) works. */
#ifndef INFER_MOVEMENT_COPY_H
#define INFER_MOVEMENT_COPY_H

#include <stddef.h>
#include <stdint.h>

#include "op.h"

/* Tile views a rank-r tensor as 2r dims, so views may be twice the tensor rank. */
#define MOVEMENT_MAX_VIEW_RANK (2 * INFER_MAX_RANK)

/* Writes the view of `src` with `dims` and element `strides` (0 = broadcast,
 * negative = reversed) contiguously into dst. `src` points at the view's first
 * element; es is the element size in bytes (1, 2, 4, 8 or any other). The caller
 * has checked that every element the view touches lies inside the source. */
void movement_copy_view(void *dst, const void *src, size_t es, int rank, const int64_t *dims,
                        const int64_t *strides);

/* Element size of t's dtype, or INFER_ERR_UNSUPPORTED naming op and dtype
 * (string and undefined dtypes have no fixed size). */
infer_status movement_elem_size(const char *op, infer_dtype dt, size_t *es);

/* Copies all bytes of `in` to `out` (same byte count), for the ops that only
 * relabel the shape (Reshape, Squeeze, Identity, ...). */
infer_status movement_copy_all(const tensor *in, tensor *out);

/* Copies the shape (rank and dims) and dtype of `in` into `out`. */
void movement_same_shape(const tensor *in, tensor *out);

#endif
