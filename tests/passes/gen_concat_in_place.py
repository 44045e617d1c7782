#!/usr/bin/env python3
"""Makes tests/passes/concat_in_place.onnx: Concats of convolution outputs, which the
CUDA backend lets each convolution write into its slice of the Concat's output
(engine/cuda/cuda_concat_in_place.c), against numpy in float64.

- y1 = 0.5 * Concat(ReLU(1x1 conv, 16 -> 24), ReLU(3x3 conv, 16 -> 16), MaxPool 3x3 of x1):
  two parts in place (pw-stream / cuBLASLt / cudnn-graph), the pooled one copied;
- y2 = 0.5 * Concat(ReLU(3x3 conv, 3 -> 8), ReLU6(5x5 conv, 3 -> 16)) on 3 channels
  (stem-mma's, or cudnn-graph's).
The Muls keep the Concats channels-last (a node writing a graph output stays NCHW).

    /usr/bin/python3 tests/passes/gen_concat_in_place.py   (python3-onnx, numpy)
"""
import os

import numpy as np
from onnx import TensorProto, checker, helper, numpy_helper, save

HERE = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(41)
f32 = np.float32


def conv2d(x, w, b, pad):
    n, c, h, wd = x.shape
    k, _, r, s = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh, ow = h + 2 * pad - r + 1, wd + 2 * pad - s + 1
    y = np.zeros((n, k, oh, ow))
    for i in range(r):
        for j in range(s):
            y += np.einsum("nchw,kc->nkhw", xp[:, :, i:i + oh, j:j + ow], w[:, :, i, j])
    return y + b[None, :, None, None]


def maxpool3(x):
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)), constant_values=-np.inf)
    h, w = x.shape[2:]
    return np.max([xp[:, :, i:i + h, j:j + w] for i in range(3) for j in range(3)], axis=0)


r = lambda s, shape: rng.normal(0, s, shape).astype(f32).astype(np.float64)  # float32 values
x1 = r(1, (2, 16, 12, 12))
wa, ba = r(0.25, (24, 16, 1, 1)), r(0.1, (24,))
wb, bb = r(0.1, (16, 16, 3, 3)), r(0.1, (16,))
y1 = 0.5 * np.concatenate([np.maximum(conv2d(x1, wa, ba, 0), 0),
                           np.maximum(conv2d(x1, wb, bb, 1), 0), maxpool3(x1)], axis=1)
x2 = r(1, (2, 3, 20, 20))
wc, bc = r(0.3, (8, 3, 3, 3)), r(0.1, (8,))
wd, bd = r(0.2, (16, 3, 5, 5)), r(0.1, (16,))
y2 = 0.5 * np.concatenate([np.maximum(conv2d(x2, wc, bc, 1), 0),
                           np.clip(conv2d(x2, wd, bd, 2), 0, 6)], axis=1)
inits = [numpy_helper.from_array(a.astype(f32), n) for n, a in
         (("wa", wa), ("ba", ba), ("wb", wb), ("bb", bb), ("wc", wc), ("bc", bc), ("wd", wd),
          ("bd", bd))]
inits += [numpy_helper.from_array(np.array(v, f32), n) for n, v in
          (("half", 0.5), ("lo", 0.0), ("hi", 6.0))]
nodes = [helper.make_node("Conv", ["x1", "wa", "ba"], ["ca"], kernel_shape=[1, 1]),
         helper.make_node("Relu", ["ca"], ["ra"]),
         helper.make_node("Conv", ["x1", "wb", "bb"], ["cb"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
         helper.make_node("Relu", ["cb"], ["rb"]),
         helper.make_node("MaxPool", ["x1"], ["pm"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
         helper.make_node("Concat", ["ra", "rb", "pm"], ["j1"], axis=1),
         helper.make_node("Mul", ["j1", "half"], ["y1"]),
         helper.make_node("Conv", ["x2", "wc", "bc"], ["cc"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
         helper.make_node("Relu", ["cc"], ["rc"]),
         helper.make_node("Conv", ["x2", "wd", "bd"], ["cd"], kernel_shape=[5, 5], pads=[2, 2, 2, 2]),
         helper.make_node("Clip", ["cd", "lo", "hi"], ["rd"]),
         helper.make_node("Concat", ["rc", "rd"], ["j2"], axis=1),
         helper.make_node("Mul", ["j2", "half"], ["y2"])]
ins = [helper.make_tensor_value_info(n, TensorProto.FLOAT, a.shape) for n, a in (("x1", x1), ("x2", x2))]
outs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, a.shape) for n, a in (("y1", y1), ("y2", y2))]
model = helper.make_model(helper.make_graph(nodes, "concat_in_place", ins, outs, inits),
                          opset_imports=[helper.make_opsetid("", 17)])
model.ir_version = 8
checker.check_model(model)
save(model, os.path.join(HERE, "concat_in_place.onnx"))
for n, a in (("x1", x1), ("x2", x2), ("y1", y1), ("y2", y2)):
    np.save(os.path.join(HERE, "concat_in_place_%s.npy" % n), a.astype(f32))
print("wrote concat_in_place.onnx")
