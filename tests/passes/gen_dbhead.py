#!/usr/bin/env python3
"""Makes tests/passes/dbhead.onnx: the pattern of PaddleOCR's PP-OCRv4 text detector (a
DBNet) at a small size, with random weights, for the precision tests (issue 16):

  backbone: Conv 3x3 s2 + BN + HardSwish; depthwise 3x3 s2 + BN + HardSwish, 1x1 Conv +
            BN + ReLU with a squeeze-excitation (GlobalAveragePool, 1x1 Conv, ReLU, 1x1
            Conv, HardSigmoid, Mul) as PP-LCNet has; one more stage s2 -> strides 4, 8, 16
  FPN:      1x1 laterals, top-down Resize (nearest, x2) + Add, 3x3 Convs, each level
            Resize'd to stride 4 and Concat'ed
  head:     Conv 3x3 + BN + ReLU, ConvTranspose 2x2 s2 + BN + ReLU, ConvTranspose 2x2 s2,
            Sigmoid: a probability map [1, 1, H, W] in [0, 1] at the input's size

BatchNorm statistics are random (eval mode), scaled so the logits before the Sigmoid
span about +-15 as a trained detector's do. Input [1, 3, 128, 128]. The reference is
PyTorch's float32 forward (dbhead_output.npy).

Also tests/passes/cancel.onnx: y = Conv1x1(Conv1x1(x, I, +1000), I, -1000) on x [1, 4, 8, 8]:
in float16 storage the first result (about 1000) keeps 0.5 steps, the second cancels the
1000 and keeps the steps: its relative error grows about 300-fold, so a precision
comparison must rank that step first (b's Conv fused with the Relu: value "y").

And tests/passes/overflow.onnx (below): squares past float16's range, for the default
mixed-precision policy.

    /usr/bin/python3 tests/passes/gen_dbhead.py   (python3-torch, python3-onnx, numpy)
"""
import os

import numpy as np
import onnx
import torch
from onnx import TensorProto, helper, numpy_helper
from torch import nn

HERE = os.path.dirname(os.path.abspath(__file__))
torch.manual_seed(16)


def bn(c):
    b = nn.BatchNorm2d(c)
    with torch.no_grad():
        b.weight.uniform_(0.5, 1.5)
        b.bias.normal_(0, 0.2)
        b.running_mean.normal_(0, 0.2)
        b.running_var.uniform_(0.3, 1.5)
    return b


def cbr(ci, co, k, s, act, groups=1):
    return nn.Sequential(nn.Conv2d(ci, co, k, s, k // 2, groups=groups, bias=False), bn(co), act())


class SE(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.a = nn.Conv2d(c, c // 4, 1)
        self.b = nn.Conv2d(c // 4, c, 1)

    def forward(self, x):
        s = nn.functional.adaptive_avg_pool2d(x, 1)
        return x * nn.functional.hardsigmoid(self.b(torch.relu(self.a(s))))


class Stage(nn.Module):
    def __init__(self, ci, co):
        super().__init__()
        self.dw = cbr(ci, ci, 3, 2, nn.Hardswish, groups=ci)
        self.se = SE(ci)
        self.pw = cbr(ci, co, 1, 1, nn.ReLU)

    def forward(self, x):
        return self.pw(self.se(self.dw(x)))


class DBHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = cbr(3, 16, 3, 2, nn.Hardswish)  # stride 2
        self.s1 = Stage(16, 32)  # 4
        self.s2 = Stage(32, 64)  # 8
        self.s3 = Stage(64, 96)  # 16
        self.lat = nn.ModuleList([nn.Conv2d(c, 32, 1, bias=False) for c in (32, 64, 96)])
        self.smooth = nn.ModuleList([nn.Conv2d(32, 8, 3, 1, 1, bias=False) for _ in range(3)])
        self.h1 = cbr(24, 8, 3, 1, nn.ReLU)
        self.up1 = nn.ConvTranspose2d(8, 8, 2, 2)
        self.bn_up = bn(8)
        self.up2 = nn.ConvTranspose2d(8, 1, 2, 2)

    def forward(self, x):
        c1 = self.s1(self.stem(x))
        c2 = self.s2(c1)
        c3 = self.s3(c2)
        p3 = self.lat[2](c3)
        p2 = self.lat[1](c2) + nn.functional.interpolate(p3, scale_factor=2.0, mode="nearest")
        p1 = self.lat[0](c1) + nn.functional.interpolate(p2, scale_factor=2.0, mode="nearest")
        f3 = nn.functional.interpolate(self.smooth[2](p3), scale_factor=4.0, mode="nearest")
        f2 = nn.functional.interpolate(self.smooth[1](p2), scale_factor=2.0, mode="nearest")
        f1 = self.smooth[0](p1)
        y = self.h1(torch.cat([f3, f2, f1], 1))
        y = torch.relu(self.bn_up(self.up1(y)))
        return torch.sigmoid(self.up2(y) * self.scale)


m = DBHead().eval()
x = torch.randn(1, 3, 128, 128)
with torch.no_grad():
    m.scale = 1.0
    logits = torch.logit(m(x).clamp(1e-7, 1 - 1e-7))
    m.scale = float(15.0 / logits.abs().max())  # logits span about +-15
    y = m(x)
path = os.path.join(HERE, "dbhead.onnx")
torch.onnx.export(m, x, path, input_names=["x"], output_names=["maps"], opset_version=14,
                  do_constant_folding=True)
onnx.checker.check_model(onnx.load(path))
np.save(os.path.join(HERE, "dbhead_input.npy"), x.numpy())
np.save(os.path.join(HERE, "dbhead_output.npy"), y.numpy())

# cancel.onnx
eye = np.eye(4, dtype=np.float32).reshape(4, 4, 1, 1)
inits = [numpy_helper.from_array(eye, "eye"),
         numpy_helper.from_array(np.full(4, 1000, np.float32), "plus"),
         numpy_helper.from_array(np.full(4, -1000, np.float32), "minus")]
nodes = [helper.make_node("Conv", ["x", "eye", "plus"], ["a"], name="conv_a"),
         helper.make_node("Conv", ["a", "eye", "minus"], ["b"], name="conv_b"),
         helper.make_node("Relu", ["b"], ["y"], name="relu")]
g = helper.make_graph(nodes, "cancel",
                      [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 8, 8])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 8, 8])], inits)
cm = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
cm.ir_version = 8
onnx.checker.check_model(cm)
onnx.save(cm, os.path.join(HERE, "cancel.onnx"))

# overflow.onnx: y = Sqrt(ReduceSum(Pow(x * 16, 2), axes [2])) on x [1, 8, 64] in [-25, 25]:
# the squares reach 160000 and their sums millions, past float16's 65504, while y (up to
# about 3200) fits: fp16 storage of Pow's or ReduceSum's output gives Inf, the default
# mixed-precision policy (Pow and the reduction of it kept in float32) the right y.
ox = np.random.default_rng(16).uniform(-25, 25, (1, 8, 64)).astype(np.float32)
inits = [numpy_helper.from_array(np.array(16, np.float32), "sixteen"),
         numpy_helper.from_array(np.array(2, np.float32), "two"),
         numpy_helper.from_array(np.array([2], np.int64), "axes")]
nodes = [helper.make_node("Mul", ["x", "sixteen"], ["xs"], name="scale"),
         helper.make_node("Pow", ["xs", "two"], ["sq"], name="square"),
         helper.make_node("ReduceSum", ["sq", "axes"], ["ss"], name="sum_sq", keepdims=1),
         helper.make_node("Sqrt", ["ss"], ["y"], name="norm")]
g = helper.make_graph(nodes, "overflow",
                      [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 64])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8, 1])], inits)
om = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
om.ir_version = 8
onnx.checker.check_model(om)
onnx.save(om, os.path.join(HERE, "overflow.onnx"))
np.save(os.path.join(HERE, "overflow_input.npy"), ox)
oy = np.sqrt(((ox.astype(np.float64) * 16) ** 2).sum(axis=2, keepdims=True)).astype(np.float32)
np.save(os.path.join(HERE, "overflow_output.npy"), oy)

# bias_cancel.onnx: a folded BatchNorm's bias cancelling most of the convolution, as in
# PP-OCR's BN-folded convolutions: x [1, 2, 16, 16] with channel 0 in [-1, 1] and channel
# 1 all ones; y = HardSwish(Conv1x1(x) + b) with W = [1, 1000] and b = -1000 (y's
# pre-activation is x's channel 0: 1000 + x0 - 1000), and t = ConvTranspose1x1(x) + b
# alike. Rounding conv(x) (about 1000) to float16 before adding b loses 0.25 of a result
# within [-1, 1]; adding b in the float32 accumulation keeps fp16's 2^-12 (issue 16).
bx = np.ones((1, 2, 16, 16), np.float32)
bx[0, 0] = np.random.default_rng(17).uniform(-1, 1, (16, 16))
inits = [numpy_helper.from_array(np.array([1, 1000], np.float32).reshape(1, 2, 1, 1), "w"),
         numpy_helper.from_array(np.array([1, 1000], np.float32).reshape(2, 1, 1, 1), "wt"),
         numpy_helper.from_array(np.array([-1000], np.float32), "b")]
nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], name="conv"),
         helper.make_node("HardSwish", ["c"], ["y"], name="hswish"),
         helper.make_node("ConvTranspose", ["x", "wt", "b"], ["t"], name="convt")]
g = helper.make_graph(nodes, "bias_cancel",
                      [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 16, 16])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 1, 16, 16]),
                       helper.make_tensor_value_info("t", TensorProto.FLOAT, [1, 1, 16, 16])], inits)
bm = helper.make_model(g, opset_imports=[helper.make_opsetid("", 14)])
bm.ir_version = 8
onnx.checker.check_model(bm)
onnx.save(bm, os.path.join(HERE, "bias_cancel.onnx"))
np.save(os.path.join(HERE, "bias_cancel_input.npy"), bx)
pre = bx[:, :1].astype(np.float64)
np.save(os.path.join(HERE, "bias_cancel_y.npy"), (pre * np.clip(pre / 6 + 0.5, 0, 1)).astype(np.float32))
np.save(os.path.join(HERE, "bias_cancel_t.npy"), pre.astype(np.float32))
print("wrote dbhead.onnx (scale %.3g), cancel.onnx, overflow.onnx and bias_cancel.onnx" % m.scale)
