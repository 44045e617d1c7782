#!/usr/bin/env python3
"""Builds models/sample.onnx, the quick-start model: a small CNN classifier
(Conv-Relu-MaxPool-Conv-BatchNorm-Relu-GlobalAveragePool-Flatten-Gemm-Softmax) on a
1x3x32x32 image with a symbolic batch dim and seeded random weights, plus an input
and the expected output computed here with NumPy (independently of infer).

Needs python3-onnx and python3-numpy (Debian packages). Run from anywhere:
    python3 models/make_sample.py
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(20261130)


def conv2d(x, w, b, pad):
    n, c, h, wd = x.shape
    k = w.shape[2]
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh, ow = h + 2 * pad - k + 1, wd + 2 * pad - k + 1
    out = np.zeros((n, w.shape[0], oh, ow), dtype=np.float64)
    for i in range(k):
        for j in range(k):
            patch = xp[:, :, i:i + oh, j:j + ow]
            out += np.einsum("nchw,oc->nohw", patch, w[:, :, i, j])
    return out + b.reshape(1, -1, 1, 1)


def main():
    w1 = rng.normal(0, 0.3, (8, 3, 3, 3)).astype(np.float32)
    b1 = rng.normal(0, 0.1, (8,)).astype(np.float32)
    w2 = rng.normal(0, 0.2, (16, 8, 3, 3)).astype(np.float32)
    b2 = rng.normal(0, 0.1, (16,)).astype(np.float32)
    scale = rng.uniform(0.5, 1.5, (16,)).astype(np.float32)
    bias = rng.normal(0, 0.1, (16,)).astype(np.float32)
    mean = rng.normal(0, 0.1, (16,)).astype(np.float32)
    var = rng.uniform(0.5, 1.5, (16,)).astype(np.float32)
    wf = rng.normal(0, 0.5, (10, 16)).astype(np.float32)
    bf = rng.normal(0, 0.1, (10,)).astype(np.float32)
    x = rng.uniform(-1, 1, (2, 3, 32, 32)).astype(np.float32)

    inits = [numpy_helper.from_array(a, n) for a, n in [
        (w1, "conv1.w"), (b1, "conv1.b"), (w2, "conv2.w"), (b2, "conv2.b"),
        (scale, "bn.scale"), (bias, "bn.bias"), (mean, "bn.mean"), (var, "bn.var"),
        (wf, "fc.w"), (bf, "fc.b")]]
    nodes = [
        helper.make_node("Conv", ["image", "conv1.w", "conv1.b"], ["c1"], name="conv1",
                         pads=[1, 1, 1, 1], kernel_shape=[3, 3]),
        helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
        helper.make_node("MaxPool", ["r1"], ["p1"], name="pool1", kernel_shape=[2, 2],
                         strides=[2, 2]),
        helper.make_node("Conv", ["p1", "conv2.w", "conv2.b"], ["c2"], name="conv2",
                         pads=[1, 1, 1, 1], kernel_shape=[3, 3]),
        helper.make_node("BatchNormalization", ["c2", "bn.scale", "bn.bias", "bn.mean", "bn.var"],
                         ["n2"], name="bn2", epsilon=1e-5),
        helper.make_node("Relu", ["n2"], ["r2"], name="relu2"),
        helper.make_node("GlobalAveragePool", ["r2"], ["g"], name="gap"),
        helper.make_node("Flatten", ["g"], ["f"], name="flatten", axis=1),
        helper.make_node("Gemm", ["f", "fc.w", "fc.b"], ["logits"], name="fc", transB=1),
        helper.make_node("Softmax", ["logits"], ["probabilities"], name="softmax", axis=1),
    ]
    graph = helper.make_graph(
        nodes, "sample_cnn",
        [helper.make_tensor_value_info("image", TensorProto.FLOAT, ["batch", 3, 32, 32])],
        [helper.make_tensor_value_info("probabilities", TensorProto.FLOAT, ["batch", 10])],
        inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)],
                              producer_name="infer models/make_sample.py")
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(HERE, "sample.onnx"))

    # reference in float64
    xd = x.astype(np.float64)
    c1 = np.maximum(conv2d(xd, w1, b1, 1), 0)
    n, c, h, w = c1.shape
    p1 = c1.reshape(n, c, h // 2, 2, w // 2, 2).max(axis=(3, 5))
    c2 = conv2d(p1, w2, b2, 1)
    n2 = (c2 - mean.reshape(1, -1, 1, 1)) / np.sqrt(var.reshape(1, -1, 1, 1) + 1e-5)
    n2 = n2 * scale.reshape(1, -1, 1, 1) + bias.reshape(1, -1, 1, 1)
    g = np.maximum(n2, 0).mean(axis=(2, 3))
    logits = g @ wf.T.astype(np.float64) + bf
    e = np.exp(logits - logits.max(axis=1, keepdims=True))
    probs = (e / e.sum(axis=1, keepdims=True)).astype(np.float32)
    np.save(os.path.join(HERE, "sample_input.npy"), x)
    np.save(os.path.join(HERE, "sample_output.npy"), probs)
    print("wrote sample.onnx, sample_input.npy, sample_output.npy; top-1:", probs.argmax(axis=1))


if __name__ == "__main__":
    main()
