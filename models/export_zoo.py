#!/usr/bin/env python3
"""Exports torchvision classification models with seeded random weights to ONNX, with
a reference input and PyTorch's fp32 output per model, for the model tests.

    python3 models/export_zoo.py OUT_DIR [--models a,b] [--exporter torchscript|dynamo|both]
                                 [--opset N] [--batch B] [--seed S] [--keep-batchnorm]

Writes OUT_DIR/NAME.onnx (input "image", output "logits", dynamic batch axis "batch"),
NAME_input.npy, NAME_output.npy and OUT_DIR/manifest.json (merged with an existing one:
one model entry per line, so that shell scripts can read it with grep).

Nothing is downloaded: weights are random, seeded per model (from --seed and the name,
so a subset exports the same files as the whole zoo). Random weights alone give
degenerate outputs (logits of 1e-14 or 1e12, a zero ViT head) that prove nothing, so:
- zero-initialized weights (ViT head, class token, zero-init residual gammas) are
  re-initialized with small random values, ConvNeXt's 1e-6 layer scales are raised;
- normalization affine parameters are randomized a little (a folding bug that drops
  gamma or beta must show);
- BatchNorm running statistics are calibrated on random data (BatchNorm layers alone
  in train mode, cumulative average), then the model runs in eval mode;
- each output's magnitude and top-1 margin are recorded, for a tolerance scaled to it.

Exporters: "torchscript" (torch.onnx.export, dynamo=False where the argument exists;
the only one on torch 1.x) and "dynamo" (torch 2.x, torch.export based; the default
exporter of torch >= 2.9); "both" writes the TorchScript exports to OUT_DIR and the
dynamo ones to OUT_DIR/dynamo (each with its manifest). --opset defaults to 13 for
torchscript and to the exporter's own default for dynamo; the opset actually written
is read back from the file. On torch >= 2.0, nn.MultiheadAttention (ViT) runs through
scaled_dot_product_attention, which the TorchScript exporter knows from opset 14 on:
such models are exported at opset 14 at least (noted in the log and the manifest), and
any export that fails with "support for this operator was added in version N" is
retried once at opset N.

Each model (and exporter) is exported on its own: a failure prints one line
"NAME FAILED (exporter, T s): ExceptionType: message" (a short traceback on stderr),
leaves any earlier export of that model in OUT_DIR as it was, and the others go on.
The last line is "exported K of N; failed: NAMES" (or "failed: none"); the exit status
is 1 when any export failed, 0 otherwise.
Needs torch, torchvision and numpy (Debian 12: python3-torch python3-torchvision).
"""
import argparse
import inspect
import json
import os
import re
import sys
import time
import traceback
import warnings
import zlib

import numpy as np
import torch
import torchvision

MODELS = [
    "resnet18", "resnet50", "resnext50_32x4d", "wide_resnet50_2", "mobilenet_v2",
    "mobilenet_v3_large", "efficientnet_b0", "densenet121", "vgg16", "squeezenet1_1",
    "googlenet", "inception_v3", "shufflenet_v2_x1_0", "regnet_y_400mf", "mnasnet1_0",
    "convnext_tiny", "vit_b_16",
]

NORM_TYPES = (torch.nn.BatchNorm2d, torch.nn.LayerNorm, torch.nn.GroupNorm)

# Models whose TorchScript export contains aten::scaled_dot_product_attention on
# torch >= 2.0 (nn.MultiheadAttention with need_weights=False); its ONNX symbolic is
# registered for opset 14 and later only.
SDPA_MODELS = ("vit_b_16",)
SDPA_MIN_OPSET = 14
HAVE_SDPA = hasattr(torch.nn.functional, "scaled_dot_product_attention")


def image_size(name):
    return 299 if name == "inception_v3" else 224


def build(name):
    fn = getattr(torchvision.models, name)
    kwargs = {}
    if name in ("googlenet", "inception_v3"):
        # No auxiliary classifiers (eval mode ignores them anyway) and the explicit
        # init (their default warns); no input transform (that is for trained weights).
        kwargs = dict(aux_logits=False, init_weights=True, transform_input=False)
    try:
        return fn(weights=None, **kwargs)
    except TypeError:  # torchvision < 0.13: pretrained= instead of weights=
        return fn(pretrained=False, **kwargs)


