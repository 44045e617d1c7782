#!/bin/sh
# run_cuda_no_driver.sh INFER GPU_AVAILABLE MODELS_DIR: what `--device cuda` says on this
# machine (CUDA builds). With a visible GPU the sample runs; without an NVIDIA driver it
# exits 4 saying plainly that no driver is loaded (not the runtime's "driver version is
# insufficient"); with a driver but no usable GPU it exits 4 naming that.
infer="$1"; probe="$2"; models="$3"
fail() { echo "FAIL: $*"; exit 1; }
out=$("$infer" "$models/sample.onnx" --input "$models/sample_input.npy" --device cuda --quiet 2>&1)
rc=$?
printf '%s\n' "$out"
if "$probe" >/dev/null; then
  [ "$rc" -eq 0 ] || fail "a GPU is visible, yet --device cuda exits $rc"
  echo "ok: a GPU is visible and the sample runs on it"
elif [ ! -e /proc/driver/nvidia/version ]; then
  [ "$rc" -eq 4 ] || fail "exit $rc, expected 4"
  case "$out" in *"no NVIDIA driver is loaded"*) ;; *) fail "the message must say no driver is loaded" ;; esac
  case "$out" in *insufficient*) fail "the runtime's misleading 'insufficient' message" ;; esac
  echo "ok: no driver here, and --device cuda says so"
else
  [ "$rc" -eq 4 ] || fail "exit $rc, expected 4"
  echo "ok: a driver but no usable GPU: exit 4"
fi
