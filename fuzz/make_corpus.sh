#!/usr/bin/env bash
# make_corpus.sh SRC OUT: the seed corpus of each fuzz target, from the repository's
# test data (nothing committed for it but fuzz/regressions): OUT/model (models/*.onnx, the passes' test
# models, the malformed cases, the op test models, nesting models of 8 and 65 levels, the
# int8-conv test model),
# the inputs earlier long runs found (fuzz/regressions/model: each runs first in every
# run, so CI's 60 s catches a regression), OUT/npy, OUT/pb (their .npy and TensorProto
# files) and OUT/json (requests for the
# server target's engine, float X [2, 3]). Files above 256 KiB are left out: they only
# slow the fuzzer's mutations down. The build runs it (target fuzz_corpus).
set -euo pipefail
src=$1
out=$2
rm -rf "$out"
mkdir -p "$out/model" "$out/npy" "$out/pb" "$out/json"
# copy FILE DIR: under a name made of its path, so that names do not collide
copy() {
  local f=$1 dir=$2 size
  size=$(wc -c <"$f")
  [ "$size" -le 262144 ] || return 0
  cp "$f" "$dir/$(printf '%s' "${f#"$src"/}" | tr '/' '_')"
}
shopt -s nullglob
for f in "$src"/models/*.onnx "$src"/tests/passes/*.onnx "$src"/tests/malformed/cases/*.onnx \
         "$src"/tests/*/node/*/model.onnx "$src"/fuzz/regressions/model/*; do
  copy "$f" "$out/model"
done
python=$(command -v python3 || command -v /usr/bin/python3)
for depth in 8 65; do
  "$python" "$src/tests/malformed/make_nesting.py" "$out/model/nesting_$depth.onnx" "$depth"
done
# the QDQ convolutions of the int8-conv pass (fuzz_model builds every model with int8=1 too)
# (it needs numpy and onnx: the first python3 that has them)
int8_python=""
for p in "$python" /usr/bin/python3; do
  if "$p" -c "import numpy, onnx" 2>/dev/null; then int8_python=$p; break; fi
done
if [ -n "$int8_python" ]; then
  int8_dir=$(mktemp -d)
  "$int8_python" "$src/tests/make_int8_conv.py" "$int8_dir" >/dev/null
  cp "$int8_dir/int8_conv.onnx" "$out/model/int8_conv.onnx"
  rm -rf "$int8_dir"
else
  echo "make_corpus.sh: no python3 with numpy and onnx: the int8-conv seed is left out"
fi
for f in "$src"/models/*.npy "$src"/tests/malformed/cases/*.npy "$src"/tests/image/cases/*.npy; do
  copy "$f" "$out/npy"
done
for f in "$src"/tests/malformed/cases/*.pb "$src"/tests/*/node/*/test_data_set_0/*.pb; do
  copy "$f" "$out/pb"
done
n=0
json() { n=$((n + 1)); printf '%s' "$1" >"$out/json/request_$n.json"; }
json '{"id":"a","inputs":[{"name":"X","datatype":"FP32","shape":[2,3],"data":[1,2,3,4,5,6]}]}'
json '{"inputs":[{"name":"X","datatype":"FP32","shape":[2,3],"data":[[1,2,3],[4,5,6]]}],"outputs":[{"name":"Y"}]}'
json '{"inputs":[{"name":"X","datatype":"FP32","shape":[2,3],"data":[1e38,-0.0,1e-45,3,4,5]}],"outputs":[{"name":"Y","parameters":{"binary_data":false}}]}'
json '{"inputs":[{"name":"X","datatype":"INT64","shape":[2,3],"data":[1,2,3,4,5,6]}]}'
json '{"inputs":[{"name":"X","datatype":"FP32","shape":[3,2],"data":[1,2,3,4,5,6]}]}'
json '{"inputs":[{"name":"X","datatype":"FP32","shape":[2,3],"data":[1,2,3]}]}'
json '{"inputs":[{"name":"X","datatype":"FP32","shape":[2,3],"data":[true,"a",null,{},[],6]}]}'
json '{"inputs":[],"outputs":[{"name":"Z"}]}'
json '{"id":7,"inputs":{}}'
json '[1,2,{"inputs":[{"name":"X"}]}]'
echo "make_corpus.sh: $(ls "$out/model" | wc -l) models, $(ls "$out/npy" | wc -l) .npy, $(ls "$out/pb" | wc -l) .pb, $n requests in $out"
