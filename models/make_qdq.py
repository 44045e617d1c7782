#!/usr/bin/env python3
"""Builds a QDQ-quantized conv net and its references, for tests/run_qdq.sh.

The net (seeded random weights, input N x 3 x 32 x 32):
    Conv3x3(3->16)-Relu, Conv3x3/2(16->32)-Relu, Conv3x3(32->32)+skip-Relu,
    Conv1x1(32->64)-Relu, GlobalAveragePool, Flatten, Gemm(64->10)
is written twice into OUTDIR:
  fp32.onnx  the float model;
  qdq.onnx   the same net as a deployed QDQ model (opset 13): every Conv/Gemm input
             activation goes through QuantizeLinear -> DequantizeLinear (uint8,
             per-tensor scale and zero point calibrated as min/max over random
             calibration batches), every weight is an int8 initializer read through a
             per-output-channel DequantizeLinear (symmetric, scale max|w|/127), every
             bias an int32 initializer through DequantizeLinear with scale
             x_scale * w_scale (per channel), as ONNX Runtime's quantizer writes them.
It also writes input.npy (a batch not used in calibration) and
  out_fp32.npy    the float net's output (PyTorch, float32);
  out_qdq.npy     the QDQ model evaluated here, independently of infer: the Q/DQ
                  formulas in NumPy (float32 division, round half to even, saturation),
                  the convolutions and the Gemm in PyTorch float32 on the dequantized
                  tensors;
  tolerances.txt  QUANT_ERR (max |out_fp32 - out_qdq|, the quantization error this
                  net has), TIGHT and LOOSE (see tests/run_qdq.sh) and OUT_MAX.

Needs python3-onnx, python3-numpy and python3-torch (Debian packages):
    python3 models/make_qdq.py OUTDIR
"""
import os
import sys

import numpy as np
import onnx
import torch
import torch.nn.functional as F
from onnx import TensorProto, helper, numpy_helper

SEED = 20261201


def conv_layers(rng):
    """(name, weight, bias, stride, pad) of the four convolutions, then the Gemm."""
    def conv(name, m, c, k, stride, pad):
        w = rng.normal(0, np.sqrt(2.0 / (c * k * k)), (m, c, k, k)).astype(np.float32)
        b = rng.normal(0, 0.1, (m,)).astype(np.float32)
        return name, w, b, stride, pad
    convs = [conv("c1", 16, 3, 3, 1, 1), conv("c2", 32, 16, 3, 2, 1),
             conv("c3", 32, 32, 3, 1, 1), conv("c4", 64, 32, 1, 1, 0)]
    wf = rng.normal(0, np.sqrt(1.0 / 64), (10, 64)).astype(np.float32)
    bf = rng.normal(0, 0.1, (10,)).astype(np.float32)
    return convs, (wf, bf)


def forward(x, convs, fc, act=lambda name, t: t, weight=lambda name, w, b, s_in: (w, b)):
    """The net in PyTorch float32. act(name, t) is applied to the input activation of
    layer `name` (fake quantization for the QDQ model, recording for calibration);
    weight(name, w, b, s_in) gives the weight and bias the layer uses."""
    t = torch.from_numpy(x)
    outs = {}
    for name, w, b, stride, pad in convs:
        src = outs["r2"] if name == "c3" else t
        a = act(name, src)
        wq, bq = weight(name, w, b, None)
        y = F.conv2d(a, torch.from_numpy(wq), torch.from_numpy(bq), stride=stride, padding=pad)
        if name == "c3":
            y = y + outs["r2"]
        t = torch.relu(y)
        outs["r" + name[1]] = t
    t = torch.flatten(F.adaptive_avg_pool2d(t, 1), 1)
    a = act("fc", t)
    wq, bq = weight("fc", fc[0], fc[1], None)
    return (a @ torch.from_numpy(wq).T + torch.from_numpy(bq)).numpy()


def act_qparams(lo, hi):
    """uint8 asymmetric: the range widened to hold 0, scale (hi - lo) / 255."""
    lo, hi = min(lo, 0.0), max(hi, 0.0)
    s = np.float32((hi - lo) / 255.0)
    z = int(np.clip(np.rint(-lo / s), 0, 255))
    return s, np.uint8(z)


def quantize(t, s, z, lo, hi):
    """QuantizeLinear: float32 division, round half to even, + zero point, saturate."""
    q = np.rint(t.astype(np.float32) / np.float32(s)) + int(z)
    return np.clip(q, lo, hi)


def fake_quant_act(t, s, z):
    q = quantize(t.numpy(), s, z, 0, 255)
    return torch.from_numpy(((q - int(z)).astype(np.float32) * np.float32(s)).astype(np.float32))


