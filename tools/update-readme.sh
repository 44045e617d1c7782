#!/usr/bin/env bash
# update-readme.sh BUILD_DIR [--check]: pastes the supported-ops table printed by
# BUILD_DIR/infer_ops_table, tools/example_threads.c and tools/example_async.c, between
# their markers in README.md (the examples as they are: the tests build and run them). With --check, only reports (exit 1) when the README differs.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
table=$("$build/infer_ops_table")
example=$(printf '```c\n%s\n```' "$(cat tools/example_threads.c)")
example_async=$(printf '```c\n%s\n```' "$(cat tools/example_async.c)")
# through the environment: awk -v would turn the examples' "\n" into newlines
new=$(TABLE="$table" EXAMPLE="$example" EXAMPLE_ASYNC="$example_async" awk '
  /<!-- ops-table:begin -->/ { print; print ENVIRON["TABLE"]; skip = 1; next }
  /<!-- ops-table:end -->/ { skip = 0 }
  /<!-- example:begin -->/ { print; print ENVIRON["EXAMPLE"]; skip = 1; next }
  /<!-- example:end -->/ { skip = 0 }
  /<!-- example-async:begin -->/ { print; print ENVIRON["EXAMPLE_ASYNC"]; skip = 1; next }
  /<!-- example-async:end -->/ { skip = 0 }
  !skip { print }' README.md)
if [ "${2:-}" = "--check" ]; then
  if [ "$new" != "$(cat README.md)" ]; then
    echo "README.md's ops table or examples are out of date: run tools/update-readme.sh $build"
    exit 1
  fi
  echo "README.md's ops table matches the registry, its examples their files"
  exit 0
fi
printf '%s\n' "$new" > README.md
