#!/usr/bin/env python3
"""Side-by-side benchmark: PyTorch and infer on the same models, batch and precision, in
one run on one GPU, device-resident inputs on both sides.

    python3 tools/bench_peer.py --infer build/infer [--models a,b | --zoo] [--batch B]
        [--precision fp16] [--compile] [--out DIR] [--deadline S] [--markdown FILE]

--zoo takes the 17 classifiers of models/export_zoo.py at the batches of the speed issue
(256; 128 for the large ones; plus batch 1 of ResNet-50, MobileNetV2 and ViT-B/16);
--models NAME[:BATCH],... takes any of them. Each model is built and exported by
models/export_zoo.py's own functions (seeded random weights, BatchNorm calibrated), at
opset 17 with the TorchScript exporter, so both sides run the same weights.

PyTorch runs the model in eval mode with cudnn.benchmark and channels_last: eager, eager
replayed from a CUDA graph, and (with --compile) torch.compile in its default and
reduce-overhead modes. Every timing: warm-up first, CUDA events around each call, four
input buffers rotated, median reported. infer runs `--bench --no-transfers` (inputs and
outputs bound in device memory, one CUDA-graph replay per run): its figure is runs per
second of host wall time, so the launch and the synchronize count too.

The table (one row per case: each mode's images/s, infer's, infer over the best PyTorch
mode) and the geometric mean of the ratios over the cases are printed as markdown at the
end and written to --markdown when given; the raw figures go to DIR/peer.json. A case not
started by --deadline seconds reads "not run (time)".

--append keeps the cases already in DIR/peer.json (an earlier call on the same machine:
the zoo with torch.compile takes longer than one device call allows) and prints the
table and the geometric mean over all of them.

--prewarm N (with --compile) first exports every model and compiles it in both modes in N
worker processes at once, nothing timed, so that the timed loop after finds the ONNX
files and torch.compile's caches (inductor's FX graph and AOT caches) warm: the whole zoo
then fits one run. Compiling is CPU work (tracing, code generation, Triton builds), which
the host's cores do side by side. The workers keep no autotuning results (inductor's
autotune_local_cache off), so kernel configurations are still chosen in the timed loop
on a quiet GPU; its compile times are then warm ones (the log says so).
"""
import argparse
import importlib.util
import json
import math
import os
import subprocess
import sys
import time

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("export_zoo", os.path.join(HERE, "..", "models",
                                                                         "export_zoo.py"))
zoo = importlib.util.module_from_spec(spec)
spec.loader.exec_module(zoo)

LARGE = {"resnext50_32x4d", "wide_resnet50_2", "inception_v3", "vgg16", "vit_b_16",
         "densenet121", "convnext_tiny"}
ZOO_CASES = [(m, 128 if m in LARGE else 256) for m in zoo.MODELS] + \
    [("resnet50", 1), ("mobilenet_v2", 1), ("vit_b_16", 1)]


def make_model(name, seed=0):
    """The zoo's model: same construction, re-initialization and calibration."""
    s = (seed * 1000003 + zoo.zlib.crc32(name.encode())) & 0x7FFFFFFF
    torch.manual_seed(s)
    gen = torch.Generator().manual_seed(s)
    model = zoo.build(name)
    zoo.reinit(model, gen)
    zoo.calibrate(model, zoo.image_size(name), gen, 4, 8)
    return model.eval()


def export(model, name, path):
    size = zoo.image_size(name)
    with torch.enable_grad():  # MultiheadAttention's fused fast path has no exporter
        torch.onnx.export(model, (torch.randn(1, 3, size, size),), path, input_names=["image"],
                          output_names=["logits"], opset_version=17, dynamo=False,
                          dynamic_axes={"image": {0: "batch"}, "logits": {0: "batch"}})


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


