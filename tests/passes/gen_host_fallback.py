#!/usr/bin/python3
"""Makes tests/passes/host_fallback.onnx: ops the GPU has no kernel for (CumSum, TopK)
between ops it has (Sub, Relu, Mul), for config cuda.host_fallback=1
(ops/cuda/cuda_host_fallback.c), against numpy in float64:

  c = CumSum(Relu(x - 1), axis 3) * 0.5      (a float output: float16 storage widened
                                              and narrowed around the CPU op in fp16)
  v, i = TopK(x, k 3, axis 3)                (a float and an int64 output)

x holds a permutation of 0, 0.5, ..., 3.5 in each row, so every value, sum and rank is
exact in float16 and TopK has no ties.

    /usr/bin/python3 tests/passes/gen_host_fallback.py   (python3-onnx, numpy)
"""
import os

import numpy as np
from onnx import TensorProto, checker, helper, numpy_helper, save

HERE = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(2612)
n, c, h, w = 2, 3, 4, 8
x = np.stack([rng.permutation(w) * 0.5 for _ in range(n * c * h)]).reshape(n, c, h, w)
cum = np.cumsum(np.maximum(x - 1, 0), axis=3) * 0.5
order = np.argsort(-x, axis=3, kind="stable")[..., :3]
vals = np.take_along_axis(x, order, axis=3)

f32 = np.float32
inits = [numpy_helper.from_array(np.array(1, f32), "one"),
         numpy_helper.from_array(np.array(0.5, f32), "half"),
         numpy_helper.from_array(np.array(3, np.int32), "axis"),
         numpy_helper.from_array(np.array([3], np.int64), "k")]
nodes = [helper.make_node("Sub", ["x", "one"], ["s"]),
         helper.make_node("Relu", ["s"], ["r"]),
         helper.make_node("CumSum", ["r", "axis"], ["cs"]),
         helper.make_node("Mul", ["cs", "half"], ["c"]),
         helper.make_node("TopK", ["x", "k"], ["v", "i"], axis=3)]
graph = helper.make_graph(
    nodes, "host_fallback", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)],
    [helper.make_tensor_value_info("c", TensorProto.FLOAT, cum.shape),
     helper.make_tensor_value_info("v", TensorProto.FLOAT, vals.shape),
     helper.make_tensor_value_info("i", TensorProto.INT64, order.shape)], inits)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
model.ir_version = 8
checker.check_model(model)
save(model, os.path.join(HERE, "host_fallback.onnx"))
for name, a in (("x", x.astype(f32)), ("c", cum.astype(f32)), ("v", vals.astype(f32)),
                ("i", order.astype(np.int64))):
    np.save(os.path.join(HERE, "host_fallback_%s.npy" % name), a)
print("wrote host_fallback.onnx")
