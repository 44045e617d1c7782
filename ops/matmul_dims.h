/* matmul_dims.h: MatMul's shape rules (numpy matmul: 1-D operands, broadcast batch
 * dims), shared by MatMul (ops/matmul.c) and the quantized matrix products
 * MatMulInteger and QLinearMatMul (ops/quant_matmul.c). */
#ifndef INFER_MATMUL_DIMS_H
#define INFER_MATMUL_DIMS_H

#include "op.h"

typedef struct mm_dims {
  int64_t m, n, k, batch;
  int brank; /* rank of the broadcast batch shape */
  int64_t bdims[INFER_MAX_RANK];
  int64_t a_bstride[INFER_MAX_RANK], b_bstride[INFER_MAX_RANK]; /* in matrices */
  bool a_batched, b_batched; /* operand has more than one matrix */
} mm_dims;

/* Sizes of A x B from their shapes (dtypes are the caller's); `op` names the op in
 * messages. The output shape is bdims[0..brank), then m (A of rank > 1), then n
 * (B of rank > 1). */
infer_status matmul_dims_make(const char *op, const tensor *a, const tensor *b, mm_dims *d);

/* Offsets (in matrices) of batch entry `i` in A and B. */
void mm_batch_offsets(const mm_dims *d, int64_t i, int64_t *ao, int64_t *bo);

#endif
