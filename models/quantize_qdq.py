#!/usr/bin/env python3
"""quantize_qdq.py FLOAT.onnx OUT.onnx --infer PATH [--batch N] [--calib-batches K]
[--seed S] [--input-npy FILE] [--symmetric]: static post-training quantization of any float ONNX
model into a QDQ model, the recipe ONNX Runtime's quantize_static writes by default
(QDQ format, MinMax calibration):

- every input activation of a Conv, Gemm or MatMul goes through QuantizeLinear ->
  DequantizeLinear: uint8, per tensor, asymmetric, scale (hi - lo) / 255 over the
  calibration batches' min/max (the range widened to hold 0); one pair per tensor,
  shared by its readers; with --symmetric int8 with zero point 0 and scale
  max(|lo|, |hi|) / 127 instead (quantize_static's ActivationSymmetric with QInt8
  activations, what int8 tensor cores take: `--config int8=1`);
- every weight of those ops that is an initializer becomes int8, symmetric, per output
  channel (Conv: axis 0; Gemm: the N axis; 2-D MatMul: axis 1), read through
  DequantizeLinear;
- every 1-D bias of a Conv or Gemm becomes int32 with scale x_scale * w_scale (per
  channel, zero point 0) through DequantizeLinear.

Calibration runs the float model on the CPU through infer itself (--infer): a copy of
the model whose activations to calibrate are extra outputs, on K seeded random batches
of N (uniform in [-2, 2], the zoo's normalized-image range) or on --input-npy. It prints
how many nodes it quantized. Needs python3-onnx and python3-numpy (Debian packages)."""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

QUANT_OPS = ("Conv", "Gemm", "MatMul")


def weight_axis(node, w):
    """The output-channel axis of node's weight w, or None when it is not quantized."""
    if node.op_type == "Conv":
        return 0
    if w.ndim != 2:
        return None
    if node.op_type == "Gemm":
        trans_b = next((a.i for a in node.attribute if a.name == "transB"), 0)
        return 0 if trans_b else 1
    return 1  # MatMul [K, N]


def act_qparams(lo, hi, symmetric=False):
    lo, hi = min(float(lo), 0.0), max(float(hi), 0.0)
    if symmetric:
        a = max(-lo, hi)
        return (np.float32(a / 127.0) if a > 0 else np.float32(1.0)), 0
    s = np.float32((hi - lo) / 255.0) if hi > lo else np.float32(1.0)
    z = int(np.clip(np.rint(-lo / s), 0, 255))
    return s, z


