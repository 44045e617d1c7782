#!/usr/bin/env python3
"""Builds tests/threads/mixed.onnx for tests/test_threads.c: a small graph with many
kinds of op and seeded random weights, so that any cross-talk between contexts
shows in its outputs (light_resnet50's constant weights make its softmax exactly
uniform, whatever the input). Two outputs; input "x" is [batch, 3, 16, 16].

Needs python3-onnx and python3-numpy. Run from anywhere:
    /usr/bin/python3 tests/threads/make_mixed.py
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(6)


def w(name, *shape, scale=0.3):
    return numpy_helper.from_array(rng.normal(0, scale, shape).astype(np.float32), name)


def main():
    inits = [
        w("c1.w", 8, 3, 3, 3), w("c1.b", 8, scale=0.1),
        w("bn.s", 8, scale=0.2), w("bn.b", 8, scale=0.1), w("bn.m", 8, scale=0.1),
        numpy_helper.from_array(rng.uniform(0.5, 1.5, 8).astype(np.float32), "bn.v"),
        w("c2.w", 8, 8, 3, 3, scale=0.2), w("c2.b", 8, scale=0.1),
        w("c3.w", 16, 8, 1, 1), w("c3.b", 16, scale=0.1),
        w("fc.w", 32, 24, scale=0.2), w("fc.b", 24, scale=0.1),
        w("ln.s", 24, scale=0.5), w("ln.b", 24, scale=0.1),
        w("head.w", 24, 10, scale=0.4),
        w("attn.w", 8, 4, scale=0.4),
        numpy_helper.from_array(np.array([0, 8, 16], dtype=np.int64), "shape3"),
    ]
    # shape3 holds 0 (copy the batch dim), 8 channels, 16 = 4x4 positions
    n = helper.make_node
    nodes = [
        n("Conv", ["x", "c1.w", "c1.b"], ["c1"], pads=[1, 1, 1, 1]),
        n("BatchNormalization", ["c1", "bn.s", "bn.b", "bn.m", "bn.v"], ["n1"]),
        n("Relu", ["n1"], ["r1"]),
        n("Conv", ["r1", "c2.w", "c2.b"], ["c2"], pads=[1, 1, 1, 1]),
        n("Add", ["c2", "r1"], ["res"]),
        n("LeakyRelu", ["res"], ["r2"], alpha=0.1),
        n("MaxPool", ["r2"], ["p1"], kernel_shape=[2, 2], strides=[2, 2]),      # 8x8x8
        n("AveragePool", ["p1"], ["p2"], kernel_shape=[2, 2], strides=[2, 2]),  # 8x4x4
        n("Conv", ["p1", "c3.w", "c3.b"], ["c3"]),
        n("Sigmoid", ["c3"], ["s3"]),
        n("Mul", ["c3", "s3"], ["swish"]),                                       # 16x8x8
        n("GlobalAveragePool", ["swish"], ["gap"]),
        n("GlobalMaxPool", ["swish"], ["gmp"]),
        n("Concat", ["gap", "gmp"], ["cat"], axis=1),                           # 32x1x1
        n("Flatten", ["cat"], ["flat"], axis=1),
        n("MatMul", ["flat", "fc.w"], ["fc0"]),
        n("Add", ["fc0", "fc.b"], ["fc"]),
        n("LayerNormalization", ["fc", "ln.s", "ln.b"], ["ln"], axis=-1),
        n("Tanh", ["ln"], ["t"]),
        n("MatMul", ["t", "head.w"], ["logits"]),
        n("Softmax", ["logits"], ["probs"], axis=-1),
        # second output: positions attend over channels
        n("Reshape", ["p2", "shape3"], ["seq"]),                                 # b,8,16
        n("Transpose", ["seq"], ["seqT"], perm=[0, 2, 1]),                       # b,16,8
        n("MatMul", ["seqT", "attn.w"], ["proj"]),                               # b,16,4
        n("ReduceMean", ["proj"], ["pooled"], axes=[1], keepdims=0),             # b,4
        n("Exp", ["pooled"], ["feat"]),
    ]
    for i, nd in enumerate(nodes):
        nd.name = "n%d_%s" % (i, nd.op_type)
    graph = helper.make_graph(
        nodes, "mixed",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 3, 16, 16])],
        [helper.make_tensor_value_info("probs", TensorProto.FLOAT, ["batch", 10]),
         helper.make_tensor_value_info("feat", TensorProto.FLOAT, ["batch", 4])],
        inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                              producer_name="infer tests/threads/make_mixed.py")
    model.ir_version = 8
    onnx.checker.check_model(model, full_check=True)
    onnx.save(model, os.path.join(HERE, "mixed.onnx"))
    print("wrote", os.path.join(HERE, "mixed.onnx"))


if __name__ == "__main__":
    main()
