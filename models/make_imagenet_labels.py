#!/usr/bin/env python3
"""Writes the ImageNet-1k class names, one per line (line i names class i), from
torchvision's own category metadata (ResNet50_Weights.IMAGENET1K_V1.meta["categories"],
shipped with torchvision >= 0.13; nothing is downloaded).

    python3 models/make_imagenet_labels.py [OUT]    (default: models/imagenet_labels.txt)
    python3 models/make_imagenet_labels.py --check  (exit 1 if the file differs)

The order is the one torchvision's ImageNet weights use for their 1000 outputs; the
names are torchvision's as they are (all distinct: it already tells "crane bird", class
134, from "crane", 517, and "maillot" from "maillot tank suit").
"""
import os
import sys

try:
    import torchvision
except ImportError as e:  # the CTest check skips (77) on a machine without torchvision
    print("SKIP: needs torchvision (Debian: python3-torchvision): %s" % e)
    sys.exit(77)


def categories():
    cats = torchvision.models.ResNet50_Weights.IMAGENET1K_V1.meta["categories"]
    if len(cats) != 1000 or any(not c or "\n" in c for c in cats):
        raise SystemExit("unexpected torchvision category list (%d names)" % len(cats))
    return cats


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    args = sys.argv[1:]
    check = "--check" in args
    args = [a for a in args if a != "--check"]
    path = args[0] if args else os.path.join(here, "imagenet_labels.txt")
    text = "".join(c + "\n" for c in categories())
    if check:
        with open(path, encoding="utf-8") as f:
            same = f.read() == text
        print("%s: %s torchvision %s" % (path, "matches" if same else "DIFFERS from",
                                         torchvision.__version__))
        return 0 if same else 1
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    print("wrote %s (%d classes, torchvision %s)" % (path, 1000, torchvision.__version__))
    return 0


if __name__ == "__main__":
    sys.exit(main())
