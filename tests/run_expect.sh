#!/bin/sh
# run_expect.sh [--exit N] [--count K] [--also REGEX]... [--absent REGEX]... REGEX CMD...
# Runs CMD; passes when it exits N (default 0) and its output (stdout and stderr
# together) matches the extended regular expression REGEX (on K lines exactly, with
# --count), every --also REGEX, and none of the --absent ones. Each regex is matched
# line by line (grep -E).
set -f  # the regexes are never file patterns
want=0 count="" also="" absent=""
nl='
'
while :; do
  case "$1" in
    --exit) want="$2"; shift 2 ;;
    --count) count="$2"; shift 2 ;;
    --also) also="$also$2$nl"; shift 2 ;;
    --absent) absent="$absent$2$nl"; shift 2 ;;
    *) break ;;
  esac
done
re="$1"; shift
out=$("$@" 2>&1); rc=$?
printf '%s\n' "$out"
[ "$rc" -eq "$want" ] || { echo "FAIL: exit code $rc, expected $want"; exit 1; }
if [ -n "$count" ]; then
  n=$(printf '%s\n' "$out" | grep -Ec -- "$re")
  [ "$n" -eq "$count" ] || { echo "FAIL: /$re/ on $n lines, expected $count"; exit 1; }
else
  printf '%s\n' "$out" | grep -Eq -- "$re" || { echo "FAIL: output lacks /$re/"; exit 1; }
fi
old_ifs=$IFS
IFS=$nl
for r in $also; do
  printf '%s\n' "$out" | grep -Eq -- "$r" || { echo "FAIL: output lacks /$r/"; exit 1; }
done
for r in $absent; do
  if printf '%s\n' "$out" | grep -Eq -- "$r"; then echo "FAIL: output has /$r/"; exit 1; fi
done
IFS=$old_ifs
exit 0
