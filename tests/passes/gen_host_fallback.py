#!/usr/bin/python3
"""Makes tests/passes/host_fallback.onnx: ops the GPU has no kernel for (CumSum, TopK,
and control flow: If, Scan, Loop) between ops it has (Sub, Relu, Mul, Add), for the host
fallback (ops/cuda/cuda_host_fallback.c), against numpy in float64:

  c = CumSum(Relu(x - 1), axis 3) * 0.5      (a float output: float16 storage widened
                                              and narrowed around the CPU op in fp16)
  v, i = TopK(x, k 3, axis 3)                (a float and an int64 output)
  f = If(sum(x) > 0) then x + x else x - 1   (a condition known only at run, branches
                                              of one shape reading x: derived at build)
  sums, runs = Scan(zeros, x, axis 3)        (state + x[..., t]: the sums over axis 3
                                              and, stacked on axis 3, the running sums)
  y, ys = Loop(3 trips, x) y' = y + 0.5      (a constant trip count: ys is [3, ...x])

The control-flow nodes' output shapes are derived at build (ops/control_shapes.c), so a
CUDA engine plans them and runs the nodes on the host, their subgraphs reading the
main graph's values in its dtypes (float16 storage widened). x holds a permutation of 0,
0.5, ..., 3.5 in each row, so every value, sum and rank is exact in float16 and TopK has
no ties.

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
F = TensorProto.FLOAT
vi = helper.make_tensor_value_info
branch_then = helper.make_graph([helper.make_node("Add", ["x", "x"], ["ft"])], "then", [],
                                [vi("ft", F, x.shape)])
branch_else = helper.make_graph([helper.make_node("Sub", ["x", "one"], ["fe"])], "else", [],
                                [vi("fe", F, x.shape)])
scan_body = helper.make_graph([helper.make_node("Add", ["s_in", "x_t"], ["s_out"]),
                               helper.make_node("Identity", ["s_out"], ["cs_t"])], "scan_body",
                              [vi("s_in", F, [n, c, h]), vi("x_t", F, [n, c, h])],
                              [vi("s_out", F, [n, c, h]), vi("cs_t", F, [n, c, h])])
loop_body = helper.make_graph([helper.make_node("Identity", ["cond_in"], ["cond_out"]),
                               helper.make_node("Add", ["y_in", "half"], ["y_out"]),
                               helper.make_node("Identity", ["y_out"], ["y_t"])], "loop_body",
                              [vi("it", TensorProto.INT64, []), vi("cond_in", TensorProto.BOOL, []),
                               vi("y_in", F, x.shape)],
                              [vi("cond_out", TensorProto.BOOL, []), vi("y_out", F, x.shape),
                               vi("y_t", F, x.shape)])
inits += [numpy_helper.from_array(np.array(0, f32), "zero"),
          numpy_helper.from_array(np.zeros((n, c, h), f32), "s0"),
          numpy_helper.from_array(np.array(3, np.int64), "trips")]
nodes += [helper.make_node("ReduceSum", ["x"], ["sx"], keepdims=0),
          helper.make_node("Greater", ["sx", "zero"], ["pos"]),
          helper.make_node("If", ["pos"], ["f"], then_branch=branch_then, else_branch=branch_else),
          helper.make_node("Scan", ["s0", "x"], ["sums", "runs"], body=scan_body, num_scan_inputs=1,
                           scan_input_axes=[3], scan_output_axes=[3]),
          helper.make_node("Loop", ["trips", "", "x"], ["y", "ys"], body=loop_body)]
f_ref = x + x  # sum(x) > 0
s_ref = x.sum(axis=3)
cs_ref = np.cumsum(x, axis=3)
y_ref = x + 1.5
ys_ref = np.stack([x + 0.5, x + 1.0, x + 1.5])
graph = helper.make_graph(
    nodes, "host_fallback", [vi("x", F, x.shape)],
    [vi("c", F, cum.shape), vi("v", F, vals.shape), vi("i", TensorProto.INT64, order.shape),
     vi("f", F, f_ref.shape), vi("sums", F, s_ref.shape), vi("runs", F, cs_ref.shape),
     vi("y", F, y_ref.shape), vi("ys", F, ys_ref.shape)], inits)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
model.ir_version = 8
checker.check_model(model)
save(model, os.path.join(HERE, "host_fallback.onnx"))
for name, a in (("x", x.astype(f32)), ("c", cum.astype(f32)), ("v", vals.astype(f32)),
                ("i", order.astype(np.int64)), ("f", f_ref.astype(f32)), ("sums", s_ref.astype(f32)),
                ("runs", cs_ref.astype(f32)), ("y", y_ref.astype(f32)), ("ys", ys_ref.astype(f32))):
    np.save(os.path.join(HERE, "host_fallback_%s.npy" % name), a)
print("wrote host_fallback.onnx")
