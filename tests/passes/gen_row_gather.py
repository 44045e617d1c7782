"""gen_row_gather.py: tests/passes/row_gather.onnx and its numpy reference.

ShuffleNetV2-like units on 1x1 convolutions (numpy computes them): Concat -> channel
shuffle (Reshape, Transpose, Reshape) -> two halves by Slice, a Split variant, a
shuffle of three groups with a step-2 Slice, and a shuffled graph output. Written as
the GPU build sees them (constant shapes and slice bounds). On channels-last data
(forced on the CPU) fuse-row-gather turns each unit's movement nodes into one RowGather;
on NCHW (the CPU's default) nothing fuses, the rows being too long."""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(7)
N, C, H, W = 2, 24, 5, 6
inits, nodes = [], []


def const(name, arr):
    inits.append(numpy_helper.from_array(np.asarray(arr), name))
    return name


def conv(x, xv, cin, cout, name):
    w = rng.standard_normal((cout, cin, 1, 1)).astype(np.float32) / np.sqrt(cin)
    nodes.append(helper.make_node("Conv", [x, const(name + "_w", w)], [name + "_c"]))
    nodes.append(helper.make_node("Relu", [name + "_c"], [name]))
    return name, np.maximum(np.einsum("nchw,oc->nohw", xv, w[:, :, 0, 0]), 0)


def shuffle(x, xv, groups, name):
    c = xv.shape[1]
    nodes.append(helper.make_node("Reshape", [x, const(name + "_s5", np.array([N, groups, c // groups, H, W], np.int64))], [name + "_r5"]))
    nodes.append(helper.make_node("Transpose", [name + "_r5"], [name + "_t"], perm=[0, 2, 1, 3, 4]))
    nodes.append(helper.make_node("Reshape", [name + "_t", const(name + "_s4", np.array([N, c, H, W], np.int64))], [name]))
    return name, xv.reshape(N, groups, c // groups, H, W).transpose(0, 2, 1, 3, 4).reshape(N, c, H, W)


def slice_c(x, xv, start, end, step, name):
    nodes.append(helper.make_node("Slice", [x, const(name + "_b", np.array([start], np.int64)),
                                            const(name + "_e", np.array([end], np.int64)),
                                            const(name + "_a", np.array([1], np.int64)),
                                            const(name + "_st", np.array([step], np.int64))], [name]))
    return name, xv[:, start:end:step]


x = rng.standard_normal((N, C, H, W)).astype(np.float32)
a, av = conv("x", x, C, C, "a")
# unit 1: Concat, shuffle, Slice halves
b, bv = conv(a, av, C, C // 2, "b")
h, hv = slice_c(a, av, 0, C // 2, 1, "h")
nodes.append(helper.make_node("Concat", [h, b], ["cat1"], axis=1))
s1, s1v = shuffle("cat1", np.concatenate([hv, bv], 1), 2, "shuf1")
x1, x1v = slice_c(s1, s1v, 0, C // 2, 1, "u1_lo")
x2, x2v = slice_c(s1, s1v, C // 2, C, 1, "u1_hi")
# unit 2: the Split form
c2, c2v = conv(x2, x2v, C // 2, C // 2, "c2")
nodes.append(helper.make_node("Concat", [x1, c2], ["cat2"], axis=1))
s2, s2v = shuffle("cat2", np.concatenate([x1v, c2v], 1), 2, "shuf2")
nodes.append(helper.make_node("Split", [s2, const("split2", np.array([C // 2, C // 2], np.int64))], ["y1", "y2"], axis=1))
y1v, y2v = s2v[:, : C // 2], s2v[:, C // 2:]
# unit 3: three groups, a step-2 Slice and a graph output of the shuffle itself
d3, d3v = conv("y2", y2v, C // 2, C // 2, "d3")
e3, e3v = conv("y1", y1v, C // 2, C // 2, "e3")
nodes.append(helper.make_node("Concat", ["y1", d3, e3], ["cat3"], axis=1))
s3, s3v = shuffle("cat3", np.concatenate([y1v, d3v, e3v], 1), 3, "shuf3")
nodes.append(helper.make_node("Identity", [s3], ["out_shuffled"]))
z, zv = slice_c(s3, s3v, 1, 3 * C // 2, 2, "z")
f, fv = conv(z, zv, zv.shape[1], 8, "out_conv")
nodes.append(helper.make_node("Identity", [f], ["out_conv_y"]))

graph = helper.make_graph(
    nodes, "row_gather", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [N, C, H, W])],
    [helper.make_tensor_value_info("out_shuffled", TensorProto.FLOAT, list(s3v.shape)),
     helper.make_tensor_value_info("out_conv_y", TensorProto.FLOAT, list(fv.shape))], inits)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
model.ir_version = 7
onnx.checker.check_model(model)
out = sys.argv[1] if len(sys.argv) > 1 else "tests/passes/row_gather"
onnx.save(model, out + ".onnx")
np.save(out + "_input.npy", x)
np.save(out + "_output_0.npy", s3v.astype(np.float32))
np.save(out + "_output_1.npy", fv.astype(np.float32))
