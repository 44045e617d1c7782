#!/usr/bin/python3
"""Writes concat_chain.onnx: Concats read by elementwise chains, as DenseNet's layers
(the feature list concatenated, then BatchNorm and ReLU), with a numpy (float64)
reference. On channels-last data the concatenation axis is the last one and
fuse-concat-chain lets the chain read the parts in place; the cases:
  Y1: a DenseNet block of three layers (parts of 16, 8 and 12 channels: 12 is no
      multiple of the 8-half vector, so the GPU takes its element path);
  Y2: a part used twice, a sigmoid, a scale and a full-size residual operand;
  Y3, Y4: a Concat also read elsewhere (a graph output too): left as it is;
  Y5: a one-part Concat (an identity) before a chain.
Run: /usr/bin/python3 tests/passes/gen_concat_chain.py"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))


def conv(x, w, pad):
    n, c, h, wd = x.shape
    m, _, k, _ = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    y = np.zeros((n, m, h, wd))
    for i in range(k):
        for j in range(k):
            y += np.einsum("nchw,mc->nmhw", xp[:, :, i:i + h, j:j + wd], w[:, :, i, j])
    return y


def bn(x, s, b, mean, var, eps=1e-5):
    a = s / np.sqrt(var + eps)
    return x * a[None, :, None, None] + (b - mean * a)[None, :, None, None]


def main():
    rng = np.random.default_rng(11)
    x = rng.standard_normal((2, 8, 6, 6))
    w0 = rng.standard_normal((16, 8, 3, 3)) / 8
    w1 = rng.standard_normal((8, 16, 3, 3)) / 12
    w2 = rng.standard_normal((12, 24, 1, 1)) / 5
    wz = rng.standard_normal((32, 8, 1, 1)) / 3
    bns = {}
    for name, c in (("bn1", 16), ("bn2", 24), ("bn3", 36), ("bn5", 16)):
        bns[name] = (rng.uniform(0.5, 1.5, c), rng.standard_normal(c) * 0.1,
                     rng.standard_normal(c) * 0.2, rng.uniform(0.5, 2.0, c))
    relu = lambda t: np.maximum(t, 0)
    sig = lambda t: 1 / (1 + np.exp(-t))
    x0 = relu(conv(x, w0, 1))
    y1 = conv(relu(bn(x0, *bns["bn1"])), w1, 1)
    c2 = np.concatenate([x0, y1], 1)
    y2 = conv(relu(bn(c2, *bns["bn2"])), w2, 0)
    c3 = np.concatenate([x0, y1, y2], 1)
    out1 = relu(bn(c3, *bns["bn3"]))
    z = conv(x, wz, 0)
    c4 = np.concatenate([y1, y1, x0], 1)
    out2 = sig(c4) * 2.0 + z
    c5 = np.concatenate([x0, y1], 1)
    out3 = relu(c5 * 0.5)
    out4 = c5
    out5 = relu(bn(x0, *bns["bn5"]) + 0.25)

    n = helper.make_node
    inits = {"w0": w0, "w1": w1, "w2": w2, "wz": wz, "two": np.array(2.0), "half": np.array(0.5),
             "quarter": np.array(0.25)}
    for name, (s, b, m, v) in bns.items():
        inits.update({name + "_s": s, name + "_b": b, name + "_m": m, name + "_v": v})
    init_list = []
    for name, a in inits.items():
        t = numpy_helper.from_array(np.asarray(a, np.float32))
        t.name = name
        init_list.append(t)

    def bn_node(src, name, out):
        return n("BatchNormalization", [src, name + "_s", name + "_b", name + "_m", name + "_v"],
                 [out])

    nodes = [
        n("Conv", ["X", "w0"], ["x0c"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        n("Relu", ["x0c"], ["x0"]),
        n("Concat", ["x0"], ["c1"], axis=1),
        bn_node("c1", "bn1", "b1"), n("Relu", ["b1"], ["h1"]),
        n("Conv", ["h1", "w1"], ["y1"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        n("Concat", ["x0", "y1"], ["c2"], axis=1),
        bn_node("c2", "bn2", "b2"), n("Relu", ["b2"], ["h2"]),
        n("Conv", ["h2", "w2"], ["y2"], kernel_shape=[1, 1]),
        n("Concat", ["x0", "y1", "y2"], ["c3"], axis=1),
        bn_node("c3", "bn3", "b3"), n("Relu", ["b3"], ["Y1"]),
        n("Conv", ["X", "wz"], ["z"], kernel_shape=[1, 1]),
        n("Concat", ["y1", "y1", "x0"], ["c4"], axis=1),
        n("Sigmoid", ["c4"], ["s4"]), n("Mul", ["s4", "two"], ["m4"]), n("Add", ["m4", "z"], ["Y2"]),
        n("Concat", ["x0", "y1"], ["Y4"], axis=1),
        n("Mul", ["Y4", "half"], ["m5"]), n("Relu", ["m5"], ["Y3"]),
        n("Concat", ["x0"], ["c6"], axis=-3),
        bn_node("c6", "bn5", "b6"), n("Add", ["b6", "quarter"], ["a6"]), n("Relu", ["a6"], ["Y5"]),
    ]
    outs = [out1, out2, out3, out4, out5]
    vi = helper.make_tensor_value_info
    graph = helper.make_graph(
        nodes, "concat_chain", [vi("X", TensorProto.FLOAT, list(x.shape))],
        [vi("Y%d" % (k + 1), TensorProto.FLOAT, list(o.shape)) for k, o in enumerate(outs)],
        init_list)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)],
                              producer_name="infer tests/passes/gen_concat_chain.py")
    model.ir_version = 7
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(HERE, "concat_chain.onnx"))
    np.save(os.path.join(HERE, "concat_chain_input.npy"), x.astype(np.float32))
    for k, o in enumerate(outs):
        np.save(os.path.join(HERE, "concat_chain_output_%d.npy" % k), o.astype(np.float32))


if __name__ == "__main__":
    main()
