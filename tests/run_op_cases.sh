#!/bin/sh
# run_op_cases.sh PYTHON CONFORMANCE INFER SRC_DIR WORK_DIR: the extra op cases
# (tests/make_op_cases.py): node tests with integer outputs compared exactly
# (--rtol 0 --atol 0), the float ones at the ONNX tolerance, none may be refused
# (--known-failures /dev/null: an empty list), and every refusal model must make
# infer exit with its code and name what is wrong.
# Skips (77) with a message only when PYTHON lacks onnx or numpy.
py="$1"; conf="$2"; infer="$3"; src="$4"; dir="$5"
if ! "$py" -c "import onnx, numpy" 2>/dev/null; then
  echo "SKIP: $py cannot import onnx and numpy (Debian: python3-onnx python3-numpy)"
  exit 77
fi
rm -rf "$dir" && mkdir -p "$dir" || exit 2
"$py" "$src/tests/make_op_cases.py" "$dir" || exit 2
fail=0
"$conf" "$dir/exact" --device cpu --rtol 0 --atol 0 --known-failures /dev/null || fail=1
"$conf" "$dir/float" --device cpu --known-failures /dev/null || fail=1
pass=0; bad=0
while IFS='|' read -r name code text; do
  [ -n "$name" ] || continue
  err=$("$infer" "$dir/$name.onnx" --quiet 2>&1 >/dev/null)
  rc=$?
  if [ "$rc" = "$code" ] && printf '%s' "$err" | grep -qiF -- "$text"; then
    pass=$((pass + 1))
  else
    bad=$((bad + 1))
    echo "refusal $name: exit $rc (want $code), message: $err (want: $text)"
  fi
done < "$dir/refusals.txt"
echo "refusals: $pass passed, $bad failed"
[ $bad -eq 0 ] || fail=1
exit $fail
