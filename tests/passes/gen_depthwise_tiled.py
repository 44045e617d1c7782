#!/usr/bin/env python3
"""Makes tests/passes/depthwise_tiled.onnx: 23 depthwise convolutions (group = channels,
one filter each) behind 1x1 Convs (so that to-channels-last makes them NHWC FusedConvs),
on a [2, 24, 7, 33] input, chosen to reach every variant of the GPU kernel
kernels/conv_depthwise_tiled.cu (4, 2 or 1 channels per thread; windows 3, 5, 7 and
the run-time ones; horizontal stride 1 and 2; strips inside the image and at its edges,
which W = 33 has for every window; several channel chunks; the input clamp):

  C = 96 (Relu 1x1): 7x7 pad 3 + bias (ConvNeXt), then 7x7 + bias + residual (its
          input); 3x3 stride 2 + bias + ReLU6
  C = 20: 7x7 + bias + Swish; 3x5 pads (1, 2) + bias + HardSwish; 3x3 + bias +
          residual (its input) + Relu
  C = 40 (Swish 1x1): 5x5 + bias + Swish (EfficientNet), 5x5 stride 2 + bias + ReLU6,
          then 7x7 + bias + Relu on the 4 x 17 result (read clamped: defer-clip)
  C = 58: 3x3 stride 2 + bias (ShuffleNetV2), 5x5 stride 2 + bias + Tanh
  C = 32 / 16 (ReLU6 1x1, moved into the reader by defer-clip): 3x3 + bias + ReLU6,
          5x5 stride 2 + bias
  C = 35 (odd: 1 channel per thread, two chunks): 3x3 + bias + Relu, 5x5 stride 2 +
          bias + LeakyRelu(0.1)
  C = 24: 4x4 stride 2 pad 1 + bias + Tanh, 6x6 pad 2 + bias + Sigmoid, 7x7 stride 2
          + bias
  C = 18 (2 channels per thread): 7x7 stride 2 + bias + Gelu, 5x5 + bias + Sigmoid,
          1x1 stride 2 + bias, 7x7 without bias, 3x3 + bias + HardSigmoid, 2x2 + bias

each output whole (flattened and concatenated to [2, 107127]), so that every pixel and
channel is compared; plus the input and the output computed with PyTorch in float64.

    /usr/bin/python3 tests/passes/gen_depthwise_tiled.py   (python3-onnx, python3-torch)
"""
import math
import os

import numpy as np
import onnx
import torch
import torch.nn.functional as F
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(29)
f32 = np.float32
N_, C_IN, H_, W_ = 2, 24, 7, 33

x = rng.normal(0, 1, (N_, C_IN, H_, W_)).astype(f32)
weights = {"lo": np.array(0, f32), "hi": np.array(6, f32), "half": np.array(0.5, f32),
           "one": np.array(1, f32), "sqrt2": np.array(math.sqrt(2), f32)}
nodes = []
ref = {"x": torch.tensor(x, dtype=torch.float64)}
outputs = []
N = helper.make_node


def param(name, scale, shape):
    weights[name] = rng.normal(0, scale, shape).astype(f32)
    return name


def act(name, v, kind):
    """Appends activation `kind` on value v (named `name`_a ...); returns the result's
    name and sets its reference."""
    t = ref[v]
    if kind is None:
        return v
    o = name + "_" + kind
    if kind == "relu":
        nodes.append(N("Relu", [v], [o]))
        ref[o] = F.relu(t)
    elif kind == "relu6":
        nodes.append(N("Clip", [v, "lo", "hi"], [o]))
        ref[o] = torch.clamp(t, 0, 6)
    elif kind == "swish":
        nodes.append(N("Sigmoid", [v], [o + "_s"]))
        nodes.append(N("Mul", [v, o + "_s"], [o]))
        ref[o] = t * torch.sigmoid(t)
    elif kind == "hardswish":
        nodes.append(N("HardSwish", [v], [o]))
        ref[o] = t * torch.clamp(t / 6 + 0.5, 0, 1)
    elif kind == "sigmoid":
        nodes.append(N("Sigmoid", [v], [o]))
        ref[o] = torch.sigmoid(t)
    elif kind == "tanh":
        nodes.append(N("Tanh", [v], [o]))
        ref[o] = torch.tanh(t)
    elif kind == "leaky":
        nodes.append(N("LeakyRelu", [v], [o], alpha=0.1))
        ref[o] = torch.where(t < 0, 0.1 * t, t)
    elif kind == "hardsigmoid":
        nodes.append(N("HardSigmoid", [v], [o], alpha=0.2, beta=0.5))
        ref[o] = torch.clamp(0.2 * t + 0.5, 0, 1)
    elif kind == "gelu":  # the exporters' chain, which pass fuse makes one Gelu
        nodes.append(N("Div", [v, "sqrt2"], [o + "_d"]))
        nodes.append(N("Erf", [o + "_d"], [o + "_e"]))
        nodes.append(N("Add", [o + "_e", "one"], [o + "_a"]))
        nodes.append(N("Mul", [v, o + "_a"], [o + "_m"]))
        nodes.append(N("Mul", [o + "_m", "half"], [o]))
        ref[o] = 0.5 * t * (1 + torch.erf(t / math.sqrt(2)))
    else:
        raise ValueError(kind)
    return o


def conv1x1(name, v, cout, kind=None, scale=0.3):
    cin = ref[v].shape[1]
    w, b = param(name + "_w", scale, (cout, cin, 1, 1)), param(name + "_b", 0.2, (cout,))
    nodes.append(N("Conv", [v, w, b], [name]))
    ref[name] = F.conv2d(ref[v], torch.tensor(weights[w], dtype=torch.float64),
                         torch.tensor(weights[b], dtype=torch.float64))
    return act(name, name, kind)


