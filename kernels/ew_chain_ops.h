/* ew_chain_ops.h: the steps of an elementwise chain (FusedChain, ops/elementwise_chain.h),
 * shared by the CPU reference and the GPU kernel (kernels/ew_chain.cu). Plain C. A chain
 * keeps one accumulator per element, starting from its first input:
 *
 *   acc = in[0];  for each step: acc = op(acc, operand)   (or op(operand, acc): swap)
 *
 * the operand being an input (broadcast to the output) or the step's constant p0; unary
 * steps ignore it and take their parameters from p0, p1. Arithmetic is float32. NaN
 * propagates as in the ONNX ops (Max/Min/Relu/Clip keep it). */
#ifndef INFER_EW_CHAIN_OPS_H
#define INFER_EW_CHAIN_OPS_H

enum ew_chain_op {
  /* binary: acc op operand */
  EWC_ADD = 0, EWC_SUB, EWC_MUL, EWC_DIV, EWC_MAX, EWC_MIN, EWC_POW,
  EWC_BINARY_END,
  /* unary on acc */
  EWC_RELU = 16, EWC_SIGMOID, EWC_TANH, EWC_EXP, EWC_LOG, EWC_SQRT, EWC_ERF, EWC_NEG, EWC_ABS,
  EWC_RECIPROCAL,
  EWC_GELU,        /* erf form */
  EWC_GELU_TANH,
  EWC_SWISH,       /* acc * sigmoid(p0 * acc) */
  EWC_HARD_SWISH,
  EWC_HARD_SIGMOID, /* clamp(p0 * acc + p1, 0, 1) */
  EWC_LEAKY_RELU,  /* acc < 0 ? p0 * acc : acc */
  EWC_CLIP,        /* min(max(acc, p0), p1), NaN kept */
  EWC_SOFTPLUS,
  EWC_OP_END
};

/* operand of a binary step: an input index >= 1, or this */
#define EWC_IMMEDIATE (-1)

#define EWC_MAX_STEPS 16
#define EWC_MAX_INPUTS 8
#define EWC_MAX_RANK 6

typedef struct ewc_step {
  int op;
  int operand; /* input index (>= 1) or EWC_IMMEDIATE */
  int swap;    /* binary: operand op acc */
  float p0, p1;
} ewc_step;

#endif
