#!/bin/sh
# run_if_present.sh FILE CMD...: runs CMD, or skips (exit 77, CTest's skip code)
# with a message when FILE, the test data it needs, is absent.
f="$1"; shift
if [ ! -e "$f" ]; then
  echo "SKIP: $f not found (set INFER_ONNX_TESTS_DIR to the ONNX backend test data)"
  exit 77
fi
exec "$@"
