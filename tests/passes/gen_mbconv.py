#!/usr/bin/env python3
"""Makes tests/passes/mbconv.onnx: three MobileNetV2-style blocks (1x1 expansion,
3x3 depthwise, 1x1 projection), whose whole outputs are the model's output, so that
every pixel and channel of the pointwise and depthwise kernels is compared:

  A: 16 -> 96 Clip(0, 6), depthwise 3x3 stride 1 + Clip, 96 -> 16 + residual   9 x 13
  B: 16 -> 144 Clip, depthwise 3x3 stride 2 + Clip, 144 -> 24                   -> 5 x 7
  C: 24 -> 48 Relu, depthwise 3x3 stride 1 (no bias, no activation), 48 -> 8 (no bias)

Channel counts that are not multiples of the kernels' tiles (24, 144), pixel counts
that are not multiples of 128 (234, 70). The input and the output (PyTorch, float64)
are written beside it.

    /usr/bin/python3 tests/passes/gen_mbconv.py   (python3-onnx, python3-torch)
"""
import os

import numpy as np
import onnx
import torch
import torch.nn.functional as F
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(23)
f32 = np.float32


def normal(scale, shape):
    return rng.normal(0, scale, shape).astype(f32)


x = rng.normal(0, 1, (2, 16, 9, 13)).astype(f32)
# expansions scaled so that ReLU6 clips at both ends
w = {
    "we1": normal(0.9, (96, 16, 1, 1)), "be1": normal(0.5, (96,)),
    "wd1": normal(0.5, (96, 1, 3, 3)), "bd1": normal(0.3, (96,)),
    "wp1": normal(0.15, (16, 96, 1, 1)), "bp1": normal(0.2, (16,)),
    "we2": normal(0.9, (144, 16, 1, 1)), "be2": normal(0.5, (144,)),
    "wd2": normal(0.5, (144, 1, 3, 3)), "bd2": normal(0.3, (144,)),
    "wp2": normal(0.12, (24, 144, 1, 1)), "bp2": normal(0.2, (24,)),
    "we3": normal(0.4, (48, 24, 1, 1)), "be3": normal(0.2, (48,)),
    "wd3": normal(0.4, (48, 1, 3, 3)),
    "wp3": normal(0.2, (8, 48, 1, 1)),
    "lo": np.array(0, f32), "hi": np.array(6, f32),
}
N = helper.make_node
nodes = [
    N("Conv", ["x", "we1", "be1"], ["e1"]), N("Clip", ["e1", "lo", "hi"], ["k1"]),
    N("Conv", ["k1", "wd1", "bd1"], ["d1"], group=96, pads=[1, 1, 1, 1]),
    N("Clip", ["d1", "lo", "hi"], ["l1"]),
    N("Conv", ["l1", "wp1", "bp1"], ["p1"]), N("Add", ["p1", "x"], ["ya"]),
    N("Conv", ["ya", "we2", "be2"], ["e2"]), N("Clip", ["e2", "lo", "hi"], ["k2"]),
    N("Conv", ["k2", "wd2", "bd2"], ["d2"], group=144, pads=[1, 1, 1, 1], strides=[2, 2]),
    N("Clip", ["d2", "lo", "hi"], ["l2"]),
    N("Conv", ["l2", "wp2", "bp2"], ["yb"]),
    N("Conv", ["yb", "we3", "be3"], ["e3"]), N("Relu", ["e3"], ["r3"]),
    N("Conv", ["r3", "wd3"], ["d3"], group=48, pads=[1, 1, 1, 1]),
    N("Conv", ["d3", "wp3"], ["yc"]),
    N("Flatten", ["ya"], ["fa"]), N("Flatten", ["yb"], ["fb"]), N("Flatten", ["yc"], ["fc"]),
    N("Concat", ["fa", "fb", "fc"], ["y"], axis=1),
]
graph = helper.make_graph(nodes, "mbconv",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 16, 9, 13])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 2992])],
                          [numpy_helper.from_array(v, k) for k, v in w.items()])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
model.ir_version = 8
onnx.checker.check_model(model)
onnx.save(model, os.path.join(HERE, "mbconv.onnx"))

t = {k: torch.tensor(v, dtype=torch.float64) for k, v in w.items()}
xt = torch.tensor(x, dtype=torch.float64)
k1 = torch.clamp(F.conv2d(xt, t["we1"], t["be1"]), 0, 6)
l1 = torch.clamp(F.conv2d(k1, t["wd1"], t["bd1"], padding=1, groups=96), 0, 6)
ya = F.conv2d(l1, t["wp1"], t["bp1"]) + xt
k2 = torch.clamp(F.conv2d(ya, t["we2"], t["be2"]), 0, 6)
l2 = torch.clamp(F.conv2d(k2, t["wd2"], t["bd2"], padding=1, stride=2, groups=144), 0, 6)
yb = F.conv2d(l2, t["wp2"], t["bp2"])
r3 = F.relu(F.conv2d(yb, t["we3"], t["be3"]))
yc = F.conv2d(F.conv2d(r3, t["wd3"], padding=1, groups=48), t["wp3"])
assert yb.shape == (2, 24, 5, 7) and yc.shape == (2, 8, 5, 7), (yb.shape, yc.shape)
y = torch.cat([v.flatten(1) for v in (ya, yb, yc)], 1)
np.save(os.path.join(HERE, "mbconv_input.npy"), x)
np.save(os.path.join(HERE, "mbconv_output.npy"), y.numpy().astype(f32))
if os.environ.get("GEN_MBCONV_STATS"):  # magnitudes, and how much ReLU6 clips
    for name, v in (("k1", k1), ("l1", l1), ("ya", ya), ("k2", k2), ("l2", l2), ("yb", yb),
                    ("r3", r3), ("yc", yc)):
        a = v.abs()
        print(f"{name}: max |v| {a.max().item():.3g}, mean |v| {a.mean().item():.3g}, "
              f"zeros {(v == 0).double().mean().item():.3f}, "
              f"sixes {(v == 6).double().mean().item():.3f}")
print("wrote mbconv.onnx")
