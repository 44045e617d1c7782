#!/bin/sh
# run_torch_fp16_error.sh GPU_AVAILABLE PYTHON SRC_DIR ZOO_DIR MODELS: the setup of the fp16
# model tests (CTest fixture `zoo_fp16`): PyTorch's own fp16 error on each of MODELS
# (comma-separated) of the exported zoo in ZOO_DIR, measured once on this machine's GPU
# by SRC_DIR/models/torch_fp16_error.py into ZOO_DIR/torch_fp16_error.json. Kept while
# the zoo's export stamp and the script are the same (ZOO_DIR/torch_fp16_error-stamp).
# Skips (77) without a CUDA device; fails when PYTHON's torch sees none, or cannot rebuild
# a model with the zoo's weights.
probe="$1"; python="$2"; src="$3"; zoo="$4"; models="$5"
"$probe" || exit 77
script="$src/models/torch_fp16_error.py"
out="$zoo/torch_fp16_error.json"
if [ -z "$python" ]; then
  echo "FAIL: no python3 that imports torch: PyTorch's fp16 error is measured with it"
  exit 1
fi
stamp="models=$models script=$(sha256sum "$script" | cut -c1-16) zoo=$(cat "$zoo/export-stamp" 2>/dev/null | sha256sum | cut -c1-16)"
complete=yes
for m in $(echo "$models" | tr ',' ' '); do
  grep -q "\"name\": \"$m\"" "$out" 2>/dev/null || complete=no
done
if [ "$complete" = yes ] && [ "$(cat "$zoo/torch_fp16_error-stamp" 2>/dev/null)" = "$stamp" ]; then
  echo "zoo_fp16: $out is up to date ($stamp)"
  cat "$out"
  exit 0
fi
rm -f "$zoo/torch_fp16_error-stamp"
"$python" "$script" --zoo "$zoo" --models "$models" --out "$out"
rc=$?
[ $rc -eq 77 ] && { echo "FAIL: a CUDA device is visible, but not to $python's torch"; exit 1; }
[ $rc -eq 0 ] && echo "$stamp" > "$zoo/torch_fp16_error-stamp"
exit $rc
