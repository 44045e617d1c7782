/* activation_params.h: the parsed attributes (n->params) of the activation family
 * (ops/activation_*.c), read by the CPU ops and by their GPU side
 * (ops/cuda/cuda_elementwise.c). The pointwise activations with attributes
 * (LeakyRelu, HardSigmoid, Elu, Selu, Celu, ThresholdedRelu, Swish, Shrink, Gelu) and
 * SwiGLU use ew_unary_params; their defaults are in their parse functions
 * (activation_unary.c, activation_glu.c). Relu, Sigmoid, Tanh, ... and PRelu have none. */
#ifndef INFER_ACTIVATION_PARAMS_H
#define INFER_ACTIVATION_PARAMS_H

#include "elementwise_params.h"

/* Clip opsets 6-10: the bounds as attributes, min = -FLT_MAX and max = FLT_MAX when
 * absent. Opset 11+ takes them as inputs and has no params. */
typedef struct clip6_params {
  float lo, hi;
} clip6_params;

#endif