def weight_qparams(w):
    """int8 symmetric per output channel (axis 0)."""
    amax = np.abs(w.reshape(w.shape[0], -1)).max(axis=1)
    return (np.maximum(amax, 1e-8) / 127.0).astype(np.float32)


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: make_qdq.py OUTDIR")
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(SEED)
    convs, fc = conv_layers(rng)
    calib = rng.normal(0, 1, (16, 3, 32, 32)).astype(np.float32)
    x = rng.normal(0, 1, (2, 3, 32, 32)).astype(np.float32)

    # calibration: min/max of each quantized activation over the calibration batches
    ranges = {}
    def record(name, t):
        lo, hi = float(t.min()), float(t.max())
        plo, phi = ranges.get(name, (lo, hi))
        ranges[name] = (min(lo, plo), max(hi, phi))
        return t
    with torch.no_grad():
        forward(calib, convs, fc, act=record)
    aq = {name: act_qparams(*r) for name, r in ranges.items()}

    # quantized weights and biases
    layers = {name: (w, b) for name, w, b, _, _ in convs}
    layers["fc"] = fc
    wq = {}
    for name, (w, b) in layers.items():
        sw = weight_qparams(w)
        shape = (-1,) + (1,) * (w.ndim - 1)
        qw = np.clip(np.rint(w / sw.reshape(shape)), -127, 127).astype(np.int8)
        sb = (aq[name][0] * sw).astype(np.float32)  # bias scale: x_scale * w_scale
        qb = np.rint(b / sb).astype(np.int32)
        wq[name] = (qw, sw, qb, sb)

    def dq_weight(name, w, b, s_in):
        qw, sw, qb, sb = wq[name]
        shape = (-1,) + (1,) * (qw.ndim - 1)
        return ((qw.astype(np.float32) * sw.reshape(shape)).astype(np.float32),
                (qb.astype(np.float32) * sb).astype(np.float32))

    with torch.no_grad():
        out_fp32 = forward(x, convs, fc)
        out_qdq = forward(x, convs, fc, act=lambda n, t: fake_quant_act(t, *aq[n]),
                          weight=dq_weight)

    # ---- the ONNX graphs ----
    def graph(qdq):
        nodes, inits = [], []
        def init(arr, name):
            inits.append(numpy_helper.from_array(arr, name))
            return name
        def qdq_act(src, name):
            if not qdq:
                return src
            s, z = aq[name]
            init(np.array(s, np.float32), name + ".x_scale")
            init(np.array(z, np.uint8), name + ".x_zp")
            nodes.append(helper.make_node("QuantizeLinear", [src, name + ".x_scale", name + ".x_zp"],
                                          [name + ".xq"], name=name + ".quant"))
            nodes.append(helper.make_node("DequantizeLinear",
                                          [name + ".xq", name + ".x_scale", name + ".x_zp"],
                                          [name + ".xdq"], name=name + ".dequant"))
            return name + ".xdq"
        def params(name):
            w, b = layers[name]
            if not qdq:
                return init(w, name + ".w"), init(b, name + ".b")
            qw, sw, qb, sb = wq[name]
            init(qw, name + ".wq")
            init(sw, name + ".w_scale")
            init(np.zeros(sw.shape, np.int8), name + ".w_zp")
            init(qb, name + ".bq")
            init(sb, name + ".b_scale")
            init(np.zeros(sb.shape, np.int32), name + ".b_zp")
            nodes.append(helper.make_node("DequantizeLinear",
                                          [name + ".wq", name + ".w_scale", name + ".w_zp"],
                                          [name + ".wdq"], axis=0, name=name + ".wdequant"))
            nodes.append(helper.make_node("DequantizeLinear",
                                          [name + ".bq", name + ".b_scale", name + ".b_zp"],
                                          [name + ".bdq"], axis=0, name=name + ".bdequant"))
            return name + ".wdq", name + ".bdq"
        t = "input"
        for name, w, _, stride, pad in convs:
            src = "r2" if name == "c3" else t
            a = qdq_act(src, name)
            wn, bn = params(name)
            k = w.shape[2]
            nodes.append(helper.make_node("Conv", [a, wn, bn], [name + ".y"], name=name,
                                          kernel_shape=[k, k], strides=[stride, stride],
                                          pads=[pad] * 4))
            y = name + ".y"
            if name == "c3":
                nodes.append(helper.make_node("Add", [y, "r2"], ["c3.sum"], name="skip"))
                y = "c3.sum"
            t = "r" + name[1]
            nodes.append(helper.make_node("Relu", [y], [t], name="relu" + name[1]))
        nodes.append(helper.make_node("GlobalAveragePool", [t], ["pool"], name="pool"))
        nodes.append(helper.make_node("Flatten", ["pool"], ["flat"], name="flatten"))
        a = qdq_act("flat", "fc")
        wn, bn = params("fc")
        nodes.append(helper.make_node("Gemm", [a, wn, bn], ["logits"], name="fc", transB=1))
        g = helper.make_graph(
            nodes, "qdq_convnet" if qdq else "convnet",
            [helper.make_tensor_value_info("input", TensorProto.FLOAT, ["N", 3, 32, 32])],
            [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["N", 10])], inits)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)],
                              producer_name="infer models/make_qdq.py")
        m.ir_version = 7
        onnx.checker.check_model(m)
        return m

    onnx.save(graph(False), os.path.join(out, "fp32.onnx"))
    onnx.save(graph(True), os.path.join(out, "qdq.onnx"))
    np.save(os.path.join(out, "input.npy"), x)
    np.save(os.path.join(out, "out_fp32.npy"), out_fp32.astype(np.float32))
    np.save(os.path.join(out, "out_qdq.npy"), out_qdq.astype(np.float32))

    # Tolerances (tests/run_qdq.sh explains them).
    quant_err = float(np.abs(out_fp32 - out_qdq).max())
    out_max = float(np.abs(out_fp32).max())
    tight = 0.1 * quant_err
    loose = 1.1 * quant_err + 1e-5 * out_max
    with open(os.path.join(out, "tolerances.txt"), "w") as f:
        f.write(f"QUANT_ERR={quant_err:.6g}\nTIGHT={tight:.6g}\nLOOSE={loose:.6g}\n"
                f"OUT_MAX={out_max:.6g}\n")
    print(f"make_qdq: max|fp32| {out_max:.4g}, quantization error max|fp32 - qdq| "
          f"{quant_err:.4g} ({100 * quant_err / out_max:.2f}% of max|fp32|)")
    # a calibration that went wrong shows as a quantization error near the output's size
    if not (0 < quant_err < 0.1 * out_max):
        sys.exit(f"make_qdq: quantization error {quant_err:.4g} is not plausible for "
                 f"8-bit quantization of outputs up to {out_max:.4g}")


if __name__ == "__main__":
    main()
