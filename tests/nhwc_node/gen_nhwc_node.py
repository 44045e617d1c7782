#!/usr/bin/env python3
"""Writes tests/nhwc_node/node/: ONNX backend-style node tests (model.onnx and
test_data_set_0/{input,output}_0.pb) on channels-last shapes, for the GPU's fast paths
of the memory-bound kernels, run by tests/conformance (CTest nhwc_node on the CPU,
gpu_nhwc_node_* on the GPU against the references and against the CPU on random
inputs with poisoned device memory, --diff):

- broadcast binary ops [N, H, W, C] op [N, 1, 1, C] / [C] (k_ew_binary's row path):
  every float arithmetic op, the small operand first or second;
- Reduce* over the middle axes of [N, H, W, C] / [N, L, C] (kernels/reduce_mid.cu),
  a long one too (several chunks and the second pass);
- BatchNormalization on [N, C] (channels last; with constant parameters the pass
  bn-to-affine makes it a FusedChain, otherwise k_bn_apply's vector path runs).

The ONNX suite's own cases have C <= 5, too narrow for the 16-byte vectors; these have
C = 32, 24 (multiples of 8), 20, 3 and 264, spatial sizes that are no multiple of any
block size. Only the data input is a graph input (axes, BatchNormalization parameters
are initializers), so --diff's random inputs keep the ops' meaning. Expected outputs
are numpy's, computed in float64.

Needs /usr/bin/python3 with onnx 1.12 and numpy. Run from anywhere:
    /usr/bin/python3 tests/nhwc_node/gen_nhwc_node.py
The output is deterministic (fixed seed); the folder is committed.
"""
import os
import shutil

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "node")
RNG = np.random.default_rng(20261202)
f32 = np.float32


def case(name, nodes, inputs, outputs, inits=(), opset=13):
    vi_in = [helper.make_tensor_value_info(n, TensorProto.FLOAT, list(a.shape)) for n, a in inputs]
    vi_out = [helper.make_tensor_value_info(n, TensorProto.FLOAT, list(a.shape))
              for n, a in outputs]
    graph = helper.make_graph(nodes, name, vi_in, vi_out,
                              [numpy_helper.from_array(np.asarray(a), n) for n, a in inits])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                              producer_name="infer tests/nhwc_node/gen_nhwc_node.py")
    model.ir_version = 8
    onnx.checker.check_model(model)
    d = os.path.join(ROOT, name)
    os.makedirs(os.path.join(d, "test_data_set_0"))
    onnx.save(model, os.path.join(d, "model.onnx"))
    for kind, items in (("input", inputs), ("output", outputs)):
        for i, (n, a) in enumerate(items):
            with open(os.path.join(d, "test_data_set_0", "%s_%d.pb" % (kind, i)), "wb") as f:
                f.write(numpy_helper.from_array(np.asarray(a, f32), n).SerializeToString())


def normal(*shape):
    """Normal values rounded to multiples of 1/64: exact in float16, so the fp16 runs'
    input cast loses nothing and sums of them are exact in fp32 (the comparisons with
    numpy then see only the output's rounding)."""
    return dyadic(RNG.standard_normal(shape))


def dyadic(a):
    return (np.round(np.asarray(a, np.float64) * 64) / 64).astype(f32)


