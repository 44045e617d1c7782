#!/bin/sh
# run_expect.sh REGEX CMD...: runs CMD; passes when it exits 0 and its output
# (stdout and stderr) matches the extended regular expression REGEX.
re="$1"; shift
out=$("$@" 2>&1); rc=$?
printf '%s\n' "$out"
[ $rc -eq 0 ] || { echo "FAIL: exit code $rc"; exit 1; }
printf '%s\n' "$out" | grep -Eq "$re" || { echo "FAIL: output lacks /$re/"; exit 1; }
