#!/usr/bin/env bash
# run.sh BUILD_DIR SECONDS [TARGET...]: runs each fuzz target (default: all four) of a
# -DINFER_FUZZ=ON build for SECONDS of wall time, one after the other, starting from its
# seed corpus (BUILD_DIR/fuzz/corpus/KIND, made by the build) and keeping what it finds
# new in BUILD_DIR/fuzz/work/TARGET. Exits 1 when any target reports a finding (a crash,
# a sanitizer error, a leak, an input slower than FUZZ_TIMEOUT or an allocation above 2 GiB): the
# input that caused it is BUILD_DIR/fuzz/artifacts/TARGET/, its report at the end of
# BUILD_DIR/fuzz/logs/TARGET.log (printed). Reproduce one with
#   BUILD_DIR/fuzz/TARGET ARTIFACT_FILE
# Environment: FUZZ_ARGS (more libFuzzer flags, e.g. -jobs=4 -workers=4); FUZZ_TIMEOUT
# (seconds one input may take, default 30; wall time, so raise it on a busy machine or
# under nice, where a starved process makes fast inputs look slow).
set -uo pipefail
if [ $# -lt 2 ]; then
  echo "usage: $0 BUILD_DIR SECONDS [TARGET...]" >&2
  exit 2
fi
build=$(cd "$1" && pwd) || exit 2
secs=$2
shift 2
[ $# -gt 0 ] || set -- fuzz_model fuzz_npy fuzz_tensor_pb fuzz_server_json
corpus_of() {
  case $1 in
    fuzz_model) echo model ;; fuzz_npy) echo npy ;; fuzz_tensor_pb) echo pb ;;
    fuzz_server_json) echo json ;; *) echo "$1" ;;
  esac
}
failed=()
for t in "$@"; do
  bin=$build/fuzz/$t
  seeds=$build/fuzz/corpus/$(corpus_of "$t")
  if [ ! -x "$bin" ] || [ ! -d "$seeds" ]; then
    echo "fuzz: $t: $bin or its seeds $seeds are missing (cmake -DINFER_FUZZ=ON, then build the target fuzz)"
    failed+=("$t")
    continue
  fi
  work=$build/fuzz/work/$t
  art=$build/fuzz/artifacts/$t
  log=$build/fuzz/logs/$t.log
  mkdir -p "$work" "$art" "$(dirname "$log")"
  echo "fuzz: $t for $secs s (seeds $seeds, log $log)"
  # shellcheck disable=SC2086  # FUZZ_ARGS holds several flags
  "$bin" -max_total_time="$secs" -timeout="${FUZZ_TIMEOUT:-30}" -rss_limit_mb=2048 -malloc_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$art/" ${FUZZ_ARGS:-} "$work" "$seeds" >"$log" 2>&1
  rc=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1)
  if [ "$rc" -ne 0 ]; then
    echo "fuzz: $t: FINDING (exit $rc) after ${execs:-?} runs; the report:"
    grep -n -m1 -E 'ERROR: |runtime error|==[0-9]+==|timeout|out-of-memory' "$log" | head -1
    tail -n 60 "$log"
    ls "$art"
    failed+=("$t")
  else
    echo "fuzz: $t: no finding in ${execs:-?} runs (${cov:-cov ?})"
  fi
done
if [ ${#failed[@]} -ne 0 ]; then
  echo "fuzz: FAILED: ${failed[*]}"
  exit 1
fi
echo "fuzz: all passed"
