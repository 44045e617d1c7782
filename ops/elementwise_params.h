/* elementwise_params.h: the parsed attributes (n->params) of the elementwise family
 * (ops/elementwise_*.c), read by the CPU ops and by their GPU side
 * (ops/cuda/cuda_elementwise.c). Each parse function fills one of these and holds
 * the attribute defaults; an op without attributes has NULL params. */
#ifndef INFER_ELEMENTWISE_PARAMS_H
#define INFER_ELEMENTWISE_PARAMS_H

#include "op.h"

/* Parameterized unary ops: the activations of ops/activation_unary.c (defaults in
 * their parse functions there), SwiGLU's alpha (activation_glu.c) and IsInf's mode.
 * Shrink keeps lambd in alpha and bias in beta; Gelu's mode is 1 for the tanh
 * approximation; IsInf's mode has bit 0 for detect_positive, bit 1 for
 * detect_negative. */
typedef struct ew_unary_params {
  float alpha, beta, gamma;
  int mode;
} ew_unary_params;

/* Mod: fmod = 1 is C's truncated fmod, 0 (default) the floor modulo. */
typedef struct ew_mod_params {
  bool fmod;
} ew_mod_params;

/* BitShift: direction LEFT (left = true) or RIGHT (required). */
typedef struct ew_shift_params {
  bool left;
} ew_shift_params;

/* Cast and BitCast: attribute `to` (required), a dtype of this engine. CastLike has
 * no params (the second input's dtype decides). */
typedef struct cast_params {
  infer_dtype to;
} cast_params;

#endif
