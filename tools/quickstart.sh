#!/usr/bin/env bash
# quickstart.sh: installs what is missing (Debian/Ubuntu packages), builds infer
# into build/, and runs it on the sample model.
#   tools/quickstart.sh            (as root, or with sudo available)
# Environment: BUILD_DIR (default build), CMAKE_ARGS (extra configure arguments),
# TEST_DEPS=0 (leave out the packages only the test suite needs).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build}

# the build (libmicrohttpd and jansson: the example server; libjpeg and libpng: --image)
packages=(cmake gcc make protobuf-c-compiler libprotobuf-c-dev libopenblas-dev libmicrohttpd-dev
          libjansson-dev libjpeg62-turbo-dev libpng-dev)
# the test suite: python3-onnx generates the ONNX node tests at build time, python3-torch
# and python3-torchvision export the model tests' torchvision models, pkg-config (the
# install test), valgrind (the leak test), curl (the server test), clang (the fuzz targets,
# fuzz/); torchvision also for the image tests (tests/image/)
if [ "${TEST_DEPS:-1}" = 1 ]; then
  packages+=(python3 python3-numpy python3-onnx python3-torch python3-torchvision pkg-config
             valgrind curl clang)
fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "quickstart: installing ${missing[*]}"
  sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq "${missing[@]}"
fi

# CUDA is optional: the backend is built when nvcc is found (here or in /usr/local/cuda),
# for the GPU of this machine, or for the list in cmake/cuda_architectures.cmake.
cuda_args=()
if ! command -v nvcc >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then
  cuda_args=(-DCMAKE_CUDA_COMPILER=/usr/local/cuda/bin/nvcc)
fi
t0=$(date +%s)
# shellcheck disable=SC2086  # CMAKE_ARGS holds several arguments
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release "${cuda_args[@]}" ${CMAKE_ARGS:-}
cmake --build "$build" -j "$(nproc)"
echo "quickstart: configured and built in $(( $(date +%s) - t0 )) s"

echo "quickstart: running the sample model"
"$build/infer" models/sample.onnx --input models/sample_input.npy
"$build/infer" models/sample.onnx --input models/sample_input.npy \
  --reference models/sample_output.npy
