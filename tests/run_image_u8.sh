#!/bin/sh
# run_image_u8.sh INFER MODEL IMAGE_DIR ATOL [INFER OPTIONS...]: `--input-type u8` (input 0
# fed as uint8 NHWC, normalized by the engine) against the default float path.
#   1. the default path (images normalized by the CLI into float32 NCHW, the path
#      tests/image/test_preprocess.py checks against torchvision) writes its outputs;
#   2. the same images with --input-type u8 must give those outputs within ATOL
#      (absolute, rtol 0) -- also with the normalization given as --mean/--std;
#   3. with another --mean the u8 outputs must differ (the comparison can fail);
#   4. --save-input with u8 writes the pixels as uint8 [N, H, W, 3].
# OPTIONS (e.g. --device cuda --precision fp16) go to every run. Skips (77) when the
# build cannot decode PNG/JPEG. Exit 0 pass, 1 fail.
set -u
infer=$1 model=$2 images=$3 atol=$4
shift 4
tmp=$(mktemp -d "${TMPDIR:-/tmp}/infer-u8.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/f32"
imgs="--image $images/good.png --image $images/good.jpg --resize 36 --crop 32"
# shellcheck disable=SC2086
"$infer" "$model" $imgs "$@" --output "$tmp/f32" --quiet
rc=$?
if [ $rc -eq 3 ]; then echo "SKIP: this build cannot decode the test images"; exit 77; fi
[ $rc -eq 0 ] || { echo "FAIL: float path exited $rc"; exit 1; }
fail=0
# shellcheck disable=SC2086
"$infer" "$model" $imgs "$@" --input-type u8 --reference "$tmp/f32/probabilities.npy" \
  --rtol 0 --atol "$atol" || { echo "FAIL: u8 path differs from the float path"; fail=1; }
# shellcheck disable=SC2086
"$infer" "$model" $imgs "$@" --input-type u8 --mean 0.485,0.456,0.406 --std 0.229,0.224,0.225 \
  --reference "$tmp/f32/probabilities.npy" --rtol 0 --atol "$atol" --quiet ||
  { echo "FAIL: u8 path with explicit ImageNet --mean/--std differs"; fail=1; }
# shellcheck disable=SC2086
"$infer" "$model" $imgs "$@" --input-type u8 --mean 0.3 --reference "$tmp/f32/probabilities.npy" \
  --rtol 0 --atol "$atol" --quiet >"$tmp/other.log" 2>&1
rc=$?
if [ $rc -ne 1 ]; then cat "$tmp/other.log"; echo "FAIL: another mean gave exit $rc, not 1 (a mismatch)"; fail=1; fi
# shellcheck disable=SC2086
"$infer" $imgs --input-type u8 --save-input "$tmp/u8.npy" ||
  { echo "FAIL: --save-input with u8"; fail=1; }
if [ -f "$tmp/u8.npy" ]; then
  head -c 128 "$tmp/u8.npy" | grep -aq "'descr': '|u1'.*'shape': (2, 32, 32, 3)" ||
    { echo "FAIL: --save-input u8 header: $(head -c 128 "$tmp/u8.npy" | tr -d '\0')"; fail=1; }
fi
[ $fail -eq 0 ] && echo "PASS: --input-type u8 equals the float path within $atol"
exit $fail
