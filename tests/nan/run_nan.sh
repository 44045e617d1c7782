#!/bin/sh
# run_nan.sh check|report[:FAM,FAM...] INFER DATA_DIR [INFER_ARGS...]: runs every family
# (or those named) that tests/nan/gen_nan.py wrote into DATA_DIR (families.txt) through
# INFER with its inputs
# and numpy references (NaN where numpy has NaN, infinities of the same sign, finite
# values within --rtol/--atol) and INFER_ARGS (device, precision, tolerances, --config).
#   check:  every family must match and show its fusions (expect.txt on the --verbose
#           log); any mismatch fails (exit 1).
#   report: prints per family whether NaN and infinities came out right, with the
#           mismatches and the implementations chosen, and exits 0 whatever the outputs
#           (a failed build or run, exit 2 to 4, still fails): how the main session learns
#           what a library's fused activation does with NaN.
mode="${1%%:*}"; only=""; infer="$2"; dir="$3"
case "$1" in *:*) only=",${1#*:}," ;; esac
shift 3
case "$mode" in check|report) ;; *) echo "usage: run_nan.sh check|report[:FAMILIES] INFER DATA_DIR ..."; exit 2 ;; esac
if [ ! -f "$dir/families.txt" ]; then
  echo "FAIL: $dir/families.txt not found (the build makes it: tests/nan/gen_nan.py)"
  exit 1
fi
set -f
nl='
'
fail=0
for fam in $(cat "$dir/families.txt"); do
  case "$only" in "" | *",$fam,"*) ;; *) continue ;; esac
  d="$dir/$fam"
  # args.txt: one argument per line (split on newlines only; paths hold none)
  out=$(IFS=$nl; "$infer" "$d/model.onnx" $(cat "$d/args.txt") --verbose "$@" 2>&1)
  rc=$?
  chosen=$(printf '%s\n' "$out" | grep -E "implementations chosen" | head -n 3)
  diffs=$(printf '%s\n' "$out" | grep -E "^output '.*' *: .*differ|values differ")
  missing=""
  while IFS= read -r re; do
    [ -n "$re" ] || continue
    printf '%s\n' "$out" | grep -Eq -- "$re" || missing="$missing  (expected on the log: $re)$nl"
  done < "$d/expect.txt"
  if [ "$rc" -ne 0 ] && [ "$rc" -ne 1 ]; then
    printf '%s\n' "$out"
    echo "FAIL $fam: infer exited $rc"
    fail=1
    continue
  fi
  if [ "$rc" -eq 0 ] && [ -z "$missing" ]; then
    echo "ok   $fam: NaN and infinities as the unfused ONNX ops (numpy)"
    [ -n "$chosen" ] && printf '%s\n' "$chosen" | sed 's/^/     /'
    continue
  fi
  if [ "$mode" = check ]; then
    printf '%s\n' "$out"
    [ -n "$missing" ] && printf '%s' "$missing"
    echo "FAIL $fam"
    fail=1
  else
    echo "LOST $fam: outputs differ from numpy's NaN / Inf semantics:"
    printf '%s\n' "$diffs" | sed 's/^/     /'
    [ -n "$missing" ] && printf '%s' "$missing"
    [ -n "$chosen" ] && printf '%s\n' "$chosen" | sed 's/^/     /'
  fi
done
exit $fail
