#!/bin/sh
# run_control_shapes.sh PYTHON CONFORMANCE TEST_CONTROL_SHAPES SRC_DIR WORK_DIR: control
# flow whose output shapes are derived at build (ops/control_shapes.c), on the CPU.
# tests/ops_control/gen_static_shapes.py writes node tests into WORK_DIR/node, then
#   1. every one passes on the CPU (static and dynamic ones alike; values against numpy);
#   2. with --static-shapes (what a CUDA build takes) exactly those WORK_DIR/dynamic.txt
#      lists are refused: the derivation finds the static ones static and leaves the
#      others to the run (a listed test passing, or an unlisted one refused, fails it);
#   3. test_control_shapes: derived shapes reported before a run, results in the planned
#      buffers, and a result of another shape than the derived one a clear error.
# Skips (77) with a message only when PYTHON lacks onnx or numpy.
py="$1"; conformance="$2"; unit="$3"; src="$4"; dir="$5"
if ! "$py" -c "import onnx, numpy" 2>/dev/null; then
  echo "SKIP: $py cannot import onnx and numpy (Debian: python3-onnx python3-numpy)"
  exit 77
fi
rm -rf "$dir" && mkdir -p "$dir" || exit 2
"$py" "$src/tests/ops_control/gen_static_shapes.py" "$dir" || exit 2
echo "control-shapes: the values on the CPU"
"$conformance" "$dir/node" --device cpu --verbose || exit 1
echo "control-shapes: static exactly where derived (--static-shapes)"
"$conformance" "$dir/node" --device cpu --static-shapes --verbose \
  --known-failures "$dir/dynamic.txt" || exit 1
echo "control-shapes: reported shapes, planned buffers, a shape mismatch at run"
"$unit" "$dir/node" || exit 1
echo "control-shapes: all checks passed"
