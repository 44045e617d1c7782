#!/usr/bin/env python3
"""Makes tests/passes/nhwc_ops.onnx: the memory-bound ops between convolutions that the
channels-last GPU kernels run (kernels/k_rows.cuh users, kernels/reduce_mid.cu), in
EfficientNet- and DenseNet-like blocks on a [2, 16, 9, 7] input (spatial sizes that are
no multiple of any block size), C = 32, 24 (multiples of 8) and 20 (not):

  A (C 32): Conv 3x3 + x*sigmoid(x) (-> FusedConv Swish: the epilogue kernel where cuDNN
            lacks the activation); squeeze-excitation: GlobalAveragePool (-> ReduceMean
            over NHWC H, W), 1x1 Conv + Swish, 1x1 Conv + Sigmoid, Mul [N,C,H,W] x
            [N,C,1,1] (channels-last: [N,H,W,C] x [N,1,1,C])
  B (C 24): 1x1 Conv + HardSwish; ReduceMean axes [2, 3] keepdims (attribute), Sigmoid,
            Mul; Add of a constant [1, 24, 1, 1]
  C (C 20): two 3x3 stride-2 Convs, Add (the residual of a FusedConv) + HardSwish;
            ReduceMax axes [2, 3] (attribute) and ReduceSum axes [2, 3] (input); Mul by
            the sigmoid of the max
  D (C 40): Concat of C's two maps, BatchNormalization + Relu (not foldable: after a
            Concat; bn-to-affine and fuse-elementwise make it one FusedChain), 1x1 Conv
  head:     GlobalAveragePool, Flatten, Concat with the flattened ReduceMax / ReduceSum
            ([2, 56]), BatchNormalization (2-D, so channels are the last axis) + Relu;
            BatchNormalization of the ReduceSum alone ([2, 20])

Outputs: y [2, 76] (the head) and the flattened maps m1 (A's Mul), a2 (B's Add), h3 (C's
HardSwish), m3 (C's Mul) and bnr (D's BN + Relu), read through Flatten so that the maps
themselves stay channels-last. The reference is NumPy in float64.

    /usr/bin/python3 tests/passes/gen_nhwc_ops.py   (python3-onnx, python3-numpy)
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(23)
f32 = np.float32


def normal(scale, shape):
    return rng.normal(0, scale, shape).astype(f32)


def conv_w(m, c, k):
    return normal(1.0 / np.sqrt(c * k * k), (m, c, k, k))


x = rng.normal(0, 1, (2, 16, 9, 7)).astype(f32)
w = {
    "w1": conv_w(32, 16, 3), "b1": normal(0.2, (32,)),
    "we1": conv_w(8, 32, 1), "be1": normal(0.2, (8,)),
    "wf1": conv_w(32, 8, 1), "bf1": normal(0.5, (32,)),
    "w2": conv_w(24, 32, 1), "b2": normal(0.2, (24,)),
    "cb2": normal(0.5, (1, 24, 1, 1)),
    "w3": conv_w(20, 24, 3), "b3": normal(0.2, (20,)),
    "wz3": conv_w(20, 24, 3), "bz3": normal(0.2, (20,)),
    "axes23": np.array([2, 3], np.int64),
    "bn_s": rng.uniform(0.5, 1.5, 40).astype(f32), "bn_b": normal(0.3, (40,)),
    "bn_m": normal(0.3, (40,)), "bn_v": rng.uniform(0.2, 1.0, 40).astype(f32),
    "w4": conv_w(16, 40, 1), "b4": normal(0.2, (16,)),
    "bv_s": rng.uniform(0.5, 1.5, 56).astype(f32), "bv_b": normal(0.3, (56,)),
    "bv_m": normal(0.3, (56,)), "bv_v": rng.uniform(0.5, 3.0, 56).astype(f32),
    "bs_s": rng.uniform(0.5, 1.5, 20).astype(f32), "bs_b": normal(0.3, (20,)),
    "bs_m": normal(1.0, (20,)), "bs_v": rng.uniform(1.0, 9.0, 20).astype(f32),
}
N = helper.make_node
nodes = [
    # A
    N("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
    N("Sigmoid", ["c1"], ["c1s"]), N("Mul", ["c1", "c1s"], ["s1"]),
    N("GlobalAveragePool", ["s1"], ["g1"]),
    N("Conv", ["g1", "we1", "be1"], ["e1"]),
    N("Sigmoid", ["e1"], ["e1s"]), N("Mul", ["e1", "e1s"], ["t1"]),
    N("Conv", ["t1", "wf1", "bf1"], ["f1"]), N("Sigmoid", ["f1"], ["sg1"]),
    N("Mul", ["s1", "sg1"], ["m1"]),
    # B
    N("Conv", ["m1", "w2", "b2"], ["c2"]), N("HardSwish", ["c2"], ["h2"]),
    N("ReduceMean", ["h2"], ["r2"], axes=[2, 3], keepdims=1),
    N("Sigmoid", ["r2"], ["sg2"]), N("Mul", ["h2", "sg2"], ["m2"]),
    N("Add", ["m2", "cb2"], ["a2"]),
    # C
    N("Conv", ["a2", "w3", "b3"], ["c3"], pads=[1, 1, 1, 1], strides=[2, 2]),
    N("Conv", ["a2", "wz3", "bz3"], ["z3"], pads=[1, 1, 1, 1], strides=[2, 2]),
    N("Add", ["c3", "z3"], ["s3"]), N("HardSwish", ["s3"], ["h3"]),
    N("ReduceMax", ["h3"], ["r3"], axes=[2, 3], keepdims=1),
    N("ReduceSum", ["h3", "axes23"], ["rs3"], keepdims=1),
    N("Sigmoid", ["r3"], ["sg3"]), N("Mul", ["h3", "sg3"], ["m3"]),
    # D
    N("Concat", ["h3", "m3"], ["cat"], axis=1),
    N("BatchNormalization", ["cat", "bn_s", "bn_b", "bn_m", "bn_v"], ["bn"], epsilon=1e-5),
    N("Relu", ["bn"], ["bnr"]),
    N("Conv", ["bnr", "w4", "b4"], ["c4"]),
    # head
    N("GlobalAveragePool", ["c4"], ["g4"]), N("Flatten", ["g4"], ["f4"]),
    N("Flatten", ["r3"], ["fr3"]), N("Flatten", ["rs3"], ["frs3"]),
    N("Concat", ["f4", "fr3", "frs3"], ["v"], axis=1),
    N("BatchNormalization", ["v", "bv_s", "bv_b", "bv_m", "bv_v"], ["bv"], epsilon=1e-5),
    N("Relu", ["bv"], ["y1"]),
    N("BatchNormalization", ["frs3", "bs_s", "bs_b", "bs_m", "bs_v"], ["y2"], epsilon=1e-3),
    N("Concat", ["y1", "y2"], ["y"], axis=1),
    N("Flatten", ["m1"], ["m1f"]), N("Flatten", ["a2"], ["a2f"]), N("Flatten", ["h3"], ["h3f"]),
    N("Flatten", ["m3"], ["m3f"]), N("Flatten", ["bnr"], ["bnrf"]),
]
outs = {"y": [2, 76], "m1f": [2, 32 * 63], "a2f": [2, 24 * 63], "h3f": [2, 20 * 20],
        "m3f": [2, 20 * 20], "bnrf": [2, 40 * 20]}
graph = helper.make_graph(nodes, "nhwc_ops",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 16, 9, 7])],
                          [helper.make_tensor_value_info(k, TensorProto.FLOAT, v)
                           for k, v in outs.items()],
                          [numpy_helper.from_array(v, k) for k, v in w.items()])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
model.ir_version = 8
onnx.checker.check_model(model)
onnx.save(model, os.path.join(HERE, "nhwc_ops.onnx"))

# ---- the reference, float64 ----
t = {k: v.astype(np.float64) for k, v in w.items()}


def conv(a, wt, b, stride=1, pad=0):
    n, c, h, wd = a.shape
    m, _, kh, kw = wt.shape
    ap = np.pad(a, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    ho, wo = (h + 2 * pad - kh) // stride + 1, (wd + 2 * pad - kw) // stride + 1
    out = np.zeros((n, m, ho, wo))
    for i in range(kh):
        for j in range(kw):
            patch = ap[:, :, i:i + stride * ho:stride, j:j + stride * wo:stride]
            out += np.einsum("nchw,mc->nmhw", patch, wt[:, :, i, j])
    return out + b[None, :, None, None]


def sigmoid(v):
    return 1 / (1 + np.exp(-v))


def hardswish(v):
    return v * np.clip(v / 6 + 0.5, 0, 1)


def bn(v, p, eps):
    s, b, m, var = (t[p + k] for k in ("_s", "_b", "_m", "_v"))
    shape = (1, -1) + (1,) * (v.ndim - 2)
    return (v - m.reshape(shape)) / np.sqrt(var.reshape(shape) + eps) * s.reshape(shape) + \
        b.reshape(shape)


xd = x.astype(np.float64)
c1 = conv(xd, t["w1"], t["b1"], pad=1)
s1 = c1 * sigmoid(c1)
e1 = conv(s1.mean((2, 3), keepdims=True), t["we1"], t["be1"])
sg1 = sigmoid(conv(e1 * sigmoid(e1), t["wf1"], t["bf1"]))
m1 = s1 * sg1
h2 = hardswish(conv(m1, t["w2"], t["b2"]))
m2 = h2 * sigmoid(h2.mean((2, 3), keepdims=True))
a2 = m2 + t["cb2"]
h3 = hardswish(conv(a2, t["w3"], t["b3"], 2, 1) + conv(a2, t["wz3"], t["bz3"], 2, 1))
r3 = h3.max((2, 3), keepdims=True)
rs3 = h3.sum((2, 3), keepdims=True)
m3 = h3 * sigmoid(r3)
bnr = np.maximum(bn(np.concatenate([h3, m3], 1), "bn", 1e-5), 0)
c4 = conv(bnr, t["w4"], t["b4"])
v = np.concatenate([c4.mean((2, 3)), r3.reshape(2, -1), rs3.reshape(2, -1)], 1)
y = np.concatenate([np.maximum(bn(v, "bv", 1e-5), 0), bn(rs3.reshape(2, -1), "bs", 1e-3)], 1)
assert h3.shape == (2, 20, 5, 4) and y.shape == (2, 76), (h3.shape, y.shape)
results = {"y": y, "m1f": m1, "a2f": a2, "h3f": h3, "m3f": m3, "bnrf": bnr}
np.save(os.path.join(HERE, "nhwc_ops_input.npy"), x)
for k, r in results.items():
    np.save(os.path.join(HERE, f"nhwc_ops_{k}.npy"), r.reshape(outs[k]).astype(f32))
if os.environ.get("GEN_NHWC_STATS"):  # magnitudes, and how much Relu / HardSwish clip
    for name, r in results.items():
        a = np.abs(r)
        print(f"{name}: max |v| {a.max():.3g}, mean |v| {a.mean():.3g}, "
              f"zeros {(r == 0).mean():.3f}")
print("wrote nhwc_ops.onnx")
