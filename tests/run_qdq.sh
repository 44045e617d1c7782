#!/bin/sh
# run_qdq.sh PYTHON INFER SRC_DIR WORK_DIR [INFER_ARGS...]: the QDQ model test (label
# models; with INFER_ARGS, e.g. --device cuda, the same checks on that backend).
#
# models/make_qdq.py writes a QDQ-quantized conv net (uint8 per-tensor activations,
# int8 per-channel weights, int32 biases, opset 13), its float original, an input, the
# float output and the QDQ model's output evaluated independently (NumPy Q/DQ
# formulas + PyTorch float32 convolutions), and QUANT_ERR = max|fp32 - qdq|, the
# quantization error of this net. Then infer must
#   1. reproduce the independent QDQ evaluation within TIGHT = QUANT_ERR / 10: the
#      engine agrees with the QDQ semantics ten times better than the QDQ model agrees
#      with the float one, so it cannot pass by skipping the quantization (that would
#      land QUANT_ERR away); what is left is float32 summation order, which can move
#      an activation across a rounding boundary by one step at most;
#   2. match the float original within LOOSE = 1.1 * QUANT_ERR + 1e-5 * max|fp32|,
#      the quantization error plus the margin of check 1 (by the triangle
#      inequality 1 implies 2; it is run and reported because it is the claim that
#      matters to a user);
#   3. run the float original within rtol 1e-4 of PyTorch (the baseline).
# Skips (77) with a message only when PYTHON lacks onnx, numpy or torch.
py="$1"; infer="$2"; src="$3"; dir="$4"
shift 4
extra="$*" # options without spaces (--device cuda --verbose)
if ! "$py" -c "import onnx, numpy, torch" 2>/dev/null; then
  echo "SKIP: $py cannot import onnx, numpy and torch (Debian: python3-onnx python3-torch)"
  exit 77
fi
rm -rf "$dir" && mkdir -p "$dir" || exit 2
"$py" "$src/models/make_qdq.py" "$dir" || exit 2
. "$dir/tolerances.txt"
echo "qdq: QUANT_ERR $QUANT_ERR (max|fp32| $OUT_MAX), TIGHT $TIGHT, LOOSE $LOOSE"
run() {
  what="$1"; shift
  echo "qdq: $what"
  # shellcheck disable=SC2086 # extra: words on purpose
  "$infer" "$@" --input "$dir/input.npy" $extra || exit $?
}
run "QDQ model vs the independent QDQ evaluation (atol TIGHT)" \
  "$dir/qdq.onnx" --reference "$dir/out_qdq.npy" --rtol 0 --atol "$TIGHT"
run "QDQ model vs the float original's output (atol LOOSE)" \
  "$dir/qdq.onnx" --reference "$dir/out_fp32.npy" --rtol 0 --atol "$LOOSE"
run "float model vs PyTorch (rtol 1e-4)" \
  "$dir/fp32.onnx" --reference "$dir/out_fp32.npy" --rtol 1e-4 --atol 1e-6
echo "qdq: all checks passed"
