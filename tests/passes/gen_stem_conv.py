#!/usr/bin/env python3
"""Makes tests/passes/stem_conv.onnx: the first convolutions of a network, on 3 input
channels (a 7x7 stride-2 one with bias and ReLU, then a 3x3 stride-2 MaxPool, as
ResNet's stem; a 3x3 one with bias and ReLU, then a 2x2 MaxPool, as VGG's), against
numpy in float64. Each convolution has a reader before the graph output: the
channels-last pass converts no node that writes a graph output, and a convolution left
in NCHW would reach none of the channels-last alternatives. On the GPU the cpad8-cudnn-graph alternative
(ops/cuda/conv_channel_pad.c: the channels widened to 8 with zeros) must give the same.
And tests/passes/downsample_conv.onnx: ResNet's downsampling shortcut, a 1x1 stride-2
convolution with bias, the residual added and ReLU (odd and even image sizes; then a
Mul by 0.5, the reader that keeps the convolution channels-last), which pw-stream reads
subsampled on the GPU.

    /usr/bin/python3 tests/passes/gen_stem_conv.py   (python3-onnx, numpy)
"""
import os

import numpy as np
from onnx import TensorProto, checker, helper, numpy_helper, save

HERE = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(27)
f32 = np.float32


def conv2d(x, w, b, stride, pad):
    n, c, h, wd = x.shape
    k, _, r, s = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh, ow = (h + 2 * pad - r) // stride + 1, (wd + 2 * pad - s) // stride + 1
    y = np.zeros((n, k, oh, ow))
    for i in range(r):
        for j in range(s):
            patch = xp[:, :, i:i + stride * oh:stride, j:j + stride * ow:stride]
            y += np.einsum("nchw,kc->nkhw", patch, w[:, :, i, j])
    return y + b[None, :, None, None]


def maxpool(x, k, stride, pad):
    n, c, h, wd = x.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)), constant_values=-np.inf)
    oh, ow = (h + 2 * pad - k) // stride + 1, (wd + 2 * pad - k) // stride + 1
    y = np.full((n, c, oh, ow), -np.inf)
    for i in range(k):
        for j in range(k):
            y = np.maximum(y, xp[:, :, i:i + stride * oh:stride, j:j + stride * ow:stride])
    return y


r = lambda s, shape: rng.normal(0, s, shape).astype(f32).astype(np.float64)  # float32 values
x = r(1, (4, 3, 40, 40))
wa, ba = r(0.15, (32, 3, 7, 7)), r(0.1, (32,))
wb, bb = r(0.3, (16, 3, 3, 3)), r(0.1, (16,))
ya = maxpool(np.maximum(conv2d(x, wa, ba, 2, 3), 0), 3, 2, 1)
yb = maxpool(np.maximum(conv2d(x, wb, bb, 1, 1), 0), 2, 2, 0)
inits = [numpy_helper.from_array(a.astype(f32), n) for n, a in
         (("wa", wa), ("ba", ba), ("wb", wb), ("bb", bb))]
nodes = [helper.make_node("Conv", ["x", "wa", "ba"], ["ca"], kernel_shape=[7, 7], strides=[2, 2],
                          pads=[3, 3, 3, 3]),
         helper.make_node("Relu", ["ca"], ["ra"]),
         helper.make_node("MaxPool", ["ra"], ["ya"], kernel_shape=[3, 3], strides=[2, 2],
                          pads=[1, 1, 1, 1]),
         helper.make_node("Conv", ["x", "wb", "bb"], ["cb"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
         helper.make_node("Relu", ["cb"], ["rb"]),
         helper.make_node("MaxPool", ["rb"], ["yb"], kernel_shape=[2, 2], strides=[2, 2])]
graph = helper.make_graph(nodes, "stem_conv",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)],
                          [helper.make_tensor_value_info("ya", TensorProto.FLOAT, ya.shape),
                           helper.make_tensor_value_info("yb", TensorProto.FLOAT, yb.shape)],
                          inits)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
model.ir_version = 8
checker.check_model(model)
save(model, os.path.join(HERE, "stem_conv.onnx"))
for n, a in (("input", x), ("ya", ya), ("yb", yb)):
    np.save(os.path.join(HERE, "stem_conv_%s.npy" % n), a.astype(f32))
print("wrote stem_conv.onnx")

