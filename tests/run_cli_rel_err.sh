#!/bin/sh
# run_cli_rel_err.sh INFER MODELS_DIR: the "max rel err" that --reference prints for a
# passing output is not inflated by reference values of exactly 0 (before: 1e+29 from
# dividing by 1e-30). The reference is infer's own output of the sample model with its
# first value set to 0.0; --atol 0.2 admits that value (the sample's outputs are
# probabilities near 0.1), so the output passes and its relative error, over the other
# values, must be tiny.
infer="$1"; models="$2"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/infer-relerr.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
"$infer" "$models/sample.onnx" --input "$models/sample_input.npy" --output "$tmp" --quiet ||
  fail "writing the output"
f=$tmp/probabilities.npy
# .npy v1: magic (6) + version (2) + header length (2, little-endian) + header
hlen=$(od -An -tu2 -j8 -N2 "$f" | tr -d ' ')
[ -n "$hlen" ] || fail "cannot read the .npy header length"
cp "$f" "$tmp/ref.npy"
printf '\000\000\000\000' | dd of="$tmp/ref.npy" bs=1 seek=$((10 + hlen)) conv=notrunc 2>/dev/null
out=$("$infer" "$models/sample.onnx" --input "$models/sample_input.npy" \
  --reference "$tmp/ref.npy" --atol 0.2 --rtol 1e-3 2>&1)
rc=$?
printf '%s\n' "$out"
[ "$rc" -eq 0 ] || fail "exit $rc, expected 0 (the zeroed value is within --atol 0.2)"
rel=$(printf '%s\n' "$out" | sed -n 's/.*max rel err \([^)]*\)).*/\1/p')
[ -n "$rel" ] || fail "no 'max rel err' in the report"
awk -v r="$rel" 'BEGIN { exit !(r + 0 < 1e-3) }' || fail "max rel err $rel, expected < 1e-3"
echo "ok: max rel err $rel"
