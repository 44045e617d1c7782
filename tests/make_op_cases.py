#!/usr/bin/env python3
"""Writes node tests, in the ONNX backend test layout (test_NAME/model.onnx,
test_data_set_0/{input,output}_K.pb; in OUTDIR/exact when every output is an integer,
else OUTDIR/float), for what the ONNX suite leaves out of the
quantization ops and the smaller ops of ops/misc.c: per-channel and grouped QLinearConv,
per-channel zero points, K long enough that an int32 sum passes 2^24, per-row and
per-column MatMulInteger / QLinearMatMul with batch broadcasting, blocked quantization
with a remainder block, the precision and output_dtype attributes, rounding ties and
saturation, int32 dequantization, and corner cases of Unique, Compress, Hardmax,
LpPool, Col2Im, Upsample, EyeLike, MeanVarianceNormalization, ReverseSequence and
CenterCropPad. Expected outputs are computed here with NumPy from the ONNX definitions,
independently of infer. Also writes refusals.txt: models infer must refuse, one line
"name|exit code|message substring".

    python3 tests/make_op_cases.py OUTDIR      (tests/run_op_cases.sh runs them)
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(20261202)
OUT = None

NP_TO_ONNX = {np.float32: TensorProto.FLOAT, np.float16: TensorProto.FLOAT16,
              np.float64: TensorProto.DOUBLE, np.int8: TensorProto.INT8,
              np.uint8: TensorProto.UINT8, np.int16: TensorProto.INT16,
              np.uint16: TensorProto.UINT16, np.int32: TensorProto.INT32,
              np.int64: TensorProto.INT64, np.bool_: TensorProto.BOOL}


def onnx_type(a):
    return NP_TO_ONNX[a.dtype.type]


def case(name, op, inputs, outputs, opset, **attrs):
    """inputs: list of (name, array or None for an omitted input); outputs likewise.
    Cases whose outputs are all integers go to OUT/exact (compared exactly), the others
    to OUT/float (the ONNX tolerance)."""
    exact = all(np.issubdtype(a.dtype, np.integer) for _, a in outputs)
    d = os.path.join(OUT, "exact" if exact else "float", "test_" + name)
    os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
    in_names = [n if a is not None else "" for n, a in inputs]
    node = helper.make_node(op, in_names, [n for n, _ in outputs], name=name, **attrs)
    vin = [helper.make_tensor_value_info(n, onnx_type(a), a.shape) for n, a in inputs
           if a is not None]
    vout = [helper.make_tensor_value_info(n, onnx_type(a), None) for n, a in outputs]
    g = helper.make_graph([node], name, vin, vout)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    with open(os.path.join(d, "model.onnx"), "wb") as f:
        f.write(m.SerializeToString())
    k = 0
    for n, a in inputs:
        if a is None:
            continue
        t = numpy_helper.from_array(a, n)
        with open(os.path.join(d, "test_data_set_0", f"input_{k}.pb"), "wb") as f:
            f.write(t.SerializeToString())
        k += 1
    for k, (n, a) in enumerate(outputs):
        t = numpy_helper.from_array(a, n)
        with open(os.path.join(d, "test_data_set_0", f"output_{k}.pb"), "wb") as f:
            f.write(t.SerializeToString())


def refusal(lines, name, op, inputs, opset, code, text, **attrs):
    """A model infer must refuse: written as OUT/refuse_NAME.onnx."""
    node = helper.make_node(op, [n for n, _ in inputs], ["y"], name=name, **attrs)
    vin = [helper.make_tensor_value_info(n, onnx_type(a), a.shape) for n, a in inputs]
    vout = onnx.ValueInfoProto()
    vout.name = "y"  # untyped: shape inference decides
    g = helper.make_graph([node], name, vin, [vout])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    with open(os.path.join(OUT, f"refuse_{name}.onnx"), "wb") as f:
        f.write(m.SerializeToString())
    lines.append(f"refuse_{name}|{code}|{text}")


# ---- reference formulas (NumPy, from the ONNX definitions) -----------------------------

def sat(v, dtype):
    info = np.iinfo(dtype)
    return np.clip(v, info.min, info.max).astype(dtype)


def conv_int(x, w, group, strides, pads, dilations):
    """Exact integer N-D (here 2-D) convolution in int64; pads = [hb, wb, he, we]."""
    n, c, h, wd = x.shape
    m, cg, kh, kw = w.shape
    xp = np.zeros((n, c, h + pads[0] + pads[2], wd + pads[1] + pads[3]), np.int64)
    xp[:, :, pads[0]:pads[0] + h, pads[1]:pads[1] + wd] = x
    ekh, ekw = (kh - 1) * dilations[0] + 1, (kw - 1) * dilations[1] + 1
    oh = (xp.shape[2] - ekh) // strides[0] + 1
    ow = (xp.shape[3] - ekw) // strides[1] + 1
    y = np.zeros((n, m, oh, ow), np.int64)
    mg = m // group
    for g in range(group):
        xs = xp[:, g * cg:(g + 1) * cg]
        ws = w[g * mg:(g + 1) * mg].astype(np.int64)
        for i in range(kh):
            for j in range(kw):
                patch = xs[:, :, i * dilations[0]:i * dilations[0] + strides[0] * (oh - 1) + 1:strides[0],
                           j * dilations[1]:j * dilations[1] + strides[1] * (ow - 1) + 1:strides[1]]
                y[:, g * mg:(g + 1) * mg] += np.einsum("nchw,mc->nmhw", patch, ws[:, :, i, j])
    return y


def wrap32(v):
    return ((np.asarray(v, np.int64) + 2**31) % 2**32 - 2**31).astype(np.int32)


def requant(acc, mult, zp, dtype):
    """round half to even (acc * mult) + zp, saturated; mult float32, product in double."""
    return sat(np.rint(acc.astype(np.float64) * mult.astype(np.float64)) + int(zp), dtype)


def quant_cases(refuse):
    # QLinearConv: per-channel w_scale, groups, strides, asymmetric pads, dilations, bias
    x = rng.integers(0, 256, (2, 4, 7, 6), dtype=np.uint8)
    w = rng.integers(-128, 128, (6, 2, 3, 3), dtype=np.int8)
    xs, xz = np.array(0.05, np.float32), np.array(3, np.uint8)
    ws = rng.uniform(0.002, 0.02, (6,)).astype(np.float32)
    wz = np.zeros((6,), np.int8)
    ys, yz = np.array(0.7, np.float32), np.array(128, np.uint8)
    b = rng.integers(-2000, 2000, (6,), dtype=np.int32)
    attrs = dict(group=2, strides=[2, 1], pads=[1, 0, 1, 2], dilations=[1, 2], kernel_shape=[3, 3])
    acc = conv_int(x.astype(np.int64) - 3, w, 2, [2, 1], [1, 0, 1, 2], [1, 2]) + b.reshape(1, -1, 1, 1)
    mult = ((xs * ws) / ys).astype(np.float32).reshape(1, -1, 1, 1)
    case("qlinearconv_per_channel_group", "QLinearConv",
         [("x", x), ("x_scale", xs), ("x_zero_point", xz), ("w", w), ("w_scale", ws),
          ("w_zero_point", wz), ("y_scale", ys), ("y_zero_point", yz), ("B", b)],
         [("y", requant(acc, mult, 128, np.uint8))], 10, **attrs)

    # ConvInteger: int8 x with a zero point, uint8 w with per-channel zero points, pads
    x = rng.integers(-128, 128, (1, 3, 5, 5), dtype=np.int8)
    w = rng.integers(0, 256, (4, 3, 2, 2), dtype=np.uint8)
    wz = rng.integers(0, 256, (4,), dtype=np.uint8)
    y = conv_int(x.astype(np.int64) + 2, w.astype(np.int64) - wz.astype(np.int64).reshape(-1, 1, 1, 1),
                 1, [1, 1], [1, 1, 1, 1], [1, 1])
    case("convinteger_per_channel_zero_point", "ConvInteger",
         [("x", x), ("w", w), ("x_zero_point", np.array(-2, np.int8)), ("w_zero_point", wz)],
         [("y", y.astype(np.int32))], 10, pads=[1, 1, 1, 1])

    # ConvInteger with K = 96*3*3 = 864 at full range: sums pass 2^24 (exactness)
    x = rng.integers(200, 256, (1, 96, 5, 5), dtype=np.uint8)
    w = rng.integers(200, 256, (3, 96, 3, 3), dtype=np.uint8)
    y = conv_int(x, w, 1, [1, 1], [0, 0, 0, 0], [1, 1])
    assert y.max() > 2**24
    case("convinteger_long_k_exact", "ConvInteger", [("x", x), ("w", w)],
         [("y", wrap32(y))], 10)

    # MatMulInteger: per-row a_zero_point [D1, D2, M, 1], per-column b_zero_point [N]
    a = rng.integers(0, 256, (2, 3, 4, 5), dtype=np.uint8)
    bm = rng.integers(-128, 128, (5, 6), dtype=np.int8)
    az = rng.integers(0, 256, (2, 3, 4, 1), dtype=np.uint8)
    bz = rng.integers(-128, 128, (6,), dtype=np.int8)
    y = np.matmul(a.astype(np.int64) - az, bm.astype(np.int64) - bz)
    case("matmulinteger_per_row_per_column", "MatMulInteger",
         [("A", a), ("B", bm), ("a_zero_point", az), ("b_zero_point", bz)],
         [("Y", y.astype(np.int32))], 10)

    # MatMulInteger: 1-D A against a batch of B, scalar zero points
    a = rng.integers(0, 256, (7,), dtype=np.uint8)
    bm = rng.integers(0, 256, (3, 7, 4), dtype=np.uint8)
    y = np.matmul(a.astype(np.int64) - 10, bm.astype(np.int64) - 20)
    case("matmulinteger_vector_batch", "MatMulInteger",
         [("A", a), ("B", bm), ("a_zero_point", np.array(10, np.uint8)),
          ("b_zero_point", np.array(20, np.uint8))], [("Y", y.astype(np.int32))], 10)

    # MatMulInteger, K = 700 at full range (int32 sums beyond 2^24)
    a = rng.integers(200, 256, (3, 700), dtype=np.uint8)
    bm = rng.integers(200, 256, (700, 2), dtype=np.uint8)
    y = np.matmul(a.astype(np.int64), bm.astype(np.int64))
    assert y.max() > 2**24
    case("matmulinteger_long_k_exact", "MatMulInteger", [("A", a), ("B", bm)],
         [("Y", wrap32(y))], 10)

    # QLinearMatMul (opset 21): per-row a_scale [D, M, 1], per-column b_scale [N]
    a = rng.integers(-128, 128, (3, 4, 8), dtype=np.int8)
    asc = rng.uniform(0.01, 0.05, (3, 4, 1)).astype(np.float32)
    az = rng.integers(-5, 5, (3, 4, 1), dtype=np.int8)
    bm = rng.integers(0, 256, (8, 5), dtype=np.uint8)
    bsc = rng.uniform(0.01, 0.05, (5,)).astype(np.float32)
    bz = rng.integers(100, 150, (5,), dtype=np.uint8)
    ys, yz = np.array(0.02, np.float32), np.array(-3, np.int8)
    acc = np.matmul(a.astype(np.int64) - az, bm.astype(np.int64) - bz)
    mult = ((asc * bsc.reshape(1, 1, -1)) / ys).astype(np.float32)
    case("qlinearmatmul_per_row_per_column", "QLinearMatMul",
         [("a", a), ("a_scale", asc), ("a_zero_point", az), ("b", bm), ("b_scale", bsc),
          ("b_zero_point", bz), ("y_scale", ys), ("y_zero_point", yz)],
         [("y", requant(acc, mult, -3, np.int8))], 21)

    # QuantizeLinear: blocked (opset 21) with a remainder block, int16 output
    x = rng.normal(0, 100, (2, 7, 3)).astype(np.float32)
    s = rng.uniform(0.01, 0.1, (2, 3, 3)).astype(np.float32)
    z = rng.integers(-100, 100, (2, 3, 3), dtype=np.int16)
    se, ze = np.repeat(s, 3, axis=1)[:, :7], np.repeat(z, 3, axis=1)[:, :7]
    y = sat(np.rint(x / se) + ze.astype(np.int64), np.int16)
    case("quantizelinear_blocked_remainder_int16", "QuantizeLinear",
         [("x", x), ("y_scale", s), ("y_zero_point", z)], [("y", y)], 21, axis=1, block_size=3)

    # QuantizeLinear: ties round half to even; saturation both ways (uint8 and int8)
    x = np.array([0.5, 1.5, 2.5, -0.5, -1.5, 3.5, 300.0, -300.0, 127.5, -128.5], np.float32)
    for dt, zp in ((np.uint8, 10), (np.int8, 0)):
        y = sat(np.rint(x / np.float32(1.0)) + zp, dt)
        case(f"quantizelinear_ties_saturate_{np.dtype(dt).name}", "QuantizeLinear",
             [("x", x), ("y_scale", np.array(1.0, np.float32)), ("y_zero_point", np.array(zp, dt))],
             [("y", y)], 13)

    # QuantizeLinear (23): precision = float16: operands and quotient in float16
    x = rng.normal(0, 3, (4, 5)).astype(np.float32)
    s = np.array(0.0123, np.float32)
    q = (x.astype(np.float16) / s.astype(np.float16)).astype(np.float16)
    case("quantizelinear_precision_float16", "QuantizeLinear",
         [("x", x), ("y_scale", s), ("y_zero_point", np.array(0, np.int8))],
         [("y", sat(np.rint(q.astype(np.float64)), np.int8))], 23, precision=TensorProto.FLOAT16)

    # QuantizeLinear (21): output_dtype without a zero point; float16 x and scale, axis 0
    x = rng.normal(0, 2, (3, 4)).astype(np.float16)
    s = np.array([0.01, 0.02, 0.05], np.float16)
    q = (x / s.reshape(3, 1)).astype(np.float16)
    case("quantizelinear_output_dtype_float16_axis0", "QuantizeLinear",
         [("x", x), ("y_scale", s)], [("y", sat(np.rint(q.astype(np.float64)), np.int8))], 21,
         axis=0, output_dtype=TensorProto.INT8)

    # DequantizeLinear: int32 per axis (a bias), axis 0
    x = rng.integers(-2**30, 2**30, (3, 4), dtype=np.int32)
    s = rng.uniform(1e-6, 1e-4, (3,)).astype(np.float32)
    z = rng.integers(-1000, 1000, (3,), dtype=np.int32)
    y = ((x.astype(np.float64) - z.reshape(3, 1)) * s.reshape(3, 1)).astype(np.float32)
    case("dequantizelinear_int32_axis0", "DequantizeLinear",
         [("x", x), ("x_scale", s), ("x_zero_point", z)], [("y", y)], 13, axis=0)

    # DequantizeLinear (23): blocked on the last axis, output_dtype float16
    x = rng.integers(0, 256, (2, 5), dtype=np.uint8)
    s = rng.uniform(0.01, 0.1, (2, 3)).astype(np.float32)
    z = rng.integers(0, 256, (2, 3), dtype=np.uint8)
    se, ze = np.repeat(s, 2, axis=1)[:, :5], np.repeat(z, 2, axis=1)[:, :5]
    y = ((x.astype(np.float32) - ze.astype(np.float32)) * se).astype(np.float16)
    case("dequantizelinear_blocked_output_float16", "DequantizeLinear",
         [("x", x), ("x_scale", s), ("x_zero_point", z)], [("y", y)], 23, axis=-1, block_size=2,
         output_dtype=TensorProto.FLOAT16)

    # refusals: float8 / int4 targets, attributes of later opsets, mismatched shapes
    xf = np.zeros((2, 3), np.float32)
    refusal(refuse, "quantize_output_float8", "QuantizeLinear",
            [("x", xf), ("s", np.array(1.0, np.float32))], 21, 3, "float8e4m3fn",
            output_dtype=17)  # FLOAT8E4M3FN (newer onnx)
    refusal(refuse, "quantize_output_int4", "QuantizeLinear",
            [("x", xf), ("s", np.array(1.0, np.float32))], 21, 3, "int4", output_dtype=22)
    refusal(refuse, "quantize_axis_at_opset10", "QuantizeLinear",
            [("x", xf), ("s", np.array(1.0, np.float32))], 10, 2,
            "attribute 'axis' does not exist at opset 10", axis=0)
    refusal(refuse, "quantize_per_axis_wrong_length", "QuantizeLinear",
            [("x", xf), ("s", np.ones((2,), np.float32))], 13, 2, "per-axis scale")
    refusal(refuse, "dequantize_zero_point_dtype", "DequantizeLinear",
            [("x", np.zeros((2, 3), np.uint8)), ("s", np.array(1.0, np.float32)),
             ("z", np.array(0, np.int8))], 13, 2, "x_zero_point is int8")
    refusal(refuse, "qlinearmatmul_y_scale_vector", "QLinearMatMul",
            [("a", np.zeros((2, 3), np.uint8)), ("as", np.array(1.0, np.float32)),
             ("az", np.array(0, np.uint8)), ("b", np.zeros((3, 2), np.uint8)),
             ("bs", np.array(1.0, np.float32)), ("bz", np.array(0, np.uint8)),
             ("ys", np.ones((2,), np.float32)), ("yz", np.array(0, np.uint8))], 10, 2,
            "y_scale must be a scalar")


def misc_cases(refuse):
    # Unique, not sorted, along axis 0 of an int64 matrix with repeated rows
    x = np.array([[3, 1], [0, 2], [3, 1], [0, 2], [-1, 5], [3, 1]], np.int64)
    order = []  # first occurrences, in order
    for i, row in enumerate(x):
        if not any((x[j] == row).all() for j in order):
            order.append(i)
    y = x[order]
    inv = np.array([next(k for k, j in enumerate(order) if (x[j] == row).all()) for row in x],
                   np.int64)
    cnt = np.array([int(sum((r == x[j]).all() for r in x)) for j in order], np.int64)
    case("unique_rows_first_occurrence", "Unique", [("X", x)],
         [("Y", y), ("indices", np.array(order, np.int64)), ("inverse_indices", inv),
          ("counts", cnt)], 11, axis=0, sorted=0)

    # Compress without axis (flattened), condition shorter than the input
    x = rng.normal(0, 1, (3, 4)).astype(np.float32)
    c = np.array([True, False, True, True, False, True, False], np.bool_)
    case("compress_flat_short_condition", "Compress", [("input", x), ("condition", c)],
         [("output", x.reshape(-1)[:7][c])], 11)

    # Hardmax at opset 11: the input coerced to 2-D at axis 1; ties pick the first
    x = np.array([[[1, 3], [3, 0]], [[2, 2], [0, 2]]], np.float32)
    flat = x.reshape(2, 4)
    y = np.zeros_like(flat)
    y[np.arange(2), flat.argmax(axis=1)] = 1
    case("hardmax_opset11_coerced_ties", "Hardmax", [("x", x)], [("y", y.reshape(x.shape))], 11)

    # LpPool p = 3 with ceil_mode and dilations (18)
    x = rng.normal(0, 1, (1, 2, 6, 8)).astype(np.float32)
    k, s, d = (2, 3), (2, 2), (2, 1)
    ekh, ekw = (k[0] - 1) * d[0] + 1, (k[1] - 1) * d[1] + 1
    oh = -(-(6 - ekh) // s[0]) + 1
    ow = -(-(8 - ekw) // s[1]) + 1
    xp = np.zeros((1, 2, 6 + 8, 8 + 8), np.float64)
    xp[:, :, :6, :8] = np.abs(x)
    y = np.zeros((1, 2, oh, ow))
    for i in range(oh):
        for j in range(ow):
            win = xp[:, :, i * s[0]:i * s[0] + ekh:d[0], j * s[1]:j * s[1] + ekw:d[1]]
            y[:, :, i, j] = (win ** 3).sum(axis=(2, 3)) ** (1 / 3)
    case("lppool_p3_ceil_dilations", "LpPool", [("x", x)], [("y", y.astype(np.float32))], 18,
         kernel_shape=list(k), strides=list(s), dilations=list(d), ceil_mode=1, p=3)

    # Col2Im, 1-D: blocks of 3 at stride 2, padding 1 (overlaps summed)
    cols = rng.normal(0, 1, (2, 2 * 3, 4)).astype(np.float32)
    img = np.zeros((2, 2, 7 + 2), np.float32)
    for pos in range(4):
        for t in range(3):
            img[:, :, pos * 2 + t] += cols[:, np.arange(2) * 3 + t, pos]
    case("col2im_1d_strided_padded", "Col2Im",
         [("input", cols), ("image_shape", np.array([7], np.int64)),
          ("block_shape", np.array([3], np.int64))], [("output", img[:, :, 1:8])], 18,
         strides=[2], pads=[1, 1])

    # Upsample (opset 7, scales attribute), linear: asymmetric, clamped at the end
    x = rng.normal(0, 1, (1, 1, 2, 3)).astype(np.float32)
    sc = [1.0, 1.0, 2.0, 1.5]
    oh, ow = 4, 4
    def lin(v, n, o, scale):
        src = o / scale
        i0 = min(int(np.floor(src)), n - 1)
        i1 = min(i0 + 1, n - 1)
        f = src - i0
        return i0, i1, f
    y = np.zeros((1, 1, oh, ow), np.float64)
    for i in range(oh):
        a0, a1, fa = lin(x, 2, i, sc[2])
        for j in range(ow):
            b0, b1, fb = lin(x, 3, j, sc[3])
            top = x[0, 0, a0, b0] * (1 - fb) + x[0, 0, a0, b1] * fb
            bot = x[0, 0, a1, b0] * (1 - fb) + x[0, 0, a1, b1] * fb
            y[0, 0, i, j] = top * (1 - fa) + bot * fa
    case("upsample_opset7_linear", "Upsample", [("X", x)], [("Y", y.astype(np.float32))], 7,
         mode="linear", scales=sc)

    # EyeLike: non-square, below the diagonal, int32 output from a float input
    x = np.zeros((3, 5), np.float32)
    case("eyelike_k_minus1_int32", "EyeLike", [("x", x)],
         [("y", np.eye(3, 5, k=-1, dtype=np.int32))], 22, k=-1, dtype=TensorProto.INT32)

    # MeanVarianceNormalization over axis 1 only
    x = rng.normal(2, 3, (2, 3, 4)).astype(np.float32)
    m = x.astype(np.float64).mean(axis=1, keepdims=True)
    v = (x.astype(np.float64) ** 2).mean(axis=1, keepdims=True) - m ** 2
    case("mvn_axis1", "MeanVarianceNormalization", [("X", x)],
         [("Y", ((x - m) / (np.sqrt(v) + 1e-9)).astype(np.float32))], 13, axes=[1])

    # ReverseSequence with batch_axis 0, time_axis 1, a zero and a full length
    x = np.arange(3 * 4 * 2, dtype=np.int16).reshape(3, 4, 2)
    lens = np.array([0, 4, 2], np.int64)
    y = x.copy()
    for b_, n in enumerate(lens):
        y[b_, :n] = x[b_, :n][::-1]
    case("reversesequence_batch0_lengths", "ReverseSequence",
         [("input", x), ("sequence_lens", lens)], [("Y", y)], 10, batch_axis=0, time_axis=1)

    # CenterCropPad: odd crop on one axis, odd pad on another (negative axes), uint8
    x = rng.integers(0, 256, (5, 4, 3), dtype=np.uint8)
    y = np.zeros((5, 2, 6), np.uint8)
    y[:, :, 1:4] = x[:, 1:3, :]
    case("center_crop_pad_odd", "CenterCropPad",
         [("input_data", x), ("shape", np.array([2, 6], np.int64))], [("y", y)], 18,
         axes=[-2, -1])

    refusal(refuse, "lpnormalization_p3", "LpNormalization", [("x", np.zeros((2, 2), np.float32))],
            22, 2, "p = 3 must be 1 or 2", p=3)
    refusal(refuse, "reversesequence_same_axes", "ReverseSequence",
            [("x", np.zeros((2, 2), np.float32)), ("l", np.zeros((2,), np.int64))], 10, 2,
            "must be 0 and 1", batch_axis=0, time_axis=0)


def main():
    global OUT
    if len(sys.argv) != 2:
        sys.exit("usage: make_op_cases.py OUTDIR")
    OUT = sys.argv[1]
    os.makedirs(OUT, exist_ok=True)
    refuse = []
    quant_cases(refuse)
    misc_cases(refuse)
    with open(os.path.join(OUT, "refusals.txt"), "w") as f:
        f.write("\n".join(refuse) + "\n")
    count = sum(len(os.listdir(os.path.join(OUT, k))) for k in ("exact", "float"))
    print(f"make_op_cases: {count} node tests and {len(refuse)} refusals in {OUT}")


if __name__ == "__main__":
    main()