outs = {}
nodes, inits, ins, outv = [], [], [], []
for tag, (n, c, k, h, w) in (("a", (2, 16, 32, 14, 14)), ("b", (3, 24, 16, 9, 7))):
    xd, wd, bd = r(1, (n, c, h, w)), r(0.3, (k, c, 1, 1)), r(0.1, (k,))
    oh, ow = (h - 1) // 2 + 1, (w - 1) // 2 + 1
    zd = r(1, (n, k, oh, ow))
    outs["x" + tag], outs["z" + tag] = xd, zd
    outs["y" + tag] = 0.5 * np.maximum(conv2d(xd, wd, bd, 2, 0) + zd, 0)
    inits += [numpy_helper.from_array(wd.astype(f32), "w" + tag),
              numpy_helper.from_array(bd.astype(f32), "b" + tag)]
    nodes += [helper.make_node("Conv", ["x" + tag, "w" + tag, "b" + tag], ["c" + tag],
                               kernel_shape=[1, 1], strides=[2, 2]),
              helper.make_node("Add", ["c" + tag, "z" + tag], ["s" + tag]),
              helper.make_node("Relu", ["s" + tag], ["r" + tag]),
              helper.make_node("Mul", ["r" + tag, "half"], ["y" + tag])]
    ins += [helper.make_tensor_value_info(v + tag, TensorProto.FLOAT, outs[v + tag].shape)
            for v in ("x", "z")]
    outv.append(helper.make_tensor_value_info("y" + tag, TensorProto.FLOAT, outs["y" + tag].shape))
inits.append(numpy_helper.from_array(np.array(0.5, f32), "half"))
model = helper.make_model(helper.make_graph(nodes, "downsample_conv", ins, outv, inits),
                          opset_imports=[helper.make_opsetid("", 17)])
model.ir_version = 8
checker.check_model(model)
save(model, os.path.join(HERE, "downsample_conv.onnx"))
for n, a in outs.items():
    np.save(os.path.join(HERE, "downsample_conv_%s.npy" % n), a.astype(f32))
print("wrote downsample_conv.onnx")

# And tests/passes/stem_conv_more.onnx: the other shapes stem-mma takes
# (ops/cuda/conv_stem_mma.c): one grey channel, a 5x5 window dilated by 2, 80 output
# channels (two channel blocks, the second partial) with a residual added before ReLU;
# 6 channels (widened to 8 in the kernel), 3x3 stride 2, 24 outputs, ReLU6 (Clip).
# Each is read by a Mul, which keeps it channels-last.


def conv2d_dil(x, w, b, stride, pad, dil):
    """stride and pad: one number, or (height, width)"""
    sh, sw = stride if isinstance(stride, tuple) else (stride, stride)
    ph, pw = pad if isinstance(pad, tuple) else (pad, pad)
    n, c, h, wd = x.shape
    k, _, r, s = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)))
    oh = (h + 2 * ph - dil * (r - 1) - 1) // sh + 1
    ow = (wd + 2 * pw - dil * (s - 1) - 1) // sw + 1
    y = np.zeros((n, k, oh, ow))
    for i in range(r):
        for j in range(s):
            patch = xp[:, :, i * dil:i * dil + sh * (oh - 1) + 1:sh, j * dil:j * dil + sw * (ow - 1) + 1:sw]
            y += np.einsum("nchw,kc->nkhw", patch, w[:, :, i, j])
    return y + b[None, :, None, None]


xc, wc, bc = r(1, (2, 1, 33, 45)), r(0.2, (80, 1, 5, 5)), r(0.1, (80,))
yc0 = conv2d_dil(xc, wc, bc, 1, 4, 2)
zc = r(1, yc0.shape)
yc = 0.5 * np.maximum(yc0 + zc, 0)
xd, wd, bd = r(1, (3, 6, 30, 30)), r(0.3, (24, 6, 3, 3)), r(0.1, (24,))
yd = 0.5 * np.clip(conv2d_dil(xd, wd, bd, 2, 1, 1), 0, 6)
inits = [numpy_helper.from_array(a.astype(f32), n) for n, a in
         (("wc", wc), ("bc", bc), ("wd", wd), ("bd", bd))]
inits += [numpy_helper.from_array(np.array(v, f32), n) for n, v in
          (("half", 0.5), ("lo", 0.0), ("hi", 6.0))]
nodes = [helper.make_node("Conv", ["xc", "wc", "bc"], ["cc"], kernel_shape=[5, 5],
                          pads=[4, 4, 4, 4], dilations=[2, 2]),
         helper.make_node("Add", ["cc", "zc"], ["sc"]),
         helper.make_node("Relu", ["sc"], ["rc"]),
         helper.make_node("Mul", ["rc", "half"], ["yc"]),
         helper.make_node("Conv", ["xd", "wd", "bd"], ["cd"], kernel_shape=[3, 3], strides=[2, 2],
                          pads=[1, 1, 1, 1]),
         helper.make_node("Clip", ["cd", "lo", "hi"], ["rd"]),
         helper.make_node("Mul", ["rd", "half"], ["yd"])]
