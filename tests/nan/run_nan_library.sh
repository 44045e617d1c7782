#!/bin/sh
# run_nan_library.sh INFER DATA_DIR IMPL... -- INFER_ARGS...: what the libraries' fused
# activations do with NaN and infinities, printed, never failing on the outputs: for
# each IMPL (a cuda.conv_impl name: cudnn-fused, cudnn-graph, cublaslt-1x1, patch-gemm;
# "timed" for the build's own choice) tests/nan/run_nan.sh report runs every family
# with cuda.nan_exact=0 (the default: activations go into cuDNN / cuBLASLt calls where
# they time faster or are forced). FusedMatMul's ReLU is always cuBLASLt's epilogue
# there. Fails only when a build or run fails.
infer="$1"; dir="$2"; shift 2
impls=""
while [ $# -gt 0 ] && [ "$1" != "--" ]; do impls="$impls $1"; shift; done
[ "$1" = "--" ] && shift
here=$(dirname "$0")
fail=0
for impl in $impls; do
  if [ "$impl" = timed ]; then
    echo "== the timed choice, cuda.nan_exact=0 =="
    "$here/run_nan.sh" report "$infer" "$dir" "$@" --config cuda.nan_exact=0 || fail=1
  else
    echo "== cuda.conv_impl=$impl (where it takes the convolution), cuda.nan_exact=0 =="
    "$here/run_nan.sh" report "$infer" "$dir" "$@" --config cuda.nan_exact=0 \
      --config "cuda.conv_impl=$impl" || fail=1
  fi
done
exit $fail
