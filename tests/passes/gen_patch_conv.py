#!/usr/bin/python3
"""Writes patch_conv.onnx: non-overlapping convolutions (kernel = stride, no padding) as
ViT's patch embedding (16x16, 3 channels, then flattened and permuted to tokens) and a
ConvNeXt-like 4x4 stem with 8 channels, a bias and ReLU, with its input and a numpy
(float64) reference output. Run: /usr/bin/python3 tests/passes/gen_patch_conv.py"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))


def conv_nonoverlap(x, w, b):
    n, c, h, wd = x.shape
    m, _, k, _ = w.shape
    p = x.reshape(n, c, h // k, k, wd // k, k).transpose(0, 2, 4, 1, 3, 5).reshape(n, h // k, wd // k, -1)
    y = p @ w.reshape(m, -1).T + b
    return y.transpose(0, 3, 1, 2)


def main():
    rng = np.random.default_rng(7)
    x = rng.standard_normal((2, 3, 64, 64))
    w1 = rng.standard_normal((32, 3, 16, 16)) / 16
    b1 = rng.standard_normal(32) * 0.1
    w2 = rng.standard_normal((16, 32, 2, 2)) / 8
    b2 = rng.standard_normal(16) * 0.1
    t = conv_nonoverlap(x, w1, b1)                            # [2, 32, 4, 4]
    y1 = t.reshape(2, 32, 16).transpose(0, 2, 1)              # tokens [2, 16, 32]
    # [2, 16, 2, 2] (32 channels in), flattened to [2, 64]: a Conv writing a graph output
    # itself stays NCHW in to-channels-last, the Flatten keeps this one channels-last
    y2 = np.maximum(conv_nonoverlap(t, w2, b2), 0).reshape(2, -1)
    n = helper.make_node
    f = lambda a: numpy_helper.from_array(np.asarray(a, np.float32 if a.dtype.kind == "f" else a.dtype))
    inits = [f(w1), f(b1), f(w2), f(b2), numpy_helper.from_array(np.array([2, 32, 16], np.int64))]
    for t_, name in zip(inits, ["w1", "b1", "w2", "b2", "tok"]):
        t_.name = name
    nodes = [
        n("Conv", ["X", "w1", "b1"], ["t"], kernel_shape=[16, 16], strides=[16, 16]),
        n("Reshape", ["t", "tok"], ["t1"]),
        n("Transpose", ["t1"], ["Y1"], perm=[0, 2, 1]),
        n("Conv", ["t", "w2", "b2"], ["u"], kernel_shape=[2, 2], strides=[2, 2]),
        n("Relu", ["u"], ["r"]),
        n("Flatten", ["r"], ["Y2"]),
    ]
    vi = helper.make_tensor_value_info
    graph = helper.make_graph(nodes, "patch_conv", [vi("X", TensorProto.FLOAT, list(x.shape))],
                              [vi("Y1", TensorProto.FLOAT, list(y1.shape)),
                               vi("Y2", TensorProto.FLOAT, list(y2.shape))], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)],
                              producer_name="infer tests/passes/gen_patch_conv.py")
    model.ir_version = 7
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(HERE, "patch_conv.onnx"))
    np.save(os.path.join(HERE, "patch_conv_input.npy"), x.astype(np.float32))
    np.save(os.path.join(HERE, "patch_conv_output_0.npy"), y1.astype(np.float32))
    np.save(os.path.join(HERE, "patch_conv_output_1.npy"), y2.astype(np.float32))


if __name__ == "__main__":
    main()
