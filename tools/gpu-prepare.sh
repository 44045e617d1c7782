#!/usr/bin/env bash
# gpu-prepare.sh: on a development machine, puts what tools/gpu-check.sh needs on
# the GPU host into ignored folders of the repository: .deps/ (protobuf-c .debs, and
# libmicrohttpd + jansson .debs for infer-server) and .data/onnx-tests.tgz (the ONNX
# backend test folders node/ and light/). Carried to the host, .deps and .data
# together must stay under 64 MiB (the sizes are printed last).
set -euo pipefail
cd "$(dirname "$0")/.."
shared=${1:-../shared}
mkdir -p .deps .data
cp "$shared"/gpu-host/debs/*.deb .deps/
# infer-server (tools/server) needs libmicrohttpd and jansson, which the GPU host lacks
# and cannot install: Debian 12's packages (runtime and headers, about 0.5 MB), fetched
# with apt-get on this Debian 12 machine. libmicrohttpd12 also needs libgnutls.so.30,
# which an Ubuntu 24.04 host is expected to have (libgnutls30t64): not fetched;
# tools/gpu-check.sh checks for it and leaves the server out without it.
server_debs=(libmicrohttpd12 libmicrohttpd-dev libjansson4 libjansson-dev)
missing=()
for p in "${server_debs[@]}"; do
  compgen -G ".deps/${p}_*.deb" >/dev/null || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  (cd .deps && apt-get download "${missing[@]}") ||
    echo "gpu-prepare: apt-get download ${missing[*]} failed: infer-server will not be built on the GPU host" >&2
fi
tar czf .data/onnx-tests.tgz -C "$shared/onnx-backend-tests" node light
du -sh .deps .data
