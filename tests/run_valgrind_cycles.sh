#!/bin/sh
# run_valgrind_cycles.sh PROGRAM [ARGS...]: runs PROGRAM (tests/test_cycles) under
# valgrind memcheck; fails on a definite or indirect leak or any memory error, skips
# (exit 77) with a message when valgrind is not installed.
# OpenBLAS runs on the calling thread (OPENBLAS_NUM_THREADS=1): its own worker
# threads are not what this checks and make valgrind slow. tests/valgrind.supp
# holds false positives from ld.so seen in CUDA builds (none in libinfer).
if ! command -v valgrind >/dev/null 2>&1; then
  echo "SKIP: valgrind not found (apt-get install valgrind)"
  exit 77
fi
OPENBLAS_NUM_THREADS=1 exec valgrind --quiet --leak-check=full \
  --suppressions="$(dirname "$0")/valgrind.supp" \
  --errors-for-leak-kinds=definite,indirect --show-leak-kinds=definite,indirect \
  --error-exitcode=9 --num-callers=30 "$@"
