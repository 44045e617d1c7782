#!/bin/sh
# run_quantize_qdq.sh PYTHON INFER SRC_DIR WORK_DIR [INFER_ARGS...]: models/quantize_qdq.py
# on the sample model (calibrated on its own input by the CPU build), then the QDQ model
# through infer (with INFER_ARGS, e.g. --device cuda):
#   1. the tool quantized all three Conv/Gemm nodes (its report line);
#   2. the QDQ model's probabilities are within 0.02 of the float model's (0.0049 measured
#      on the CPU: the quantization error of this net);
#   3. they differ from them at all (atol 0 fails): the Q/DQ pairs took effect.
# Skips (77) with a message when PYTHON lacks onnx or numpy.
py="$1"; infer="$2"; src="$3"; dir="$4"
shift 4
extra="$*" # options without spaces
if ! "$py" -c "import onnx, numpy" 2>/dev/null; then
  echo "SKIP: $py cannot import onnx and numpy (Debian: python3-onnx)"
  exit 77
fi
rm -rf "$dir" && mkdir -p "$dir" || exit 2
m="$src/models/sample"
log=$("$py" "$src/models/quantize_qdq.py" "$m.onnx" "$dir/qdq.onnx" --infer "$infer" \
  --input-npy "$m"_input.npy) || { echo "$log"; echo "FAIL: quantize_qdq.py failed"; exit 1; }
echo "$log"
echo "$log" | grep -q "3 weights (int8 per channel) of 3 Conv/Gemm/MatMul nodes" ||
  { echo "FAIL: the tool did not quantize the three nodes"; exit 1; }
# shellcheck disable=SC2086 # extra: words on purpose
"$infer" "$dir/qdq.onnx" --input "$m"_input.npy --reference "$m"_output.npy --rtol 0 --atol 0.02 $extra ||
  { echo "FAIL: the QDQ model is not within 0.02 of the float one"; exit 1; }
# shellcheck disable=SC2086
"$infer" "$dir/qdq.onnx" --input "$m"_input.npy --reference "$m"_output.npy --rtol 0 --atol 0 $extra >/dev/null 2>&1
rc=$?
[ "$rc" -eq 1 ] || { echo "FAIL: the QDQ model's output equals the float one's (exit $rc)"; exit 1; }
echo "quantize_qdq: all checks passed"
