#!/usr/bin/env python3
"""test_preprocess.py INFER: `infer --image` against PIL and torchvision.

1. Decoding: for JPEG (baseline 4:4:4 / 4:2:2 / 4:2:0, progressive, grayscale, sizes that
   are no multiple of the 8x8 or 16x16 blocks) and PNG (RGB, gray, gray+alpha, RGBA,
   palette with and without transparency, 1/2/4-bit palettes, 1-bit, interlaced, 16-bit
   RGB / RGBA / gray+alpha), the pixels infer decodes (`--preprocess none --save-input`:
   x / 255 exactly) must equal PIL's Image.open(f).convert("RGB") byte for byte. 16-bit
   gray is compared with its high byte (PIL turns it into 32-bit integers and clips them
   at 255 instead; image_png.c documents the difference).
2. Preprocessing: the tensor infer feeds the model (`--save-input`) must be within 1/255
   of a pixel (|diff| * std <= 1/255) of torchvision.transforms on the same file, for
   torchvision's ImageNet preset (Resize(256), CenterCrop(224), ToTensor, Normalize),
   the inception preset, and explicit --resize/--crop/--mean/--std, on photograph-like
   images (gradients, edges, noise: seeded) of many sizes: landscape, portrait, square,
   smaller than 256, odd, tiny, extreme aspect ratios, large ones shrunk 8x; and a batch of
   several images in one call, row for row. How many values are bit-identical is printed.

The images are made in a temporary folder. Prints a line per failure and finally
"test_preprocess: N passed, M failed"; exit 1 on any failure, 77 (skip) when numpy, PIL,
torch or torchvision cannot be imported or infer has no image support.
"""
import os
import struct
import subprocess
import sys
import tempfile
import zlib

try:
    import numpy as np
    import PIL
    import torch
    import torchvision
    import torchvision.transforms as T
    from PIL import Image, features
except ImportError as e:  # CI installs them (.ci/run); a bare machine may not have them
    print("SKIP: needs numpy, PIL, torch and torchvision (Debian: python3-torchvision): %s" % e)
    sys.exit(77)

MEAN = [0.485, 0.456, 0.406]
STD = [0.229, 0.224, 0.225]
passed = failed = 0


def report(ok, what, detail=""):
    global passed, failed
    if ok:
        passed += 1
    else:
        failed += 1
        print("FAIL %s%s" % (what, ": " + detail if detail else ""), flush=True)


