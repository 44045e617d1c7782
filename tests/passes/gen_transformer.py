#!/usr/bin/python3
"""Writes small transformer models for the attention and matmul-epilogue passes, with
inputs and numpy (float64) reference outputs:

  NAME.onnx, NAME_input.npy, NAME_output.npy

- transformer_mha: a pre-norm encoder block as torch's TorchScript exporter writes
  nn.MultiheadAttention (sequence-first transposes, one QKV projection sliced three ways,
  heads merged into the batch dim, q divided by sqrt(d), K transposed (1, 2, 0)), then an
  MLP with the erf GELU written out; S = 37 (not a multiple of the kernel's 64-row tiles),
  head dim 16.
- transformer_sdpa: attention in [B, H, S, D] form as the scaled_dot_product_attention
  export writes it (q and K^T each times sqrt(scale)), head dim 64, S = 100.
- attention_odd: head dim 20 (no tensor-core kernel: the GPU takes its float path), and
  a second attention with an additive mask, which the pass leaves alone.

Run from anywhere: /usr/bin/python3 tests/passes/gen_transformer.py (onnx 1.12, numpy).
Seeded: the files are reproducible."""
import math
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
F32 = TensorProto.FLOAT
n = helper.make_node


def save(name, nodes, x, y, inits, opset=13):
    graph = helper.make_graph(
        nodes, name, [helper.make_tensor_value_info("X", F32, list(x.shape))],
        [helper.make_tensor_value_info("Y", F32, list(y.shape))],
        [numpy_helper.from_array(np.asarray(v), k) for k, v in inits.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                              producer_name="infer tests/passes/gen_transformer.py")
    model.ir_version = 7
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(HERE, name + ".onnx"))
    np.save(os.path.join(HERE, name + "_input.npy"), x.astype(np.float32))
    np.save(os.path.join(HERE, name + "_output.npy"), y.astype(np.float32))


def softmax(s):
    s = s - s.max(-1, keepdims=True)
    e = np.exp(s)
    return e / e.sum(-1, keepdims=True)


def layer_norm(x, w, b, eps=1e-5):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * w + b


def gelu(x):
    return 0.5 * x * (1 + np.vectorize(math.erf)(x / math.sqrt(2)))


def ln_nodes(prefix, x, out):
    """LayerNorm written out as the TorchScript exporter does before opset 17."""
    p = prefix
    return [
        n("ReduceMean", [x], [p + "mu"], axes=[-1]),
        n("Sub", [x, p + "mu"], [p + "xc"]),
        n("Pow", [p + "xc", "two"], [p + "sq"]),
        n("ReduceMean", [p + "sq"], [p + "var"], axes=[-1]),
        n("Add", [p + "var", "eps"], [p + "vare"]),
        n("Sqrt", [p + "vare"], [p + "std"]),
        n("Div", [p + "xc", p + "std"], [p + "xn"]),
        n("Mul", [p + "xn", p + "w"], [p + "xw"]),
        n("Add", [p + "xw", p + "b"], [out]),
    ]


