#!/usr/bin/env python3
"""Side-by-side benchmark: PyTorch and infer on the same model, batch and precision,
in one run on one GPU.

    python3 tools/bench_peer.py --infer build/infer --model resnet50 --batch 256 \
        --precision fp16 [--compile] [--out DIR]

PyTorch runs the torchvision model (seeded random weights, BatchNorm calibrated as in
models/export_resnet50.py) in eval mode with cudnn.benchmark and channels_last: eager,
eager replayed from a CUDA graph, and (with --compile) torch.compile. infer runs the
ONNX export of the same model with `--bench`. Every timing: warm-up first, then CUDA
events around each run, several input buffers rotated, median reported.
"""
import argparse
import json
import os
import subprocess
import sys

import numpy as np
import torch
import torchvision


def make_model(name, seed=0):
    torch.manual_seed(seed)
    model = getattr(torchvision.models, name)(weights=None)
    model.train()
    with torch.no_grad():
        for _ in range(3):
            model(torch.randn(8, 3, 224, 224))
    return model.eval()


def time_fn(fn, inputs, warmup=10, iters=50):
    for i in range(warmup):
        fn(inputs[i % len(inputs)])
    torch.cuda.synchronize()
    times = []
    for i in range(iters):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn(inputs[i % len(inputs)])
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return float(np.median(times))


def bench_torch(model, batch, dtype, use_compile):
    dev = torch.device("cuda")
    torch.backends.cudnn.benchmark = True
    m = model.to(dev, dtype=dtype).to(memory_format=torch.channels_last)
    inputs = [torch.randn(batch, 3, 224, 224, device=dev, dtype=dtype)
              .to(memory_format=torch.channels_last) for _ in range(4)]
    results = {}
    with torch.inference_mode():
        results["eager"] = time_fn(lambda x: m(x), inputs)
        static = inputs[0].clone()
        for _ in range(3):
            m(static)
        torch.cuda.synchronize()
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            out = m(static)

        def replay(x):
            static.copy_(x)
            g.replay()
            return out
        results["eager+graph"] = time_fn(replay, inputs)
        if use_compile:
            # both modes: at batch 256 either may win (the host's README: ResNet-50
            # 27,251 default vs 27,761 reduce-overhead)
            for mode in ("default", "reduce-overhead"):
                torch._dynamo.reset()
                cm = torch.compile(m, mode=mode)
                results["compile(%s)" % mode] = time_fn(lambda x: cm(x), inputs, warmup=5)
    return results


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--infer", default="build/infer")
    ap.add_argument("--model", default="resnet50")
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--precision", default="fp16", choices=["fp16", "fp32"])
    ap.add_argument("--compile", action="store_true")
    ap.add_argument("--out", default="/tmp/bench_peer")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    model = make_model(args.model)
    onnx_path = os.path.join(args.out, args.model + ".onnx")
    if not os.path.exists(onnx_path):
        torch.onnx.export(model, (torch.randn(1, 3, 224, 224),), onnx_path, input_names=["image"],
                          output_names=["logits"], opset_version=17, dynamo=False,
                          dynamic_axes={"image": {0: "batch"}, "logits": {0: "batch"}})
    dtype = torch.float16 if args.precision == "fp16" else torch.float32
    if args.precision == "fp32":
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
    rows = {k: v for k, v in bench_torch(model, args.batch, dtype, args.compile).items()}
    jpath = os.path.join(args.out, "infer_%s_%d_%s.json" % (args.model, args.batch, args.precision))
    cmd = [args.infer, onnx_path, "--device", "cuda", "--precision", args.precision, "--batch",
           str(args.batch), "--bench", "--duration", "2", "--json", jpath, "--quiet"]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    print(proc.stdout, end="")
    if proc.returncode != 0:
        print("infer failed (%d): %s" % (proc.returncode, proc.stderr.strip()))
    else:
        with open(jpath) as f:
            rows["infer (compute, events)"] = json.load(f)["compute_ms_median"]
    best_torch = min(v for k, v in rows.items() if not k.startswith("infer"))
    print("\n%s batch %d %s on %s" % (args.model, args.batch, args.precision,
                                      torch.cuda.get_device_name()))
    print("| runner | median ms | images/s | vs best PyTorch |")
    print("|---|---|---|---|")
    for k, v in rows.items():
        print("| %s | %.3f | %.0f | %.2fx |" % (k, v, args.batch / v * 1e3, best_torch / v))
    return 0 if proc.returncode == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
