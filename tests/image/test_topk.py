#!/usr/bin/env python3
"""test_topk.py INFER LABELS: `infer MODEL --image ... --labels LABELS --top 5`
prints, for each image, the same five classes, in the same order, with the same
probabilities (within 2e-4: four decimals are printed) as PyTorch gives for that image
preprocessed by torchvision (Resize(256), CenterCrop(224), ToTensor, Normalize) and run
through the same model, softmax over its logits.

The model is torchvision's resnet18 of the zoo (models/export_zoo.py: seeded random
weights, re-initialized and BatchNorm-calibrated so that its outputs are not degenerate;
its helpers are used here so that the PyTorch model is at hand), exported into a
temporary folder (about 10 s; 47 MB). The images are seeded
photograph-like JPEGs and PNGs of several sizes. Each image is also run alone, which must
print what its row of the batch printed. LABELS' line i must be torchvision's category i.

Prints a line per failure and "test_topk: N passed, M failed"; exit 1 on any failure, 77
(skip) when torch/torchvision are missing or infer has no image support.
"""
import os
import re
import subprocess
import sys
import tempfile
import zlib

try:
    import numpy as np
    import torch
    import torchvision
    import torchvision.transforms as T
    from PIL import Image
except ImportError as e:
    print("SKIP: needs numpy, PIL, torch and torchvision (Debian: python3-torchvision): %s" % e)
    sys.exit(77)

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "models"))
sys.path.insert(0, HERE)
import export_zoo  # noqa: E402  (the zoo's own model construction)
from test_preprocess import photo  # noqa: E402

MODEL = "resnet18"
K = 5
passed = failed = 0


def report(ok, what, detail=""):
    global passed, failed
    if ok:
        passed += 1
    else:
        failed += 1
        print("FAIL %s%s" % (what, ": " + detail if detail else ""), flush=True)


def zoo_model():
    """resnet18 exactly as export_zoo.export_one builds it (same seed)."""
    seed = (0 * 1000003 + zlib.crc32(MODEL.encode())) & 0x7FFFFFFF
    torch.manual_seed(seed)
    gen = torch.Generator().manual_seed(seed)
    model = export_zoo.build(MODEL)
    export_zoo.reinit(model, gen)
    export_zoo.calibrate(model, 224, gen, 4, 8)
    return model.eval(), gen


def parse_top(text):
    """{title: [(prob, index, label)]} from infer's top-K lines."""
    out, cur = {}, None
    for line in text.splitlines():
        m = re.match(r"^(\S.*): top (\d+) of (\d+) classes \((.*)\)$", line)
        if m:
            cur = out.setdefault(m.group(1), [])
            continue
        m = re.match(r"^  (\d+\.\d+)\s+(\d+)  (.*)$", line)
        if m and cur is not None:
            cur.append((float(m.group(1)), int(m.group(2)), m.group(3)))
    return out


def run(args):
    r = subprocess.run(args, capture_output=True, text=True, timeout=600)
    return r.returncode, r.stdout, r.stderr


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    exe, labels_path = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    cats = torchvision.models.ResNet18_Weights.IMAGENET1K_V1.meta["categories"]
    with open(labels_path, encoding="utf-8") as f:
        names = f.read().splitlines()
    report(names == list(cats), "labels file", "%s is not torchvision's %d categories" % (
        labels_path, len(cats)))
    with tempfile.TemporaryDirectory(prefix="test_topk.") as tmp:
        probe = os.path.join(tmp, "probe.png")
        Image.new("RGB", (4, 4)).save(probe)
        rc, _, err = run([exe, "--image", probe, "--save-input", os.path.join(tmp, "p.npy")])
        if rc == 3:
            print("SKIP: this infer has no image support: " + err.strip())
            return 77
        model, gen = zoo_model()
        onnx_path = os.path.join(tmp, MODEL + ".onnx")
        x = torch.randn(2, 3, 224, 224, generator=gen)
        export_zoo.export(model, x, onnx_path, "torchscript", 13, False)
        rng = np.random.default_rng(777)
        files = []
        for i, (h, w) in enumerate(((375, 500), (500, 333), (240, 320), (199, 256), (800, 800))):
            path = os.path.join(tmp, "test_%d.%s" % (i, "jpg" if i % 2 == 0 else "png"))
            Image.fromarray(photo(rng, h, w)).save(path)
            files.append(path)
        pipeline = T.Compose([T.Resize(256), T.CenterCrop(224), T.ToTensor(),
                              T.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])])
        batch = torch.stack([pipeline(Image.open(f).convert("RGB")) for f in files])
        with torch.no_grad():
            probs = torch.softmax(model(batch).double(), dim=1).numpy()
        args = [exe, onnx_path, "--labels", labels_path, "--top", str(K)]
        for f in files:
            args += ["--image", f]
        rc, out, err = run(args)
        report(rc == 0, "infer exit status", "exit %d: %s" % (rc, err.strip()[:500]))
        got = parse_top(out)
        report("softmax of output 'logits'" in out, "title says softmax", out[:300])
        margins = []
        for row, f in enumerate(files):
            ref_idx = list(np.argsort(-probs[row], kind="stable")[:K])
            p_sorted = probs[row][np.argsort(-probs[row])]
            margins.append(float((p_sorted[:K] - p_sorted[1:K + 1]).min()))
            lines = got.get(f, [])
            idx = [i for _, i, _ in lines]
            report(len(lines) == K, "%s: %d lines" % (f, K), "got %d: %s" % (len(lines), out))
            # an order that differs only where PyTorch's own probabilities tie (within
            # what four printed decimals cannot tell) is the same answer
            same = idx == ref_idx or (sorted(idx) == sorted(ref_idx) and all(
                abs(probs[row][a] - probs[row][b]) < 1e-7 for a, b in zip(idx, ref_idx)))
            report(same, "%s: top-%d classes" % (os.path.basename(f), K),
                   "infer %s, PyTorch %s" % (idx, ref_idx))
            for p, i, label in lines:
                report(abs(p - probs[row][i]) <= 2e-4, "%s: probability of class %d" % (
                    os.path.basename(f), i), "infer %.4f, PyTorch %.6f" % (p, probs[row][i]))
                report(label == cats[i], "%s: label of class %d" % (os.path.basename(f), i),
                       "'%s' vs '%s'" % (label, cats[i]))
        # one image alone prints what its batch row printed
        rc, out1, err1 = run([exe, onnx_path, "--labels", labels_path, "--top", str(K),
                              "--image", files[1]])
        report(rc == 0 and parse_top(out1).get(files[1]) == got.get(files[1]),
               "single image = its batch row", "exit %d, %s vs %s %s" % (
                   rc, parse_top(out1).get(files[1]), got.get(files[1]), err1.strip()[:300]))
        print("PyTorch top-%d: top-1 probabilities %s, smallest gap between ranks %.2e" % (
            K, ", ".join("%.4f" % probs[r].max() for r in range(len(files))), min(margins)))
        print(out.rstrip())
    print("test_topk: %d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
