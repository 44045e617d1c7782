#!/usr/bin/env python3
"""Writes the ONNX backend node tests of the installed onnx package into OUT_DIR:

    python3 tests/gen_onnx_tests.py OUT_DIR

OUT_DIR/node/test_*/ and OUT_DIR/simple/test_*/ (model.onnx, test_data_set_0/*.pb),
as `python3 -m onnx.backend.test.cmd_tools generate-data -o OUT_DIR` makes them, and
OUT_DIR/onnx-version (one line, e.g. "1.12.0"). The build runs this (tests/CMakeLists.txt)
so that a clone needs no test data of its own: Debian 12's python3-onnx 1.12 gives 922
node tests in a few seconds.

onnx 1.12's test cases still use numpy's aliases np.float, np.int, np.bool and
np.object, which numpy 1.24 (Debian 12) removed: they are set back here, for this
process only, to the builtins they always meant.
"""
import os
import shutil
import sys

import numpy as np

for alias, builtin in (("float", float), ("int", int), ("bool", bool), ("object", object)):
    if alias not in np.__dict__:
        setattr(np, alias, builtin)

import onnx  # noqa: E402  (after the aliases: the test cases read them at import)
from onnx.backend.test import cmd_tools  # noqa: E402


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: gen_onnx_tests.py OUT_DIR")
    out = os.path.abspath(sys.argv[1])
    tmp = out + ".part"
    shutil.rmtree(tmp, ignore_errors=True)
    sys.argv = [sys.argv[0], "generate-data", "-o", tmp]
    cmd_tools.main()
    node = os.path.join(tmp, "node")
    if not os.path.isdir(node):
        sys.exit("gen_onnx_tests.py: onnx %s's generate-data wrote no node/ folder into %s (it "
                 "holds: %s)" % (onnx.__version__, tmp,
                                 ", ".join(sorted(os.listdir(tmp))) if os.path.isdir(tmp) else "nothing"))
    n = len([d for d in os.listdir(node) if d.startswith("test_")])
    if n == 0:
        sys.exit("gen_onnx_tests.py: onnx %s generated no node tests" % onnx.__version__)
    with open(os.path.join(tmp, "onnx-version"), "w") as f:
        f.write(onnx.__version__ + "\n")
    shutil.rmtree(out, ignore_errors=True)
    os.rename(tmp, out)
    print("onnx %s: %d node tests in %s" % (onnx.__version__, n, out))


if __name__ == "__main__":
    main()
