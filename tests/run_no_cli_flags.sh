#!/bin/sh
# run_no_cli_flags.sh SRC_DIR: the library's messages never name a command-line flag of
# the tools (a program linking libinfer has no --batch): no string literal in
# core/ engine/ ops/ loaders/ kernels/ include/ holds "--word". Comments may.
src="$1"
hits=$(cd "$src" && find core engine ops loaders kernels include -type f \
         \( -name '*.c' -o -name '*.h' -o -name '*.cu' -o -name '*.cuh' \) -print |
       sort | xargs awk '
  { line = $0
    gsub(/\/\*([^*]|\*+[^*\/])*\*+\//, "", line)   # one-line /* comments */
    sub(/\/\/.*/, "", line)
    if (line ~ /^[ \t]*\*/) next                     # inside a block comment
    if (line ~ /"([^"\\]|\\.)*--[a-z][a-z-]*([^"\\]|\\.)*"/) print FILENAME ":" FNR ": " $0 }')
if [ -n "$hits" ]; then
  printf '%s\n' "$hits"
  echo "FAIL: library messages name CLI flags (name the API or option instead)"
  exit 1
fi
echo "ok: no library string names a CLI flag"