def photo(rng, h, w):
    """Smooth colour fields, a few hard-edged shapes and sensor-like noise."""
    y, x = np.mgrid[0:h, 0:w].astype(np.float64)
    fx, fy = rng.uniform(0.01, 0.2, 2) * 64 / max(16, min(h, w) / 4)
    img = np.stack([128 + 100 * np.sin(x * fx + y * fy + rng.uniform(0, 6)),
                    128 + 90 * np.cos(x * fy - y * fx),
                    255 * (x / max(w - 1, 1)) * (y / max(h - 1, 1))], -1)
    for _ in range(3):  # discs and bars: sharp edges show resampling errors
        cx, cy, r = rng.uniform(0, w), rng.uniform(0, h), rng.uniform(2, max(3, min(h, w) / 3))
        img[(x - cx) ** 2 + (y - cy) ** 2 < r * r] = rng.uniform(0, 255, 3)
        img[:, int(rng.uniform(0, w)):][:, :max(1, w // 20)] = rng.uniform(0, 255, 3)
    img += rng.normal(0, 8, img.shape)
    return np.clip(np.rint(img), 0, 255).astype(np.uint8)


def png_chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(
        ">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def png_bytes(arr, color, depth, interlace=False):
    """PNG of arr (h x w x c, uint8 or uint16) without filters, optionally Adam7."""
    h, w = arr.shape[:2]
    dt = ">u2" if depth == 16 else "u1"
    def rows(a):
        return b"".join(b"\x00" + a[i].astype(dt).tobytes() for i in range(a.shape[0]))
    if interlace:
        raw = b""
        for x0, y0, dx, dy in ((0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4),
                               (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2)):
            sub = arr[y0::dy, x0::dx]
            if sub.size:
                raw += rows(sub)
    else:
        raw = rows(arr)
    ihdr = struct.pack(">IIBBBBB", w, h, depth, color, 0, 0, 1 if interlace else 0)
    return (b"\x89PNG\r\n\x1a\n" + png_chunk(b"IHDR", ihdr) +
            png_chunk(b"IDAT", zlib.compress(raw, 6)) + png_chunk(b"IEND", b""))


class Infer:
    def __init__(self, exe, tmp):
        self.exe, self.tmp, self.calls = exe, tmp, 0

    def tensor(self, files, *flags):
        """infer --image F... FLAGS --save-input: the batch, or (None, stderr)."""
        out = os.path.join(self.tmp, "batch.npy")
        if os.path.exists(out):
            os.remove(out)
        args = [self.exe]
        for f in files:
            args += ["--image", f]
        args += list(flags) + ["--save-input", out]
        self.calls += 1
        r = subprocess.run(args, capture_output=True, text=True, timeout=120)
        if r.returncode != 0:
            return None, "exit %d: %s" % (r.returncode, r.stderr.strip()[:400])
        return np.load(out), ""


def check_decode(infer, tmp, rng):
    """Section 1: decoded pixels against PIL, byte for byte."""
    cases = []  # (name, path, expected h x w x 3 uint8 or None for PIL's)

    def add_pil(name, img, **kw):
        path = os.path.join(tmp, name)
        img.save(path, **kw)
        cases.append((name, path, None))

    def add_raw(name, data, expected=None):
        path = os.path.join(tmp, name)
        with open(path, "wb") as f:
            f.write(data)
        cases.append((name, path, expected))

    for (h, w) in ((48, 64), (33, 17), (1, 1), (23, 101)):
        a = photo(rng, h, w)
        tag = "%dx%d" % (h, w)
        for sub, sname in ((0, "444"), (1, "422"), (2, "420")):
            add_pil("jpeg_%s_%s.jpg" % (sname, tag), Image.fromarray(a), quality=90,
                    subsampling=sub)
        add_pil("jpeg_q40_%s.jpg" % tag, Image.fromarray(a), quality=40)
        add_pil("jpeg_progressive_%s.jpg" % tag, Image.fromarray(a), quality=80,
                progressive=True)
        add_pil("jpeg_gray_%s.jpg" % tag, Image.fromarray(a[:, :, 1]), quality=85)
        add_pil("png_rgb_%s.png" % tag, Image.fromarray(a))
        add_pil("png_gray_%s.png" % tag, Image.fromarray(a[:, :, 0]))
        add_pil("png_la_%s.png" % tag, Image.fromarray(np.dstack([a[:, :, 0], a[:, :, 1]]), "LA"))
        add_pil("png_rgba_%s.png" % tag, Image.fromarray(np.dstack([a, a[:, :, 2]]), "RGBA"))
        pal = Image.fromarray(a).convert("P", palette=Image.ADAPTIVE, colors=200)
        add_pil("png_palette_%s.png" % tag, pal)
        add_pil("png_palette_trns_%s.png" % tag, pal, transparency=7)
        for bits in (1, 2, 4):
            small = Image.fromarray(a).convert("P", palette=Image.ADAPTIVE, colors=1 << bits)
            add_pil("png_palette_%dbit_%s.png" % (bits, tag), small, bits=bits)
        add_pil("png_1bit_%s.png" % tag, Image.fromarray(a[:, :, 0]).convert("1"))
        add_raw("png_interlaced_%s.png" % tag, png_bytes(a, 2, 8, interlace=True))
        a16 = a.astype(np.uint16) * 257 + rng.integers(0, 256, a.shape, dtype=np.uint16) % 257
        add_raw("png_rgb16_%s.png" % tag, png_bytes(a16, 2, 16))
        add_raw("png_rgba16_%s.png" % tag, png_bytes(np.dstack([a16, a16[:, :, :1]]), 6, 16))
        add_raw("png_la16_%s.png" % tag, png_bytes(np.dstack([a16[:, :, :1], a16[:, :, 1:2]]), 4, 16))
        gray16 = a16[:, :, :1]
        add_raw("png_gray16_%s.png" % tag, png_bytes(gray16, 0, 16),
                np.repeat((gray16 >> 8).astype(np.uint8), 3, axis=2))
    for name, path, expected in cases:
        got, err = infer.tensor([path], "--preprocess", "none")
        if got is None:
            report(False, "decode " + name, err)
            continue
        pix = got[0].transpose(1, 2, 0) * 255
        rounded = np.rint(pix)
        if expected is None:
            expected = np.asarray(Image.open(path).convert("RGB"))
        exact_scale = np.abs(pix - rounded).max() < 1e-4
        same = exact_scale and rounded.shape == expected.shape and (rounded == expected).all()
        detail = ""
        if not same:
            if rounded.shape != expected.shape:
                detail = "shape %s vs PIL's %s" % (rounded.shape, expected.shape)
            else:
                d = np.abs(rounded - expected.astype(np.float64))
                detail = "%d of %d values differ, max by %d" % ((d > 0).sum(), d.size, d.max())
        report(same, "decode " + name, detail)
    print("decoding: %d files compared with PIL %s byte for byte" % (len(cases), PIL.__version__),
          flush=True)


def torch_pipeline(resize, crop, mean, std):
    steps = []
    if resize is not None:
        steps.append(T.Resize(resize))  # PIL bilinear (antialiased when shrinking)
    if crop is not None:
        steps.append(T.CenterCrop(crop))
    steps += [T.ToTensor(), T.Normalize(mean, std)]
    return T.Compose(steps), np.array(std, dtype=np.float64)


CONFIGS = [
    # name, infer flags, torchvision Resize size, CenterCrop size, mean, std
    ("imagenet default", [], 256, 224, MEAN, STD),
    ("--preprocess imagenet", ["--preprocess", "imagenet"], 256, 224, MEAN, STD),
    ("--preprocess inception", ["--preprocess", "inception"], 342, 299, MEAN, STD),
    ("--resize 300 --crop 256 --mean/--std", ["--resize", "300", "--crop", "256", "--mean",
     "0.5,0.4,0.3", "--std", "0.25"], 300, 256, [0.5, 0.4, 0.3], [0.25, 0.25, 0.25]),
    ("--resize 200x320 --crop 0", ["--resize", "200x320", "--crop", "0"], (200, 320), None,
     MEAN, STD),
    ("--resize 100 --crop 150 (padded)", ["--resize", "100", "--crop", "150"], 100, 150, MEAN, STD),
    ("--resize 0 --crop 40x30", ["--resize", "0", "--crop", "40x30"], None, (40, 30), MEAN, STD),
    ("--resize 240 --crop 240x200", ["--resize", "240", "--crop", "240x200"], 240, (240, 200),
     MEAN, STD),
]

SIZES = [  # height, width
    (480, 640), (640, 480), (256, 256), (255, 257), (257, 255), (224, 224), (300, 200),
    (200, 300), (100, 150), (150, 100), (57, 31), (31, 57), (1, 1), (2, 3), (1000, 50),
    (50, 1000), (333, 1000), (1999, 1201), (2048, 1536), (513, 511),
]


def compare(name, got, ref, std):
    """within 1/255 of a pixel: |got - ref| * std <= 1/255 per channel"""
    if got.shape != ref.shape:
        report(False, name, "shape %s vs torchvision's %s" % (got.shape, ref.shape))
        return 0, 0
    err = np.abs(got.astype(np.float64) - ref.astype(np.float64)) * std[:, None, None]
    worst = err.max()
    ok = worst <= 1 / 255 + 1e-6
    report(ok, name, "" if ok else "max error %.3g of a pixel (%.2f/255) at %s" % (
        worst, worst * 255, np.unravel_index(err.argmax(), err.shape)))
    return int((got == ref).sum()), got.size


def check_preprocess(infer, tmp, rng):
    """Section 2: the model's input against torchvision.transforms."""
    files = []
    for i, (h, w) in enumerate(SIZES):
        a = photo(rng, h, w)
        ext = ("png", "jpg")[i % 2]
        path = os.path.join(tmp, "photo_%dx%d.%s" % (h, w, ext))
        Image.fromarray(a).save(path, **({"quality": 88} if ext == "jpg" else {}))
        files.append(path)
    same = total = 0
    for cname, flags, resize, crop, mean, std in CONFIGS:
        pipeline, std_arr = torch_pipeline(resize, crop, mean, std)
        for path in files:
            label = "%s on %s" % (cname, os.path.basename(path))
            ref = pipeline(Image.open(path).convert("RGB")).numpy()
            got, err = infer.tensor([path], *flags)
            if got is None:
                report(False, label, err)
                continue
            s, t = compare(label, got[0], ref, std_arr)
            same += s
            total += t
    # several images in one batch (the same crop), row by row
    pipeline, std_arr = torch_pipeline(256, 224, MEAN, STD)
    batch_files = files[:6] + files[12:15]
    got, err = infer.tensor(batch_files)
    if got is None:
        report(False, "batch of %d images" % len(batch_files), err)
    else:
        report(got.shape == (len(batch_files), 3, 224, 224), "batch shape",
               "got %s" % (got.shape,))
        for row, path in enumerate(batch_files):
            if row < got.shape[0]:
                ref = pipeline(Image.open(path).convert("RGB")).numpy()
                compare("batch row %d (%s)" % (row, os.path.basename(path)), got[row], ref,
                        std_arr)
    print("preprocessing: %d images x %d settings + a batch of %d compared with torchvision %s; "
          "%d of %d values bit-identical" % (len(files), len(CONFIGS), len(batch_files),
                                              torchvision.__version__, same, total), flush=True)


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    exe = os.path.abspath(sys.argv[1])
    jpeg = "libjpeg-turbo" if features.check_feature("libjpeg_turbo") else "libjpeg"
    print("PIL %s decodes JPEG with %s %s; torch %s, torchvision %s" % (
        PIL.__version__, jpeg, features.version("jpg"), torch.__version__,
        torchvision.__version__), flush=True)
    with tempfile.TemporaryDirectory(prefix="test_preprocess.") as tmp:
        probe = os.path.join(tmp, "probe.png")
        Image.new("RGB", (4, 4)).save(probe)
        r = subprocess.run([exe, "--image", probe, "--save-input", os.path.join(tmp, "p.npy")],
                           capture_output=True, text=True)
        if r.returncode == 3:
            print("SKIP: this infer has no image support: " + r.stderr.strip())
            return 77
        infer = Infer(exe, tmp)
        rng = np.random.default_rng(12345)
        check_decode(infer, tmp, rng)
        check_preprocess(infer, tmp, rng)
        print("(%d infer runs)" % infer.calls)
    print("test_preprocess: %d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
