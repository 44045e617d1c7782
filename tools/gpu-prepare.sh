#!/usr/bin/env bash
# gpu-prepare.sh: on a development machine, puts what tools/gpu-check.sh needs on
# the GPU host into ignored folders of the repository: .deps/ (protobuf-c .debs) and
# .data/onnx-tests.tgz (the ONNX backend test folders node/ and light/).
set -euo pipefail
cd "$(dirname "$0")/.."
shared=${1:-../shared}
mkdir -p .deps .data
cp "$shared"/gpu-host/debs/*.deb .deps/
tar czf .data/onnx-tests.tgz -C "$shared/onnx-backend-tests" node light
du -sh .deps .data
