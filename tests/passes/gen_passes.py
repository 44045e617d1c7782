#!/usr/bin/python3
"""Writes the small models tests/test_passes.c runs through the engine, with their
inputs and numpy reference outputs:

  NAME.onnx, NAME_in_K.npy (inputs in order), NAME_out_K.npy (outputs in order)

Run from anywhere: /usr/bin/python3 tests/passes/gen_passes.py (onnx 1.12, numpy).
The data is seeded, so the files are reproducible."""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
F32 = TensorProto.FLOAT


def save(name, nodes, inputs, outputs, inits, feeds, refs):
    graph = helper.make_graph(nodes, name, inputs, outputs,
                              [numpy_helper.from_array(v, k) for k, v in inits.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)],
                              producer_name="infer tests/passes/gen_passes.py")
    model.ir_version = 7
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(HERE, name + ".onnx"))
    for k, x in enumerate(feeds):
        np.save(os.path.join(HERE, "%s_in_%d.npy" % (name, k)), np.ascontiguousarray(x))
    for k, y in enumerate(refs):
        np.save(os.path.join(HERE, "%s_out_%d.npy" % (name, k)), np.ascontiguousarray(y))


def vi(name, dt, shape):
    return helper.make_tensor_value_info(name, dt, shape)


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def identity_model(rng):
    """8 of 14 nodes are identities; 3 Identity nodes must stay (graph outputs)."""
    x = rng.standard_normal((2, 3, 4, 5)).astype(np.float32)
    inits = {
        "shape_same": np.array([2, 3, 4, 5], np.int64),
        "shape_2d": np.array([6, 20], np.int64),
        "axes0": np.array([0], np.int64),
        "ratio": np.array(0.25, np.float32),
        "train_false": np.array(False),
    }
    n = helper.make_node
    nodes = [
        n("Identity", ["X"], ["a"], name="id_a"),                       # removed
        n("Relu", ["a"], ["b"], name="relu"),
        n("Dropout", ["b"], ["c", "c_mask"], name="drop_c"),           # removed (mask unread)
        n("Dropout", ["c", "ratio", "train_false"], ["d"], name="drop_d"),  # removed
        n("Reshape", ["d", "shape_same"], ["e"], name="reshape_same"),  # removed
        n("Cast", ["e"], ["f"], to=F32, name="cast_same"),              # removed
        n("Squeeze", ["f"], ["g"], name="squeeze_none"),                # removed (no 1-dims)
        n("Unsqueeze", ["g", "axes0"], ["h"], name="unsqueeze"),        # stays: [1,2,3,4,5]
        n("Reshape", ["h", "shape_2d"], ["i"], name="reshape_2d"),      # stays
        n("Flatten", ["i"], ["j"], axis=1, name="flatten_same"),        # removed
        n("Sigmoid", ["j"], ["k"], name="sigmoid"),
        n("Identity", ["k"], ["Y"], name="id_Y"),      # removed: Sigmoid writes Y
        n("Identity", ["X"], ["Z"], name="id_Z"),      # stays: X is a graph input
        n("Identity", ["k"], ["Y2"], name="id_Y2"),    # stays: k became Y, a graph output
    ]
    y = sigmoid(np.maximum(x, 0).reshape(6, 20))
    save("identity", nodes, [vi("X", F32, [2, 3, 4, 5])],
         [vi("Y", F32, [6, 20]), vi("Z", F32, [2, 3, 4, 5]), vi("Y2", F32, [6, 20])],
         inits, [x], [y, x, y])


