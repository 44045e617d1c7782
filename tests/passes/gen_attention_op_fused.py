#!/usr/bin/env python3
"""Makes tests/passes/attention_op_fused.onnx: ONNX's Attention op (opset 23) in five forms
that the pass fuse-attention-op rewrites into FusedAttention (Q, K, V only, Y the only
output used, no softcap), each output compared with a float64 numpy reference written
here from the operator's definition, one query head at a time (not infer's code, and not
gen_attention_op.py's):

  A: 4-D, grouped-query (4 query heads over 2 key heads), is_causal, Sq == Sk = 66 (past
     a 64-row tile), head size 64
  B: 3-D (q_num_heads 4, kv_num_heads 2), is_causal with Sq 33 < Sk 77 (top-left
     aligned: row i sees keys 0..i), head size 40, scale 0.2
  C: 4-D, 3 heads, Sq 5 < Sk 9, head size 40, value head 24, scale 0.125, not causal
  D: 3-D, 2 heads, is_causal with Sq 5 > Sk 3, head size 64, value head 16
  E: 4-D, grouped-query (4 over 2), is_causal, Sq 2 < Sk 5, head size 40, with a named
     present_key output that nothing reads

    /usr/bin/python3 tests/passes/gen_attention_op_fused.py   (python3-onnx, numpy)

Debian's onnx 1.12 predates opset 23, so the model is written without its checker.
"""
import math
import os

import numpy as np
from onnx import TensorProto, helper, save

HERE = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(11)
f32 = np.float32


def heads(x, n):
    """[B, S, n * w] -> [B, n, S, w]; 4-D inputs are that already."""
    if x.ndim == 4:
        return x
    b, s, hw = x.shape
    return x.reshape(b, s, n, hw // n).transpose(0, 2, 1, 3)


def attention(q, k, v, causal=False, scale=None, q_heads=None, kv_heads=None):
    """Y of the definition in float64, query head by query head."""
    three_d = q.ndim == 3
    q4 = heads(q.astype(np.float64), q_heads)
    k4 = heads(k.astype(np.float64), kv_heads)
    v4 = heads(v.astype(np.float64), kv_heads)
    b, hq, sq, d = q4.shape
    hkv, sk, dv = k4.shape[1], k4.shape[2], v4.shape[3]
    sc = 1 / math.sqrt(d) if scale is None else scale
    y = np.zeros((b, hq, sq, dv))
    for bi in range(b):
        for h in range(hq):
            kh = h * hkv // hq  # query head h reads key head h // (hq / hkv)
            s = q4[bi, h] @ k4[bi, kh].T * sc
            if causal:
                s = np.where(np.arange(sk)[None, :] <= np.arange(sq)[:, None], s, -np.inf)
            e = np.exp(s - s.max(-1, keepdims=True))
            y[bi, h] = (e / e.sum(-1, keepdims=True)) @ v4[bi, kh]
    if three_d:
        y = y.transpose(0, 2, 1, 3).reshape(b, sq, hq * dv)
    return y


inputs, nodes, outputs, refs = [], [], [], {}


def case(tag, q, k, v, unread_present=False, **attrs):
    names = ["q" + tag, "k" + tag, "v" + tag]
    for n, a in zip(names, (q, k, v)):
        inputs.append(helper.make_tensor_value_info(n, TensorProto.FLOAT, a.shape))
        refs[n] = a
    y = attention(q, k, v, causal=bool(attrs.get("is_causal", 0)), scale=attrs.get("scale"),
                  q_heads=attrs.get("q_num_heads"), kv_heads=attrs.get("kv_num_heads"))
    outs = ["y" + tag] + (["present_k" + tag] if unread_present else [])
    nodes.append(helper.make_node("Attention", names, outs, name="attention_" + tag, **attrs))
    outputs.append(helper.make_tensor_value_info("y" + tag, TensorProto.FLOAT, y.shape))
    refs["y" + tag] = y.astype(f32)


def normal(*shape):
    return rng.normal(0, 1, shape).astype(f32)


case("a", normal(1, 4, 66, 64), normal(1, 2, 66, 64), normal(1, 2, 66, 64), is_causal=1)
case("b", normal(2, 33, 4 * 40), normal(2, 77, 2 * 40), normal(2, 77, 2 * 40), is_causal=1,
     scale=0.2, q_num_heads=4, kv_num_heads=2)
case("c", normal(1, 3, 5, 40), normal(1, 3, 9, 40), normal(1, 3, 9, 24), scale=0.125)
case("d", normal(2, 5, 2 * 64), normal(2, 3, 2 * 64), normal(2, 3, 2 * 16), is_causal=1,
     q_num_heads=2, kv_num_heads=2)
case("e", normal(2, 4, 2, 40), normal(2, 2, 5, 40), normal(2, 2, 5, 40), unread_present=True,
     is_causal=1)

graph = helper.make_graph(nodes, "attention_op_fused", inputs, outputs)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 23)])
model.ir_version = 8
save(model, os.path.join(HERE, "attention_op_fused.onnx"))
for name, a in refs.items():
    np.save(os.path.join(HERE, "attention_op_fused_%s.npy" % name), a)
print("wrote attention_op_fused.onnx (%d Attention nodes)" % len(nodes))
