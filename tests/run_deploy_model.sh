#!/bin/sh
# run_deploy_model.sh [--probe GPU_AVAILABLE] [--match-detections STOL] MODEL_CHECK INFER DIR
#                     NAME RTOL ASCALE [INFER ARGS...]
#
# One test of a deployed model (models/export_deploy.py): runs
#   INFER DIR/NAME.onnx --input DIR/NAME_input.npy --reference OUT=DIR/NAME_OUT.npy ...
#         --rtol RTOL --atol ATOL [INFER ARGS...]
# with one --reference per output PyTorch wrote (boxes, scores, labels for a detector:
# the same count, so the same shapes, and row by row the same order; out otherwise).
# ATOL is ASCALE times max|out| for a single-output model (logits, masks: the scale of
# random-weight outputs varies; MODEL_CHECK absmax reads it), at least ASCALE; for a
# detector ASCALE itself (scores are probabilities, boxes in pixels are held to RTOL of
# their size, labels compare exactly either way).
# With --match-detections (a detector in float16): infer writes its outputs and
# `model_check detections` matches them with PyTorch's as sets: the same label, scores
# within STOL, boxes within ASCALE x max|box|; rows may change places only among scores
# within STOL of each other, and the cut (20 per image) fall elsewhere among scores within
# STOL of the lowest (the random-weight detectors' top scores lie 1e-4 apart, finer than
# float16 resolves).
# Skips (exit 77) with a message, with --probe, when no CUDA device is visible. Exits as
# infer does (0 ok, 1 mismatch, 2/3/4 bad input / unsupported / device).
if [ "$1" = "--probe" ]; then
  "$2" || exit 77
  shift 2
fi
match=""
if [ "$1" = "--match-detections" ]; then
  match="$2"
  shift 2
fi
check="$1"; infer="$2"; dir="$3"; name="$4"; rtol="$5"; ascale="$6"
shift 6
for f in "$dir/$name.onnx" "$dir/${name}_input.npy"; do
  if [ ! -e "$f" ]; then
    echo "FAIL: $f not found (the test model_deploy_export exports it; by hand:"
    echo "      /usr/bin/python3 models/export_deploy.py $dir --models $name)"
    exit 1
  fi
done
refs=""
atol=$ascale
for f in "$dir/${name}"_*.npy; do
  out=${f#"$dir/${name}_"}; out=${out%.npy}
  [ "$out" = input ] && continue
  refs="$refs --reference $out=$f"
done
if [ -z "$refs" ]; then
  echo "FAIL: no reference outputs $dir/${name}_*.npy"
  exit 1
fi
if [ -e "$dir/${name}_out.npy" ]; then
  absmax=$("$check" absmax "$dir/${name}_out.npy") || exit 2
  atol=$(awk -v a="$ascale" -v m="$absmax" 'BEGIN { t = a * m; if (t < a) t = a; printf "%.6g", t }')
fi
echo "$name: rtol $rtol, atol $atol ${*:+($*)}"
t0=$(date +%s.%N)
if [ -n "$match" ]; then
  outdir=$(mktemp -d) || exit 2
  "$infer" "$dir/$name.onnx" --input "$dir/${name}_input.npy" --output "$outdir" "$@"
  rc=$?
  [ $rc -eq 0 ] && { "$check" detections "$outdir" "$dir/$name" "$match" "$ascale"; rc=$?; }
  rm -rf "$outdir"
else
  # shellcheck disable=SC2086
  "$infer" "$dir/$name.onnx" --input "$dir/${name}_input.npy" $refs --rtol "$rtol" --atol "$atol" "$@"
  rc=$?
fi
t1=$(date +%s.%N)
awk -v a="$t0" -v b="$t1" -v n="$name" 'BEGIN { printf "%s: infer exit %d in %.2f s\n", n, '"$rc"', b - a }'
exit $rc
