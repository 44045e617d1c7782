#!/usr/bin/env python3
"""Makes tests/passes/deform_conv.onnx: DeformConv (opset 19) with two weight groups, two
offset groups, a mask (DCNv2), bias, stride 2, padding and dilation, against
torchvision.ops.deform_conv2d in float64.

    /usr/bin/python3 tests/passes/gen_deform_conv.py   (python3-onnx, python3-torchvision)

Debian's onnx 1.12 predates opset 19, so the model is written without its checker.
"""
import os

import numpy as np
import torch
from onnx import TensorProto, helper, save
from torchvision.ops import deform_conv2d

HERE = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(9)
f32 = np.float32
x = rng.normal(0, 1, (2, 4, 9, 8)).astype(f32)
w = rng.normal(0, 0.5, (6, 2, 3, 3)).astype(f32)  # groups 2: 2 input channels a group
b = rng.normal(0, 0.5, (6,)).astype(f32)
oh = (9 + 2 * 1 - (2 * 2 + 1)) // 2 + 1  # pad 1, dilation 2, stride 2
ow = (8 + 2 * 1 - (2 * 2 + 1)) // 2 + 1
off = rng.normal(0, 1.5, (2, 2 * 2 * 9, oh, ow)).astype(f32)  # 2 offset groups
mask = rng.random((2, 2 * 9, oh, ow)).astype(f32)
t = lambda a: torch.tensor(a, dtype=torch.float64)
y = deform_conv2d(t(x), t(off), t(w), t(b), stride=2, padding=1, dilation=2, mask=t(mask)).numpy()
arrs = dict(x=x, w=w, b=b, off=off, mask=mask, y=y.astype(f32))
ins = [helper.make_tensor_value_info(n, TensorProto.FLOAT, arrs[n].shape) for n in ("x", "w", "off", "b", "mask")]
outs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, y.shape)]
node = helper.make_node("DeformConv", ["x", "w", "off", "b", "mask"], ["y"], group=2, offset_group=2,
                        strides=[2, 2], pads=[1, 1, 1, 1], dilations=[2, 2], kernel_shape=[3, 3])
model = helper.make_model(helper.make_graph([node], "deform_conv", ins, outs),
                          opset_imports=[helper.make_opsetid("", 19)])
model.ir_version = 8
save(model, os.path.join(HERE, "deform_conv.onnx"))
for n, a in arrs.items():
    np.save(os.path.join(HERE, "deform_conv_%s.npy" % n), a)
print("wrote deform_conv.onnx", y.shape)
