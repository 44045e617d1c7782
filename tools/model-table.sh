#!/usr/bin/env bash
# model-table.sh: a markdown table of the exported torchvision zoo (models/export_zoo.py)
# run on the CPU and on CUDA in fp32 and fp16, each compared with PyTorch's fp32 output.
#
#   tools/model-table.sh [--check MODEL_CHECK] [--columns "cpu fp32 fp16"] INFER DIR [DIR...]
#
# For every model in DIR/manifest.json (one row per model and DIR: give DIR and DIR/dynamo
# after `export_zoo.py DIR --exporter both`), each cell runs tests/run_models.sh, the
# script of the CTest model tests, with the same tolerances: --rtol 1e-3
# --atol 1e-3*max|ref| (cpu, cuda fp32), 2e-2 and 2e-2*max|ref| (cuda fp16), and the
# top-1 class of every batch row must be PyTorch's. A cell reads
#   ok 3.1e-06                     max abs error / max|ref|, within the tolerance
#   FAIL 2.6e-02, top-1 1/2        out of tolerance or a top-1 mismatch (rows that agree)
#   error 3: <message>             infer exited 2 (bad model/input), 3 (unsupported), 4 (device)
#   skip (not exported)            a file of the model is missing
#   no GPU                         no CUDA device seen by `infer --diagnose`
#   not run / not run (time)       column left out by --columns; past MODEL_TABLE_DEADLINE
# The table goes to stdout, a line per cell with its time to stderr.
# MODEL_CHECK defaults to INFER's build dir's tests/model_check (cmake --build B --target
# infer model_check). Environment: MODELS=a,b (a subset), MODEL_TABLE_DEADLINE (a
# `date +%s` time: cells not started by then are "not run (time)"), MODEL_TABLE_LOGS (a
# dir: each cell's run_models.sh output as NAME_COLUMN.log).
# Exit status: 0 when no cell failed (skips do not count), 1 otherwise, 2 on bad usage.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
run_models=$here/../tests/run_models.sh
check=
columns="cpu fp32 fp16"
while [ $# -gt 0 ]; do
  case $1 in
    --check) check=$2; shift 2 ;;
    --columns) columns=$2; shift 2 ;;
    -h|--help) sed -n '2,/^set /p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) break ;;
  esac
done
if [ $# -lt 2 ]; then
  echo "usage: $0 [--check MODEL_CHECK] [--columns \"cpu fp32 fp16\"] INFER DIR [DIR...]" >&2
  exit 2
fi
infer=$1; shift
[ -x "$infer" ] || { echo "model-table: $infer is not an executable" >&2; exit 2; }
[ -n "$check" ] || check=$(dirname "$infer")/tests/model_check
[ -x "$check" ] || { echo "model-table: no model_check at $check (build the model_check" \
  "target, or give --check)" >&2; exit 2; }
logs=${MODEL_TABLE_LOGS:-}
[ -n "$logs" ] && mkdir -p "$logs"

gpu=0
if "$infer" --diagnose 2>/dev/null | grep -q '^GPU [0-9]'; then gpu=1; fi
echo "model-table: $infer; CUDA devices: $([ $gpu = 1 ] && echo yes || echo none); columns: $columns" >&2

has_col() { case " $columns " in *" $1 "*) return 0 ;; esac; return 1; }

# cell DIR NAME COLUMN: prints the cell text; returns 1 for a failure
cell() {
  local dir=$1 name=$2 col=$3 args tol out rc absmax abs rel top t0 t1 msg
  case $col in
    cpu) tol="1e-3 1e-3"; args="--device cpu" ;;
    fp32) tol="1e-3 1e-3"; args="--device cuda --precision fp32" ;;
    fp16) tol="2e-2 2e-2"; args="--device cuda --precision fp16" ;;
  esac
  if ! has_col "$col"; then echo "not run"; return 0; fi
  if [ "$col" != cpu ] && [ $gpu = 0 ]; then echo "no GPU"; return 0; fi
  if [ -n "${MODEL_TABLE_DEADLINE:-}" ] && [ "$(date +%s)" -ge "$MODEL_TABLE_DEADLINE" ]; then
    echo "not run (time)"; return 0
  fi
  t0=$(date +%s.%N)
  # shellcheck disable=SC2086
  out=$("$run_models" "$check" "$infer" "$dir" "$name" $tol $args 2>&1)
  rc=$?
  t1=$(date +%s.%N)
  [ -n "$logs" ] && printf '%s\n' "$out" > "$logs/${name}_$col.log"
  absmax=$(printf '%s\n' "$out" | sed -n "s/^$name: max|ref| \([^,]*\),.*/\1/p" | head -1)
  abs=$(printf '%s\n' "$out" | sed -n 's/.*max abs err \([^,;)]*\).*/\1/p' | head -1)
  rel=$(awk -v a="${abs:-nan}" -v m="${absmax:-0}" 'BEGIN {
    if (a == "nan" || a == "-nan" || a == "") { print "nan"; exit }
    if (m + 0 > 0) printf "%.1e\n", a / m; else printf "%.1e\n", a }')
  top=$(printf '%s\n' "$out" | sed -n 's/^top-1: \([0-9]*\) of \([0-9]*\) rows match.*/\1\/\2/p' | tail -1)
  case $rc in
    0) msg="ok $rel" ;;
    77) msg="skip (not exported)" ;;
    1) msg="FAIL $rel, top-1 ${top:-?}" ;;
    *) # infer's own message: the last line that names an error
      msg=$(printf '%s\n' "$out" | grep -E '^infer:|error|unsupported|not supported' | tail -1 |
        sed "s|$dir/||g; s/^infer: //; s/|/\\\\|/g" | cut -c1-90)
      msg="error $rc${msg:+: $msg}" ;;
  esac
  awk -v n="$name" -v c="$col" -v m="$msg" -v a="$t0" -v b="$t1" \
    'BEGIN { printf "model-table: %-20s %-4s %6.1f s  %s\n", n, c, b - a, m }' >&2
  echo "$msg"
  case $rc in 0|77) return 0 ;; esac
  return 1
}

failed=0
echo "| model | opset/exporter | cpu | cuda fp32 | cuda fp16 |"
echo "|---|---|---|---|---|"
for dir in "$@"; do
  manifest=$dir/manifest.json
  if [ ! -f "$manifest" ]; then
    echo "model-table: no $manifest (export with models/export_zoo.py $dir)" >&2
    failed=1
    continue
  fi
  while IFS= read -r line; do
    name=$(printf '%s' "$line" | sed -n 's/.*"name": "\([^"]*\)".*/\1/p')
    [ -n "$name" ] || continue
    if [ -n "${MODELS:-}" ]; then
      case ",$MODELS," in *",$name,"*) ;; *) continue ;; esac
    fi
    exporter=$(printf '%s' "$line" | sed -n 's/.*"exporter": "\([^"]*\)".*/\1/p')
    opset=$(printf '%s' "$line" | sed -n 's/.*"opset": \([0-9]*\).*/\1/p')
    bn=$(printf '%s' "$line" | grep -q '"keep_batchnorm": true' && echo ", BN kept")
    row="| $name | ${opset:-?} ${exporter:-?}$bn |"
    for col in cpu fp32 fp16; do
      c=$(cell "$dir" "$name" "$col") || failed=1
      row="$row $c |"
    done
    echo "$row"
  done < <(grep '"name":' "$manifest")
done
exit $failed
