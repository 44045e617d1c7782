#!/bin/sh
# run_int8_conv.sh PYTHON INFER WORK_DIR fp32|fp16 [INFER_ARGS...]: the pass int8-conv
# and Int8Conv on tests/make_int8_conv.py's model (three convolutions on symmetric int8
# tensors, one with bias, residual and Relu, one whose only reader is a QuantizeLinear;
# four near misses that must stay float), with --config int8=1 and INFER_ARGS (e.g.
# --device cuda --precision fp16):
#   1. the log says exactly the three convolutions were rewritten, the third writing its
#      QuantizeLinear's int8 output (the test fails if the pass stops matching or takes
#      a near miss, not only if it computes wrongly);
#   2. every output matches the script's float64 answer from the integers: fp32 within
#      1e-6 of each output's largest magnitude (float32 sums of up to 72 products); fp16 within the bounds the script prints for a
#      device that sums the int8 products exactly (float16 bias, residual and output
#      roundings; 3 quanta of x moved across a boundary by the float16 input, and for y
#      3 of y1; the float ones, on float16 operands, their roundings too).
# Skips (77) with a message when PYTHON lacks onnx or numpy.
py="$1"; infer="$2"; dir="$3"; mode="$4"
shift 4
if ! "$py" -c "import onnx, numpy" 2>/dev/null; then
  echo "SKIP: $py cannot import onnx and numpy (Debian: python3-onnx)"
  exit 77
fi
here=$(dirname "$0")
rm -rf "$dir" && mkdir -p "$dir" || exit 2
log=$("$py" "$here/make_int8_conv.py" "$dir") || { echo "$log"; echo "FAIL: make_int8_conv.py"; exit 1; }
echo "$log"
out=$("$infer" "$dir/int8_conv.onnx" --input x="$dir/x.npy" --input r="$dir/r.npy" \
  --config int8=1 --verbose --output "$dir/out" "$@" 2>&1) ||
  { echo "$out"; echo "FAIL: infer failed"; exit 1; }
echo "$out" | grep -E "int8-conv|implementations|output"
echo "$out" | grep -q "pass int8-conv: .*(3 convolutions on int8 tensors, 1 writing int8)" ||
  { echo "FAIL: the pass did not rewrite the three convolutions, one of them writing int8"; exit 1; }
"$py" - "$dir" "$mode" <<'PY' || exit 1
import json
import sys
import numpy as np
d, mode = sys.argv[1:3]
bounds = json.load(open("%s/bounds16.json" % d))
ok = True
for name, b16 in bounds.items():
    got, want = np.load("%s/out/%s.npy" % (d, name)).astype(np.float64), np.load("%s/%s.npy" % (d, name))
    tol = b16 if mode == "fp16" else 1e-6 * np.abs(want).max()
    err = np.abs(got - want).max() if got.shape == want.shape else float("inf")
    print("%s: max abs err %.3g (tolerance %.3g)%s" % (name, err, tol, "" if err <= tol else "  FAIL"))
    ok &= bool(err <= tol)
sys.exit(0 if ok else 1)
PY
echo "int8_conv: all checks passed"
