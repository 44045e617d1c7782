#!/usr/bin/python3
"""Exports torch's nn.MultiheadAttention as the TorchScript exporter writes it (opset 17),
for the pass move-row-transposes (engine/pass_row_permute.c) and fuse-attention after it,
with inputs and PyTorch's float64 outputs:

  NAME.onnx, NAME_input.npy, NAME_output.npy

- mha_rows_block: x + MHA(LN(x)) then LayerNorm, nn.MultiheadAttention(embed_dim=32,
  num_heads=4, batch_first=True) (head dim 8): batch_first makes the module transpose its
  input to [S, B, E] before the packed QKV projection (MatMul + Add on [S, B, E]) and its
  output back to [B, S, E] after the output projection (Gemm on [S*B, E], reshaped).
- mha_rows_vit: torchvision's ViT encoder block (vision_transformer.EncoderBlock: pre-norm
  attention and MLP with residuals, hidden 64, 2 heads of 32, MLP 128).

- mha_rows_cross: cross-attention, x + MHA(x, m, m) (batch_first, 32 wide, 4 heads, x of
  37 rows, m of 23): separate projections of the query and the key/value rows, each
  behind its own Transpose (three to remove).
- mha_rows_kept: a transposed value the pass must keep: the block transposes LN(x)
  itself for a sequence-first MultiheadAttention and also returns that transposed value
  (times 2) as a second output, so only the Transpose after the attention may go.

All with a dynamic batch axis as models/export_zoo.py exports the zoo (the shape
arithmetic folds once infer binds the input), B = 3, S = 37 (odd: no tile multiple).
Run from anywhere: /usr/bin/python3 tests/passes/gen_mha_rows.py (torch 1.13,
torchvision 0.14). Seeded: the reference outputs are reproducible; the .onnx files may
differ in node names between torch versions."""
import os
import warnings

import numpy as np
import torch
import torchvision

HERE = os.path.dirname(os.path.abspath(__file__))


class Block(torch.nn.Module):
    def __init__(self, e=32, h=4):
        super().__init__()
        self.attn = torch.nn.MultiheadAttention(e, h, batch_first=True)
        self.ln0 = torch.nn.LayerNorm(e)
        self.ln1 = torch.nn.LayerNorm(e)

    def forward(self, x):
        h = self.ln0(x)
        a, _ = self.attn(h, h, h, need_weights=False)
        return self.ln1(x + a)


class Cross(torch.nn.Module):
    def __init__(self, e=32, h=4):
        super().__init__()
        self.attn = torch.nn.MultiheadAttention(e, h, batch_first=True)

    def forward(self, x, m):
        a, _ = self.attn(x, m, m, need_weights=False)
        return x + a


class Kept(torch.nn.Module):
    def __init__(self, e=32, h=4):
        super().__init__()
        self.attn = torch.nn.MultiheadAttention(e, h)
        self.ln = torch.nn.LayerNorm(e)

    def forward(self, x):
        ht = self.ln(x).transpose(0, 1)
        a, _ = self.attn(ht, ht, ht, need_weights=False)
        return x + a.transpose(0, 1), ht * 2


def perturb(model, gen):
    """Random LayerNorm affines and biases (the defaults, ones and zeros, would hide a
    dropped bias or a transposed one)."""
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("bias"):
                p.copy_(torch.randn(p.shape, generator=gen) * 0.1)
            elif p.dim() == 1:
                p.copy_(1 + torch.randn(p.shape, generator=gen) * 0.2)


def export(name, model, x):
    export_io(name, model, {"X": x}, ["Y"])


def export_io(name, model, inputs, outputs):
    """inputs: name -> tensor (NAME_<in>.npy, or NAME_input.npy for a lone X); outputs:
    names (NAME_<out>.npy, or NAME_output.npy for a lone Y)."""
    model.eval()
    path = os.path.join(HERE, name + ".onnx")
    xs = tuple(inputs.values())
    lone = len(inputs) == 1 and len(outputs) == 1
    # the batch axis dynamic; a second output (mha_rows_kept's T) has its batch on dim 1,
    # so with several outputs only the inputs' are named (the rest follow at build)
    axes = {n: {0: "batch"} for n in list(inputs) + (outputs if lone else [])}
    # with gradients on (parameters requiring them), as the zoo exports: under no_grad
    # torch 1.13's eval-mode MultiheadAttention takes its fast path,
    # aten::_native_multi_head_attention, which has no ONNX export
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, xs, path, opset_version=17, do_constant_folding=True,
                          input_names=list(inputs), output_names=outputs, dynamic_axes=axes)
    with torch.no_grad():
        ys = model.double()(*(x.double() for x in xs))
    ys = ys if isinstance(ys, tuple) else (ys,)
    for n, x in inputs.items():
        tag = "input" if lone else n
        np.save(os.path.join(HERE, "%s_%s.npy" % (name, tag)), x.numpy().astype(np.float32))
    for n, y in zip(outputs, ys):
        tag = "output" if lone else n
        np.save(os.path.join(HERE, "%s_%s.npy" % (name, tag)), y.numpy().astype(np.float32))


def main():
    gen = torch.Generator().manual_seed(2026)
    torch.manual_seed(2026)
    B, S = 3, 37
    block = Block()
    perturb(block, gen)
    export("mha_rows_block", block, torch.randn(B, S, 32, generator=gen))
    vit = torchvision.models.vision_transformer.EncoderBlock(
        num_heads=2, hidden_dim=64, mlp_dim=128, dropout=0.0, attention_dropout=0.0)
    perturb(vit, gen)
    export("mha_rows_vit", vit, torch.randn(B, S, 64, generator=gen))
    cross = Cross()
    perturb(cross, gen)
    export_io("mha_rows_cross", cross, {"X": torch.randn(B, S, 32, generator=gen),
                                        "M": torch.randn(B, 23, 32, generator=gen)}, ["Y"])
    kept = Kept()
    perturb(kept, gen)
    export_io("mha_rows_kept", kept, {"X": torch.randn(B, S, 32, generator=gen)}, ["Y", "T"])


if __name__ == "__main__":
    main()
