/* elementwise_chain.h: FusedChain (domain "infer", made by the pass fuse-elementwise from
 * chains of elementwise ops): y = step_k(... step_1(in[0], ...) ...), every step a binary
 * op with an input broadcast to in[0]'s shape (or a constant), or a unary one; see
 * kernels/ew_chain_ops.h for the steps. The output has in[0]'s shape and dtype. The CPU
 * reference (ops/elementwise_chain.c) and the GPU (ops/cuda/cuda_ew_chain.c) read these
 * params. */
#ifndef INFER_ELEMENTWISE_CHAIN_H
#define INFER_ELEMENTWISE_CHAIN_H

#include "../kernels/ew_chain_ops.h"
#include "op.h"

typedef struct fused_chain_params {
  int n_steps;
  ewc_step steps[EWC_MAX_STEPS];
  /* an input read through a strided view of its bytes (a Transpose or Slice folded in by
   * fuse-elementwise): element offset and one stride per output dim */
  bool has_view[EWC_MAX_INPUTS];
  int view_rank[EWC_MAX_INPUTS];
  int64_t view_offset[EWC_MAX_INPUTS];
  int64_t view_strides[EWC_MAX_INPUTS][INFER_MAX_RANK];
} fused_chain_params;

/* Attribute layout: "steps" = 3 ints per step (op, operand, swap), "params" = 2 floats per
 * step (p0, p1), "views" (optional) = per viewed input: input index, rank, offset, then
 * rank strides. */

/* Input k's element strides over the output's dims (rank out->rank) and its element
 * offset: its view, or its numpy broadcast (0 on broadcast dims). */
void ewc_input_strides(const fused_chain_params *p, int k, const tensor *in, const tensor *out,
                       int64_t *strides, int64_t *offset);

/* One step in float, as the GPU kernel computes it (NaN kept by Max, Min, Relu, Clip). */
float ewc_apply(const ewc_step *s, float acc, float operand);

#endif
