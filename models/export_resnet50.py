#!/usr/bin/env python3
"""Exports a torchvision ResNet-50 with seeded random weights to ONNX (TorchScript
exporter, opset 17, dynamic batch) with a random input, for CPU-vs-GPU checks.

BatchNorm running statistics are calibrated on random data in train mode first, so
that activations keep a sane scale through the 50 layers (random weights with the
default statistics give logits of 1e-14 or 1e12, which prove nothing).

    python3 models/export_resnet50.py OUT_DIR     (needs torch and torchvision)
"""
import os
import sys

import numpy as np
import torch
import torchvision


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "resnet50-export"
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)
    model = torchvision.models.resnet50(weights=None)
    model.train()
    with torch.no_grad():
        for _ in range(4):
            model(torch.randn(16, 3, 224, 224))
    model.eval()
    x = torch.randn(1, 3, 224, 224)
    kwargs = dict(input_names=["image"], output_names=["logits"], opset_version=17,
                  dynamic_axes={"image": {0: "batch"}, "logits": {0: "batch"}})
    try:
        torch.onnx.export(model, (x,), os.path.join(out, "resnet50.onnx"), dynamo=False, **kwargs)
    except TypeError:  # torch without the dynamo argument
        torch.onnx.export(model, (x,), os.path.join(out, "resnet50.onnx"), **kwargs)
    np.save(os.path.join(out, "input.npy"), x.numpy())
    with torch.no_grad():
        np.save(os.path.join(out, "torch_logits.npy"), model(x).numpy())
    print("exported", out)


if __name__ == "__main__":
    main()
