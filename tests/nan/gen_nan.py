#!/usr/bin/env python3
"""gen_nan.py OUT_DIR: models whose inputs hold NaN, +inf and -inf at chosen places, one
folder per op family, with the outputs the ONNX ops give (numpy, float64: the ONNX
reference's semantics) for tests/nan/run_nan.sh.

Every case is written twice in one model: a branch the engine's passes fuse (Conv + Add +
Relu -> FusedConv, MatMul + bias + Relu -> FusedMatMul, elementwise chains -> FusedChain,
Concat + chain -> FusedChain with parts) and a twin of the same ops whose intermediates
are graph outputs, which no pass may fuse. Both are compared with numpy: NaN where numpy
has NaN, infinities of the same sign, the finite values within the tolerance, so a fused
kernel that turned NaN into 0 (fmaxf) fails, and so does an unfused one.

The special values reach a convolution's epilogue through its residual input Z (and, in
one 1x1 case, through X: a pointwise convolution is a plain sum of products in every
algorithm, where a 3x3 one may run as Winograd or FFT and spread a NaN over its tile).

Semantics followed (numpy, as the ONNX reference implementations):
- Relu / Clip / LeakyRelu / HardSigmoid / HardSwish / ThresholdedRelu: NaN passes;
- Max / Min (elementwise, ReduceMax / ReduceMin, GlobalMaxPool): NaN when any operand is;
- MaxPool: NaN for a window holding one, as PyTorch and np.max (the ONNX reference's
  pool() skips NaN only because it marks padding with NaN: padding is never read here);
- AveragePool: the mean of the window's values (NaN if one is NaN, inf - inf = NaN);
- Softmax / LogSoftmax: x - max(x), exp, sum: a row holding +inf or NaN is all NaN, an
  all -inf row NaN, -inf entries of other rows 0 (LogSoftmax: -inf).

Writes OUT_DIR/<family>/{model.onnx, in_*.npy, ref_*.npy, args.txt, expect.txt} and
OUT_DIR/families.txt; args.txt holds infer's --input/--reference arguments one per line,
expect.txt the --verbose lines (extended regexes) that show the fusions happened.
Needs python3-onnx and python3-numpy (Debian's /usr/bin/python3)."""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17
rng = np.random.default_rng(20261202)


def poison(a, n_nan, n_pinf, n_ninf, where=None):
    """a copy of a with NaN, +inf, -inf at distinct random flat positions (of `where`)"""
    a = a.copy()
    flat = a.reshape(-1)
    pool = np.arange(flat.size) if where is None else np.asarray(where)
    idx = rng.choice(pool, n_nan + n_pinf + n_ninf, replace=False)
    flat[idx[:n_nan]] = np.nan
    flat[idx[n_nan:n_nan + n_pinf]] = np.inf
    flat[idx[n_nan + n_pinf:]] = -np.inf
    return a


def uni(*shape, lo=-1.0, hi=1.0):
    return rng.uniform(lo, hi, shape).astype(np.float32)


class Model:
    """Builds one family's graph: inputs with their data, constants, nodes, outputs with
    their numpy values."""

    def __init__(self, name):
        self.name, self.nodes, self.inits = name, [], []
        self.inputs, self.outputs = [], []
        self.k = 0
        self.cases = 0
        self.fused = {}  # pass name -> nodes it should remove

    def input(self, name, data):
        self.inputs.append((name, data.astype(np.float32)))
        return name, data.astype(np.float64)

    def const(self, data, dtype=np.float32):
        name = "c%d" % len(self.inits)
        self.inits.append(numpy_helper.from_array(np.asarray(data, dtype=dtype), name))
        return name

    def node(self, op, ins, out=None, **attrs):
        self.k += 1
        out = out or "%s_%d" % (op.lower(), self.k)
        self.nodes.append(helper.make_node(op, ins, [out], name=out, **attrs))
        return out

    def output(self, name, value):
        self.outputs.append((name, np.asarray(value, dtype=np.float64)))

    def expect_fused(self, pass_name, removed):
        self.fused[pass_name] = self.fused.get(pass_name, 0) + removed

    def write(self, root):
        d = os.path.join(root, self.name)
        os.makedirs(d, exist_ok=True)
        g = helper.make_graph(
            self.nodes, self.name,
            [helper.make_tensor_value_info(n, TensorProto.FLOAT, list(v.shape))
             for n, v in self.inputs],
            [helper.make_tensor_value_info(n, TensorProto.FLOAT, list(v.shape))
             for n, v in self.outputs],
            self.inits)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", OPSET)],
                              producer_name="tests/nan/gen_nan.py")
        m.ir_version = 8
        onnx.checker.check_model(m)
        onnx.save(m, os.path.join(d, "model.onnx"))
        args = []
        for n, v in self.inputs:
            np.save(os.path.join(d, "in_%s.npy" % n), v)
            args += ["--input", "%s=%s" % (n, os.path.join(d, "in_%s.npy" % n))]
        for n, v in self.outputs:
            np.save(os.path.join(d, "ref_%s.npy" % n), v.astype(np.float32))
            args += ["--reference", "%s=%s" % (n, os.path.join(d, "ref_%s.npy" % n))]
        with open(os.path.join(d, "args.txt"), "w") as f:
            f.write("\n".join(args) + "\n")
        with open(os.path.join(d, "expect.txt"), "w") as f:
            for p, k in sorted(self.fused.items()):
                f.write("pass %s: nodes [0-9]+ -> [0-9]+ \\(%s removed\\)\n"
                        % (p, "[1-9][0-9]*" if k is None else k))


