#!/usr/bin/env python3
"""Makes tests/passes/fuse_chains.onnx: the three chains pass_fuse_chains replaces,
as PyTorch's exporter writes them (SiLU as x * sigmoid(x), exact GELU with Erf,
LayerNorm from ReduceMean/Sub/Pow/Add/Sqrt/Div/Mul/Add), one after another on a
[2, 5, 8] input, plus the input and the output computed here with NumPy.

    python3 tests/passes/gen_fuse.py      (python3-onnx, python3-numpy)
"""
import math
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(11)
x = rng.normal(0, 1, (2, 5, 8)).astype(np.float32)
gamma = rng.uniform(0.5, 1.5, (8,)).astype(np.float32)
beta = rng.normal(0, 0.1, (8,)).astype(np.float32)
consts = {"sqrt2": np.array(math.sqrt(2), np.float32), "one": np.array(1, np.float32),
          "half": np.array(0.5, np.float32), "two": np.array(2, np.float32),
          "eps": np.array(1e-5, np.float32), "gamma": gamma, "beta": beta}
N = helper.make_node
nodes = [
    N("Sigmoid", ["x"], ["sig"]), N("Mul", ["x", "sig"], ["silu"]),
    N("Div", ["silu", "sqrt2"], ["d"]), N("Erf", ["d"], ["e"]), N("Add", ["e", "one"], ["a"]),
    N("Mul", ["silu", "a"], ["m"]), N("Mul", ["m", "half"], ["gelu"]),
    N("ReduceMean", ["gelu"], ["mean"], axes=[-1]), N("Sub", ["gelu", "mean"], ["c"]),
    N("Pow", ["c", "two"], ["sq"]), N("ReduceMean", ["sq"], ["var"], axes=[-1]),
    N("Add", ["var", "eps"], ["ve"]), N("Sqrt", ["ve"], ["sd"]), N("Div", ["c", "sd"], ["n"]),
    N("Mul", ["n", "gamma"], ["g"]), N("Add", ["g", "beta"], ["y"]),
]
graph = helper.make_graph(nodes, "fuse_chains",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 5, 8])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 5, 8])],
                          [numpy_helper.from_array(v, k) for k, v in consts.items()])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
model.ir_version = 8
onnx.checker.check_model(model)
onnx.save(model, os.path.join(HERE, "fuse_chains.onnx"))

xd = x.astype(np.float64)
silu = xd / (1 + np.exp(-xd))
gelu = 0.5 * silu * (1 + np.vectorize(math.erf)(silu / math.sqrt(2)))
mean = gelu.mean(-1, keepdims=True)
var = ((gelu - mean) ** 2).mean(-1, keepdims=True)
y = (gelu - mean) / np.sqrt(var + 1e-5) * gamma + beta
np.save(os.path.join(HERE, "fuse_chains_input.npy"), x)
np.save(os.path.join(HERE, "fuse_chains_output.npy"), y.astype(np.float32))
print("wrote fuse_chains.onnx")
