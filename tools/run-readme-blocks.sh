#!/usr/bin/env bash
# run-readme-blocks.sh [FILE...]: runs, as written, every shell block of the given
# Markdown files (default README.md) that follows a line `<!-- ci: run -->`: each block
# in a fresh `bash -euo pipefail` from the repository root, its commands echoed. Stops
# at the first block that fails (its exit status). .ci/run calls it, so the README's
# commands are what CI runs.
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -gt 0 ] || set -- README.md
n=0
for file in "$@"; do
  tmp=$(mktemp -d "${TMPDIR:-/tmp}/readme-blocks.XXXXXX")
  awk -v dir="$tmp" '
    /^<!-- ci: run -->/ { armed = 1; next }
    armed && /^```(sh|bash)?$/ { armed = 0; on = 1; k++; out = sprintf("%s/%03d.sh", dir, k); next }
    on && /^```/ { on = 0; close(out); next }
    on { print > out; next }
    armed && !/^[[:space:]]*$/ { armed = 0 }' "$file"
  for block in "$tmp"/*.sh; do
    [ -e "$block" ] || continue
    n=$((n + 1))
    echo "==== $file, block $(basename "$block" .sh):"
    sed 's/^/  | /' "$block"
    t0=$(date +%s)
    rc=0
    bash -euo pipefail -x "$block" || rc=$?
    echo "==== $file, block $(basename "$block" .sh): exit $rc in $(( $(date +%s) - t0 )) s"
    if [ "$rc" -ne 0 ]; then rm -rf "$tmp"; exit "$rc"; fi
  done
  rm -rf "$tmp"
done
[ "$n" -gt 0 ] || { echo "run-readme-blocks.sh: no block marked <!-- ci: run --> in $*"; exit 1; }
echo "run-readme-blocks.sh: $n block(s) ran"
