#!/usr/bin/env python3
"""Makes tests/passes/tensor_scatter.onnx: TensorScatter (opset 24), a KV cache update,
circular on a [B, heads, max_seq, D] cache (one row wrapping around its end) and linear
along axis 1 of a 3-D cache, against numpy.

    /usr/bin/python3 tests/passes/gen_tensor_scatter.py   (python3-onnx, numpy)

Debian's onnx 1.12 predates opset 24, so the model is written without its checker.
"""
import os

import numpy as np
from onnx import TensorProto, helper, save

HERE = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(8)
ca = rng.normal(0, 1, (2, 3, 6, 4)).astype(np.float32)
ua = rng.normal(0, 1, (2, 3, 3, 4)).astype(np.float32)
ia = np.array([1, 4], np.int64)  # row 1 writes 4, 5, then wraps to 0
cb = rng.normal(0, 1, (2, 5, 3)).astype(np.float32)
ub = rng.normal(0, 1, (2, 2, 3)).astype(np.float32)
ib = np.array([3, 0], np.int64)
ya = ca.copy()
for b in range(2):
    for s in range(3):
        ya[b, :, (ia[b] + s) % 6] = ua[b, :, s]
yb = cb.copy()
for b in range(2):
    yb[b, ib[b]:ib[b] + 2] = ub[b]
arrs = dict(ca=ca, ua=ua, ia=ia, cb=cb, ub=ub, ib=ib, ya=ya, yb=yb)
ins = [helper.make_tensor_value_info(n, TensorProto.INT64 if n[0] == "i" else TensorProto.FLOAT,
                                     arrs[n].shape) for n in ("ca", "ua", "ia", "cb", "ub", "ib")]
outs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, arrs[n].shape) for n in ("ya", "yb")]
nodes = [helper.make_node("TensorScatter", ["ca", "ua", "ia"], ["ya"], mode="circular"),
         helper.make_node("TensorScatter", ["cb", "ub", "ib"], ["yb"], axis=1)]
model = helper.make_model(helper.make_graph(nodes, "tensor_scatter", ins, outs),
                          opset_imports=[helper.make_opsetid("", 24)])
model.ir_version = 8
save(model, os.path.join(HERE, "tensor_scatter.onnx"))
for n, a in arrs.items():
    np.save(os.path.join(HERE, "tensor_scatter_%s.npy" % n), a)
print("wrote tensor_scatter.onnx")
