#!/usr/bin/env bash
# quickstart.sh: installs what is missing (Debian/Ubuntu packages), builds infer
# into build/, and runs it on the sample model.
#   tools/quickstart.sh            (as root, or with sudo available)
# Environment: BUILD_DIR (default build), CMAKE_ARGS (extra configure arguments).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build}

packages=(cmake gcc make protobuf-c-compiler libprotobuf-c-dev libopenblas-dev libmicrohttpd-dev
          libjansson-dev libjpeg62-turbo-dev libpng-dev)
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

# CUDA is optional: the backend is built when nvcc is found (here or in /usr/local/cuda).
cuda_args=()
if ! command -v nvcc >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then
  cuda_args=(-DCMAKE_CUDA_COMPILER=/usr/local/cuda/bin/nvcc)
fi
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release "${cuda_args[@]}" ${CMAKE_ARGS:-}
cmake --build "$build" -j "$(nproc)"

echo "quickstart: running the sample model"
"$build/infer" models/sample.onnx --input models/sample_input.npy
"$build/infer" models/sample.onnx --input models/sample_input.npy \
  --reference models/sample_output.npy
