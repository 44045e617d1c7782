/* tensor_proto.h: ONNX TensorProto <-> engine tensor (loaders only: protobuf types
 * do not leave this folder). */
#ifndef INFER_TENSOR_PROTO_H
#define INFER_TENSOR_PROTO_H

#include "../core/mem_budget.h"
#include "../core/tensor.h"
#include "onnx.pb-c.h"

/* Converts tp into out (out->data malloc'ed, owned by the caller). External data
 * is read relative to base_dir (NULL: external data is refused). `what` names
 * the tensor in messages (e.g. "initializer 'conv1.weight'"). The data's bytes are
 * taken from `budget` (NULL: no limit) before they are allocated, and stay taken. */
infer_status tensor_from_proto(const Onnx__TensorProto *tp, const char *base_dir,
                               const char *what, mem_budget *budget, tensor *out);

#endif
