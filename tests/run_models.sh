#!/bin/sh
# run_models.sh [--probe GPU_AVAILABLE] MODEL_CHECK INFER DIR NAME RTOL ASCALE [INFER ARGS...]
#
# One model test of the exported zoo (models/export_zoo.py): runs
#   INFER DIR/NAME.onnx --input DIR/NAME_input.npy --reference DIR/NAME_output.npy
#         --rtol RTOL --atol ASCALE*max|reference| [INFER ARGS...]
# (the tolerance scales with the output's magnitude: random-weight logits may be of any
# size), then checks that the top-1 class of every batch row is PyTorch's.
# Skips (exit 77, CTest's skip code) with a message, with --probe, when no CUDA device is
# visible; a model that was not exported fails (CMake registers only the models its zoo
# should hold). Exits as infer does otherwise (0 ok, 1 mismatch, 2/3/4 bad input /
# unsupported / device), 1 for a top-1 mismatch.
if [ "$1" = "--probe" ]; then
  "$2" || exit 77
  shift 2
fi
check="$1"; infer="$2"; dir="$3"; name="$4"; rtol="$5"; ascale="$6"
shift 6
for f in "$dir/$name.onnx" "$dir/${name}_input.npy" "$dir/${name}_output.npy"; do
  if [ ! -e "$f" ]; then
    echo "FAIL: $f not found (the test model_zoo_export exports it; by hand:"
    echo "      python3 models/export_zoo.py $dir --models $name)"
    exit 1
  fi
done
absmax=$("$check" absmax "$dir/${name}_output.npy") || exit 2
atol=$(awk -v a="$ascale" -v m="$absmax" 'BEGIN { printf "%.6g", a * m }')
# Ambiguity bound for top-1: two logits closer than the tolerance may swap.
tol=$(awk -v a="$atol" -v r="$rtol" -v m="$absmax" 'BEGIN { printf "%.6g", a + r * m }')
tmp=$(mktemp -d "${TMPDIR:-/tmp}/infer-model-$name.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT
echo "$name: max|ref| $absmax, rtol $rtol, atol $atol ${*:+($*)}"
t0=$(date +%s.%N)
"$infer" "$dir/$name.onnx" --input "$dir/${name}_input.npy" \
  --reference "$dir/${name}_output.npy" --rtol "$rtol" --atol "$atol" --output "$tmp" "$@"
rc=$?
t1=$(date +%s.%N)
awk -v a="$t0" -v b="$t1" -v n="$name" 'BEGIN { printf "%s: infer exit %d in %.2f s\n", n, '"$rc"', b - a }'
[ $rc -eq 0 ] || [ $rc -eq 1 ] || exit $rc
out=$(ls "$tmp"/*.npy 2>/dev/null | head -1)
if [ -z "$out" ]; then
  echo "$name: no output written"
  exit 1
fi
"$check" top1 "$out" "$dir/${name}_output.npy" "$tol"
top=$?
[ $top -eq 0 ] || exit 1
exit $rc
