#!/usr/bin/env python3
"""Makes tests/passes/attention_op.onnx: ONNX's own Attention op (opset 23) in three
forms, whose every output is compared with a float64 numpy reference written from the
operator's definition (a second implementation, not infer's):

  A: 4-D, grouped-query (6 query heads over 2 key heads), past_key / past_value with the
     present outputs, a boolean [Sq, Tm] mask shorter than the keys, is_causal
  B: 3-D inputs (q_num_heads 4, kv_num_heads 2, value head 5), a float [heads, Sq, T] mask,
     scale, softcap, qk_matmul_output mode 2 (the scores with the mask added)
  C: 4-D with a boolean mask that hides every key from one query row (its output is 0),
     qk_matmul_output mode 3 (the softmax)

    /usr/bin/python3 tests/passes/gen_attention_op.py   (python3-onnx, numpy)

Debian's onnx 1.12 predates opset 23, so the model is written without its checker.
"""
import os

import numpy as np
from onnx import TensorProto, helper, numpy_helper, save

HERE = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(3)
f32 = np.float32


def attention(q, k, v, mask=None, past_k=None, past_v=None, causal=False, scale=None,
              softcap=0.0, q_heads=None, kv_heads=None):
    """Y, present_k, present_v and the scores s, w, p of the definition, in float64."""
    q, k, v = (x.astype(np.float64) for x in (q, k, v))
    three_d = q.ndim == 3
    if three_d:
        b = q.shape[0]
        q = q.reshape(b, q.shape[1], q_heads, -1).transpose(0, 2, 1, 3)
        k = k.reshape(b, k.shape[1], kv_heads, -1).transpose(0, 2, 1, 3)
        v = v.reshape(b, v.shape[1], kv_heads, -1).transpose(0, 2, 1, 3)
    sp = 0
    if past_k is not None:
        sp = past_k.shape[2]
        k = np.concatenate([past_k.astype(np.float64), k], 2)
        v = np.concatenate([past_v.astype(np.float64), v], 2)
    pk, pv = k, v
    b, qh, sq, d = q.shape
    t = k.shape[2]
    group = qh // k.shape[1]
    k = np.repeat(k, group, axis=1)
    v = np.repeat(v, group, axis=1)
    scale = 1 / np.sqrt(d) if scale is None else scale
    s = q @ k.transpose(0, 1, 3, 2) * scale
    if softcap > 0:
        s = softcap * np.tanh(s / softcap)
    bias = np.zeros((b, qh, sq, t))
    if mask is not None:
        m = mask
        if m.dtype == np.bool_:
            m = np.where(m, 0.0, -np.inf)
        m = m.astype(np.float64)
        pad = t - m.shape[-1]
        if pad > 0:
            m = np.concatenate([m, np.full(m.shape[:-1] + (pad,), -np.inf)], -1)
        bias = bias + m
    if causal:
        i = np.arange(sq)[:, None]
        j = np.arange(t)[None, :]
        bias = bias + np.where(j <= i + sp, 0.0, -np.inf)
    w = s + bias
    mx = w.max(-1, keepdims=True)
    e = np.where(np.isneginf(mx), 0.0, np.exp(w - np.where(np.isneginf(mx), 0.0, mx)))
    tot = e.sum(-1, keepdims=True)
    p = np.where(tot > 0, e / np.where(tot > 0, tot, 1), 0.0)
    y = p @ v
    if three_d:
        y = y.transpose(0, 2, 1, 3).reshape(b, sq, -1)
    return y, pk, pv, s, w, p


inputs, init, nodes, outputs, refs = [], [], [], [], {}


def value(name, arr):
    inputs.append(helper.make_tensor_value_info(
        name, TensorProto.BOOL if arr.dtype == np.bool_ else TensorProto.FLOAT, arr.shape))
    refs["in:" + name] = arr


def out(name, arr):
    outputs.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, None))
    refs[name] = arr.astype(f32)


# A
qa = rng.normal(0, 1, (2, 6, 3, 8)).astype(f32)
ka = rng.normal(0, 1, (2, 2, 4, 8)).astype(f32)
va = rng.normal(0, 1, (2, 2, 4, 8)).astype(f32)
pka = rng.normal(0, 1, (2, 2, 2, 8)).astype(f32)
pva = rng.normal(0, 1, (2, 2, 2, 8)).astype(f32)
ma = rng.random((3, 5)) > 0.25
ma[:, 0] = True
for n, a in (("qa", qa), ("ka", ka), ("va", va), ("ma", ma), ("pka", pka), ("pva", pva)):
    value(n, a)
ya, pk, pv, _, _, _ = attention(qa, ka, va, ma, pka, pva, causal=True)
nodes.append(helper.make_node("Attention", ["qa", "ka", "va", "ma", "pka", "pva"],
                              ["ya", "present_k", "present_v"], is_causal=1))
out("ya", ya), out("present_k", pk), out("present_v", pv)

# B
qb = rng.normal(0, 1, (2, 3, 4 * 6)).astype(f32)
kb = rng.normal(0, 1, (2, 5, 2 * 6)).astype(f32)
vb = rng.normal(0, 1, (2, 5, 2 * 5)).astype(f32)
mb = rng.normal(0, 1, (4, 3, 5)).astype(f32)  # per query head, broadcast over the batch
for n, a in (("qb", qb), ("kb", kb), ("vb", vb), ("mb", mb)):
    value(n, a)
yb, _, _, _, wb, _ = attention(qb, kb, vb, mb, scale=0.3, softcap=2.5, q_heads=4,
                               kv_heads=2)
nodes.append(helper.make_node("Attention", ["qb", "kb", "vb", "mb"], ["yb", "", "", "qkb"],
                              q_num_heads=4, kv_num_heads=2, scale=0.3, softcap=2.5,
                              qk_matmul_output_mode=2))
out("yb", yb), out("qkb", wb)

# C
qc = rng.normal(0, 1, (1, 2, 3, 4)).astype(f32)
kc = rng.normal(0, 1, (1, 2, 4, 4)).astype(f32)
vc = rng.normal(0, 1, (1, 2, 4, 4)).astype(f32)
mc = rng.random((1, 2, 3, 4)) > 0.4
mc[0, 1, 2, :] = False  # a row that sees no key
mc[0, 0, :, 1] = True
for n, a in (("qc", qc), ("kc", kc), ("vc", vc), ("mc", mc)):
    value(n, a)
yc, _, _, _, _, pc = attention(qc, kc, vc, mc)
nodes.append(helper.make_node("Attention", ["qc", "kc", "vc", "mc"], ["yc", "", "", "qkc"],
                              qk_matmul_output_mode=3))
out("yc", yc), out("qkc", pc)

graph = helper.make_graph(nodes, "attention_op", inputs, outputs, init)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 23)])
model.ir_version = 8
save(model, os.path.join(HERE, "attention_op.onnx"))
for k, a in refs.items():
    name = k[3:] if k.startswith("in:") else k
    np.save(os.path.join(HERE, "attention_op_%s.npy" % name), a)
print("wrote attention_op.onnx (%d inputs, %d outputs)" % (len(inputs), len(outputs)))
