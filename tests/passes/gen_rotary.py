#!/usr/bin/env python3
"""Makes tests/passes/rotary.onnx: ONNX's RotaryEmbedding (opset 23) in two forms, each
output against a float64 numpy reference written from the operator's definition:

  A: 4-D X [2, 3 heads, 5, 8], position_ids into [10, 3] caches, rotary_embedding_dim 6
     (the last 2 values of each head pass through), halves
  B: 3-D X [2, 4, 2 heads * 6], interleaved, caches [2, 4, 3] without position_ids

    /usr/bin/python3 tests/passes/gen_rotary.py   (python3-onnx, numpy)

Debian's onnx 1.12 predates opset 23, so the model is written without its checker.
"""
import os

import numpy as np
from onnx import TensorProto, helper, save

HERE = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(4)
f32 = np.float32


def rope(x, cos, sin, pos=None, interleaved=False, rdim=0, heads=0):
    x = x.astype(np.float64)
    shape = x.shape
    if x.ndim == 4:
        x = x.transpose(0, 2, 1, 3)  # B, S, H, D
    else:
        x = x.reshape(shape[0], shape[1], heads, -1)
    d = x.shape[3]
    r = rdim or d
    c = (cos[pos] if pos is not None else cos).astype(np.float64)[:, :, None, :]
    s = (sin[pos] if pos is not None else sin).astype(np.float64)[:, :, None, :]
    y = x.copy()
    if interleaved:
        x1, x2 = x[..., 0:r:2], x[..., 1:r:2]
        y[..., 0:r:2], y[..., 1:r:2] = c * x1 - s * x2, s * x1 + c * x2
    else:
        x1, x2 = x[..., : r // 2], x[..., r // 2 : r]
        y[..., : r // 2], y[..., r // 2 : r] = c * x1 - s * x2, s * x1 + c * x2
    return y.transpose(0, 2, 1, 3) if len(shape) == 4 else y.reshape(shape)


files = {}
xa = rng.normal(0, 1, (2, 3, 5, 8)).astype(f32)
ang = rng.uniform(0, 6.3, (10, 3))
ca, sa = np.cos(ang).astype(f32), np.sin(ang).astype(f32)
pa = rng.integers(0, 10, (2, 5)).astype(np.int64)
xb = rng.normal(0, 1, (2, 4, 12)).astype(f32)
angb = rng.uniform(0, 6.3, (2, 4, 3))
cb, sb = np.cos(angb).astype(f32), np.sin(angb).astype(f32)
files.update(xa=xa, ca=ca, sa=sa, pa=pa, xb=xb, cb=cb, sb=sb)
files["ya"] = rope(xa, ca, sa, pa, rdim=6).astype(f32)
files["yb"] = rope(xb, cb, sb, interleaved=True, heads=2).astype(f32)
ins = [helper.make_tensor_value_info(n, TensorProto.INT64 if n == "pa" else TensorProto.FLOAT,
                                     files[n].shape) for n in ("xa", "ca", "sa", "pa", "xb", "cb", "sb")]
outs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, files[n].shape) for n in ("ya", "yb")]
nodes = [helper.make_node("RotaryEmbedding", ["xa", "ca", "sa", "pa"], ["ya"], rotary_embedding_dim=6),
         helper.make_node("RotaryEmbedding", ["xb", "cb", "sb"], ["yb"], interleaved=1, num_heads=2)]
model = helper.make_model(helper.make_graph(nodes, "rotary", ins, outs),
                          opset_imports=[helper.make_opsetid("", 23)])
model.ir_version = 8
save(model, os.path.join(HERE, "rotary.onnx"))
for n, a in files.items():
    np.save(os.path.join(HERE, "rotary_%s.npy" % n), a)
print("wrote rotary.onnx")
