#!/usr/bin/env python3
"""Makes tests/passes/causal_conv.onnx: CausalConvWithState (opset 27), SiLU with bias and
a past state (present_state out too) and a plain one without state, against numpy in
float64.

    /usr/bin/python3 tests/passes/gen_causal_conv.py   (python3-onnx, numpy)

Debian's onnx 1.12 predates opset 27, so the model is written without its checker.
"""
import os

import numpy as np
from onnx import TensorProto, helper, save

HERE = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(10)
f32 = np.float32


def ccs(x, w, b=None, past=None, silu=False):
    k = w.shape[2]
    pad = np.zeros(x.shape[:2] + (k - 1,)) if past is None else past.astype(np.float64)
    p = np.concatenate([pad, x.astype(np.float64)], 2)
    y = np.zeros(x.shape)
    for t in range(x.shape[2]):
        y[:, :, t] = (p[:, :, t:t + k] * w[None, :, 0, :]).sum(-1)
    if b is not None:
        y += b[None, :, None]
    if silu:
        y = y.astype(f32).astype(np.float64)  # rounded to the dtype first, as the reference
        y = y / (1 + np.exp(-y))
    return y, p[:, :, p.shape[2] - (k - 1):]


r = lambda s, shape: rng.normal(0, s, shape).astype(f32).astype(np.float64)  # float32 values
xa, wa, ba = r(1, (2, 5, 7)), r(0.5, (5, 1, 4)), r(0.3, (5,))
pa = r(1, (2, 5, 3))
xb, wb = r(1, (1, 3, 6)), r(0.5, (3, 1, 3))
ya, sa = ccs(xa, wa, ba, pa, silu=True)
yb, _ = ccs(xb, wb)
arrs = {k: v.astype(f32) for k, v in dict(xa=xa, wa=wa, ba=ba, pa=pa, xb=xb, wb=wb, ya=ya, sa=sa,
                                            yb=yb).items()}
ins = [helper.make_tensor_value_info(n, TensorProto.FLOAT, arrs[n].shape)
       for n in ("xa", "wa", "ba", "pa", "xb", "wb")]
outs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, arrs[n].shape) for n in ("ya", "sa", "yb")]
nodes = [helper.make_node("CausalConvWithState", ["xa", "wa", "ba", "pa"], ["ya", "sa"], activation="silu"),
         helper.make_node("CausalConvWithState", ["xb", "wb"], ["yb"])]
model = helper.make_model(helper.make_graph(nodes, "causal_conv", ins, outs),
                          opset_imports=[helper.make_opsetid("", 27)])
model.ir_version = 8
save(model, os.path.join(HERE, "causal_conv.onnx"))
for n, a in arrs.items():
    np.save(os.path.join(HERE, "causal_conv_%s.npy" % n), a)
print("wrote causal_conv.onnx")
