#!/usr/bin/env bash
# run_malformed.sh INFER CASES_DIR [SAMPLE_MODEL]
#
# Runs the malformed-input suite of the `infer` CLI:
#   1. every case of CASES_DIR/../cases.txt (exit code AND stderr substrings), run inside
#      CASES_DIR;
#   2. SAMPLE_MODEL (default: models/sample.onnx of this repository) truncated at offset
#      0, every 37th byte, 1..64 and each of its last 64 bytes: all must exit 2;
#   3. the baseline input files (.npy, .pb) truncated at every offset: all must exit 2;
#   4. external data reached through a symbolic link (made here, in a temporary copy):
#      must exit 2; a model folder that is itself reached through a link must still load;
#   5. models nesting subgraphs 64 (the limit), 65 and 200000 levels deep (made here by
#      make_nesting.py): the deeper ones are refused naming the limit, without a crash.
# Cases named hostile_* and those of 5 run under a 4 GiB address-space cap (ulimit -v; not
# with MALFORMED_WRAPPER, whose tools reserve more).
# Prints one line per case and finally `malformed: N passed, M failed`. Exits 1 if any
# case fails, 2 on bad usage of this script. A crash (exit >= 128) or a hang (60 s) is a
# failure.
#
# Environment:
#   INFER_TEST_HAVE_GPU=1    skip cases named nogpu_* (CUDA build on a machine with a GPU)
#   MALFORMED_WRAPPER="..."  run infer under a wrapper, e.g.
#                            "valgrind -q --leak-check=full --error-exitcode=9"
#   MALFORMED_FILTER=TEXT    run only the cases whose name contains TEXT
set -u

