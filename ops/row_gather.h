/* row_gather.h: RowGather (domain infer), what engine/pass_row_gather.c makes of a group
 * of data-movement nodes that all act within rows (Concat, Transpose, Slice, Split and
 * reshapes over the trailing dims, the leading `prefix` dims left alone): every output
 * row is a gather of the same row of the inputs, by one table built at build time.
 *
 *   Y_j[r, c] = X_{in(t)}[r, col(t)],  t = table[offset_j + c]
 *
 * Inputs and outputs share their first `prefix` dims (the rows) and dtype; a row of X_i
 * is its remaining dims flattened. Attributes: prefix (int), tails (ints: for each
 * output its trailing rank, then those dims), table (ints: the outputs' rows one after
 * the other, each entry input << 32 | column). Parsed by ops/movement_row_gather.c, read
 * by its GPU side (ops/cuda/cuda_movement_row_gather.c). */
#ifndef INFER_ROW_GATHER_H
#define INFER_ROW_GATHER_H

#include "op.h"

#define ROW_GATHER_MAX_INPUTS 8
#define ROW_GATHER_MAX_OUTPUTS 8

typedef struct row_gather_params {
  int prefix, n_outputs;
  int tail_rank[ROW_GATHER_MAX_OUTPUTS];
  int64_t tail[ROW_GATHER_MAX_OUTPUTS][INFER_MAX_RANK];
  int64_t row[ROW_GATHER_MAX_OUTPUTS];    /* elements of an output row */
  int64_t offset[ROW_GATHER_MAX_OUTPUTS]; /* its first table entry */
  int64_t n_table;
  int64_t table[]; /* input << 32 | column */
} row_gather_params;

static inline int row_gather_input(int64_t entry) { return (int)(entry >> 32); }
static inline int64_t row_gather_column(int64_t entry) { return entry & 0xffffffffLL; }

#endif