def transformer_mha(rng):
    B, S, E, H = 2, 37, 64, 4
    D = E // H
    x = rng.standard_normal((B, S, E))
    w = {k: rng.standard_normal(s) * sc for k, s, sc in [
        ("ln1.w", (E,), 0.2), ("ln1.b", (E,), 0.1), ("in_w", (E, 3 * E), 1 / math.sqrt(E)),
        ("in_b", (3 * E,), 0.1), ("out_w", (E, E), 1 / math.sqrt(E)), ("out_b", (E,), 0.1),
        ("ln2.w", (E,), 0.2), ("ln2.b", (E,), 0.1), ("fc1_w", (E, 2 * E), 1 / math.sqrt(E)),
        ("fc1_b", (2 * E,), 0.1), ("fc2_w", (2 * E, E), 1 / math.sqrt(2 * E)), ("fc2_b", (E,), 0.1)]}
    w["ln1.w"] += 1
    w["ln2.w"] += 1
    # reference
    h = layer_norm(x, w["ln1.w"], w["ln1.b"])
    qkv = h @ w["in_w"] + w["in_b"]
    q, k, v = (qkv[..., i * E:(i + 1) * E].reshape(B, S, H, D).transpose(0, 2, 1, 3) for i in range(3))
    a = softmax(q @ k.transpose(0, 1, 3, 2) / math.sqrt(D)) @ v
    a = a.transpose(0, 2, 1, 3).reshape(B, S, E) @ w["out_w"] + w["out_b"]
    x1 = x + a
    h2 = layer_norm(x1, w["ln2.w"], w["ln2.b"])
    y = x1 + gelu(h2 @ w["fc1_w"] + w["fc1_b"]) @ w["fc2_w"] + w["fc2_b"]
    inits = {"ln1.w": w["ln1.w"].astype(np.float32), "ln1.b": w["ln1.b"].astype(np.float32),
             "ln2.w": w["ln2.w"].astype(np.float32), "ln2.b": w["ln2.b"].astype(np.float32),
             "two": np.array(2, np.float32), "eps": np.array(1e-5, np.float32),
             "in_w": w["in_w"].astype(np.float32), "in_b": w["in_b"].astype(np.float32),
             "out_wt": w["out_w"].T.astype(np.float32).copy(), "out_b": w["out_b"].astype(np.float32),
             "fc1_w": w["fc1_w"].astype(np.float32), "fc1_b": w["fc1_b"].astype(np.float32),
             "fc2_w": w["fc2_w"].astype(np.float32), "fc2_b": w["fc2_b"].astype(np.float32),
             "sqrt_d": np.array(math.sqrt(D), np.float32), "sqrt2": np.array(math.sqrt(2), np.float32),
             "one": np.array(1, np.float32), "half": np.array(0.5, np.float32),
             "s0": np.array([0], np.int64), "s1": np.array([E], np.int64),
             "s2": np.array([2 * E], np.int64), "s3": np.array([3 * E], np.int64),
             "ax2": np.array([2], np.int64), "heads": np.array([S, B * H, D], np.int64),
             "merged": np.array([S * B, E], np.int64), "seq": np.array([S, B, E], np.int64)}
    nodes = ln_nodes("ln1.", "X", "h")
    nodes += [
        n("Transpose", ["h"], ["ht"], perm=[1, 0, 2]),                 # [S, B, E]
        n("MatMul", ["ht", "in_w"], ["qkv0"]),
        n("Add", ["in_b", "qkv0"], ["qkv"]),
        n("Slice", ["qkv", "s0", "s1", "ax2"], ["q0"]),
        n("Slice", ["qkv", "s1", "s2", "ax2"], ["k0"]),
        n("Slice", ["qkv", "s2", "s3", "ax2"], ["v0"]),
        n("Reshape", ["q0", "heads"], ["q1"]),
        n("Transpose", ["q1"], ["q2"], perm=[1, 0, 2]),                # [B*H, S, D]
        n("Reshape", ["k0", "heads"], ["k1"]),
        n("Reshape", ["v0", "heads"], ["v1"]),
        n("Transpose", ["v1"], ["v2"], perm=[1, 0, 2]),
        n("Div", ["q2", "sqrt_d"], ["q3"]),
        n("Transpose", ["k1"], ["kt"], perm=[1, 2, 0]),                # [B*H, D, S]
        n("MatMul", ["q3", "kt"], ["sc"]),
        n("Softmax", ["sc"], ["p"], axis=-1),
        n("MatMul", ["p", "v2"], ["a0"]),
        n("Transpose", ["a0"], ["a1"], perm=[1, 0, 2]),                # [S, B*H, D]
        n("Reshape", ["a1", "merged"], ["a2"]),
        n("Gemm", ["a2", "out_wt", "out_b"], ["a3"], transB=1),
        n("Reshape", ["a3", "seq"], ["a4"]),
        n("Transpose", ["a4"], ["a5"], perm=[1, 0, 2]),                # [B, S, E]
        n("Add", ["a5", "X"], ["x1"]),
    ]
    nodes += ln_nodes("ln2.", "x1", "h2")
    nodes += [
        n("MatMul", ["h2", "fc1_w"], ["f0"]),
        n("Add", ["f0", "fc1_b"], ["f1"]),
        n("Div", ["f1", "sqrt2"], ["g0"]),
        n("Erf", ["g0"], ["g1"]),
        n("Add", ["g1", "one"], ["g2"]),
        n("Mul", ["f1", "g2"], ["g3"]),
        n("Mul", ["g3", "half"], ["g4"]),
        n("MatMul", ["g4", "fc2_w"], ["f2"]),
        n("Add", ["f2", "fc2_b"], ["f3"]),
        n("Add", ["x1", "f3"], ["Y"]),
    ]
    save("transformer_mha", nodes, x, y, inits)