def reinit(model, gen):
    """Re-initializes the parameters random init leaves zero or negligible, and
    randomizes normalization affine parameters slightly. Returns what it changed."""
    changed = []
    with torch.no_grad():
        for mname, m in model.named_modules():
            if isinstance(m, (torch.nn.Linear, torch.nn.Conv2d)) and not m.weight.any():
                m.reset_parameters()  # kaiming-uniform weight, uniform bias
                changed.append(mname + " (zero weight)")
            elif isinstance(m, NORM_TYPES) and getattr(m, "weight", None) is not None:
                if not m.weight.any():
                    changed.append(mname + " (zero gamma)")
                m.weight.copy_(torch.empty_like(m.weight).uniform_(0.8, 1.2, generator=gen))
                if getattr(m, "bias", None) is not None:  # LayerNorm(bias=False), torch >= 2.1
                    m.bias.copy_(torch.empty_like(m.bias).uniform_(-0.1, 0.1, generator=gen))
        for pname, p in model.named_parameters():
            if pname.endswith(("weight", "bias")):
                continue  # handled above, or legitimately zero (biases)
            amax = p.abs().max().item()
            if "layer_scale" in pname and amax < 1e-3:
                # ConvNeXt's 1e-6 layer scale makes every block a near-identity.
                p.copy_(torch.empty_like(p).uniform_(0.05, 0.3, generator=gen))
                changed.append(pname + " (layer scale %.0e)" % amax)
            elif amax == 0:  # e.g. ViT's class token
                p.copy_(torch.randn(p.shape, generator=gen) * 0.02)
                changed.append(pname + " (zero)")
    return changed


def calibrate(model, size, gen, batches, batch_size):
    """BatchNorm running statistics from random data: BatchNorm layers alone in train
    mode (dropout, stochastic depth stay off), momentum None = cumulative average (the
    default momenta, MNASNet's 3e-4 above all, would barely move in a few batches).
    size: an image's side (3 x size x size samples) or one sample's shape (a tuple, e.g.
    a video clip's 3 x T x H x W)."""
    bns = [m for m in model.modules() if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)]
    model.eval()
    if not bns:
        return 0
    momenta = [m.momentum for m in bns]
    for m in bns:
        m.reset_running_stats()
        m.momentum = None
        m.train()
    with torch.no_grad():
        for _ in range(batches):
            shape = (3, size, size) if isinstance(size, int) else tuple(size)
            model(torch.randn((batch_size,) + shape, generator=gen))
    for m, momentum in zip(bns, momenta):
        m.momentum = momentum  # exported as an attribute: keep it the model's own
    model.eval()
    return len(bns)


def read_opsets(path):
    """{domain: version} from a ModelProto's opset_import (field 8), read with a tiny
    protobuf walker so that the onnx package is not needed."""
    def varint(f):
        shift = result = 0
        while True:
            b = f.read(1)
            if not b:
                raise EOFError
            result |= (b[0] & 0x7F) << shift
            shift += 7
            if not b[0] & 0x80:
                return result

    def fields(f, end):
        while f.tell() < end:
            key = varint(f)
            num, wire = key >> 3, key & 7
            if wire == 0:
                yield num, varint(f)
            elif wire == 2:
                n = varint(f)
                start = f.tell()
                yield num, (start, n)
                f.seek(start + n)  # whatever the caller read meanwhile
            elif wire == 1:
                f.seek(8, 1)
            elif wire == 5:
                f.seek(4, 1)
            else:
                raise ValueError("wire type %d" % wire)

    opsets = {}
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        for num, val in fields(f, size):
            if num != 8:
                continue
            start, n = val
            domain, version = "", 0
            f.seek(start)
            for sub, sval in fields(f, start + n):
                if sub == 1:
                    f.seek(sval[0])
                    domain = f.read(sval[1]).decode()
                elif sub == 2:
                    version = sval
            opsets[domain or "ai.onnx"] = version
    return opsets


