#!/usr/bin/env python3
"""Writes tests/passes/einsum_matmul.onnx and its input/output .npy files: the Einsums
pass einsum-to-matmul rewrites into MatMuls (engine/pass_einsum_matmul.c) and ones it
must leave alone, in one model, with numpy's einsum as the reference.

Rewritten (4): MaxViT's attention pair "BGHID,BGHJD->BGHIJ" (B transposed) and
"BGHIJ,BGHJD->BGHID" (plain), "bkm,bkn->bmn" (A transposed), "mk,nk->mn" (2-D, B
transposed). Left as Einsum (3): a broadcast batch ("bmk,kn->bmn" lacks the
batch in B), an ellipsis ("...mk,...kn->...mn") and a trace-like repeated letter
("bii,bij->bj"). The test checks the log line (4 rewritten) and the outputs.
einsum_matmul_gpu.onnx holds the four rewritten ones alone, for the GPU rows (the CUDA
backend has no Einsum: there every one must have become a MatMul).

    /usr/bin/python3 tests/passes/gen_einsum_matmul.py
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
RNG = np.random.default_rng(20261202)


def main():
    shapes = {"q": (1, 2, 3, 5, 4), "k": (1, 2, 3, 6, 4), "v": (1, 2, 3, 6, 4),
              "a": (2, 4, 3), "b": (2, 4, 5), "m": (3, 4), "n": (5, 4),
              "x": (2, 3, 4), "w": (4, 5), "s": (2, 3, 3), "t": (2, 3, 4)}
    ins = {k: RNG.standard_normal(s).astype(np.float32) for k, s in shapes.items()}
    cases = [  # (inputs, equation, output)
        (("q", "k"), "BGHID,BGHJD->BGHIJ", "att"),
        (("att", "v"), "BGHIJ,BGHJD->BGHID", "ctx"),
        (("a", "b"), "bkm,bkn->bmn", "ab"),
        (("m", "n"), "mk,nk->mn", "mn"),
        (("x", "w"), "bmk,kn->bmn", "xw"),
        (("x", "w"), "...mk,...kn->...mn", "xw_ell"),
        (("s", "t"), "bii,bij->bj", "st"),
    ]
    write("einsum_matmul", shapes, ins, cases, ["ctx", "ab", "mn", "xw", "xw_ell", "st"])
    write("einsum_matmul_gpu", {k: shapes[k] for k in "qkvabmn"}, ins, cases[:4],
          ["ctx", "ab", "mn"])


def write(name, shapes, ins, cases, outs):
    vals = dict(ins)
    nodes = []
    for (i0, i1), eq, out in cases:
        nodes.append(helper.make_node("Einsum", [i0, i1], [out], equation=eq))
        vals[out] = np.einsum(eq.replace(" ", ""), vals[i0], vals[i1]).astype(np.float32)
    g = helper.make_graph(
        nodes, name,
        [helper.make_tensor_value_info(k, TensorProto.FLOAT, list(s)) for k, s in shapes.items()],
        [helper.make_tensor_value_info(o, TensorProto.FLOAT, list(vals[o].shape)) for o in outs])
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)],
                              producer_name="infer tests/passes/gen_einsum_matmul.py")
    model.ir_version = 8
    onnx.checker.check_model(model)
    base = os.path.join(HERE, name)
    onnx.save(model, base + ".onnx")
    for k in shapes:
        np.save("%s_in_%s.npy" % (base, k), ins[k])
    for o in outs:
        np.save("%s_out_%s.npy" % (base, o), vals[o])
    print("wrote", base + ".onnx")


if __name__ == "__main__":
    main()
