#!/usr/bin/env python3
"""PyTorch's own fp16 error on the zoo models export_zoo.py makes (same seeds, same
re-initialization and BN calibration, same reference input): the model in fp16 on the
GPU (channels_last) against the same model in fp32 on the CPU, as max abs error / max
|fp32 output| and top-1 agreement. It tells whether a model misses the fp16 tolerance
of the model table (2e-2) by itself, whatever engine runs it.

    python3 models/torch_fp16_error.py resnext50_32x4d,googlenet   (needs a CUDA GPU)
"""
import os
import sys
import zlib

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import export_zoo as z  # noqa: E402


def main():
    names = sys.argv[1].split(",") if len(sys.argv) > 1 else z.MODELS
    for name in names:
        seed = (0 * 1000003 + zlib.crc32(name.encode())) & 0x7FFFFFFF  # export_zoo's --seed 0
        torch.manual_seed(seed)
        gen = torch.Generator().manual_seed(seed)
        size = z.image_size(name)
        model = z.build(name)
        z.reinit(model, gen)
        z.calibrate(model, size, gen, 4, 8)
        x = torch.randn(2, 3, size, size, generator=gen)
        with torch.no_grad():
            ref = model(x)
            ref = (ref[0] if isinstance(ref, tuple) else ref).float()
            m16 = model.half().cuda().to(memory_format=torch.channels_last)
            y = m16(x.half().cuda().to(memory_format=torch.channels_last))
            y = (y[0] if isinstance(y, tuple) else y).float().cpu()
        err = (y - ref).abs().max().item() / ref.abs().max().item()
        top1 = (y.argmax(1) == ref.argmax(1)).sum().item()
        print("%-20s pytorch fp16 vs fp32: %.1e, top-1 %d/%d" % (name, err, top1, y.shape[0]),
              flush=True)


if __name__ == "__main__":
    main()
