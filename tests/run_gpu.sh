#!/bin/sh
# run_gpu.sh GPU_AVAILABLE DATA CMD...: runs CMD when a CUDA device is visible; skips
# (exit 77) saying why when none is. The test data DATA must exist (CMake registers GPU
# tests only for data that should be there): missing, the test fails.
probe="$1"; data="$2"; shift 2
"$probe" || exit 77
if [ ! -e "$data" ]; then
  echo "FAIL: $data not found"
  exit 1
fi
exec "$@"
