#!/usr/bin/env bash
# run_image_cases.sh INFER CASES_DIR
#
# The bad-image suite of `infer --image`:
#   1. every case of CASES_DIR/../cases.txt (exit code AND stderr substrings), run inside
#      CASES_DIR (files from tests/image/make_cases.py);
#   2. valid JPEG and PNG files of CASES_DIR cut short (every offset in the headers and
#      at the end, every 5th in between): each must exit 2 with the file named on stderr
#      (never a crash, never a silently gray-filled image).
# Prints one line per failing case and finally `image_cases: N passed, M failed`. Exits
# 1 if any case fails, 2 on bad usage, 77 (skip) when this build of infer has neither
# JPEG nor PNG support (it says so). A crash (exit >= 128) or a hang (60 s) is a failure.
#
# Environment:
#   IMAGE_CASES_WRAPPER="..."  run infer under a wrapper (e.g. valgrind -q --error-exitcode=9)
#   IMAGE_CASES_FILTER=TEXT    run only the cases whose name contains TEXT
set -u

if [ $# -lt 2 ]; then
  echo "usage: $0 INFER CASES_DIR" >&2
  exit 2
fi
infer=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
cases=$(cd "$2" && pwd) || exit 2
list="$cases/../cases.txt"
if [ ! -x "$infer" ] || [ ! -f "$list" ]; then
  echo "$0: need an executable INFER ($infer) and $list" >&2
  exit 2
fi
wrapper=${IMAGE_CASES_WRAPPER:-}
filter=${IMAGE_CASES_FILTER:-}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/image_cases.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT

# A build without the image libraries refuses every image with exit 3: nothing to test.
"$infer" --image "$cases/good.png" --save-input "$tmp/probe.npy" 2>"$tmp/probe.err"
probe_png=$?
"$infer" --image "$cases/good.jpg" --save-input "$tmp/probe.npy" 2>>"$tmp/probe.err"
probe_jpg=$?
if [ "$probe_png" -eq 3 ] && [ "$probe_jpg" -eq 3 ]; then
  echo "SKIP: this infer has no image support: $(head -c 300 "$tmp/probe.err")"
  exit 77
fi
if [ "$probe_png" -ne 0 ] || [ "$probe_jpg" -ne 0 ]; then
  echo "FAIL: the valid probe images do not decode (png $probe_png, jpg $probe_jpg):"
  cat "$tmp/probe.err"
  exit 1
fi

passed=0
failed=0
failures=()

trim() {
  local s=$1
  s=${s#"${s%%[![:space:]]*}"}
  s=${s%"${s##*[![:space:]]}"}
  printf '%s' "$s"
}

# check NAME WANT_CODE SUBSTRINGS ARG...: runs infer ARG... in the cases folder.
check() {
  local name=$1 want=$2 subs=$3
  shift 3
  if [ -n "$filter" ] && [[ "$name" != *"$filter"* ]]; then return; fi
  local err rc
  # shellcheck disable=SC2086
  err=$(cd "$cases" && timeout 60 $wrapper "$infer" "$@" 2>&1 >/dev/null)
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
  else
    failed=$((failed + 1))
    failures+=("$name")
    echo "FAIL $name: $problem; args: $*; stderr: $(printf '%s' "$err" | head -c 600 | tr '\n' ' ')"
  fi
}

# ---- 1. the listed cases ---------------------------------------------------------------
n_listed=0
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
  args=${args//@TMP@/$tmp}
  read -r -a argv <<<"$args"
  check "$name" "$code" "$subs" "${argv[@]}"
  n_listed=$((n_listed + 1))
done <"$list"
echo "listed cases: $n_listed run"

# ---- 2. valid files cut short ---------------------------------------------------------
# Every 4th offset within the headers (the first 160 bytes), each of the last 24 (the
# end markers), every 41st in between (the compressed data): a few hundred cuts, each
# one process start, so that the suite stays well under a minute.
for f in good.jpg progressive.jpg gray.jpg good.png palette.png rgb16.png; do
  size=$(wc -c <"$cases/$f")
  before=$failed
  offsets=$( { seq 0 4 159; seq 160 41 $((size - 1)); seq $((size > 24 ? size - 24 : 0)) $((size - 1)); } |
             awk -v n="$size" '$1 < n' | sort -n | uniq)
  count=0
  for off in $offsets; do
    head -c "$off" "$cases/$f" >"$tmp/cut_$f"
    check "truncated_${f}_at_$off" 2 "cut_$f" --image "$tmp/cut_$f" --save-input "$tmp/x.npy"
    count=$((count + 1))
  done
  echo "$f ($size bytes) cut at $count offsets: $((failed - before)) failed"
done

echo "image_cases: $passed passed, $failed failed"
if [ "$failed" -ne 0 ]; then
  echo "failed: ${failures[*]}" >&2
  exit 1
fi
exit 0
