#!/bin/sh
# run_gpu.sh GPU_AVAILABLE DATA CMD...: runs CMD when a CUDA device is visible and the
# test data DATA exists; otherwise skips (exit 77) saying why.
probe="$1"; data="$2"; shift 2
"$probe" || exit 77
if [ ! -e "$data" ]; then
  echo "SKIP: $data not found (set INFER_ONNX_TESTS_DIR)"
  exit 77
fi
exec "$@"
