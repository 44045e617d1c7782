#!/bin/sh
# run_diagnose_test.sh INFER GPU_AVAILABLE CUDA_BUILD(ON|OFF) [ARCHS]: `infer --diagnose`
# reports the CPU and the CUDA backend and exits as documented: 0 when it found no
# problem, 4 (with a PROBLEM line) when it did. A CPU-only build has none; a CUDA build
# finds one exactly when no GPU is visible (GPU_AVAILABLE, tests/gpu_available.c, exits
# 0 with one). ARCHS (a CUDA build's architecture list as CMake resolved it, entries
# separated by ','): the "built for" line must name each of them.
infer="$1"; probe="$2"; cuda="$3"; archs="${4:-}"
out=$("$infer" --diagnose 2>&1); rc=$?
printf '%s\n' "$out"
fail() { echo "FAIL: $*"; exit 1; }
printf '%s\n' "$out" | grep -q '^CPU backend: ' || fail "no 'CPU backend:' line"
printf '%s\n' "$out" | grep -q '^CUDA backend: ' || fail "no 'CUDA backend:' line"
if [ "$cuda" != ON ]; then
  want=0
  printf '%s\n' "$out" | grep -q 'CUDA backend: not in this build' || fail "a CPU-only build must say so"
elif "$probe" >/dev/null; then
  want=0
else
  want=4
fi
if [ "$cuda" = ON ]; then
  built=$(printf '%s\n' "$out" | grep '^CUDA backend: built for ')
  [ -n "$built" ] || fail "no 'CUDA backend: built for' line"
  case "$built" in *"(unknown)"*) fail "the architectures are unknown: $built" ;; esac
  for a in $(echo "$archs" | tr ',' ' '); do
    n=$(echo "$a" | sed 's/-.*//')
    case "$built" in
      *"sm_$n"[,\;]*|*"sm_$n"|*"compute_$n"*) ;;
      *) fail "the 'built for' line does not name $a: $built" ;;
    esac
  done
fi
[ "$rc" -eq "$want" ] || fail "exit $rc, expected $want"
if [ "$want" -eq 4 ]; then
  printf '%s\n' "$out" | grep -q 'PROBLEM' || fail "exit 4 without a PROBLEM line"
else
  printf '%s\n' "$out" | grep -q 'PROBLEM' && fail "exit 0 with a PROBLEM line"
fi
echo "ok: --diagnose exit $rc"