def dw(name, v, k, stride=1, pads=None, bias=True, z=None, kind=None, out=True, wscale=1.0):
    """Depthwise k[0] x k[1] convolution of v, symmetric pads (pads[0] rows, pads[1]
    columns; default k // 2), optional bias, residual z added before activation kind."""
    c = ref[v].shape[1]
    kh, kw = k
    ph, pw = pads if pads is not None else (kh // 2, kw // 2)
    w = param(name + "_w", wscale / math.sqrt(kh * kw), (c, 1, kh, kw))
    ins = [v, w]
    tb = None
    if bias:
        ins.append(param(name + "_b", 0.2, (c,)))
        tb = torch.tensor(weights[ins[2]], dtype=torch.float64)
    nodes.append(N("Conv", ins, [name], group=c, kernel_shape=[kh, kw],
                   pads=[ph, pw, ph, pw], strides=[stride, stride]))
    r = F.conv2d(ref[v], torch.tensor(weights[w], dtype=torch.float64), tb, stride=stride,
                 padding=(ph, pw), groups=c)
    ref[name] = r
    o = name
    if z is not None:
        o = name + "_z"
        nodes.append(N("Add", [name, z], [o]))
        ref[o] = r + ref[z]
    o = act(name, o, kind)
    if out:
        outputs.append(o)
    return o


# C = 96: ConvNeXt's 7x7, twice (the second with its input as residual)
e1 = conv1x1("e1", "x", 96, "relu")
d1 = dw("d1", e1, (7, 7), out=False)
dw("a1", d1, (7, 7), z=d1)
dw("d15", e1, (3, 3), stride=2, kind="relu6")
# C = 20
e2 = conv1x1("e2", "x", 20)
dw("d2", e2, (7, 7), kind="swish")
dw("d13", e2, (3, 5), kind="hardswish")
dw("d14", e2, (3, 3), z=e2, kind="relu")
# C = 40: EfficientNet's 5x5; d4 ends in ReLU6 and is read only by d4b
e3 = conv1x1("e3", "x", 40, "swish")
d3 = dw("d3", e3, (5, 5), kind="swish")
d4 = dw("d4", d3, (5, 5), stride=2, kind="relu6", out=False, wscale=6.0)
dw("d4b", d4, (7, 7), kind="relu")
# C = 58: ShuffleNetV2's stride-2 units
e5 = conv1x1("e5", "x", 58)
dw("d5", e5, (3, 3), stride=2)
dw("d5b", e5, (5, 5), stride=2, kind="tanh")
# ReLU6 expansions read only by a depthwise convolution (defer-clip: input_max)
e7 = conv1x1("e7", "x", 32, "relu6", scale=0.8)
dw("d7", e7, (3, 3), kind="relu6")
e8 = conv1x1("e8", "x", 16, "relu6", scale=0.8)
dw("d8", e8, (5, 5), stride=2)
# C = 35: odd
e9 = conv1x1("e9", "x", 35)
dw("d9", e9, (3, 3), kind="relu")
dw("d9b", e9, (5, 5), stride=2, kind="leaky")
# C = 24: even windows
e10 = conv1x1("e10", "x", 24)
dw("d10", e10, (4, 4), stride=2, pads=(1, 1), kind="tanh")
dw("d11", e10, (6, 6), pads=(2, 2), kind="sigmoid")
dw("d12", e10, (7, 7), stride=2)
# C = 18: 2 channels per thread
e13 = conv1x1("e13", "x", 18)
dw("d16", e13, (7, 7), stride=2, kind="gelu")
dw("d17", e13, (5, 5), kind="sigmoid")
dw("d18", e13, (1, 1), stride=2)
dw("d19", e13, (7, 7), bias=False)
dw("d6", e13, (3, 3), kind="hardsigmoid")
dw("d5c", e13, (2, 2), pads=(0, 0))

flat = []
for o in outputs:
    nodes.append(N("Flatten", [o], [o + "_f"]))
    flat.append(o + "_f")
nodes.append(N("Concat", flat, ["y"], axis=1))
y = torch.cat([ref[o].flatten(1) for o in outputs], 1)
assert ref["d4b"].shape == (2, 40, 4, 17) and ref["d10"].shape == (2, 24, 3, 16) and \
    ref["d5c"].shape == (2, 18, 6, 32), (ref["d4b"].shape, ref["d10"].shape, ref["d5c"].shape)

graph = helper.make_graph(nodes, "depthwise_tiled",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x.shape))],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, list(y.shape))],
                          [numpy_helper.from_array(v, k) for k, v in weights.items()])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
model.ir_version = 8
onnx.checker.check_model(model)
onnx.save(model, os.path.join(HERE, "depthwise_tiled.onnx"))
np.save(os.path.join(HERE, "depthwise_tiled_input.npy"), x)
np.save(os.path.join(HERE, "depthwise_tiled_output.npy"), y.numpy().astype(f32))
if os.environ.get("GEN_DEPTHWISE_STATS"):  # magnitudes, and how much the ReLU6s clip
    for name in outputs + [e7, e8, d4]:
        v = ref[name]
        a = v.abs()
        print(f"{name}: {tuple(v.shape)} max |v| {a.max().item():.3g}, "
              f"mean |v| {a.mean().item():.3g}, zeros {(v == 0).double().mean().item():.3f}, "
              f"sixes {(v == 6).double().mean().item():.3f}")
print(f"wrote depthwise_tiled.onnx: {len(outputs)} outputs, y {tuple(y.shape)}, "
      f"{sum(1 for n in nodes if n.op_type == 'Conv' and n.attribute)} depthwise")
