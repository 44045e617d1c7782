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
} fused_chain_params;

/* Attribute layout: "steps" = 3 ints per step (op, operand, swap), "params" = 2 floats per
 * step (p0, p1). */

/* One step in float, as the GPU kernel computes it (NaN kept by Max, Min, Relu, Clip). */
float ewc_apply(const ewc_step *s, float acc, float operand);

#endif