def transformer_sdpa(rng):
    B, S, H, D = 2, 100, 2, 64
    E = H * D
    x = rng.standard_normal((B, S, E))
    wq, wk, wv = (rng.standard_normal((E, E)) / math.sqrt(E) for _ in range(3))
    scale = 1 / math.sqrt(D)
    heads = lambda t: t.reshape(B, S, H, D).transpose(0, 2, 1, 3)
    q, k, v = heads(x @ wq), heads(x @ wk), heads(x @ wv)
    a = softmax((q * math.sqrt(scale)) @ (k.transpose(0, 1, 3, 2) * math.sqrt(scale))) @ v
    y = a.transpose(0, 2, 1, 3).reshape(B, S, E)
    inits = {"wq": wq.astype(np.float32), "wk": wk.astype(np.float32), "wv": wv.astype(np.float32),
             "split": np.array([B, S, H, D], np.int64), "merge": np.array([B, S, E], np.int64),
             "rs": np.array(math.sqrt(scale), np.float32)}
    nodes = []
    for t in "qkv":
        nodes += [n("MatMul", ["X", "w" + t], [t + "0"]),
                  n("Reshape", [t + "0", "split"], [t + "1"]),
                  n("Transpose", [t + "1"], [t + "2"], perm=[0, 2, 1, 3])]
    nodes += [
        n("Transpose", ["k2"], ["kt"], perm=[0, 1, 3, 2]),
        n("Mul", ["q2", "rs"], ["qs"]),
        n("Mul", ["kt", "rs"], ["ks"]),
        n("MatMul", ["qs", "ks"], ["sc"]),
        n("Softmax", ["sc"], ["p"], axis=-1),
        n("MatMul", ["p", "v2"], ["a0"]),
        n("Transpose", ["a0"], ["a1"], perm=[0, 2, 1, 3]),
        n("Reshape", ["a1", "merge"], ["Y"]),
    ]
    save("transformer_sdpa", nodes, x, y, inits)