if [ $# -lt 2 ]; then
  echo "usage: $0 INFER CASES_DIR [SAMPLE_MODEL]" >&2
  exit 2
fi
infer=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
cases=$(cd "$2" && pwd) || exit 2
list="$cases/../cases.txt"
sample=${3:-$cases/../../../models/sample.onnx}
if [ ! -x "$infer" ] || [ ! -f "$list" ] || [ ! -f "$sample" ]; then
  echo "$0: need an executable INFER ($infer), $list and $sample" >&2
  exit 2
fi
wrapper=${MALFORMED_WRAPPER:-}
filter=${MALFORMED_FILTER:-}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/malformed.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT

passed=0
failed=0
failures=()

trim() {
  local s=$1
  s=${s#"${s%%[![:space:]]*}"}
  s=${s%"${s##*[![:space:]]}"}
  printf '%s' "$s"
}

# the address-space cap of the hostile cases, in KiB (4 GiB); none under a wrapper
cap_kb=4194304
[ -z "$wrapper" ] || cap_kb=""

# check NAME WANT_CODE SUBSTRINGS DIR ARG...: runs infer ARG... in DIR and compares.
check() {
  local name=$1 want=$2 subs=$3 dir=$4
  shift 4
  if [ -n "$filter" ] && [[ "$name" != *"$filter"* ]]; then return; fi
  local err rc limit=unlimited
  if [[ "$name" == hostile_* ]] && [ -n "$cap_kb" ]; then limit=$cap_kb; fi
  # shellcheck disable=SC2086
  err=$(cd "$dir" && ulimit -v "$limit" && timeout 60 $wrapper "$infer" "$@" 2>&1 >/dev/null)
  rc=$?
  local problem=""
  if [ "$rc" -eq 124 ]; then
    problem="timed out (60 s)"
  elif [ "$rc" -ge 128 ]; then
    problem="CRASH: killed by signal $((rc - 128))"
  elif [ "$rc" -ne "$want" ]; then
    problem="expected exit $want, got $rc"
  elif [ "$want" -ge 2 ] && [ -z "$err" ]; then
    problem="exit $rc without any message on stderr"
  elif [ "$subs" != "-" ]; then
    local lower=${err,,} rest=$subs piece
    while [ -n "$rest" ]; do
      piece=${rest%%" && "*}
      if [ "$piece" = "$rest" ]; then rest=""; else rest=${rest#*" && "}; fi
      piece=$(trim "$piece")
      if [[ "$lower" != *"${piece,,}"* ]]; then
        problem="stderr lacks \"$piece\""
        break
      fi
    done
  fi
  if [ -z "$problem" ]; then
    passed=$((passed + 1))
    echo "PASS $name"
  else
    failed=$((failed + 1))
    failures+=("$name")
    echo "FAIL $name: $problem; args: $*; stderr: $(printf '%s' "$err" | head -c 600 | tr '\n' ' ')"
  fi
}

# ---- 1. the listed cases ---------------------------------------------------------------
while IFS= read -r line || [ -n "$line" ]; do
  case "$line" in ''|'#'*) continue ;; esac
  IFS='|' read -r name code subs args <<<"$line"
  name=$(trim "$name"); code=$(trim "$code"); subs=$(trim "$subs"); args=$(trim "${args:-}")
  if [ -z "$name" ] || ! [[ "$code" =~ ^[0-9]+$ ]] || [ -z "$subs" ]; then
    echo "FAIL cases.txt: bad line: $line"
    failed=$((failed + 1))
    failures+=("cases.txt")
    continue
  fi
  if [ "${INFER_TEST_HAVE_GPU:-0}" = 1 ] && [[ "$name" == nogpu_* ]]; then
    echo "SKIP $name (INFER_TEST_HAVE_GPU=1)"
    continue
  fi
  read -r -a argv <<<"$args"
  check "$name" "$code" "$subs" "$cases" "${argv[@]}"
done <"$list"

# ---- 2. the sample model truncated -------------------------------------------------------
size=$(wc -c <"$sample")
check "truncation_full_model_runs" 0 "-" "$tmp" "$sample" --batch 1 --quiet
offsets=$( { seq 0 37 $((size - 1)); seq 1 64; seq $((size > 64 ? size - 64 : 1)) $((size - 1)); } |
           awk -v n="$size" '$1 < n' | sort -n | uniq)
for off in $offsets; do
  head -c "$off" "$sample" >"$tmp/trunc.onnx"
  check "truncated_model_at_$off" 2 "trunc.onnx" "$tmp" trunc.onnx --batch 1
done

# ---- 3. input files truncated ----------------------------------------------------------
for f in good_input.npy good_input.pb; do
  fsize=$(wc -c <"$cases/$f")
  for ((off = 0; off < fsize; off++)); do
    head -c "$off" "$cases/$f" >"$tmp/trunc_$f"
    check "truncated_${f}_at_$off" 2 "trunc_$f" "$tmp" "$cases/good.onnx" --input "trunc_$f"
  done
done

# ---- 4. external data through a symbolic link -----------------------------------------
mkdir -p "$tmp/model" "$tmp/outside/sub" "$tmp/inside"
cp "$cases/ext_ok.bin" "$tmp/outside/ext_ok.bin"
cp "$cases/sub/w.bin" "$tmp/outside/sub/w.bin"
# (a) the data file is a link to a file outside the model folder
cp "$cases/ext_ok.onnx" "$tmp/model/ext_ok.onnx"
ln -s "$tmp/outside/ext_ok.bin" "$tmp/model/ext_ok.bin"
check "external_symlink_file_outside" 2 "initializer 'W' && symbolic link" "$tmp/model" \
  ext_ok.onnx --input "$cases/good_input.npy"
# (b) a folder on the way is a link to a folder outside
cp "$cases/ext_subdir.onnx" "$tmp/model/ext_subdir.onnx"
ln -s "$tmp/outside/sub" "$tmp/model/sub"
check "external_symlink_folder_outside" 2 "initializer 'W' && symbolic link" "$tmp/model" \
  ext_subdir.onnx --input "$cases/good_input.npy"
# (c) a relative link that stays inside the folder is refused as well (no links at all)
cp "$cases/ext_ok.onnx" "$tmp/inside/ext_ok.onnx"
cp "$cases/ext_ok.bin" "$tmp/inside/real.bin"
ln -s real.bin "$tmp/inside/ext_ok.bin"
check "external_symlink_inside" 2 "initializer 'W' && symbolic link" "$tmp/inside" \
  ext_ok.onnx --input "$cases/good_input.npy"
# (d) the model folder itself reached through a link: its contents are real, so it loads
mkdir -p "$tmp/real_model"
cp "$cases/ext_ok.onnx" "$cases/ext_ok.bin" "$tmp/real_model/"
ln -s "$tmp/real_model" "$tmp/model_link"
check "external_model_folder_is_link" 0 "-" "$tmp" model_link/ext_ok.onnx \
  --input "$cases/good_input.npy" --reference "$cases/good_ref.npy"

# ---- 5. deeply nested subgraphs ---------------------------------------------------------
python=$(command -v python3 || command -v /usr/bin/python3)
for depth in 64 65 200000; do
  "$python" "$cases/../make_nesting.py" "$tmp/nest_$depth.onnx" "$depth" || exit 2
done
# 64 levels pass the bound and reach the loader, which converts every level: the
# innermost graphs of make_nesting.py have no outputs
check "hostile_nesting_64" 2 "subgraph 'body' && the graph has no outputs" "$tmp" nest_64.onnx --quiet
check "hostile_nesting_65" 2 "nest_65.onnx && more than 64 levels && ONNX_MAX_SUBGRAPH_DEPTH" \
  "$tmp" nest_65.onnx --quiet
check "hostile_nesting_200000" 2 "nest_200000.onnx && more than 64 levels" "$tmp" \
  nest_200000.onnx --quiet

echo "malformed: $passed passed, $failed failed"
if [ "$failed" -ne 0 ]; then
  echo "failed: ${failures[*]}" >&2
  exit 1
fi
exit 0