def calibrate(model, names, args, work):
    """min and max of each named tensor over the calibration batches (infer, CPU)."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    for k, name in enumerate(names):
        out = "calib_%d" % k
        m.graph.node.append(helper.make_node("Identity", [name], [out], name=out))
        m.graph.output.append(helper.make_tensor_value_info(out, TensorProto.FLOAT, None))
    path = os.path.join(work, "calib.onnx")
    onnx.save(m, path)
    inp = model.graph.input[0]
    init_names = {i.name for i in model.graph.initializer}
    inputs = [i for i in model.graph.input if i.name not in init_names]
    if len(inputs) != 1:
        sys.exit("quantize_qdq: the model must have one (image) input, has %d" % len(inputs))
    inp = inputs[0]
    dims = [d.dim_value if d.dim_value > 0 else args.batch for d in inp.type.tensor_type.shape.dim]
    rng = np.random.default_rng(args.seed)
    lo = {n: np.inf for n in names}
    hi = {n: -np.inf for n in names}
    batches = [np.load(args.input_npy)] if args.input_npy else [
        rng.uniform(-2, 2, dims).astype(np.float32) for _ in range(args.calib_batches)]
    for b, x in enumerate(batches):
        xin = os.path.join(work, "calib_in_%d.npy" % b)
        np.save(xin, x)
        outdir = os.path.join(work, "calib_out_%d" % b)
        r = subprocess.run([args.infer, path, "--input", xin, "--output", outdir,
                            "--batch", str(x.shape[0])], capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit("quantize_qdq: calibration run failed:\n" + r.stdout + r.stderr)
        for k, name in enumerate(names):
            t = np.load(os.path.join(outdir, "calib_%d.npy" % k))
            lo[name] = min(lo[name], float(t.min()))
            hi[name] = max(hi[name], float(t.max()))
    return lo, hi


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("model")
    ap.add_argument("out")
    ap.add_argument("--infer", required=True, help="the infer binary that calibrates")
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--calib-batches", type=int, default=2)
    ap.add_argument("--seed", type=int, default=20261203)
    ap.add_argument("--input-npy")
    ap.add_argument("--symmetric", action="store_true",
                    help="int8 activations with zero point 0 (else uint8, asymmetric)")
    args = ap.parse_args()
    model = onnx.load(args.model)
    g = model.graph
    inits = {i.name: i for i in g.initializer}
    targets = [n for n in g.node if n.op_type in QUANT_OPS]
    acts = []
    for n in targets:
        if n.input and n.input[0] not in inits and n.input[0] not in acts:
            acts.append(n.input[0])
    with tempfile.TemporaryDirectory() as work:
        lo, hi = calibrate(model, acts, args, work)

    new_inits, new_nodes, replace = [], [], {}
    for k, name in enumerate(acts):  # activations: Q -> DQ, one pair per tensor
        s, z = act_qparams(lo[name], hi[name], args.symmetric)
        sn, zn = "qdq_a%d_scale" % k, "qdq_a%d_zp" % k
        new_inits += [numpy_helper.from_array(np.array(s, np.float32), sn),
                      numpy_helper.from_array(np.array(z, np.int8 if args.symmetric
                                                       else np.uint8), zn)]
        q, dq = "qdq_a%d_q" % k, "qdq_a%d_dq" % k
        new_nodes.append((name, [helper.make_node("QuantizeLinear", [name, sn, zn], [q], name=q),
                                 helper.make_node("DequantizeLinear", [q, sn, zn], [dq], name=dq)]))
        replace[name] = (dq, s)
    n_w = 0
    drop = set()
    for j, n in enumerate(targets):  # weights and biases
        if len(n.input) < 2 or n.input[1] not in inits or n.input[0] not in replace:
            continue
        w = numpy_helper.to_array(inits[n.input[1]]).astype(np.float32)
        axis = weight_axis(n, w)
        if axis is None:
            continue
        moved = np.moveaxis(w, axis, 0).reshape(w.shape[axis], -1)
        ws = (np.maximum(np.abs(moved).max(axis=1), 1e-8) / 127.0).astype(np.float32)
        shape = [1] * w.ndim
        shape[axis] = -1
        wq = np.clip(np.rint(w / ws.reshape(shape)), -127, 127).astype(np.int8)
        base = "qdq_w%d" % j
        new_inits += [numpy_helper.from_array(wq, base + "_q"),
                      numpy_helper.from_array(ws, base + "_scale"),
                      numpy_helper.from_array(np.zeros(ws.shape, np.int8), base + "_zp")]
        wdq = helper.make_node("DequantizeLinear", [base + "_q", base + "_scale", base + "_zp"],
                               [base + "_dq"], name=base + "_dq", axis=axis)
        g.node.append(wdq)
        drop.add(n.input[1])
        n.input[1] = base + "_dq"
        if len(n.input) > 2 and n.input[2] in inits and n.op_type in ("Conv", "Gemm"):
            b = numpy_helper.to_array(inits[n.input[2]]).astype(np.float64)
            if b.ndim == 1 and b.shape[0] == ws.shape[0]:
                bs = (np.float64(replace[n.input[0]][1]) * ws.astype(np.float64)).astype(np.float32)
                bq = np.clip(np.rint(b / bs), -2**31, 2**31 - 1).astype(np.int32)
                new_inits += [numpy_helper.from_array(bq, base + "_bq"),
                              numpy_helper.from_array(bs, base + "_bscale"),
                              numpy_helper.from_array(np.zeros(bs.shape, np.int32), base + "_bzp")]
                bdq = helper.make_node("DequantizeLinear",
                                       [base + "_bq", base + "_bscale", base + "_bzp"],
                                       [base + "_bdq"], name=base + "_bdq", axis=0)
                g.node.append(bdq)
                drop.add(n.input[2])
                n.input[2] = base + "_bdq"
        n_w += 1
    for n in targets:  # the quantized ops read the dequantized activations
        if n.input and n.input[0] in replace:
            n.input[0] = replace[n.input[0]][0]
        if n.op_type == "MatMul" and len(n.input) > 1 and n.input[1] in replace:
            n.input[1] = replace[n.input[1]][0]
    for _, pair in new_nodes:
        g.node.extend(pair)
    still = {i for n in g.node for i in n.input}
    keep = [i for i in g.initializer if i.name not in drop or i.name in still]
    del g.initializer[:]
    g.initializer.extend(keep + new_inits)
    # a topological order again: the new nodes were appended at the end
    produced = {i.name for i in g.input} | {i.name for i in g.initializer}
    pending, order = list(range(len(g.node))), []
    while pending:
        ready = [k for k in pending if all(not i or i in produced for i in g.node[k].input)]
        if not ready:
            sys.exit("quantize_qdq: the graph is not a DAG after the rewrite")
        for k in ready:
            order.append(g.node[k])
            produced.update(g.node[k].output)
        done = set(ready)
        pending = [k for k in pending if k not in done]
    order = [onnx.NodeProto.FromString(n.SerializeToString()) for n in order]
    del g.node[:]
    g.node.extend(order)
    opset = next((o for o in model.opset_import if o.domain in ("", "ai.onnx")), None)
    if opset is not None and opset.version < 13:
        opset.version = 13  # per-axis DequantizeLinear
    onnx.save(model, args.out)
    print("quantize_qdq: %d activations quantized (%s per tensor), %d weights (int8 per "
          "channel) of %d Conv/Gemm/MatMul nodes; wrote %s"
          % (len(acts), "int8 symmetric" if args.symmetric else "uint8", n_w, len(targets),
             args.out))


if __name__ == "__main__":
    main()
