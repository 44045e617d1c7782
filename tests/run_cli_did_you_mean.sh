#!/bin/sh
# run_cli_did_you_mean.sh INFER: every option that `infer --help` lists, given with its
# last letter missing, is suggested back ("did you mean '--batch'?"): the list behind
# "did you mean" (tools/cli_args.c) knows every option.
infer="$1"
opts=$("$infer" --help | grep -oE -- '--[a-z][a-z0-9-]*[a-z0-9]' | sort -u)
[ -n "$opts" ] || { echo "FAIL: no options in infer --help"; exit 1; }
bad=0
for o in $opts; do
  short=${o%?}
  out=$("$infer" model.onnx "$short" 2>&1)
  case "$out" in
    *"did you mean '$o'?"*) ;;
    *) echo "FAIL: $short: $out"; bad=$((bad + 1)) ;;
  esac
done
[ "$bad" -eq 0 ] || exit 1
echo "ok: $(echo "$opts" | wc -w) options, each suggested from its prefix"
