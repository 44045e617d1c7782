#!/usr/bin/env bash
# run_subproject_test.sh SRC_DIR: infer used through add_subdirectory. Configures
# tests/subproject (a parent project that adds SRC_DIR and links an app to infer_static)
# in a temporary CPU-only build, checks that infer's tests stay off there unless
# INFER_BUILD_TESTS=ON, builds the app and runs it on the sample model.
# Environment: CMAKE (default cmake), JOBS (2), SUBPROJECT_CMAKE_ARGS (more -D options,
# separated by ';', e.g. the parent build's protobuf-c paths).
set -uo pipefail
src=$(cd "${1:?usage: run_subproject_test.sh SRC_DIR}" && pwd)
cmake=${CMAKE:-cmake}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/infer-subproject.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
extra=()
IFS=';' read -r -a extra <<< "${SUBPROJECT_CMAKE_ARGS:-}"
b=$tmp/build
configure() {
  "$cmake" -S "$src/tests/subproject" -B "$b" -DINFER_SOURCE_DIR="$src" -DINFER_CUDA=OFF \
    -DCMAKE_BUILD_TYPE=Release "${extra[@]}" "$@" >"$tmp/configure.log" 2>&1 ||
    { cat "$tmp/configure.log"; echo "FAIL: configure $*"; exit 1; }
}
configure
if [ -e "$b/infer/tests" ]; then echo "FAIL: infer's tests are configured in a parent project"; exit 1; fi
echo "ok: a parent project configures infer without its tests"
configure -DINFER_BUILD_TESTS=ON
n=$("$cmake" -E chdir "$b/infer" ctest -N | sed -n 's/^Total Tests: //p')
[ "${n:-0}" -gt 0 ] || { echo "FAIL: INFER_BUILD_TESTS=ON registers no tests"; exit 1; }
echo "ok: with INFER_BUILD_TESTS=ON, $n tests are registered under infer/"
"$cmake" --build "$b" --target parent_app -j "${JOBS:-2}" >"$tmp/build.log" 2>&1 ||
  { tail -40 "$tmp/build.log"; echo "FAIL: build"; exit 1; }
"$b/parent_app" "$src/models/sample.onnx" "$src/models/sample_input.npy" \
  "$src/models/sample_output.npy" || { echo "FAIL: parent_app"; exit 1; }
echo "ok: parent_app, linked to infer_static through add_subdirectory, reproduces the sample"