ins = [helper.make_tensor_value_info(n, TensorProto.FLOAT, a.shape)
       for n, a in (("xc", xc), ("zc", zc), ("xd", xd))]
outv = [helper.make_tensor_value_info(n, TensorProto.FLOAT, a.shape) for n, a in (("yc", yc), ("yd", yd))]
model = helper.make_model(helper.make_graph(nodes, "stem_conv_more", ins, outv, inits),
                          opset_imports=[helper.make_opsetid("", 17)])
model.ir_version = 8
checker.check_model(model)
save(model, os.path.join(HERE, "stem_conv_more.onnx"))
for n, a in (("xc", xc), ("zc", zc), ("xd", xd), ("yc", yc), ("yd", yd)):
    np.save(os.path.join(HERE, "stem_conv_more_%s.npy" % n), a.astype(f32))
print("wrote stem_conv_more.onnx")

# And tests/passes/s2d_conv.onnx: strided convolutions of few channels, the shapes the
# space-to-depth folding takes (ops/cuda/conv_fold.c, as does its width folding):
# ResNet's 7x7 stride-2 stem on odd sizes (the rearrangement's implicit right padding); 5x5 stride 2 over 4
# channels (16 after the rearrangement, none padded) with a residual before ReLU; a 4x3
# window of strides 3 and 2 over 2 channels (12, padded to 16), no activation. Each is
# read by a Mul, which keeps it channels-last.
xe, we, be = r(1, (2, 3, 37, 29)), r(0.15, (24, 3, 7, 7)), r(0.1, (24,))
ye = 0.5 * np.maximum(conv2d_dil(xe, we, be, 2, 3, 1), 0)
xf, wf, bf = r(1, (3, 4, 23, 26)), r(0.2, (16, 4, 5, 5)), r(0.1, (16,))
yf0 = conv2d_dil(xf, wf, bf, 2, 2, 1)
zf = r(1, yf0.shape)
yf = 0.5 * np.maximum(yf0 + zf, 0)
xg, wg, bg = r(1, (2, 2, 31, 20)), r(0.3, (8, 2, 4, 3)), r(0.1, (8,))
yg = 0.5 * conv2d_dil(xg, wg, bg, (3, 2), 1, 1)
inits = [numpy_helper.from_array(a.astype(f32), n) for n, a in
         (("we", we), ("be", be), ("wf", wf), ("bf", bf), ("wg", wg), ("bg", bg))]
inits.append(numpy_helper.from_array(np.array(0.5, f32), "half"))
nodes = [helper.make_node("Conv", ["xe", "we", "be"], ["ce"], kernel_shape=[7, 7], strides=[2, 2],
                          pads=[3, 3, 3, 3]),
         helper.make_node("Relu", ["ce"], ["re"]),
         helper.make_node("Mul", ["re", "half"], ["ye"]),
         helper.make_node("Conv", ["xf", "wf", "bf"], ["cf"], kernel_shape=[5, 5], strides=[2, 2],
                          pads=[2, 2, 2, 2]),
         helper.make_node("Add", ["cf", "zf"], ["sf"]),
         helper.make_node("Relu", ["sf"], ["rf"]),
         helper.make_node("Mul", ["rf", "half"], ["yf"]),
         helper.make_node("Conv", ["xg", "wg", "bg"], ["cg"], kernel_shape=[4, 3], strides=[3, 2],
                          pads=[1, 1, 1, 1]),
         helper.make_node("Mul", ["cg", "half"], ["yg"])]
arrays = (("xe", xe), ("xf", xf), ("zf", zf), ("xg", xg), ("ye", ye), ("yf", yf), ("yg", yg))
ins = [helper.make_tensor_value_info(n, TensorProto.FLOAT, a.shape) for n, a in arrays[:4]]
outv = [helper.make_tensor_value_info(n, TensorProto.FLOAT, a.shape) for n, a in arrays[4:]]
model = helper.make_model(helper.make_graph(nodes, "s2d_conv", ins, outv, inits),
                          opset_imports=[helper.make_opsetid("", 17)])
model.ir_version = 8
checker.check_model(model)
save(model, os.path.join(HERE, "s2d_conv.onnx"))
for n, a in arrays:
    np.save(os.path.join(HERE, "s2d_conv_%s.npy" % n), a.astype(f32))
print("wrote s2d_conv.onnx")
