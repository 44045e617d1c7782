#!/bin/sh
# run_zoo_export.sh PYTHON SRC_DIR OUT_DIR MODELS: the setup of the model tests (CTest
# fixture `zoo`): exports MODELS (comma-separated) of the torchvision zoo into OUT_DIR
# with SRC_DIR/models/export_zoo.py, unless OUT_DIR already holds that export (same
# models, same export_zoo.py, same torch: OUT_DIR/export-stamp). PYTHON must import
# torch and torchvision (Debian 12: python3-torch python3-torchvision); empty, the setup
# fails saying so, and with it every model test.
python="$1"; src="$2"; out="$3"; models="$4"
if [ -z "$python" ]; then
  echo "FAIL: no python3 that imports torch and torchvision: the model tests export their"
  echo "      models with them (Debian: apt-get install python3-torch python3-torchvision),"
  echo "      or point -DINFER_MODELS_DIR at an exported zoo"
  exit 1
fi
script="$src/models/export_zoo.py"
torch=$("$python" -c "import torch, torchvision; print(torch.__version__, torchvision.__version__)") ||
  { echo "FAIL: $python cannot import torch and torchvision"; exit 1; }
stamp="models=$models export_zoo=$(sha256sum "$script" | cut -c1-16) torch=$torch"
complete=yes
for m in $(echo "$models" | tr ',' ' '); do
  for f in "$m.onnx" "${m}_input.npy" "${m}_output.npy"; do
    [ -e "$out/$f" ] || complete=no
  done
done
if [ "$complete" = yes ] && [ "$(cat "$out/export-stamp" 2>/dev/null)" = "$stamp" ]; then
  echo "zoo: $out is up to date ($stamp)"
  exit 0
fi
rm -f "$out/export-stamp"
t0=$(date +%s)
"$python" "$script" "$out" --models "$models" || { echo "FAIL: export_zoo.py"; exit 1; }
echo "$stamp" >"$out/export-stamp"
echo "zoo: exported into $out in $(( $(date +%s) - t0 )) s"
