#!/bin/sh
# run_deploy_export.sh PYTHON SRC_DIR OUT_DIR MODELS: the setup of the deployed-model
# tests (CTest fixture `deploy`): exports MODELS (comma-separated) with
# SRC_DIR/models/export_deploy.py into OUT_DIR, unless OUT_DIR already holds that export
# (same models, same export_deploy.py and export_zoo.py, same torch: OUT_DIR/export-stamp).
# PYTHON must import torch and torchvision (Debian 12: python3-torch
# python3-torchvision); empty, the setup fails saying so, and with it every such test.
python="$1"; src="$2"; out="$3"; models="$4"
if [ -z "$python" ]; then
  echo "FAIL: no python3 that imports torch and torchvision: the deployed-model tests"
  echo "      export their models with them (Debian: apt-get install python3-torch"
  echo "      python3-torchvision)"
  exit 1
fi
script="$src/models/export_deploy.py"
torch=$("$python" -c "import torch, torchvision; print(torch.__version__, torchvision.__version__)") ||
  { echo "FAIL: $python cannot import torch and torchvision"; exit 1; }
hash=$(cat "$script" "$src/models/export_zoo.py" | sha256sum | cut -c1-16)
stamp="models=$models export_deploy=$hash torch=$torch"
complete=yes
for m in $(echo "$models" | tr ',' ' '); do
  for f in "$m.onnx" "${m}_input.npy"; do
    [ -e "$out/$f" ] || complete=no
  done
done
if [ "$complete" = yes ] && [ "$(cat "$out/export-stamp" 2>/dev/null)" = "$stamp" ]; then
  echo "deploy: $out is up to date ($stamp)"
  exit 0
fi
mkdir -p "$out" && rm -f "$out/export-stamp"
t0=$(date +%s)
"$python" "$script" "$out" --models "$models" || { echo "FAIL: export_deploy.py"; exit 1; }
echo "$stamp" >"$out/export-stamp"
echo "deploy: exported into $out in $(( $(date +%s) - t0 )) s"
