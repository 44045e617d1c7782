#!/usr/bin/env python3
"""PyTorch's own fp16 error on the zoo models export_zoo.py makes: the model rebuilt with
the export's seed, re-initialization and BN calibration, run in fp16 on the GPU
(channels_last) on the zoo's reference input, against the zoo's fp32 reference output:
max abs error / max |fp32 output| ("rel") and, per batch row, whether the fp16 top-1 is
the fp32 one. The fp16 model tests hold infer to it (tests/run_models.sh --fp16-peer):
infer's error may be at most 1.5 x PyTorch's (or below 2e-2), and its top-1 must agree
where PyTorch's fp16 agrees.

    python3 models/torch_fp16_error.py --zoo DIR [--models a,b] [--out FILE]
        (needs a CUDA GPU) every model of DIR/manifest.json (or those named), written to
        FILE (default DIR/torch_fp16_error.json): one model per line, as the manifest,
        so that shell scripts read it with grep. The rebuilt model's fp32 CPU output must
        reproduce DIR/NAME_output.npy (else the weights are not the zoo's: the model is
        reported FAILED and left out of the file, and the exit status is 1).
    python3 models/torch_fp16_error.py resnext50_32x4d,googlenet
        the same figures printed, on export_zoo's inputs regenerated (no zoo needed)
"""
import argparse
import json
import os
import sys
import zlib

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import export_zoo as z  # noqa: E402

REPRODUCE_TOL = 1e-3  # rebuilt fp32 CPU output vs the zoo's, relative to max |ref|


def rebuilt(name, seed, calib_batches=4, calib_batch_size=8, batch=2):
    """The model as export_zoo.export_one makes it, and the input it draws."""
    torch.manual_seed(seed)
    gen = torch.Generator().manual_seed(seed)
    size = z.image_size(name)
    model = z.build(name)
    z.reinit(model, gen)
    z.calibrate(model, size, gen, calib_batches, calib_batch_size)
    x = torch.randn(batch, 3, size, size, generator=gen)
    return model, x


def first(y):
    return (y[0] if isinstance(y, tuple) else y).float()


def fp16_error(model, x, ref):
    """rel error and per-row top-1 agreement of the fp16 GPU run against ref (fp32)."""
    with torch.no_grad():
        m16 = model.half().cuda().to(memory_format=torch.channels_last)
        y = first(m16(x.half().cuda().to(memory_format=torch.channels_last))).cpu()
    ref = ref.reshape(ref.shape[0], -1)
    y = y.reshape(y.shape[0], -1)
    err = (y - ref).abs().max().item()
    scale = ref.abs().max().item()
    agree = [int(a) for a in (y.argmax(1) == ref.argmax(1)).tolist()]
    return err, err / scale if scale > 0 else float("inf"), agree


def zoo_mode(args):
    if not torch.cuda.is_available():
        print("torch_fp16_error: no CUDA device visible to torch %s: PyTorch's fp16 error is "
              "measured on the GPU" % torch.__version__)
        return 77
    with open(os.path.join(args.zoo, "manifest.json")) as f:
        entries = {e["name"]: e for e in json.load(f)["models"]}
    names = [n for n in args.models.split(",") if n] if args.models else list(entries)
    out = args.out or os.path.join(args.zoo, "torch_fp16_error.json")
    rows, failed = [], []
    for name in names:
        e = entries.get(name)
        if e is None:
            print("%s FAILED: not in %s/manifest.json" % (name, args.zoo), flush=True)
            failed.append(name)
            continue
        x = torch.from_numpy(np.load(os.path.join(args.zoo, e["input"])))
        ref = torch.from_numpy(np.load(os.path.join(args.zoo, e["output"]))).float()
        model, _ = rebuilt(name, e["seed"], batch=x.shape[0])
        with torch.no_grad():
            again = first(model(x))
        scale = ref.abs().max().item()
        off = (again - ref).abs().max().item() / scale
        if not off <= REPRODUCE_TOL:
            print("%s FAILED: the rebuilt model's fp32 output is off the zoo's by %.2e of "
                  "max|ref| (more than %.0e): not the zoo's weights (another export_zoo.py "
                  "or torch?)" % (name, off, REPRODUCE_TOL), flush=True)
            failed.append(name)
            continue
        err, rel, agree = fp16_error(model, x, ref)
        rows.append({"name": name, "rel": float("%.4g" % rel), "max_abs": float("%.4g" % err),
                     "top1_agree": agree, "torch": torch.__version__,
                     "device": torch.cuda.get_device_name(0)})
        print("%-20s pytorch fp16 vs fp32: rel %.2e (max abs %.3g), top-1 agrees on %d/%d rows"
              % (name, rel, err, sum(agree), len(agree)), flush=True)
    old = {}
    if os.path.exists(out):  # merged, so that a subset updates its lines only
        with open(out) as f:
            old = {r["name"]: r for r in json.load(f).get("models", [])}
    old.update({r["name"]: r for r in rows})
    for name in failed:
        old.pop(name, None)
    lines = ",\n".join("    " + json.dumps(old[n]) for n in sorted(old))
    with open(out + ".part", "w") as f:
        f.write('{"models": [\n' + lines + "\n]}\n")
    os.replace(out + ".part", out)
    print("wrote %s: %d models; failed: %s" % (out, len(old), ",".join(failed) or "none"))
    return 1 if failed else 0


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("names", nargs="?", help="comma-separated models (without --zoo)")
    p.add_argument("--zoo", help="an exported zoo (its manifest.json, inputs and outputs)")
    p.add_argument("--models", help="with --zoo: a subset of its models")
    p.add_argument("--out", help="with --zoo: the file (default ZOO/torch_fp16_error.json)")
    args = p.parse_args()
    if args.zoo:
        return zoo_mode(args)
    for name in args.names.split(",") if args.names else z.MODELS:
        seed = (0 * 1000003 + zlib.crc32(name.encode())) & 0x7FFFFFFF  # export_zoo's --seed 0
        model, x = rebuilt(name, seed)
        with torch.no_grad():
            ref = first(model(x))
        err, rel, agree = fp16_error(model, x, ref)
        print("%-20s pytorch fp16 vs fp32: %.1e, top-1 %d/%d" % (name, rel, sum(agree), len(agree)),
              flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