def export_params():
    """The keyword arguments torch.onnx.export takes here, or None if it takes **kwargs."""
    params = inspect.signature(torch.onnx.export).parameters
    if any(p.kind == inspect.Parameter.VAR_KEYWORD for p in params.values()):
        return None
    return set(params)


def have_dynamo():
    params = export_params()
    return hasattr(torch, "export") and (params is None or "dynamo" in params)


def call_export(model, x, path, kwargs, required):
    """torch.onnx.export with the keyword arguments this torch knows: an unknown
    optional one is dropped with a note, an unknown required one is an error."""
    params = export_params()
    if params is not None:
        missing = [k for k in required if k not in params]
        if missing:
            raise RuntimeError("torch.onnx.export of torch %s has no %s argument" % (
                torch.__version__, ", ".join(missing)))
        dropped = sorted(k for k in kwargs if k not in params)
        if dropped:
            print("  note: torch.onnx.export of torch %s takes no %s; left out" % (
                torch.__version__, ", ".join(dropped)), flush=True)
        kwargs = {k: v for k, v in kwargs.items() if k in params}
    torch.onnx.export(model, (x,), path, **kwargs)


def export(model, x, path, exporter, opset, keep_batchnorm):
    names = dict(input_names=["image"], output_names=["logits"])
    if exporter == "torchscript":
        kwargs = dict(names, opset_version=opset, do_constant_folding=True,
                      dynamic_axes={"image": {0: "batch"}, "logits": {0: "batch"}})
        params = export_params()
        if params is None or "dynamo" in params:
            kwargs["dynamo"] = False  # torch >= 2.9 defaults to the dynamo exporter
        required = ["opset_version", "dynamic_axes"]
        if keep_batchnorm:
            # TrainingMode.EVAL (the default) folds BatchNorm into the preceding Conv;
            # PRESERVE exports the (eval-mode) model as it is, BatchNormalization nodes
            # and all, which leaves the folding to the engine.
            mode = getattr(getattr(torch.onnx, "TrainingMode", None), "PRESERVE", None)
            if mode is None:
                raise RuntimeError("--keep-batchnorm: torch %s has no "
                                   "torch.onnx.TrainingMode.PRESERVE" % torch.__version__)
            kwargs["training"] = mode
            required.append("training")
        call_export(model, x, path, kwargs, required)
        return
    if not have_dynamo():
        raise RuntimeError("the dynamo exporter needs torch >= 2.5 (this is %s)" % torch.__version__)
    # Batch 1 and up at run time; the reference batch (2 by default) itself must not be
    # 0 or 1, or torch.export specializes the batch dimension to it.
    batch = torch.export.Dim("batch", min=1, max=4096)
    kwargs = dict(names, dynamo=True, dynamic_shapes=({0: batch},))
    if opset:
        kwargs["opset_version"] = opset
    kwargs["external_data"] = False  # one self-contained file (all models < 2 GB)
    call_export(model, x, path, kwargs, ["dynamo", "dynamic_shapes"])


def export_retrying(model, x, path, exporter, opset, keep_batchnorm):
    """export(); a TorchScript export that fails because an op needs a later opset
    ("... was added in version N ...") is retried once at that opset. Returns the
    opset asked for at last."""
    try:
        export(model, x, path, exporter, opset, keep_batchnorm)
        return opset
    except Exception as e:
        m = re.search(r"added in (?:opset )?version (\d+)", str(e))
        if exporter != "torchscript" or not m or int(m.group(1)) <= (opset or 0):
            raise
        first = str(e).splitlines()[0] if str(e) else type(e).__name__
        print("  note: opset %s failed (%s); retrying at opset %s" % (
            opset, first[:200], m.group(1)), flush=True)
        opset = int(m.group(1))
        export(model, x, path, exporter, opset, keep_batchnorm)
        return opset


def top1_margin(out):
    """Smallest gap between the largest and second largest logit over the rows."""
    s = np.sort(out.reshape(out.shape[0], -1), axis=1)
    return float((s[:, -1] - s[:, -2]).min()) if s.shape[1] > 1 else float("inf")