def bench_torch(model, name, batch, dtype, use_compile):
    dev = torch.device("cuda")
    torch.backends.cudnn.benchmark = True
    size = zoo.image_size(name)
    m = model.to(dev, dtype=dtype).to(memory_format=torch.channels_last)
    inputs = [torch.randn(batch, 3, size, size, device=dev, dtype=dtype)
              .to(memory_format=torch.channels_last) for _ in range(4)]
    results, compile_s = {}, {}
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
        del g
        if use_compile:
            for mode in ("default", "reduce-overhead"):
                torch._dynamo.reset()
                t0 = time.time()
                cm = torch.compile(m, mode=mode)
                cm(inputs[0])
                torch.cuda.synchronize()
                compile_s[mode] = time.time() - t0
                results["compile(%s)" % mode] = time_fn(lambda x: cm(x), inputs, warmup=5)
            torch._dynamo.reset()
    return {k: batch / v * 1e3 for k, v in results.items()}, compile_s


def prewarm_case(args):
    """A worker of --prewarm: the ONNX export and both torch.compile modes, once each."""
    name, batch, precision, out = args
    t0 = time.time()
    try:
        import torch._inductor.config as icfg
        icfg.autotune_local_cache = False
        dtype = torch.float16 if precision == "fp16" else torch.float32
        model = make_model(name)
        path = os.path.join(out, name + ".onnx")
        if not os.path.exists(path):
            export(model, name, path + ".part")
            os.replace(path + ".part", path)
        size = zoo.image_size(name)
        dev = torch.device("cuda")
        m = model.to(dev, dtype=dtype).to(memory_format=torch.channels_last)
        x = torch.randn(batch, 3, size, size, device=dev, dtype=dtype).to(
            memory_format=torch.channels_last)
        with torch.inference_mode():
            for mode in ("default", "reduce-overhead"):
                torch._dynamo.reset()
                cm = torch.compile(m, mode=mode)
                cm(x)
                cm(x)
                torch.cuda.synchronize()
        return name, batch, time.time() - t0, None
    except Exception as e:  # the timed loop reports the case's own failure
        return name, batch, time.time() - t0, "%s: %s" % (type(e).__name__, str(e)[:200])


def prewarm(cases, precision, out, workers):
    import multiprocessing as mp
    t0 = time.time()
    ctx = mp.get_context("spawn")
    with ctx.Pool(workers, maxtasksperchild=1) as pool:
        for name, batch, sec, err in pool.imap_unordered(
                prewarm_case, [(n, b, precision, out) for n, b in cases]):
            print("prewarm %s b%d: %.0f s%s" % (name, batch, sec, " (" + err + ")" if err else ""),
                  flush=True)
    print("prewarm: %d cases in %.0f s with %d workers" % (len(cases), time.time() - t0, workers),
          flush=True)


