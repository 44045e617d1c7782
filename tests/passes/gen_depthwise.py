#!/usr/bin/env python3
"""Makes tests/passes/depthwise.onnx: depthwise convolutions (group = channels, one
filter each) as MobileNet, EfficientNet and MnasNet have them, behind 1x1 Convs so that
to-channels-last makes their input NHWC, on a [2, 16, 11, 11] input:

  1x1 Conv 16 -> 32 + Relu
  depthwise 3x3 stride 1 pad 1 + bias + Clip(0, 6)            (ReLU6)
  depthwise 5x5 stride 1 pad 2 + bias + residual Add           (Z, no activation)
  depthwise 5x5 stride 2 pad 2 + bias                          (no activation)
  depthwise 3x3 stride 2 pads 0,0,1,1 (SAME-like) + bias + Relu
  1x1 Conv 32 -> 20, depthwise 3x3 stride 2 pad 1 + bias + Clip (C % 8 != 0: half2 path)
  1x1 Conv 32 -> 16, depthwise 7x7 stride 1 pad 3, no bias      (run-time window)
  1x1 Conv 32 -> 13, depthwise 3x3 stride 1 pad 1 + bias + Relu (odd C: scalar path)

each branch ending in GlobalAveragePool, concatenated and flattened to [2, 81]; plus
the input and the output computed with PyTorch in float64.

    /usr/bin/python3 tests/passes/gen_depthwise.py   (python3-onnx, python3-torch)
"""
import os

import numpy as np
import onnx
import torch
import torch.nn.functional as F
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(11)
f32 = np.float32


def normal(scale, shape):
    return rng.normal(0, scale, shape).astype(f32)


x = rng.normal(0, 1, (2, 16, 11, 11)).astype(f32)
w = {
    "w1": normal(0.35, (32, 16, 1, 1)), "b1": normal(0.2, (32,)),
    # positive-leaning 3x3 filters so that ReLU6 clips at both ends
    "wd2": rng.uniform(-0.1, 1.0, (32, 1, 3, 3)).astype(f32), "bd2": normal(0.3, (32,)),
    "wd3": normal(0.15, (32, 1, 5, 5)), "bd3": normal(0.2, (32,)),
    "wd4": normal(0.12, (32, 1, 5, 5)), "bd4": normal(0.2, (32,)),
    "wd5": normal(0.3, (32, 1, 3, 3)), "bd5": normal(0.2, (32,)),
    "w6": normal(0.2, (20, 32, 1, 1)), "b6": normal(0.2, (20,)),
    "wd7": normal(0.4, (20, 1, 3, 3)), "bd7": normal(0.3, (20,)),
    "w8": normal(0.2, (16, 32, 1, 1)), "b8": normal(0.2, (16,)),
    "wd9": normal(0.1, (16, 1, 7, 7)),
    "w10": normal(0.2, (13, 32, 1, 1)), "b10": normal(0.2, (13,)),
    "wd11": normal(0.4, (13, 1, 3, 3)), "bd11": normal(0.2, (13,)),
    "lo": np.array(0, f32), "hi": np.array(6, f32),
}
N = helper.make_node
nodes = [
    N("Conv", ["x", "w1", "b1"], ["c1"]), N("Relu", ["c1"], ["r1"]),
    N("Conv", ["r1", "wd2", "bd2"], ["c2"], group=32, pads=[1, 1, 1, 1]),
    N("Clip", ["c2", "lo", "hi"], ["k2"]),
    N("Conv", ["k2", "wd3", "bd3"], ["c3"], group=32, pads=[2, 2, 2, 2]),
    N("Add", ["c3", "k2"], ["a3"]),
    N("Conv", ["a3", "wd4", "bd4"], ["c4"], group=32, pads=[2, 2, 2, 2], strides=[2, 2]),
    N("Conv", ["c4", "wd5", "bd5"], ["c5"], group=32, pads=[0, 0, 1, 1], strides=[2, 2]),
    N("Relu", ["c5"], ["r5"]),
    N("Conv", ["c4", "w6", "b6"], ["c6"]),
    N("Conv", ["c6", "wd7", "bd7"], ["c7"], group=20, pads=[1, 1, 1, 1], strides=[2, 2]),
    N("Clip", ["c7", "lo", "hi"], ["k7"]),
    N("Conv", ["a3", "w8", "b8"], ["c8"]),
    N("Conv", ["c8", "wd9"], ["c9"], group=16, pads=[3, 3, 3, 3]),
    N("Conv", ["a3", "w10", "b10"], ["c10"]),
    N("Conv", ["c10", "wd11", "bd11"], ["c11"], group=13, pads=[1, 1, 1, 1]),
    N("Relu", ["c11"], ["r11"]),
    N("GlobalAveragePool", ["r5"], ["g5"]), N("GlobalAveragePool", ["k7"], ["g7"]),
    N("GlobalAveragePool", ["c9"], ["g9"]), N("GlobalAveragePool", ["r11"], ["g11"]),
    N("Concat", ["g5", "g7", "g9", "g11"], ["cat"], axis=1), N("Flatten", ["cat"], ["y"]),
]
graph = helper.make_graph(nodes, "depthwise",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 16, 11, 11])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 81])],
                          [numpy_helper.from_array(v, k) for k, v in w.items()])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
model.ir_version = 8
onnx.checker.check_model(model)
onnx.save(model, os.path.join(HERE, "depthwise.onnx"))

t = {k: torch.tensor(v, dtype=torch.float64) for k, v in w.items()}
xt = torch.tensor(x, dtype=torch.float64)
r1 = F.relu(F.conv2d(xt, t["w1"], t["b1"]))
k2 = torch.clamp(F.conv2d(r1, t["wd2"], t["bd2"], padding=1, groups=32), 0, 6)
a3 = F.conv2d(k2, t["wd3"], t["bd3"], padding=2, groups=32) + k2
c4 = F.conv2d(a3, t["wd4"], t["bd4"], padding=2, stride=2, groups=32)
r5 = F.relu(F.conv2d(F.pad(c4, (0, 1, 0, 1)), t["wd5"], t["bd5"], stride=2, groups=32))
c6 = F.conv2d(c4, t["w6"], t["b6"])
k7 = torch.clamp(F.conv2d(c6, t["wd7"], t["bd7"], padding=1, stride=2, groups=20), 0, 6)
c9 = F.conv2d(F.conv2d(a3, t["w8"], t["b8"]), t["wd9"], padding=3, groups=16)
r11 = F.relu(F.conv2d(F.conv2d(a3, t["w10"], t["b10"]), t["wd11"], t["bd11"], padding=1,
                      groups=13))
y = torch.cat([v.mean((2, 3)) for v in (r5, k7, c9, r11)], 1)
assert r5.shape == (2, 32, 3, 3) and k7.shape == (2, 20, 3, 3), (r5.shape, k7.shape)
np.save(os.path.join(HERE, "depthwise_input.npy"), x)
np.save(os.path.join(HERE, "depthwise_output.npy"), y.numpy().astype(f32))
if os.environ.get("GEN_DEPTHWISE_STATS"):  # magnitudes, and how much ReLU6 clips
    for name, v in (("k2", k2), ("a3", a3), ("c4", c4), ("r5", r5), ("k7", k7), ("c9", c9),
                    ("r11", r11), ("y", y)):
        a = v.abs()
        print(f"{name}: max |v| {a.max().item():.3g}, mean |v| {a.mean().item():.3g}, "
              f"zeros {(v == 0).double().mean().item():.3f}, "
              f"sixes {(v == 6).double().mean().item():.3f}")
print("wrote depthwise.onnx")
