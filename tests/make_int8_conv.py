#!/usr/bin/env python3
"""make_int8_conv.py DIR: the QDQ convolutions the pass int8-conv rewrites, those it must
leave, and their answers computed here from the integers, independently of infer.

DIR/int8_conv.onnx (opset 13): two convolutions on symmetric int8 tensors,
    a  = Relu(Conv(DQ(Q(x)), DQ(w1)) + b1 + r)          3x3, pad 1, 8 -> 16 channels
    c  = Conv(DQ(Q(a)), DQ(w2)) + b2                    1x1, stride 2, 16 -> 8
    y1 = a / 2, y = c / 2
    y7 = DQ(Q(Relu(Conv(DQ(Q(x)), DQ(w7)) + b7))) / 2   3x3, pad 1, 8 -> 16: the Q is its
                                                        only reader (written as int8)
(Q/DQ: per tensor, zero point 0; weights int8 per output channel with max|q| = 127; the
halving Muls (exact) are readers between each convolution and its graph output: the
channels-last pass leaves a node that writes a graph output NCHW, and on the GPU the
pass int8-conv takes channels-last nodes only),
and four that must stay float: y3 with 3 output channels (not a multiple of 4), y4 on an
input of zero point 3, y5 with weights off integer multiples of a scale by up to 0.01,
y6 of two groups. Inputs x (2x8x10x10) and r (2x16x10x10), seeded, to DIR/x.npy and
DIR/r.npy; each output's float64 answer to DIR/NAME.npy (every Q rounded half to even
and saturated as ONNX says), and the float16 error bound of each for a device that sums
int8 products exactly to DIR/bounds16.json (see the end of main)."""
import json
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def quantize(v, s):
    return np.clip(np.rint(v / s), -128, 127)  # numpy rounds half to even, as ONNX does


def conv(x, w, stride, pad):
    n, c, h, wd = x.shape
    m, _, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh, ow = (h + 2 * pad - kh) // stride + 1, (wd + 2 * pad - kw) // stride + 1
    y = np.zeros((n, m, oh, ow))
    for i in range(kh):
        for j in range(kw):
            patch = xp[:, :, i:i + stride * oh:stride, j:j + stride * ow:stride]
            y += np.einsum("nchw,mc->nmhw", patch, w[:, :, i, j])
    return y


