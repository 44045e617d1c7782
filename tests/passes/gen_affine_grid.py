#!/usr/bin/env python3
"""Makes tests/passes/affine_grid.onnx: AffineGrid (opset 20) in 2-D (align_corners 0) and
3-D (align_corners 1), outputs against PyTorch's affine_grid in float64.

    /usr/bin/python3 tests/passes/gen_affine_grid.py   (python3-onnx, python3-torch)

Debian's onnx 1.12 predates opset 20, so the model is written without its checker.
"""
import os

import numpy as np
import torch
import torch.nn.functional as F
from onnx import TensorProto, helper, numpy_helper, save

HERE = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(6)
t2 = rng.normal(0, 1, (2, 2, 3)).astype(np.float32)
t3 = rng.normal(0, 1, (2, 3, 4)).astype(np.float32)
s2, s3 = [2, 3, 5, 7], [2, 1, 3, 4, 6]
g2 = F.affine_grid(torch.tensor(t2, dtype=torch.float64), s2, align_corners=False).numpy()
g3 = F.affine_grid(torch.tensor(t3, dtype=torch.float64), s3, align_corners=True).numpy()
ins = [helper.make_tensor_value_info("t2", TensorProto.FLOAT, t2.shape),
       helper.make_tensor_value_info("t3", TensorProto.FLOAT, t3.shape)]
outs = [helper.make_tensor_value_info("g2", TensorProto.FLOAT, g2.shape),
        helper.make_tensor_value_info("g3", TensorProto.FLOAT, g3.shape)]
init = [numpy_helper.from_array(np.array(s2, np.int64), "s2"),
        numpy_helper.from_array(np.array(s3, np.int64), "s3")]
nodes = [helper.make_node("AffineGrid", ["t2", "s2"], ["g2"], align_corners=0),
         helper.make_node("AffineGrid", ["t3", "s3"], ["g3"], align_corners=1)]
model = helper.make_model(helper.make_graph(nodes, "affine_grid", ins, outs, init),
                          opset_imports=[helper.make_opsetid("", 20)])
model.ir_version = 8
save(model, os.path.join(HERE, "affine_grid.onnx"))
for n, a in (("t2", t2), ("t3", t3), ("g2", g2), ("g3", g3)):
    np.save(os.path.join(HERE, "affine_grid_%s.npy" % n), a.astype(np.float32))
print("wrote affine_grid.onnx")
