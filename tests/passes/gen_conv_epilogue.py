#!/usr/bin/env python3
"""Makes tests/passes/conv_epilogue.onnx: the chains pass fuse-conv-epilogue fuses
(Conv + Relu; Conv without bias + residual Add + Relu; grouped strided Conv + Clip
0..6; Conv + Add with the residual on the left), and around them what
to-channels-last converts or leaves NCHW (a per-channel Mul by a constant, MaxPool,
Concat on channels, GlobalAveragePool, Flatten), on a [2, 3, 9, 9] input; plus the
input and the output computed with PyTorch in float64.

    /usr/bin/python3 tests/passes/gen_conv_epilogue.py   (python3-onnx, python3-torch)
"""
import os

import numpy as np
import onnx
import torch
import torch.nn.functional as F
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(5)
f32 = np.float32
x = rng.normal(0, 1, (2, 3, 9, 9)).astype(f32)
w = {
    "w1": rng.normal(0, 0.3, (8, 3, 3, 3)).astype(f32), "b1": rng.normal(0, 0.1, (8,)).astype(f32),
    "w2": rng.normal(0, 0.2, (8, 8, 3, 3)).astype(f32),
    "w3": rng.normal(0, 0.3, (8, 4, 3, 3)).astype(f32), "b3": rng.normal(0, 0.1, (8,)).astype(f32),
    "w4": rng.normal(0, 0.3, (8, 8, 1, 1)).astype(f32), "b4": rng.normal(0, 0.1, (8,)).astype(f32),
    "scale": rng.uniform(0.5, 1.5, (8, 1, 1)).astype(f32),
    "lo": np.array(0, f32), "hi": np.array(6, f32),
}
N = helper.make_node
nodes = [
    N("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]), N("Relu", ["c1"], ["r1"]),
    N("Conv", ["r1", "w2"], ["c2"], pads=[1, 1, 1, 1]), N("Add", ["c2", "r1"], ["a2"]),
    N("Relu", ["a2"], ["r2"]),
    N("Conv", ["r2", "w3", "b3"], ["c3"], pads=[1, 1, 1, 1], strides=[2, 2], group=2),
    N("Clip", ["c3", "lo", "hi"], ["k3"]),
    N("Mul", ["k3", "scale"], ["m3"]),
    N("Conv", ["m3", "w4", "b4"], ["c4"]), N("Add", ["m3", "c4"], ["a4"]),
    N("MaxPool", ["r2"], ["p"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]),
    N("Concat", ["a4", "p"], ["cat"], axis=1),
    N("GlobalAveragePool", ["cat"], ["g"]), N("Flatten", ["g"], ["y"]),
]
graph = helper.make_graph(nodes, "conv_epilogue",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 9, 9])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 16])],
                          [numpy_helper.from_array(v, k) for k, v in w.items()])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
model.ir_version = 8
onnx.checker.check_model(model)
onnx.save(model, os.path.join(HERE, "conv_epilogue.onnx"))

t = {k: torch.tensor(v, dtype=torch.float64) for k, v in w.items()}
xt = torch.tensor(x, dtype=torch.float64)
r1 = F.relu(F.conv2d(xt, t["w1"], t["b1"], padding=1))
r2 = F.relu(F.conv2d(r1, t["w2"], padding=1) + r1)
k3 = torch.clamp(F.conv2d(r2, t["w3"], t["b3"], padding=1, stride=2, groups=2), 0, 6)
m3 = k3 * t["scale"]
a4 = m3 + F.conv2d(m3, t["w4"], t["b4"])
p = F.max_pool2d(r2, 3, 2, 1)
y = torch.cat([a4, p], 1).mean((2, 3))
np.save(os.path.join(HERE, "conv_epilogue_input.npy"), x)
np.save(os.path.join(HERE, "conv_epilogue_output.npy"), y.numpy().astype(f32))
print("wrote conv_epilogue.onnx")