def export_one(name, args, out_dir, exporter):
    seed = (args.seed * 1000003 + zlib.crc32(name.encode())) & 0x7FFFFFFF
    torch.manual_seed(seed)
    gen = torch.Generator().manual_seed(seed)
    size = image_size(name)
    t0 = time.time()
    model = build(name)
    changed = reinit(model, gen)
    n_bn = calibrate(model, size, gen, args.calib_batches, args.calib_batch_size)
    x = torch.randn(args.batch, 3, size, size, generator=gen)
    with torch.no_grad():
        y = model(x)
    if isinstance(y, tuple):  # namedtuple outputs of googlenet/inception in train mode
        y = y[0]
    y = y.float().numpy()
    path = os.path.join(out_dir, name + ".onnx")
    opset = args.opset if exporter == "torchscript" else args.dynamo_opset
    if exporter == "torchscript" and name in SDPA_MODELS and HAVE_SDPA and opset < SDPA_MIN_OPSET:
        print("  note: %s: opset %d -> %d (torch %s exports its attention as "
              "scaled_dot_product_attention, which needs opset %d)" % (
                  name, opset, SDPA_MIN_OPSET, torch.__version__, SDPA_MIN_OPSET), flush=True)
        opset = SDPA_MIN_OPSET
    t_export = time.time()
    # Written to a temporary name first: a failed export leaves an earlier one of this
    # model (and its .npy files, and its manifest entry) as it was.
    tmp = os.path.join(out_dir, name + ".part.onnx")
    try:
        # Exported with autograd on: under no_grad, torch's MultiheadAttention takes its
        # fused fast path (aten::_native_multi_head_attention), which no exporter knows.
        with warnings.catch_warnings(), torch.enable_grad():
            warnings.simplefilter("ignore")
            export_retrying(model, x, tmp, exporter, opset, args.keep_batchnorm)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)
    t_export = time.time() - t_export
    np.save(os.path.join(out_dir, name + "_input.npy"), x.numpy())
    np.save(os.path.join(out_dir, name + "_output.npy"), y)
    opsets = read_opsets(path)
    rows = y.reshape(y.shape[0], -1)
    entry = {
        "name": name,
        "file": name + ".onnx",
        "input": name + "_input.npy",
        "output": name + "_output.npy",
        "input_shape": list(x.shape),
        "output_shape": list(y.shape),
        "exporter": exporter,
        "keep_batchnorm": bool(args.keep_batchnorm),
        "opset": opsets.get("ai.onnx"),
        "torch": torch.__version__,
        "torchvision": torchvision.__version__,
        "seed": seed,
        "output_absmax": float(np.abs(y).max()),
        "output_std": float(y.std()),
        # How much the output depends on the input (0: the same for every row).
        "row_spread": float((rows[0] - rows[-1]).std() / max(rows.std(), 1e-30)),
        "top1": [int(i) for i in rows.argmax(axis=1)],
        "top1_margin": top1_margin(y),
        "bn_calibrated": n_bn,
        "reinit": changed,
        "bytes": os.path.getsize(path),
    }
    print("%-20s %6.1f s (export %.1f s)  %s opset %s  |out| max %.3g std %.3g  row spread "
          "%.2f  top1 %s margin %.3g  %d BN  reinit %d" % (
              name, time.time() - t0, t_export, exporter, entry["opset"], entry["output_absmax"],
              entry["output_std"], entry["row_spread"], entry["top1"], entry["top1_margin"],
              n_bn, len(changed)), flush=True)
    if not (1e-2 < entry["output_std"] < 1e3) or entry["row_spread"] < 1e-2:
        print("  WARNING: %s output looks degenerate" % name, flush=True)
    return entry


