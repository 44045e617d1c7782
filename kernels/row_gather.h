/* row_gather.h: RowGather on the GPU (ops/row_gather.h says what it computes): every
 * output row gathers from the same row of the inputs through one device table. */
#ifndef INFER_K_ROW_GATHER_H
#define INFER_K_ROW_GATHER_H

#include <cuda_runtime.h>
#include <stdint.h>

#define K_ROW_GATHER_MAX 8

#ifdef __cplusplus
extern "C" {
#endif

typedef struct k_row_gather {
  const void *in[K_ROW_GATHER_MAX];
  void *out[K_ROW_GATHER_MAX];
  int64_t in_row[K_ROW_GATHER_MAX];  /* elements per row of each input */
  int64_t out_row[K_ROW_GATHER_MAX]; /* ... and of each output */
  int64_t offset[K_ROW_GATHER_MAX];  /* each output's first table entry */
  int n_in, n_out;
  int64_t rows;
  /* the outputs' rows one after the other: input << 24 | column (column < 2^24) */
  const uint32_t *table;
  int64_t n_table;
} k_row_gather;

/* Enqueues the gather; elem_size 1, 2, 4 or 8. cudaErrorInvalidValue (nothing
 * launched) for other sizes or more than K_ROW_GATHER_MAX inputs or outputs. */
cudaError_t k_row_gather_run(const k_row_gather *a, int elem_size, int sm_count,
                             cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif
