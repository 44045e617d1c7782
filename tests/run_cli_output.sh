#!/bin/sh
# run_cli_output.sh INFER MODELS_DIR: `--output DIR` writes DIR/NAME.npy for each output,
# creating DIR and its missing parents; a DIR that is an existing file exits 2 before
# the model runs, with one message that names it.
infer="$1"; models="$2"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/infer-output.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
"$infer" "$models/sample.onnx" --input "$models/sample_input.npy" --output "$tmp/new/sub" --quiet ||
  fail "--output into a new directory: exit $?"
[ -f "$tmp/new/sub/probabilities.npy" ] || fail "no $tmp/new/sub/probabilities.npy: $(ls -R "$tmp")"
# the file it wrote is the output: it passes as the reference
"$infer" "$models/sample.onnx" --input "$models/sample_input.npy" \
  --reference "$tmp/new/sub/probabilities.npy" --rtol 0 --atol 0 --quiet ||
  fail "the written output differs from a second run"
"$infer" "$models/sample.onnx" --input "$models/sample_input.npy" --output "$tmp/new/sub/" --quiet ||
  fail "--output into an existing directory (with a trailing /): exit $?"
: >"$tmp/file"
err=$("$infer" "$models/sample.onnx" --input "$models/sample_input.npy" --output "$tmp/file" 2>&1)
rc=$?
[ "$rc" -eq 2 ] || fail "--output naming a file: exit $rc, expected 2 ($err)"
printf '%s\n' "$err"
[ "$(printf '%s\n' "$err" | wc -l)" -eq 1 ] || fail "expected one line of message"
case "$err" in *"$tmp/file"*"not a directory"*) ;; *) fail "the message must name $tmp/file" ;; esac
echo "ok: --output creates its directory"
