#!/bin/sh
# run_readme_examples.sh CC SRC_DIR: every C program between <!-- example*:begin --> and
# <!-- example*:end --> markers in SRC_DIR/README.md, as the README shows it, must compile
# (-fsyntax-only -Wall -Werror against include/infer.h). The test readme_ops_table checks
# that they equal tools/example_*.c, which CTest builds and runs.
cc=$1 src=$2
tmp=$(mktemp -d "${TMPDIR:-/tmp}/infer-readme.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
awk -v dir="$tmp" '
  /<!-- example[a-z-]*:begin -->/ { n++; on = 1; next }
  /<!-- example[a-z-]*:end -->/ { on = 0; next }
  on && /^```/ { next }
  on { print > (dir "/example" n ".c") }' "$src/README.md"
count=0 fail=0
for f in "$tmp"/example*.c; do
  [ -f "$f" ] || continue
  count=$((count + 1))
  if ! "$cc" -std=c11 -fsyntax-only -Wall -Werror -I "$src/include" "$f"; then
    echo "FAIL: README example $count does not compile:"; cat -n "$f"; fail=1
  fi
done
[ $count -ge 2 ] || { echo "FAIL: $count README examples found, expected 2"; exit 1; }
[ $fail -eq 0 ] && echo "PASS: $count README examples compile"
exit $fail