def weights(rng, shape):
    w = rng.standard_normal(shape)
    s = np.abs(w.reshape(shape[0], -1)).max(axis=1) / 127.0
    q = np.clip(np.rint(w / s.reshape(-1, 1, 1, 1)), -127, 127).astype(np.int8)
    return q, s.astype(np.float32)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(20261205)
    x = rng.uniform(-2, 2, (2, 8, 10, 10)).astype(np.float32)
    r = rng.uniform(-1, 1, (2, 16, 10, 10)).astype(np.float32)
    q1, s1 = weights(rng, (16, 8, 3, 3))
    q2, s2 = weights(rng, (8, 16, 1, 1))
    q3, s3 = weights(rng, (3, 8, 3, 3))
    q6, s6 = weights(rng, (8, 4, 3, 3))
    b1 = rng.uniform(-1, 1, 16).astype(np.float32)
    b2 = rng.uniform(-1, 1, 8).astype(np.float32)
    sx, sy1 = np.float32(2.0 / 127), np.float32(0.25)

    inits, nodes = [], []

    def const(name, a):
        inits.append(numpy_helper.from_array(a, name))
        return name

    zp = const("zp", np.array(0, np.int8))
    const("sx", np.array(sx, np.float32))
    const("sy1", np.array(sy1, np.float32))
    const("half", np.array(0.5, np.float32))
    const("zp3", np.array(3, np.int8))
    w5 = (q1 * s1.reshape(-1, 1, 1, 1) + rng.uniform(-0.01, 0.01, q1.shape)).astype(np.float32)
    const("w5", w5)
    q7, s7 = weights(rng, (16, 8, 3, 3))
    b7 = rng.uniform(-1, 1, 16).astype(np.float32)
    sy7 = np.float32(0.3)
    const("b7", b7)
    const("sy7", np.array(sy7, np.float32))
    for k, q, s in [(1, q1, s1), (2, q2, s2), (3, q3, s3), (6, q6, s6), (7, q7, s7)]:
        const("w%d_q" % k, q)
        const("w%d_s" % k, s)
        const("w%d_zp" % k, np.zeros(s.shape, np.int8))
        nodes.append(helper.make_node("DequantizeLinear", ["w%d_q" % k, "w%d_s" % k, "w%d_zp" % k],
                                      ["w%d" % k], axis=0))
    const("b1", b1)
    const("b2", b2)
    nodes += [
        helper.make_node("QuantizeLinear", ["x", "sx", "zp"], ["xq"]),
        helper.make_node("DequantizeLinear", ["xq", "sx", "zp"], ["xd"]),
        helper.make_node("Conv", ["xd", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
        helper.make_node("Add", ["c1", "r"], ["a1"]),
        helper.make_node("Relu", ["a1"], ["y1r"]),
        helper.make_node("Mul", ["y1r", "half"], ["y1"]),
        helper.make_node("QuantizeLinear", ["y1r", "sy1", "zp"], ["y1q"]),
        helper.make_node("DequantizeLinear", ["y1q", "sy1", "zp"], ["y1d"]),
        helper.make_node("Conv", ["y1d", "w2", "b2"], ["yc"], strides=[2, 2]),
        helper.make_node("Mul", ["yc", "half"], ["y"]),
        helper.make_node("Conv", ["xd", "w7", "b7"], ["c7"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c7"], ["r7"]),
        helper.make_node("QuantizeLinear", ["r7", "sy7", "zp"], ["r7q"]),
        helper.make_node("DequantizeLinear", ["r7q", "sy7", "zp"], ["r7d"]),
        helper.make_node("Mul", ["r7d", "half"], ["y7"]),
        helper.make_node("Conv", ["xd", "w3"], ["y3"], pads=[1, 1, 1, 1]),
        # near misses, which must stay float: a zero point of 3, weights that are no
        # integer multiples of one scale, two groups
        helper.make_node("QuantizeLinear", ["x", "sx", "zp3"], ["xq4"]),
        helper.make_node("DequantizeLinear", ["xq4", "sx", "zp3"], ["xd4"]),
        helper.make_node("Conv", ["xd4", "w1"], ["y4"], pads=[1, 1, 1, 1]),
        helper.make_node("Conv", ["xd", "w5"], ["y5"], pads=[1, 1, 1, 1]),
        helper.make_node("Conv", ["xd", "w6"], ["y6"], pads=[1, 1, 1, 1], group=2),
    ]
    g = helper.make_graph(
        nodes, "int8_conv",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape),
         helper.make_tensor_value_info("r", TensorProto.FLOAT, r.shape)],
        [helper.make_tensor_value_info("y1", TensorProto.FLOAT, [2, 16, 10, 10]),
         helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 8, 5, 5]),
         helper.make_tensor_value_info("y3", TensorProto.FLOAT, [2, 3, 10, 10]),
         helper.make_tensor_value_info("y4", TensorProto.FLOAT, [2, 16, 10, 10]),
         helper.make_tensor_value_info("y5", TensorProto.FLOAT, [2, 16, 10, 10]),
         helper.make_tensor_value_info("y6", TensorProto.FLOAT, [2, 8, 10, 10]),
         helper.make_tensor_value_info("y7", TensorProto.FLOAT, [2, 16, 10, 10])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 7
    onnx.checker.check_model(m)
    onnx.save(m, os.path.join(out, "int8_conv.onnx"))

    # the answer: integer sums times the scales, in float64
    xq = quantize(x.astype(np.float64), np.float64(sx))
    a1 = conv(xq, q1.astype(np.float64), 1, 1) * (np.float64(sx) * s1.astype(np.float64)).reshape(1, -1, 1, 1)
    y1 = np.maximum(a1 + b1.reshape(1, -1, 1, 1) + r, 0)
    y1q = quantize(y1, np.float64(sy1))
    y = conv(y1q, q2.astype(np.float64), 2, 0) * (np.float64(sy1) * s2.astype(np.float64)).reshape(1, -1, 1, 1)
    y += b2.reshape(1, -1, 1, 1)
    y3 = conv(xq, q3.astype(np.float64), 1, 1) * (np.float64(sx) * s3.astype(np.float64)).reshape(1, -1, 1, 1)
    xd = xq * np.float64(sx)
    xd4 = (np.clip(np.rint(x.astype(np.float64) / np.float64(sx)) + 3, -128, 127) - 3) * np.float64(sx)
    w1d = (q1 * s1.reshape(-1, 1, 1, 1)).astype(np.float64)
    w6d = (q6 * s6.reshape(-1, 1, 1, 1)).astype(np.float64)
    outs = {"y1": y1 / 2, "y": y / 2, "y3": y3, "y4": conv(xd4, w1d, 1, 1),
            "y5": conv(xd, w5.astype(np.float64), 1, 1),
            "y6": np.concatenate([conv(xd[:, :4], w6d[:4], 1, 1), conv(xd[:, 4:], w6d[4:], 1, 1)], 1)}
    a7 = conv(xq, q7.astype(np.float64), 1, 1) * (np.float64(sx) * s7.astype(np.float64)).reshape(1, -1, 1, 1)
    a7 = np.maximum(a7 + b7.reshape(1, -1, 1, 1), 0)
    outs["y7"] = quantize(a7, np.float64(sy7)) * np.float64(sy7) / 2
    np.save(os.path.join(out, "x.npy"), x)
    np.save(os.path.join(out, "r.npy"), r)
    for name, v in outs.items():
        np.save(os.path.join(out, name + ".npy"), v.astype(np.float32))
    # float16 error bounds of a device that sums exactly (int8) or in float32 (the float
    # path of the others), u = 2^-11 the unit roundoff, twice over for the order of the
    # additions. Every output: 3 quanta of its quantized input moved across a boundary by
    # that input's float16 rounding (x is the engine's float16 input; y1 rounds to float16
    # before its Q) through the largest weight, and the output's own rounding. y1: its
    # float16 bias and residual; y: its bias; y3..y6 (float16 operands on the float
    # path): each product's two roundings.
    u = 2.0 ** -11
    ax = np.abs(xd)

    def flip(scale, wd):
        return 3 * float(scale) * float(np.abs(wd).max())

    def float_path(name, xa, wd, groups=1):
        c = wd.shape[0] // groups
        sums = np.concatenate([conv(xa[:, g * (xa.shape[1] // groups):(g + 1) * (xa.shape[1] // groups)],
                                    np.abs(wd[g * c:(g + 1) * c]), 1, 1) for g in range(groups)], 1)
        return 2 * (2 * u * sums.max() + u * np.abs(outs[name]).max()) + flip(sx, wd)

    w2d = q2 * s2.reshape(-1, 1, 1, 1)
    # y1 and y: the bounds of the convolutions' outputs, halved as exactly as the values
    bounds = {
        "y1": (2 * u * (np.abs(b1).max() + np.abs(r).max() + np.abs(y1).max()) + flip(sx, w1d)) / 2,
        "y": (2 * u * (np.abs(b2).max() + np.abs(y).max()) + flip(sy1, w2d)) / 2,
        "y3": float_path("y3", ax, (q3 * s3.reshape(-1, 1, 1, 1)).astype(np.float64)),
        "y4": float_path("y4", np.abs(xd4), w1d),
        "y5": float_path("y5", ax, w5.astype(np.float64)),
        "y6": float_path("y6", ax, w6d, 2),
        # y7: whole quanta of sy7 (halved); float16 storage of its bias and scales moves
        # a value across a rounding boundary by far less than a quantum: one quantum,
        # and the float16 roundings of the dequantized value and of its half
        "y7": float(sy7) / 2 + 2 * 2 * u * np.abs(outs["y7"]).max(),
    }
    with open(os.path.join(out, "bounds16.json"), "w") as f:
        json.dump({k: float(v) for k, v in bounds.items()}, f)
    print("make_int8_conv: wrote %s; max |y1| %.3f, |y| %.3f; float16 bounds %s"
          % (out, np.abs(y1).max(), np.abs(y).max(),
             " ".join("%s %.3g" % kv for kv in bounds.items())))


if __name__ == "__main__":
    main()