# ---- numpy references ------------------------------------------------------------------

def conv2d(x, w, b, stride=1, pad=0, group=1):
    n, c, h, wd = x.shape
    m, cg, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh, ow = (h + 2 * pad - kh) // stride + 1, (wd + 2 * pad - kw) // stride + 1
    out = np.zeros((n, m, oh, ow))
    mg = m // group
    for g in range(group):
        xs = xp[:, g * cg:(g + 1) * cg]
        ws = w[g * mg:(g + 1) * mg].astype(np.float64)
        for i in range(kh):
            for j in range(kw):
                patch = xs[:, :, i:i + stride * (oh - 1) + 1:stride, j:j + stride * (ow - 1) + 1:stride]
                out[:, g * mg:(g + 1) * mg] += np.einsum("nchw,oc->nohw", patch, ws[:, :, i, j])
    return out + b.reshape(1, -1, 1, 1)


def act_ref(kind, v, a=0.0, b=0.0):
    with np.errstate(invalid="ignore", over="ignore"):
        if kind == "Relu":
            return np.maximum(v, 0)  # numpy.maximum keeps NaN
        if kind == "LeakyRelu":
            return np.where(v < 0, a * v, v)
        if kind == "Clip":
            return np.clip(v, a, b)
        if kind == "HardSigmoid":
            return np.clip(a * v + b, 0, 1)
        if kind == "HardSwish":
            return v * np.clip(v / 6 + 0.5, 0, 1)
        if kind == "Sigmoid":
            return 1 / (1 + np.exp(-v))
        if kind == "Tanh":
            return np.tanh(v)
        if kind == "ThresholdedRelu":
            y = np.clip(v, a, np.inf)
            y[y == a] = 0
            return y
    raise ValueError(kind)


def act_node(m, kind, x, a=0.0, b=0.0, out=None):
    if kind == "Clip":
        return m.node("Clip", [x, m.const(a), m.const(b)], out=out)
    if kind == "LeakyRelu":
        return m.node("LeakyRelu", [x], out=out, alpha=a)
    if kind == "HardSigmoid":
        return m.node("HardSigmoid", [x], out=out, alpha=a, beta=b)
    if kind == "ThresholdedRelu":
        return m.node("ThresholdedRelu", [x], out=out, alpha=a)
    return m.node(kind, [x], out=out)


def fused_and_twin(m, tag, build, ref):
    """build(m, twin, out) -> its last value, named out; the twin marks its intermediates
    as outputs (build calls m.output for them). ref: the numpy value. The outputs are
    named <tag>_fused and <tag>_unfused (what the mismatch lines name)."""
    m.cases += 1
    tag = "c%02d_%s" % (m.cases, tag)
    m.output(build(m, False, tag + "_fused"), ref)
    m.output(build(m, True, tag + "_unfused"), ref)


def softmax_ref(x, axis, log):
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        mx = np.max(x, axis=axis, keepdims=True)
        t = np.exp(x - mx)
        s = np.sum(t, axis=axis, keepdims=True)
        return (x - mx - np.log(s)) if log else t / s


