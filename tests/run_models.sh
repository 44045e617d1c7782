#!/bin/sh
# run_models.sh [--probe GPU_AVAILABLE] [--fp16-peer FILE] MODEL_CHECK INFER DIR NAME RTOL ASCALE
#               [INFER ARGS...]
#
# One model test of the exported zoo (models/export_zoo.py): runs
#   INFER DIR/NAME.onnx --input DIR/NAME_input.npy --reference DIR/NAME_output.npy
#         --rtol RTOL --atol ASCALE*max|reference| [INFER ARGS...]
# (the tolerance scales with the output's magnitude: random-weight logits may be of any
# size), then checks that the top-1 class of every batch row is PyTorch's.
# With --fp16-peer FILE (models/torch_fp16_error.py's measurements of PyTorch's own fp16
# error on these models, one per line), RTOL and ASCALE are not used: infer's output must be
# within 1.5 x PyTorch's fp16 error (or 2e-2) of the reference, relative to max|reference|,
# and keep the top-1 of every row where PyTorch's fp16 keeps it (model_check fp16peer). A
# missing FILE, or no line for NAME in it, fails saying how to make it.
# Skips (exit 77, CTest's skip code) with a message, with --probe, when no CUDA device is
# visible; a model that was not exported fails (CMake registers only the models its zoo
# should hold). Exits as infer does otherwise (0 ok, 1 mismatch, 2/3/4 bad input /
# unsupported / device), 1 for a top-1 mismatch.
if [ "$1" = "--probe" ]; then
  "$2" || exit 77
  shift 2
fi
peer=""
if [ "$1" = "--fp16-peer" ]; then
  peer="$2"
  shift 2
fi
check="$1"; infer="$2"; dir="$3"; name="$4"; rtol="$5"; ascale="$6"
shift 6
if [ -n "$peer" ]; then
  how="the test gpu_model_zoo_torch_fp16 measures it on the GPU (by hand: python3 models/torch_fp16_error.py --zoo $dir)"
  if [ ! -e "$peer" ]; then
    echo "FAIL: $peer not found: the fp16 model tests compare infer's error with PyTorch's"
    echo "      own fp16 error on the same model; $how"
    exit 1
  fi
  line=$(grep -E "\"name\": \"$name\"" "$peer" | head -1)
  peer_rel=$(printf '%s\n' "$line" | sed -nE 's/.*"rel": ([^,}]+).*/\1/p')
  peer_agree=$(printf '%s\n' "$line" | sed -nE 's/.*"top1_agree": \[([0-9, ]*)\].*/\1/p' | tr -d ' ')
  if [ -z "$peer_rel" ] || [ -z "$peer_agree" ]; then
    echo "FAIL: $peer has no PyTorch fp16 error for $name; $how"
    exit 1
  fi
fi
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
t0=$(date +%s.%N)
if [ -n "$peer" ]; then
  echo "$name: max|ref| $absmax, PyTorch's fp16 error $peer_rel, top-1 agreement $peer_agree ${*:+($*)}"
  "$infer" "$dir/$name.onnx" --input "$dir/${name}_input.npy" --quiet --output "$tmp" "$@"
else
  echo "$name: max|ref| $absmax, rtol $rtol, atol $atol ${*:+($*)}"
  "$infer" "$dir/$name.onnx" --input "$dir/${name}_input.npy" \
    --reference "$dir/${name}_output.npy" --rtol "$rtol" --atol "$atol" --output "$tmp" "$@"
fi
rc=$?
t1=$(date +%s.%N)
awk -v a="$t0" -v b="$t1" -v n="$name" 'BEGIN { printf "%s: infer exit %d in %.2f s\n", n, '"$rc"', b - a }'
[ $rc -eq 0 ] || [ $rc -eq 1 ] || exit $rc
out=$(ls "$tmp"/*.npy 2>/dev/null | head -1)
if [ -z "$out" ]; then
  echo "$name: no output written"
  exit 1
fi
if [ -n "$peer" ]; then
  "$check" fp16peer "$out" "$dir/${name}_output.npy" "$peer_rel" "$peer_agree"
  exit $?
fi
"$check" top1 "$out" "$dir/${name}_output.npy" "$tol"
top=$?
[ $top -eq 0 ] || exit 1
exit $rc