def conv_nd(x, w, b, pads, strides, group):
    """Reference N-D convolution (NC...), symmetric pads, no dilation."""
    nsp = x.ndim - 2
    x = np.pad(x, [(0, 0), (0, 0)] + [(p, p) for p in pads])
    n, c = x.shape[:2]
    m, cg = w.shape[:2]
    k = w.shape[2:]
    out_sp = [(x.shape[2 + i] - k[i]) // strides[i] + 1 for i in range(nsp)]
    y = np.zeros([n, m] + out_sp, dtype=np.float64)
    mg = m // group
    for idx in np.ndindex(*out_sp):
        sl = tuple(slice(idx[i] * strides[i], idx[i] * strides[i] + k[i]) for i in range(nsp))
        for g in range(group):
            patch = x[(slice(None), slice(g * cg, (g + 1) * cg)) + sl]  # n, cg, k...
            wg = w[g * mg:(g + 1) * mg]                                  # mg, cg, k...
            y[(slice(None), slice(g * mg, (g + 1) * mg)) + idx] = np.tensordot(
                patch, wg, axes=(list(range(1, nsp + 2)), list(range(1, nsp + 2))))
    if b is not None:
        y += b.reshape([1, m] + [1] * nsp)
    return y


def batchnorm(x, s, b, mean, var, eps):
    shape = [1, -1] + [1] * (x.ndim - 2)
    return (x - mean.reshape(shape)) / np.sqrt(var.reshape(shape) + eps) * s.reshape(shape) + \
        b.reshape(shape)


def bn_params(rng, prefix, m, dt):
    return {prefix + "_s": rng.uniform(0.5, 1.5, m).astype(dt),
            prefix + "_b": rng.standard_normal(m).astype(dt),
            prefix + "_m": rng.standard_normal(m).astype(dt),
            prefix + "_v": rng.uniform(0.5, 2.0, m).astype(dt)}


def bn_ref(x, inits, prefix, eps):
    return batchnorm(x, *[inits[prefix + s].astype(np.float64) for s in ("_s", "_b", "_m", "_v")],
                     eps)


def conv_bn_model(rng):
    """Two of four BatchNormalizations fold (one into a Conv writing a graph output);
    the others read a Conv output that has a second reader, or a graph input."""
    x = rng.standard_normal((1, 3, 8, 8)).astype(np.float32)
    inits = {"W1": rng.standard_normal((4, 3, 3, 3)).astype(np.float32),
             "B1": rng.standard_normal(4).astype(np.float32),
             "W2": rng.standard_normal((6, 2, 1, 1)).astype(np.float32),
             "W4": rng.standard_normal((4, 4, 3, 3)).astype(np.float32)}
    for p, m in (("bn1", 4), ("bn2", 6), ("bn4", 4), ("bn5", 3)):
        inits.update(bn_params(rng, p, m, np.float32))
    n = helper.make_node
    bn = lambda p, xin, out, eps: n("BatchNormalization",
                                    [xin, p + "_s", p + "_b", p + "_m", p + "_v"], [out],
                                    epsilon=eps, name=p)
    nodes = [
        n("Conv", ["X", "W1", "B1"], ["c1"], pads=[1, 1, 1, 1], name="conv1"),
        bn("bn1", "c1", "bn1_out", 1e-3),                               # folds
        n("Relu", ["bn1_out"], ["r1"], name="relu1"),
        n("Conv", ["r1", "W2"], ["c2"], group=2, name="conv2"),
        bn("bn2", "c2", "Y", 1e-5),                                     # folds; Y is an output
        n("Conv", ["X", "W1", "B1"], ["Y3"], pads=[1, 1, 1, 1], name="conv3"),  # shares W1, B1
        n("Conv", ["r1", "W4"], ["c4"], strides=[2, 2], name="conv4"),
        bn("bn4", "c4", "bn4_out", 1e-5),                               # stays: c4 has 2 readers
        n("Add", ["c4", "bn4_out"], ["Y4"], name="add4"),
        bn("bn5", "X", "Y5", 1e-5),                                     # stays: no Conv
    ]
    xd = x.astype(np.float64)
    c1 = conv_nd(xd, inits["W1"].astype(np.float64), inits["B1"].astype(np.float64), [1, 1], [1, 1], 1)
    r1 = np.maximum(bn_ref(c1, inits, "bn1", 1e-3), 0)
    c2 = conv_nd(r1, inits["W2"].astype(np.float64), None, [0, 0], [1, 1], 2)
    y = bn_ref(c2, inits, "bn2", 1e-5)
    c4 = conv_nd(r1, inits["W4"].astype(np.float64), None, [0, 0], [2, 2], 1)
    y4 = c4 + bn_ref(c4, inits, "bn4", 1e-5)
    y5 = bn_ref(xd, inits, "bn5", 1e-5)
    f = lambda a: a.astype(np.float32)
    save("conv_bn", nodes, [vi("X", F32, [1, 3, 8, 8])],
         [vi("Y", F32, [1, 6, 8, 8]), vi("Y3", F32, [1, 4, 8, 8]), vi("Y4", F32, [1, 4, 3, 3]),
          vi("Y5", F32, [1, 3, 8, 8])],
         inits, [x], [f(y), f(c1), f(y4), f(y5)])


def conv_bn_f64_model(rng):
    """1-D float64 Conv without bias + BatchNormalization: one fold."""
    x = rng.standard_normal((2, 3, 10))
    inits = {"W": rng.standard_normal((5, 3, 3))}
    inits.update(bn_params(rng, "bn", 5, np.float64))
    n = helper.make_node
    nodes = [n("Conv", ["X", "W"], ["c"], pads=[1, 1], name="conv"),
             n("BatchNormalization", ["c", "bn_s", "bn_b", "bn_m", "bn_v"], ["bn_out"],
               epsilon=1e-4, name="bn"),
             n("Tanh", ["bn_out"], ["Y"], name="tanh")]
    y = np.tanh(bn_ref(conv_nd(x, inits["W"], None, [1], [1], 1), inits, "bn", 1e-4))
    D = TensorProto.DOUBLE
    save("conv_bn_f64", nodes, [vi("X", D, [2, 3, 10])], [vi("Y", D, [2, 5, 10])], inits, [x], [y])


def transpose_model(rng):
    """9 of 16 nodes go: pairs that cancel (one at a graph output, one whose first
    Transpose has another reader), pairs that compose, a chain of three."""
    x = rng.standard_normal((2, 3, 4, 5)).astype(np.float32)
    n = helper.make_node
    T = lambda i, o, name, perm=None: (n("Transpose", [i], [o], name=name, perm=perm)
                                       if perm is not None else
                                       n("Transpose", [i], [o], name=name))
    nodes = [
        T("X", "t1", "t1", [0, 2, 3, 1]),
        T("t1", "t2", "t2", [0, 3, 1, 2]),          # t1, t2 cancel
        n("Relu", ["t2"], ["r"], name="relu"),
        T("r", "t3", "t3", [1, 0, 2, 3]),
        T("t3", "t4", "t4", [0, 2, 1, 3]),          # t3 folds into t4: perm 1,2,0,3
        n("Sigmoid", ["t4"], ["A"], name="sigmoid"),
        T("r", "t5", "t5"),                          # reversed (no perm attribute)
        T("t5", "t6", "t6"),                         # t6 goes; t5 stays for neg
        n("Neg", ["t5"], ["B"], name="neg"),
        n("Tanh", ["t6"], ["C"], name="tanh"),
        T("r", "t7", "t7", [0, 1, 3, 2]),
        T("t7", "D", "t8", [0, 1, 3, 2]),            # cancel at a graph output: relu writes D
        T("X", "t9", "t9", [1, 0, 2, 3]),
        T("t9", "t10", "t10", [0, 2, 1, 3]),         # t9 folds into t10
        T("t10", "t11", "t11", [2, 0, 1, 3]),        # then t10, t11 cancel
        n("Exp", ["t11"], ["E"], name="exp"),
    ]
    r = np.maximum(x, 0)
    outs = [sigmoid(r.transpose(1, 2, 0, 3)), -r.transpose(3, 2, 1, 0), np.tanh(r), r, np.exp(x)]
    save("transpose", nodes, [vi("X", F32, [2, 3, 4, 5])],
         [vi("A", F32, [3, 4, 2, 5]), vi("B", F32, [5, 4, 3, 2]), vi("C", F32, [2, 3, 4, 5]),
          vi("D", F32, [2, 3, 4, 5]), vi("E", F32, [2, 3, 4, 5])],
         {}, [x], [o.astype(np.float32) for o in outs])


if __name__ == "__main__":
    rng = np.random.default_rng(20240611)
    identity_model(rng)
    conv_bn_model(rng)
    conv_bn_f64_model(rng)
    transpose_model(rng)