def maxpool_ref(x, k, s, p):
    n, c, h, w = x.shape
    xp = np.pad(x, ((0, 0), (0, 0), (p, p), (p, p)), constant_values=-np.inf)
    oh, ow = (h + 2 * p - k) // s + 1, (w + 2 * p - k) // s + 1
    y = np.empty((n, c, oh, ow))
    for i in range(oh):
        for j in range(ow):
            y[:, :, i, j] = np.max(xp[:, :, i * s:i * s + k, j * s:j * s + k], axis=(2, 3))
    return y


def avgpool_ref(x, k, s, p):
    n, c, h, w = x.shape
    oh, ow = (h + 2 * p - k) // s + 1, (w + 2 * p - k) // s + 1
    y = np.empty((n, c, oh, ow))
    with np.errstate(invalid="ignore"):
        for i in range(oh):
            for j in range(ow):
                h0, w0 = max(i * s - p, 0), max(j * s - p, 0)
                h1, w1 = min(i * s - p + k, h), min(j * s - p + k, w)
                y[:, :, i, j] = np.mean(x[:, :, h0:h1, w0:w1], axis=(2, 3))  # count_include_pad 0
    return y


# ---- the families ------------------------------------------------------------------------

C, H, W = 16, 6, 6


def conv_family():
    """Conv + residual Z + activation: FusedConv's epilogue on every GPU implementation
    (cuDNN's fused call and graph engines, cuBLASLt's 1x1 and patch GEMMs, our epilogue,
    pointwise and depthwise kernels), against the three ops unfused."""
    m = Model("conv_act")
    x, xv = m.input("x", uni(1, C, H, W))
    z, zv = m.input("z", poison(uni(1, C, H, W), 12, 8, 8))
    zs, zsv = m.input("zs", poison(uni(1, C, H // 2, W // 2), 6, 4, 4))
    # the measured bug: a NaN in X through a 1x1 convolution and ReLU
    xn, xnv = m.input("xn", poison(uni(1, C, H, W), 3, 2, 2, where=np.arange(H * W) * 1))
    cases = [  # (act, alpha, beta, kernel, stride, pad, group, input, z)
        ("Relu", 0, 0, 3, 1, 1, 1, "x", "z"),
        ("Clip", 0.0, 6.0, 3, 1, 1, 1, "x", "z"),  # ReLU6: cuDNN fuses it
        ("Clip", -0.5, 0.5, 3, 1, 1, 1, "x", "z"),
        ("LeakyRelu", 0.1, 0, 3, 1, 1, 1, "x", "z"),
        ("HardSigmoid", 0.2, 0.5, 3, 1, 1, 1, "x", "z"),
        ("HardSwish", 0, 0, 3, 1, 1, 1, "x", "z"),
        ("Sigmoid", 0, 0, 3, 1, 1, 1, "x", "z"),
        ("Relu", 0, 0, 1, 1, 0, 1, "x", "z"),  # pointwise: cuBLASLt 1x1, wmma-1x1
        ("Clip", 0.0, 6.0, 1, 1, 0, 1, "x", "z"),
        ("Relu", 0, 0, 3, 1, 1, C, "x", "z"),  # depthwise kernels
        ("Clip", 0.0, 6.0, 3, 1, 1, C, "x", "z"),
        ("Relu", 0, 0, 2, 2, 0, 1, "x", "zs"),  # non-overlapping: patch GEMM
        ("Relu", 0, 0, 1, 1, 0, 1, "xn", None),  # NaN / inf in X
    ]
    vals = {"x": xv, "xn": xnv, "z": zv, "zs": zsv}
    for act, a, b, k, s, p, grp, xin, zin in cases:
        w = rng.normal(0, 0.3, (C, C // grp, k, k)).astype(np.float32)
        bias = rng.normal(0, 0.1, (C,)).astype(np.float32)
        wn, bn = m.const(w), m.const(bias)
        with np.errstate(invalid="ignore", over="ignore"):
            conv = conv2d(vals[xin], w, bias, s, p, grp)
            pre = conv + vals[zin] if zin else conv
        ref = act_ref(act, pre, a, b)

        def build(m, twin, out, w=wn, b_=bn, k=k, s=s, p=p, grp=grp, xin=xin, zin=zin, act=act,
                  a=a, b=b, conv=conv, pre=pre):
            c = m.node("Conv", [xin, w, b_], kernel_shape=[k, k], strides=[s, s],
                       pads=[p, p, p, p], group=grp)
            if twin:
                m.output(c, conv)
            if zin:
                c = m.node("Add", [c, zin])
                if twin:
                    m.output(c, pre)
            return act_node(m, act, c, a, b, out)

        tag = "%s_k%ds%d%s_%s%s" % (act, k, s, "dw" if grp > 1 else "", xin, "_" + zin if zin else "")
        fused_and_twin(m, tag, build, ref)
        m.expect_fused("fuse-conv-epilogue", 2 if zin else 1)
    return m


def matmul_family():
    """MatMul / Gemm + bias (+ Z) + Relu -> FusedMatMul (cuBLASLt's ReLU epilogue)."""
    m = Model("matmul")
    a, av = m.input("a", poison(uni(8, 32), 2, 1, 1))
    z, zv = m.input("z", poison(uni(8, 16), 6, 4, 4))
    wt = rng.normal(0, 0.3, (32, 16)).astype(np.float32)
    bias = rng.normal(0, 0.1, (16,)).astype(np.float32)
    wn, bn, wtn = m.const(wt), m.const(bias), m.const(wt.T.copy())
    with np.errstate(invalid="ignore", over="ignore"):
        prod = av @ wt.astype(np.float64)
        pb = prod + bias
        pbz = pb + zv

    def mm_bias_z(m, twin, out):
        y = m.node("MatMul", [a, wn])
        if twin:
            m.output(y, prod)
        y = m.node("Add", [y, bn])
        if twin:
            m.output(y, pb)
        y = m.node("Add", [y, z])
        if twin:
            m.output(y, pbz)
        return m.node("Relu", [y], out=out)

    fused_and_twin(m, "mm_bias_z", mm_bias_z, act_ref("Relu", pbz))
    m.expect_fused("fuse-matmul-epilogue", 3)

    def gemm_relu(m, twin, out):
        y = m.node("Gemm", [a, wtn, bn], transB=1)
        if twin:
            m.output(y, pb)
        return m.node("Relu", [y], out=out)

    fused_and_twin(m, "gemm_relu", gemm_relu, act_ref("Relu", pb))
    m.expect_fused("fuse-matmul-epilogue", 1)
    return m


def maxmin_family():
    """Max / Min: the elementwise ops alone, variadic, broadcast, and inside chains."""
    m = Model("maxmin")
    shape = (4, 6, 8)
    a, av = m.input("a", poison(uni(*shape), 10, 6, 6))
    b, bv = m.input("b", poison(uni(*shape), 10, 6, 6))
    c, cv = m.input("c", poison(uni(*shape), 6, 4, 4))
    with np.errstate(invalid="ignore"):
        m.output(m.node("Max", [a, b]), np.maximum(av, bv))
        m.output(m.node("Min", [a, b]), np.minimum(av, bv))
        m.output(m.node("Max", [a, b, c]), np.maximum(np.maximum(av, bv), cv))
        m.output(m.node("Min", [a, m.const(0.25)]), np.minimum(av, 0.25))
        mx = np.maximum(av, bv)
        mc = mx * cv
        mi = np.minimum(mc, 0.5)

        def chain(m, twin, out):
            y = m.node("Max", [a, b])
            if twin:
                m.output(y, mx)
            y = m.node("Mul", [y, c])
            if twin:
                m.output(y, mc)
            y = m.node("Min", [y, m.const(0.5)])
            if twin:
                m.output(y, mi)
            return m.node("Relu", [y], out=out)

        fused_and_twin(m, "max_mul_min_relu", chain, act_ref("Relu", mi))
    m.expect_fused("fuse-elementwise", 3)
    return m


def chain_family():
    """Elementwise chains (FusedChain) ending in each activation of ew_chain_ops.h."""
    m = Model("chain")
    shape = (2, 8, 5, 6)
    x, xv = m.input("x", poison(uni(*shape), 12, 8, 8))
    y, yv = m.input("y", poison(uni(*shape, lo=-2, hi=2), 6, 4, 4))
    s = uni(1, 8, 1, 1, lo=0.5, hi=1.5)
    sn = m.const(s)
    acts = [("Relu", 0, 0), ("LeakyRelu", 0.2, 0), ("Clip", 0.0, 6.0), ("Clip", -0.3, 0.4),
            ("HardSigmoid", 0.25, 0.5), ("HardSwish", 0, 0), ("Tanh", 0, 0)]
    with np.errstate(invalid="ignore", over="ignore"):
        mul = xv * s
        add = mul + yv
    for act, al, be in acts:
        def build(m, twin, out, act=act, al=al, be=be):
            v = m.node("Mul", [x, sn])
            if twin:
                m.output(v, mul)
            v = m.node("Add", [v, y])
            if twin:
                m.output(v, add)
            return act_node(m, act, v, al, be, out)

        fused_and_twin(m, "mul_add_" + act, build, act_ref(act, add, al, be))
        m.expect_fused("fuse-elementwise", 2)
    # the unfused activations on their own
    for act, al, be in acts + [("ThresholdedRelu", 0.3, 0)]:
        m.output(act_node(m, act, x, al, be), act_ref(act, xv, al, be))
    return m


def concat_family():
    """Concat along the last axis read by a chain: the parts read where they lie."""
    m = Model("concat_chain")
    p0, p0v = m.input("p0", poison(uni(2, 4, 5, 8), 6, 3, 3))
    p1, p1v = m.input("p1", poison(uni(2, 4, 5, 4), 4, 2, 2))
    r, rv = m.input("r", poison(uni(2, 4, 5, 12), 4, 2, 2))
    s = uni(12, lo=0.5, hi=1.5)
    sn = m.const(s)
    with np.errstate(invalid="ignore"):
        cat = np.concatenate([p0v, p1v], axis=-1)
        mul = cat * s
        add = mul + rv

    def build(m, twin, out):
        v = m.node("Concat", [p0, p1], axis=-1)
        if twin:
            m.output(v, cat)
        v = m.node("Mul", [v, sn])
        if twin:
            m.output(v, mul)
        v = m.node("Add", [v, r])
        if twin:
            m.output(v, add)
        return m.node("Relu", [v], out=out)

    fused_and_twin(m, "concat_mul_add_relu", build, act_ref("Relu", add))
    m.expect_fused("fuse-elementwise", 2)
    m.expect_fused("fuse-concat-chain", 1)
    return m


def pool_family():
    """MaxPool / AveragePool / GlobalMaxPool / GlobalAveragePool / ReduceMax / ReduceMin
    over H, W on the input (NCHW) and after a convolution with a residual (channels-last
    on fp16 GPUs)."""
    m = Model("pool")
    x, xv = m.input("x", poison(uni(1, C, H, W), 12, 8, 8))
    xc, xcv = m.input("xc", uni(1, C, H, W))
    z, zv = m.input("z", poison(uni(1, C, H, W), 12, 8, 8))
    w = rng.normal(0, 0.3, (C, C, 1, 1)).astype(np.float32)
    bias = rng.normal(0, 0.1, (C,)).astype(np.float32)
    with np.errstate(invalid="ignore"):
        cz = conv2d(xcv, w, bias) + zv
    conv = m.node("Conv", [xc, m.const(w), m.const(bias)], kernel_shape=[1, 1])
    t = m.node("Add", [conv, z])
    m.expect_fused("fuse-conv-epilogue", 1)
    with np.errstate(invalid="ignore"):
        for src, v in ((x, xv), (t, cz)):
            m.output(m.node("MaxPool", [src], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
                     maxpool_ref(v, 3, 1, 1))
            m.output(m.node("MaxPool", [src], kernel_shape=[2, 2], strides=[2, 2]),
                     maxpool_ref(v, 2, 2, 0))
            m.output(m.node("AveragePool", [src], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
                     avgpool_ref(v, 3, 1, 1))
            m.output(m.node("GlobalMaxPool", [src]), np.max(v, axis=(2, 3), keepdims=True))
            m.output(m.node("GlobalAveragePool", [src]), np.mean(v, axis=(2, 3), keepdims=True))
            # over H, W: on NHWC data after the convolution (fp16 GPUs: reduce-nhwc)
            m.output(m.node("ReduceMax", [src], axes=[2, 3], keepdims=1),
                     np.max(v, axis=(2, 3), keepdims=True))
            m.output(m.node("ReduceMin", [src], axes=[2, 3], keepdims=1),
                     np.min(v, axis=(2, 3), keepdims=True))
    return m


def softmax_family():
    """Softmax / LogSoftmax rows with NaN, +inf, -inf, all -inf; rows of 1500 (the
    block kernel), a middle axis (the column kernel); ReduceMax / ReduceMin."""
    m = Model("softmax")
    rows = uni(8, 10, lo=-3, hi=3)
    rows[1, 3] = np.nan
    rows[2, 4] = np.inf
    rows[3, [0, 5, 9]] = -np.inf
    rows[4, :] = -np.inf
    rows[5, 2], rows[5, 7] = np.inf, -np.inf
    rows[6, 1], rows[6, 2] = np.inf, np.inf
    x, xv = m.input("x", rows)
    long_ = uni(3, 1500, lo=-3, hi=3)
    long_[0, 777] = np.nan
    long_[1, 1234] = np.inf
    long_[2, [5, 600, 1499]] = -np.inf
    xl, xlv = m.input("xl", long_)
    mid = uni(2, 5, 3, lo=-3, hi=3)
    mid[0, 2, 0] = np.nan
    mid[0, 1, 1] = np.inf
    mid[1, :, 2] = -np.inf
    mid[1, 3, 0] = -np.inf
    xm, xmv = m.input("xm", mid)
    for op, log in (("Softmax", False), ("LogSoftmax", True)):
        m.output(m.node(op, [x], axis=-1), softmax_ref(xv, -1, log))
        m.output(m.node(op, [xl], axis=-1), softmax_ref(xlv, -1, log))
        m.output(m.node(op, [xm], axis=1), softmax_ref(xmv, 1, log))
    for op, f in (("ReduceMax", np.max), ("ReduceMin", np.min)):
        m.output(m.node(op, [x], axes=[-1], keepdims=1), f(xv, axis=-1, keepdims=True))
        m.output(m.node(op, [xm], axes=[1], keepdims=1), f(xmv, axis=1, keepdims=True))
        m.output(m.node(op, [xl], axes=[1], keepdims=0), f(xlv, axis=1))
    return m


def attention_family():
    """Q.K^T * scale -> Softmax -> .V as FusedAttention (the flash kernel in fp16, the
    row kernel in fp32): a row whose first 64 keys score -inf (a whole key tile) and the
    rest finite stays finite; a NaN in Q makes its row NaN; one -inf key gets weight 0."""
    m = Model("attention")
    b, hh, sq, sk, d = 1, 2, 20, 96, 64
    q = uni(b, hh, sq, d, lo=0.1, hi=1.0)  # positive: q . (-inf) = -inf
    k = uni(b, hh, sk, d)
    v = uni(b, hh, sk, d)
    k[0, 0, :64, 0] = -np.inf  # head 0: the first key tile scores -inf for every row
    k[0, 1, 10, 5] = -np.inf   # head 1: one key scores -inf
    q[0, 1, 3, 7] = np.nan     # head 1, row 3: NaN
    qn, qv = m.input("q", q)
    kn, kv = m.input("k", k)
    vn, vv = m.input("v", v)
    scale = 1 / np.sqrt(d)
    with np.errstate(invalid="ignore", over="ignore"):
        sc = np.einsum("bhqd,bhkd->bhqk", qv, kv)
        ss = sc * scale
        pr = softmax_ref(ss, -1, False)
        o = np.einsum("bhqk,bhkd->bhqd", pr, vv)

    def build(m, twin, out):
        kt = m.node("Transpose", [kn], perm=[0, 1, 3, 2])
        y = m.node("MatMul", [qn, kt])
        if twin:
            m.output(y, sc)
        y = m.node("Mul", [y, m.const(np.float32(scale))])
        if twin:
            m.output(y, ss)
        y = m.node("Softmax", [y], axis=-1)
        if twin:
            m.output(y, pr)
        return m.node("MatMul", [y, vn], out=out)

    fused_and_twin(m, "attn", build, o)
    m.fused["fuse-attention"] = None  # the count depends on the Transpose left to remove-dead
    return m


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    fams = [conv_family(), matmul_family(), maxmin_family(), chain_family(), concat_family(),
            pool_family(), softmax_family(), attention_family()]
    for f in fams:
        f.write(out)
    with open(os.path.join(out, "families.txt"), "w") as f:
        f.write("\n".join(x.name for x in fams) + "\n")


if __name__ == "__main__":
    main()