def bench_infer(infer, path, batch, precision, out_dir, name):
    jpath = os.path.join(out_dir, "infer_%s_%d_%s.json" % (name, batch, precision))
    cmd = [infer, path, "--device", "cuda", "--precision", precision, "--batch", str(batch),
           "--bench", "--no-transfers", "--duration", "2", "--json", jpath, "--quiet"]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        return None, "infer failed (%d): %s" % (proc.returncode, proc.stderr.strip()[-300:])
    with open(jpath) as f:
        return json.load(f), None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--infer", default="build/infer")
    ap.add_argument("--models", default=None, help="NAME[:BATCH],... (default: --zoo's cases)")
    ap.add_argument("--zoo", action="store_true")
    ap.add_argument("--model", default=None, help="one model (with --batch)")
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--precision", default="fp16", choices=["fp16", "fp32"])
    ap.add_argument("--compile", action="store_true")
    ap.add_argument("--out", default="/tmp/bench_peer")
    ap.add_argument("--deadline", type=float, default=0, help="seconds; 0: none")
    ap.add_argument("--markdown", default=None)
    ap.add_argument("--append", action="store_true",
                    help="keep the cases of DIR/peer.json from an earlier run (another call "
                         "on the same machine) and print the table over all of them")
    ap.add_argument("--prewarm", type=int, default=0,
                    help="with --compile: export and compile every case first in N processes")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    if args.model:
        cases = [(args.model, args.batch)]
    elif args.models:
        cases = [(c.split(":")[0], int(c.split(":")[1]) if ":" in c else args.batch)
                 for c in args.models.split(",")]
    else:
        cases = ZOO_CASES
    dtype = torch.float16 if args.precision == "fp16" else torch.float32
    if args.precision == "fp32":
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
    if args.prewarm > 0 and args.compile:
        prewarm(cases, args.precision, args.out, args.prewarm)
    t_start = time.time()
    rows, raw = [], []
    if args.append and os.path.exists(os.path.join(args.out, "peer.json")):
        with open(os.path.join(args.out, "peer.json")) as f:
            for r in json.load(f):
                if (r["model"], r["batch"]) in cases:
                    continue  # measured again now
                raw.append(r)
                rows.append((r["model"], r["batch"], r["torch_images_per_s"],
                             r["infer"]["images_per_s"] if r["infer"] else None, r["error"]))
        print("append: %d case(s) kept from %s" % (len(raw), os.path.join(args.out, "peer.json")))
    models = {}
    for name, batch in cases:
        if args.deadline and time.time() - t_start > args.deadline:
            rows.append((name, batch, None, None, "not run (time)"))
            continue
        t0 = time.time()
        path = os.path.join(args.out, name + ".onnx")
        model = models.get(name) or make_model(name)
        models[name] = model
        if not os.path.exists(path):
            export(model, name, path)
        try:
            torch_ips, compile_s = bench_torch(model, name, batch, dtype, args.compile)
        except Exception as e:  # a mode that fails is reported, the others stand
            torch_ips, compile_s = {}, {}
            print("%s b%d: PyTorch failed: %s: %s" % (name, batch, type(e).__name__, e))
        model.to("cpu", dtype=torch.float32)
        torch.cuda.empty_cache()
        res, err = bench_infer(args.infer, path, batch, args.precision, args.out, name)
        infer_ips = res["images_per_s"] if res else None
        rows.append((name, batch, torch_ips, infer_ips, err))
        raw.append({"model": name, "batch": batch, "torch_images_per_s": torch_ips,
                    "torch_compile_s": compile_s, "infer": res, "error": err,
                    "seconds": time.time() - t0})
        best = max(torch_ips.values()) if torch_ips else float("nan")
        print("%s b%d: %s | infer %s img/s | %.2fx best PyTorch (%.0f s)" % (
            name, batch, ", ".join("%s %.0f" % kv for kv in torch_ips.items()),
            "%.0f" % infer_ips if infer_ips else err, (infer_ips or 0) / best,
            time.time() - t0), flush=True)
        with open(os.path.join(args.out, "peer.json"), "w") as f:
            json.dump(raw, f, indent=1)
    modes = ["eager", "eager+graph", "compile(default)", "compile(reduce-overhead)"]
    modes = [m for m in modes if any(r[2] and m in r[2] for r in rows)]
    lines = ["%s %s on %s" % (args.precision, "device-resident inputs",
                              torch.cuda.get_device_name()),
             "", "| model | batch | " + " | ".join("PyTorch " + m for m in modes) +
             " | infer | infer / best PyTorch |",
             "|---|---|" + "---|" * (len(modes) + 2)]
    ratios = []  # one per model: its largest batch (the geometric mean)
    largest = {}
    for name, batch, tips, iips, err in rows:
        if tips and iips and batch >= largest.get(name, (0, 0))[0]:
            largest[name] = (batch, iips / max(tips.values()))
    for name, batch, tips, iips, err in rows:
        if not tips or not iips:
            lines.append("| %s | %d | %s |" % (name, batch, err or "PyTorch failed"))
            continue
        best = max(tips.values())
        lines.append("| %s | %d | %s | %s | %.2fx |" % (
            name, batch, " | ".join("{:,.0f}".format(tips[m]) if m in tips else "-" for m in modes),
            "{:,.0f}".format(iips), iips / best))
    ratios = [r for _, r in largest.values()]
    if ratios:
        gm = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
        lines.append("")
        lines.append("geometric mean of infer / best PyTorch over %d models (each at its largest "
                     "batch): %.2fx; models below 1.2x: %d; below 1x: %d" % (
                         len(ratios), gm, sum(r < 1.2 for r in ratios), sum(r < 1 for r in ratios)))
    text = "\n".join(lines)
    print("\n" + text)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(text + "\n")
    return 0 if all(r[3] for r in rows if not (r[4] or "").startswith("not run")) else 1


if __name__ == "__main__":
    sys.exit(main())