def binary_cases():
    d = np.float64
    ops = [  # name, ONNX op, attributes, numpy reference, operand ranges
        ("add", "Add", {}, lambda a, b: a + b, None),
        ("sub", "Sub", {}, lambda a, b: a - b, None),
        ("mul", "Mul", {}, lambda a, b: a * b, None),
        ("div", "Div", {}, lambda a, b: a / b, "away0"),
        ("max", "Max", {}, np.maximum, None),
        ("min", "Min", {}, np.minimum, None),
        ("pow", "Pow", {}, lambda a, b: np.power(a, b), "pow"),
        ("fmod", "Mod", {"fmod": 1}, np.fmod, "away0"),
    ]
    shapes = [("c32", (2, 3, 5, 32)), ("c24", (2, 5, 3, 24)), ("c20", (1, 7, 3, 20)),
              ("c3", (2, 5, 3, 3))]
    for tag, shape in shapes:
        n, c = shape[0], shape[3]
        for name, op, attrs, ref, rng in ops:
            for small, sname in (((n, 1, 1, c), "se"), ((c,), "bias")):
                for first in (False, True):
                    big_v, small_v = normal(*shape), normal(*small)
                    a, b = (small_v, big_v) if first else (big_v, small_v)
                    if rng == "away0":  # divisors away from zero
                        b = dyadic((np.sign(b) + (b == 0)) * (0.5 + np.abs(b)))
                    if rng == "pow":  # positive bases, moderate exponents
                        a, b = dyadic(np.clip(0.5 + np.abs(a), 0.5, 3)), np.clip(b, -2, 3)
                    y = ref(a.astype(d), b.astype(d)).astype(f32)
                    case("test_nhwc_%s_%s_%s%s" % (name, sname, tag, "_small_first" if first else ""),
                         [helper.make_node(op, ["a", "b"], ["y"], **attrs)],
                         [("a", a), ("b", b)], [("y", y)])
    # PRelu: the slope is the small operand (second), per channel
    for tag, shape in shapes:
        x, slope = normal(*shape), dyadic(RNG.uniform(0.05, 0.5, shape[3]))
        y = np.where(x < 0, x.astype(d) * slope, x).astype(f32)
        case("test_nhwc_prelu_%s" % tag, [helper.make_node("PRelu", ["x", "slope"], ["y"])],
             [("x", x), ("slope", slope)], [("y", y)])


def reduce_cases():
    kinds = [  # ONNX op, numpy over axes
        ("ReduceMean", lambda x, ax, k: x.mean(ax, keepdims=k)),
        ("ReduceSum", lambda x, ax, k: x.sum(ax, keepdims=k)),
        ("ReduceMax", lambda x, ax, k: x.max(ax, keepdims=k)),
        ("ReduceMin", lambda x, ax, k: x.min(ax, keepdims=k)),
        ("ReduceL2", lambda x, ax, k: np.sqrt((x * x).sum(ax, keepdims=k))),
        ("ReduceSumSquare", lambda x, ax, k: (x * x).sum(ax, keepdims=k)),
        ("ReduceL1", lambda x, ax, k: np.abs(x).sum(ax, keepdims=k)),
    ]
    shapes = [("c32", (2, 9, 7, 32), [1, 2]), ("c24", (2, 11, 5, 24), [1, 2]),
              ("c20", (2, 7, 9, 20), [-3, -2]), ("c3", (2, 13, 3, 3), [1, 2]),
              # long rows: several chunks and the second pass (fp16: 2, fp32: 5 chunks)
              ("long_c24", (1, 1500, 24), [1])]
    for op, ref in kinds:
        for tag, shape, axes in shapes:
            for keep in (1, 0):
                if tag.startswith("long") and (keep == 0 or op not in (
                        "ReduceMean", "ReduceSum", "ReduceMax")):
                    continue
                x = normal(*shape)
                y = ref(x.astype(np.float64), tuple(axes), bool(keep)).astype(f32)
                name = "test_nhwc_reduce_%s_%s%s" % (op[6:].lower(), tag, "" if keep else "_flat")
                if op == "ReduceSum":  # opset 13: axes is an input
                    case(name, [helper.make_node(op, ["x", "axes"], ["y"], keepdims=keep)],
                         [("x", x)], [("y", y)], inits=[("axes", np.array(axes, np.int64))])
                else:
                    case(name, [helper.make_node(op, ["x"], ["y"], axes=axes, keepdims=keep)],
                         [("x", x)], [("y", y)])


def bn_cases():
    for n, c in ((5, 20), (7, 32), (4, 3), (3, 24), (9, 264)):
        x = normal(n, c)
        s, b = RNG.uniform(0.5, 1.5, c).astype(f32), normal(c)
        m, v = normal(c), RNG.uniform(0.2, 2.0, c).astype(f32)
        y = (x.astype(np.float64) - m) / np.sqrt(v.astype(np.float64) + 1e-5) * s + b
        case("test_nhwc_batchnorm_2d_%dx%d" % (n, c),
             [helper.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], ["y"],
                               epsilon=1e-5)],
             [("x", x)], [("y", y.astype(f32))],
             inits=[("s", s), ("b", b), ("m", m), ("v", v)], opset=15)


if __name__ == "__main__":
    if os.path.isdir(ROOT):
        shutil.rmtree(ROOT)
    os.makedirs(ROOT)
    binary_cases()
    reduce_cases()
    bn_cases()
    print("wrote %d tests into %s" % (len(os.listdir(ROOT)), ROOT))