def write_manifest(out_dir, entries):
    path = os.path.join(out_dir, "manifest.json")
    old = []
    if os.path.exists(path):
        with open(path) as f:
            old = json.load(f).get("models", [])
    merged = {e["name"]: e for e in old}
    merged.update({e["name"]: e for e in entries})
    order = [n for n in MODELS if n in merged] + sorted(set(merged) - set(MODELS))
    lines = ",\n".join("    " + json.dumps(merged[n], sort_keys=False) for n in order)
    with open(path + ".tmp", "w") as f:
        f.write('{\n  "models": [\n%s\n  ]\n}\n' % lines)
    os.replace(path + ".tmp", path)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("out_dir")
    p.add_argument("--models", default=",".join(MODELS),
                   help="comma-separated subset of: " + ",".join(MODELS))
    p.add_argument("--exporter", choices=["torchscript", "dynamo", "both"], default="torchscript",
                   help="both: torchscript into OUT_DIR, dynamo into OUT_DIR/dynamo")
    p.add_argument("--opset", type=int, default=None,
                   help="ONNX opset (default 13 for torchscript, the exporter's for dynamo; "
                        "with --exporter both, for both)")
    p.add_argument("--batch", type=int, default=2, help="batch of the reference input")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--keep-batchnorm", action="store_true",
                   help="torchscript: leave BatchNormalization nodes unfolded (the "
                        "exporter folds them into Conv by default)")
    p.add_argument("--calib-batches", type=int, default=4)
    p.add_argument("--calib-batch-size", type=int, default=8)
    args = p.parse_args()
    args.dynamo_opset = args.opset
    if args.opset is None:
        args.opset = 13
    names = [n for n in args.models.split(",") if n]
    unknown = [n for n in names if n not in MODELS and not hasattr(torchvision.models, n)]
    if unknown:
        p.error("unknown model(s): " + ", ".join(unknown))
    exporters = ["torchscript", "dynamo"] if args.exporter == "both" else [args.exporter]
    if "dynamo" in exporters and not have_dynamo():
        p.error("the dynamo exporter needs torch >= 2.5 (this is %s)" % torch.__version__)
    if "dynamo" in exporters and args.batch < 2:
        print("note: --batch %d: torch.export specializes a batch of 0 or 1; the dynamo "
              "exports will likely have a fixed batch" % args.batch)
    dirs = {"torchscript": args.out_dir,
            "dynamo": os.path.join(args.out_dir, "dynamo") if args.exporter == "both" else args.out_dir}
    opsets = ", ".join("%s opset %s" % (e, args.opset if e == "torchscript" else
                                        args.dynamo_opset or "default") for e in exporters)
    print("torch %s, torchvision %s, numpy %s, python %s; %s; %d models" % (
        torch.__version__, torchvision.__version__, np.__version__, sys.version.split()[0],
        opsets, len(names)), flush=True)
    t_all = time.time()
    done, failed = 0, []
    for exporter in exporters:
        out_dir = dirs[exporter]
        os.makedirs(out_dir, exist_ok=True)
        if exporter == "dynamo":
            # torch's dynamo exporter writes through onnxscript (which brings onnx):
            # without it every export would fail the same way, after building the model.
            import importlib.util
            missing = [m for m in ("onnxscript", "onnx") if importlib.util.find_spec(m) is None]
            if missing:
                print("dynamo exporter: python package(s) %s missing (pip install onnxscript); "
                      "its %d exports are counted as failed" % (", ".join(missing), len(names)),
                      flush=True)
                failed += [n if len(exporters) == 1 else "%s (dynamo)" % n for n in names]
                continue
        for n in names:
            label = n if len(exporters) == 1 else "%s (%s)" % (n, exporter)
            t0 = time.time()
            try:
                entry = export_one(n, args, out_dir, exporter)
            except Exception as e:  # keep going: one model's export bug is not the zoo's
                msg = " ".join(str(e).split())  # one line, whatever the exception holds
                if len(msg) > 400:
                    msg = msg[:400] + " ..."
                print("%-20s FAILED (%s, %.1f s): %s: %s" % (
                    n, exporter, time.time() - t0, type(e).__name__, msg or "(no message)"),
                    flush=True)
                sys.stdout.flush()
                print("---- %s (%s): traceback (last frames) ----" % (n, exporter), file=sys.stderr)
                traceback.print_exc(limit=-6, file=sys.stderr)
                sys.stderr.flush()
                failed.append(label)
                continue
            done += 1
            write_manifest(out_dir, [entry])
    total = len(names) * len(exporters)
    print("total %.1f s" % (time.time() - t_all))
    print("exported %d of %d; failed: %s" % (done, total, ", ".join(failed) if failed else "none"),
          flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
