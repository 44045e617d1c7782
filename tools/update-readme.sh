#!/usr/bin/env bash
# update-readme.sh BUILD_DIR [--check]: pastes the supported-ops table printed by
# BUILD_DIR/infer_ops_table, and tools/example_threads.c, between their markers in
# README.md. With --check, only reports (exit 1) when the README differs.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
table=$("$build/infer_ops_table")
example=$(printf '```c\n%s\n```' "$(cat tools/example_threads.c)")
# The texts reach awk through the environment: `awk -v` would expand the escapes in
# them (the example's "\n" became a line break, in the README and in --check alike).
new=$(table="$table" example="$example" awk '
  /<!-- ops-table:begin -->/ { print; print ENVIRON["table"]; skip = 1; next }
  /<!-- ops-table:end -->/ { skip = 0 }
  /<!-- example:begin -->/ { print; print ENVIRON["example"]; skip = 1; next }
  /<!-- example:end -->/ { skip = 0 }
  !skip { print }' README.md)
if [ "${2:-}" = "--check" ]; then
  if [ "$new" != "$(cat README.md)" ]; then
    echo "README.md's ops table or example is out of date: run tools/update-readme.sh $build"
    exit 1
  fi
  echo "README.md's ops table matches the registry"
  exit 0
fi
printf '%s\n' "$new" > README.md