def transformer_torch2(rng):
    """The QKV split as torch 2's _in_projection_packed writes it (unflatten, unsqueeze,
    transpose, squeeze, then Gather 0 / 1 / 2), heads in [B, H, S, D] and the output
    permuted (2, 0, 1, 3) and flattened for the output projection; head dim 32."""
    S, B, H, D = 50, 3, 2, 32
    E = H * D
    x = rng.standard_normal((S, B, E))
    w = rng.standard_normal((E, 3 * E)) / math.sqrt(E)
    b = rng.standard_normal(3 * E) * 0.1
    wo = rng.standard_normal((E, E)) / math.sqrt(E)
    proj = x @ w + b
    q, k, v = (proj[..., i * E:(i + 1) * E].reshape(S, B * H, D).transpose(1, 0, 2).reshape(B, H, S, D)
               for i in range(3))
    rs = math.sqrt(1 / math.sqrt(D))
    a = softmax((q * rs) @ (k.transpose(0, 1, 3, 2) * rs)) @ v
    y = a.transpose(2, 0, 1, 3).reshape(S * B, E) @ wo
    inits = {"w": w.astype(np.float32), "b": b.astype(np.float32), "wo": wo.astype(np.float32),
             "unflat": np.array([S, B, 3, E], np.int64), "ax0": np.array([0], np.int64),
             "axm2": np.array([-2], np.int64), "heads": np.array([S, B * H, D], np.int64),
             "bhsd": np.array([B, H, S, D], np.int64), "flat": np.array([S * B, E], np.int64),
             "rs": np.array(rs, np.float32)}
    nodes = [
        n("MatMul", ["X", "w"], ["p0"]), n("Add", ["p0", "b"], ["p1"]),
        n("Reshape", ["p1", "unflat"], ["p2"]),
        n("Unsqueeze", ["p2", "ax0"], ["p3"]),                      # [1, S, B, 3, E]
        n("Transpose", ["p3"], ["p4"], perm=[3, 1, 2, 0, 4]),       # [3, S, B, 1, E]
        n("Squeeze", ["p4", "axm2"], ["p5"]),                       # [3, S, B, E]
    ]
    for i, t in enumerate("qkv"):
        inits["i" + t] = np.array(i, np.int64)
        nodes += [n("Gather", ["p5", "i" + t], [t + "0"], axis=0),
                  n("Reshape", [t + "0", "heads"], [t + "1"]),
                  n("Transpose", [t + "1"], [t + "2"], perm=[1, 0, 2]),
                  n("Reshape", [t + "2", "bhsd"], [t + "3"])]
    nodes += [
        n("Mul", ["q3", "rs"], ["qs"]),
        n("Transpose", ["k3"], ["kt"], perm=[0, 1, 3, 2]),
        n("Mul", ["kt", "rs"], ["ks"]),
        n("MatMul", ["qs", "ks"], ["sc"]),
        n("Softmax", ["sc"], ["p"], axis=-1),
        n("MatMul", ["p", "v3"], ["a0"]),
        n("Transpose", ["a0"], ["a1"], perm=[2, 0, 1, 3]),
        n("Reshape", ["a1", "flat"], ["a2"]),
        n("MatMul", ["a2", "wo"], ["Y"]),
    ]
    save("transformer_torch2", nodes, x, y, inits)


def attention_odd(rng):
    """[B, H, S, D] inputs as one [B, S, 3*H*D] tensor, head dim 20; the first attention
    is fused (float path on the GPU), the second has an additive mask and stays."""
    B, S, H, D = 2, 29, 3, 20
    x = rng.standard_normal((B, S, 3 * H * D))
    mask = np.where(rng.random((S, S)) < 0.2, -1e4, 0.0)
    q, k, v = (x[..., i * H * D:(i + 1) * H * D].reshape(B, S, H, D).transpose(0, 2, 1, 3) for i in range(3))
    a1 = softmax(q @ k.transpose(0, 1, 3, 2) * 0.3) @ v
    a2 = softmax(q @ k.transpose(0, 1, 3, 2) * 0.3 + mask) @ v
    y = np.concatenate([a1, a2], -1)
    inits = {"split": np.array([B, S, 3, H, D], np.int64), "c": np.array(0.3, np.float32),
             "mask": mask.astype(np.float32), "ax0": np.array([0], np.int64)}
    nodes = [
        n("Reshape", ["X", "split"], ["x5"]),
        n("Transpose", ["x5"], ["xt"], perm=[2, 0, 3, 1, 4]),  # [3, B, H, S, D]
        n("Split", ["xt"], ["q0", "k0", "v0"], axis=0),
        n("Squeeze", ["q0", "ax0"], ["q"]), n("Squeeze", ["k0", "ax0"], ["k"]),
        n("Squeeze", ["v0", "ax0"], ["v"]),
        n("Transpose", ["k"], ["kt"], perm=[0, 1, 3, 2]),
        n("MatMul", ["q", "kt"], ["s1"]), n("Mul", ["s1", "c"], ["s2"]),
        n("Softmax", ["s2"], ["p1"], axis=-1), n("MatMul", ["p1", "v"], ["a1"]),
        n("MatMul", ["q", "kt"], ["t1"]), n("Mul", ["t1", "c"], ["t2"]),
        n("Add", ["t2", "mask"], ["t3"]),
        n("Softmax", ["t3"], ["p2"], axis=-1), n("MatMul", ["p2", "v"], ["a2"]),
        n("Concat", ["a1", "a2"], ["Y"], axis=-1),
    ]
    save("attention_odd", nodes, x, y, inits)


if __name__ == "__main__":
    rng = np.random.default_rng(2026)
    transformer_mha(rng)
    transformer_sdpa(rng)
    attention_odd(rng)
    transformer_torch2(rng)
