#!/usr/bin/env python3
"""Writes tests/image/cases/: small seeded image files for tests/run_image_cases.sh, the
bad-image suite of `infer --image` (tests/image/cases.txt lists what each must give).

    /usr/bin/python3 tests/image/make_cases.py     (deletes and rewrites cases/)

Needs numpy, PIL and onnx (Debian 12: python3-numpy python3-pil python3-onnx). The
output is deterministic. PNG files whose headers no encoder writes (0x0, huge, 16-bit,
bad CRC) are assembled here chunk by chunk; JPEG ones are PIL's files with a patched
frame header.
"""
import os
import shutil
import struct
import zlib

import numpy as np
from PIL import Image

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "cases")
rng = np.random.default_rng(20240612)


def photo(h, w):
    """A smooth colour gradient with noise: compresses like a photograph, not a test card."""
    y, x = np.mgrid[0:h, 0:w].astype(np.float64)
    img = np.stack([128 + 100 * np.sin(x / 5.0 + y / 7.0),
                    128 + 90 * np.cos(x / 6.0 - y / 4.0),
                    255 * (x + y) / (w + h)], -1)
    img += rng.normal(0, 10, img.shape)
    return np.clip(img, 0, 255).astype(np.uint8)


def chunk(kind, data, crc=None):
    body = kind + data
    c = zlib.crc32(body) & 0xFFFFFFFF if crc is None else crc
    return struct.pack(">I", len(data)) + body + struct.pack(">I", c)


def png(width, height, depth, color, rows=None, idat=None, bad_idat_crc=False):
    """PNG from raw rows (bytes per row, filter type 0 prepended here)."""
    sig = b"\x89PNG\r\n\x1a\n"
    ihdr = struct.pack(">IIBBBBB", width, height, depth, color, 0, 0, 0)
    if idat is None:
        idat = zlib.compress(b"".join(b"\x00" + r for r in rows), 9)
    crc = None
    if bad_idat_crc:
        crc = (zlib.crc32(b"IDAT" + idat) ^ 0x5A5A5A5A) & 0xFFFFFFFF
    return sig + chunk(b"IHDR", ihdr) + chunk(b"IDAT", idat, crc) + chunk(b"IEND", b"")


def write(name, data):
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(data)


def save(name, img, **kw):
    img.save(os.path.join(OUT, name), **kw)


def patch_sof(jpeg, height, width):
    """The JPEG with its frame header (SOF0/SOF2) claiming height x width."""
    b = bytearray(jpeg)
    i = 2
    while i + 4 <= len(b):
        assert b[i] == 0xFF, "marker expected at %d" % i
        marker, length = b[i + 1], struct.unpack(">H", b[i + 2:i + 4])[0]
        if marker in (0xC0, 0xC1, 0xC2):
            b[i + 5:i + 9] = struct.pack(">HH", height, width)
            return bytes(b)
        i += 2 + length
    raise ValueError("no SOF marker")


def tiny_model(path):
    """input [1, 3, 8, 8] -> mean over H, W -> [1, 3]: a model with a fixed batch of 1."""
    import onnx
    from onnx import TensorProto, helper
    node = helper.make_node("ReduceMean", ["image"], ["logits"], axes=[2, 3], keepdims=0)
    graph = helper.make_graph(
        [node], "fixed_batch1",
        [helper.make_tensor_value_info("image", TensorProto.FLOAT, [1, 3, 8, 8])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, 3])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)],
                              producer_name="tests/image/make_cases.py")
    model.ir_version = 7
    onnx.checker.check_model(model)
    onnx.save(model, path)


def main():
    shutil.rmtree(OUT, ignore_errors=True)
    os.makedirs(OUT)
    rgb = photo(12, 16)
    # ---- valid files: the truncation sweep starts from these, and each must read
    save("good.jpg", Image.fromarray(rgb), quality=90)
    save("good.png", Image.fromarray(rgb))
    save("gray.jpg", Image.fromarray(rgb[:, :, 0]), quality=90)
    save("gray.png", Image.fromarray(rgb[:, :, 1]))
    save("gray_alpha.png", Image.fromarray(np.dstack([rgb[:, :, 1], rgb[:, :, 2]]), "LA"))
    save("rgba.png", Image.fromarray(np.dstack([rgb, rgb[:, :, :1]]), "RGBA"))
    pal = Image.fromarray(rgb).convert("P", palette=Image.ADAPTIVE, colors=16)
    save("palette.png", pal)
    save("palette_trns.png", pal, transparency=3)
    save("palette_4bit.png", pal, bits=4)
    save("small.png", Image.fromarray(photo(7, 5)))
    save("progressive.jpg", Image.fromarray(rgb), quality=85, progressive=True)
    rows16 = [b"".join(struct.pack(">HHH", *(int(v) * 257 + 3 for v in px)) for px in row)
              for row in rgb]
    write("rgb16.png", png(16, 12, 16, 2, rows16))
    write("gray16.png", png(16, 12, 16, 0, [b"".join(struct.pack(">H", int(v) * 256 + 200)
                                                     for v in row) for row in rgb[:, :, 0]]))
    save("strip.png", Image.new("RGB", (1, 20000), (90, 140, 200)))  # valid, too thin to resize
    # ---- bad files
    write("empty.jpg", b"")
    write("text.jpg", b"this is not an image\n")
    save("picture.gif", Image.fromarray(rgb).convert("P"))
    cmyk = Image.fromarray(np.dstack([rgb, rgb[:, :, :1]]), "CMYK")
    save("cmyk.jpg", cmyk, quality=90)
    good_jpg = open(os.path.join(OUT, "good.jpg"), "rb").read()
    write("zero_height.jpg", patch_sof(good_jpg, 0, 16))
    write("huge.jpg", patch_sof(good_jpg, 60000, 60000))
    write("wide.jpg", patch_sof(good_jpg, 8, 40000))
    write("zero.png", png(0, 0, 8, 2, idat=zlib.compress(b"")))
    write("huge.png", png(50000, 50000, 8, 2, idat=zlib.compress(b"\x00" * 64)))
    write("tall.png", png(1, 40000, 8, 2, idat=zlib.compress(b"\x00" * 64)))
    rows = [bytes(r.reshape(-1)) for r in rgb]
    write("bad_crc.png", png(16, 12, 8, 2, rows, bad_idat_crc=True))
    write("short_idat.png", png(16, 12, 8, 2, idat=zlib.compress(b"".join(
        b"\x00" + r for r in rows[:6]))))
    write("bad_depth.png", png(16, 12, 7, 2, rows))
    # a model that takes one image at a time, and a label file that does not fit it
    tiny_model(os.path.join(OUT, "fixed_batch1.onnx"))
    with open(os.path.join(OUT, "three_labels.txt"), "w") as f:
        f.write("red\ngreen\nblue\n")
    with open(os.path.join(OUT, "two_labels.txt"), "w") as f:
        f.write("red\ngreen\n")
    with open(os.path.join(OUT, "gap_labels.txt"), "w") as f:
        f.write("red\n\nblue\n")
    for name in sorted(os.listdir(OUT)):
        print("%-22s %6d bytes" % (name, os.path.getsize(os.path.join(OUT, name))))


if __name__ == "__main__":
    main()
