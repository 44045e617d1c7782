#!/usr/bin/env bash
# run_server_test.sh SERVER_BIN CLIENT_BIN MODEL_DIR [DEVICE]
#
# End-to-end test of infer-server (tools/server) on MODEL_DIR/sample.onnx, loopback only:
#   1. starts the server on 127.0.0.1 with --port 0 (the system picks a free port, the
#      server prints it), waits for GET /v2/health/live;
#   2. health, readiness, server and model metadata; 404 / 405 answers;
#   3. one inference on sample_input.npy compared with sample_output.npy (1e-5) by
#      CLIENT_BIN (tests/server_client.c), then a load run: 500 requests over 8
#      connections, every answer checked, requests/s and latency percentiles printed;
#   4. bad requests, each 400 with its {"error"} message: bad JSON, unknown input,
#      missing input, wrong datatype, wrong shape, data count mismatch, non-numeric data,
#      unknown output, "data" nested otherwise than the shape (too shallow, a short row,
#      a value for an array, an array in flat data, too deep); flat and nested data
#      both answered; oversized bodies 413 (announced by Content-Length, and chunked);
#   5. SIGTERM: the server must exit 0 and say it stopped;
#   6. a second server with one worker, a queue of one and a 1 s delay per run:
#      a burst of 6 simultaneous requests must give matching 200s and 503s (queue full);
#      SIGINT while a request runs: that request is still answered, exit 0;
#   7. tools/server/README.md's request (its first json block, the values elided with
#      "..." repeated to the shape it gives) against a server with the default options:
#      200 with the probabilities.
# DEVICE (default $SERVER_DEVICE, else cpu) is the server's --device: cpu, cuda or
# cuda:N (CTest gpu_server runs it with cuda through tests/run_gpu.sh, which skips
# without a GPU). Every check is the same on each device.
# Skips (exit 77) when SERVER_BIN was not built (no libmicrohttpd/jansson), or when
# neither curl nor python3 is there: without curl (the GPU host may lack it) a python3
# stand-in for the few curl options used here takes its place (SERVER_TEST_NO_CURL=1
# forces it). Prints one line per check and finally `server: N passed, M failed`.
#
# Environment:
#   SERVER_WRAPPER="..."  run the server under a wrapper, e.g.
#                         "valgrind -q --leak-check=full --error-exitcode=9"
set -u

if [ $# -ne 3 ] && [ $# -ne 4 ]; then
  echo "usage: $0 SERVER_BIN CLIENT_BIN MODEL_DIR [cpu|cuda[:N]]" >&2
  exit 2
fi
server=$1 client=$2 models=$3 device=${4:-${SERVER_DEVICE:-cpu}}
if [ ! -x "$server" ]; then
  echo "SKIP: $server not built (needs libmicrohttpd-dev and libjansson-dev)"
  exit 77
fi
use_curl=1
if [ "${SERVER_TEST_NO_CURL:-0}" = 1 ] || ! command -v curl >/dev/null; then
  use_curl=0
  if ! command -v python3 >/dev/null; then
    echo "SKIP: neither curl nor python3 found"
    exit 77
  fi
fi
echo "device: $device"
model=$models/sample.onnx
input=$models/sample_input.npy
reference=$models/sample_output.npy

tmp=$(mktemp -d)
pid=
cleanup() {
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then kill -KILL "$pid" 2>/dev/null; fi
  rm -rf "$tmp"
}
trap cleanup EXIT

if [ "$use_curl" = 0 ]; then
  echo "note: curl not used: a python3 stand-in takes its place"
  cat >"$tmp/curl.py" <<'PY'
# The curl options this script uses: -s -m SECONDS -o FILE -w '%{http_code}' -d DATA
# --data-binary @FILE -X METHOD -H 'Name: value' URL. Prints the code as curl does
# (000 when no answer came).
import http.client, sys, urllib.parse
out, fmt, timeout, method, body, headers, url = None, "", 30.0, None, None, {}, None
args = sys.argv[1:]
i = 0
while i < len(args):
    a = args[i]
    if a in ("-m", "-o", "-w", "-d", "--data-binary", "-X", "-H"):
        i += 1
        v = args[i]
        if a == "-m": timeout = float(v)
        elif a == "-o": out = v
        elif a == "-w": fmt = v
        elif a == "-X": method = v
        elif a == "-H":
            k, _, hv = v.partition(":")
            headers[k.strip()] = hv.strip()
        elif a == "--data-binary" and v.startswith("@"):
            with open(v[1:], "rb") as f:
                body = f.read()
        else:
            body = v.encode()
            if a == "-d": headers.setdefault("Content-Type", "application/x-www-form-urlencoded")
    elif a == "-s": pass
    elif a.startswith("-"): sys.exit("curl.py: unsupported option " + a)
    else: url = a
    i += 1
u = urllib.parse.urlsplit(url)
path = (u.path or "/") + ("?" + u.query if u.query else "")
chunked = headers.get("Transfer-Encoding", "").lower() == "chunked"
code, data = 0, b""
try:
    c = http.client.HTTPConnection(u.hostname, u.port or 80, timeout=timeout)
    try:
        c.request(method or ("POST" if body is not None else "GET"), path, body=body,
                  headers=headers, encode_chunked=chunked)
    except (BrokenPipeError, ConnectionResetError):
        pass  # answered before the whole body was read (413): read that answer
    r = c.getresponse()
    code = r.status
    data = r.read()
except (OSError, http.client.HTTPException):
    pass
if out:
    with open(out, "wb") as f:
        f.write(data)
sys.stdout.write(fmt.replace("%{http_code}", "%03d" % code))
sys.exit(0 if code else 7)
PY
  curl() { python3 "$tmp/curl.py" "$@"; }
fi

passed=0 failed=0
server_batch=(--batch 2) # servers 1 and 2; the README's request goes to a default one
ok() { echo "ok   $1"; passed=$((passed + 1)); }
bad() { echo "FAIL $1"; failed=$((failed + 1)); }

# start_server LOG ARGS...: sets pid and port, or fails the test
start_server() {
  local log=$1
  shift
  ${SERVER_WRAPPER:-} "$server" "$model" --host 127.0.0.1 --port 0 "${server_batch[@]}" \
    --device "$device" "$@" >"$log" 2>&1 &
  pid=$!
  port=
  for _ in $(seq 1 600); do # 60 s (a wrapper is slow to start)
    port=$(sed -n 's|.*on http://127\.0\.0\.1:\([0-9]*\)/.*|\1|p' "$log" | head -1)
    [ -n "$port" ] && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  if [ -z "$port" ]; then
    cat "$log"
    bad "server start"
    return 1
  fi
  for _ in $(seq 1 100); do # 10 s
    [ "$(curl -s -m 2 -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/v2/health/live")" = 200 ] &&
      { ok "server up on port $port (live)"; return 0; }
    sleep 0.1
  done
  cat "$log"
  bad "server answers /v2/health/live"
  return 1
}

# stop_server SIGNAL LOG: the server must exit 0 within 30 s and say it stopped
stop_server() {
  local sig=$1 log=$2 rc
  kill -"$sig" "$pid"
  for _ in $(seq 1 300); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  if kill -0 "$pid" 2>/dev/null; then
    bad "server exits after SIG$sig (still running after 30 s)"
    kill -KILL "$pid"
    wait "$pid" 2>/dev/null
    pid=
    return
  fi
  wait "$pid"
  rc=$?
  pid=
  if [ "$rc" = 0 ] && grep -q "infer-server: stopped" "$log"; then
    ok "SIG$sig: clean exit"
  else
    tail -20 "$log"
    bad "SIG$sig: exit code $rc (expected 0 and 'stopped')"
  fi
}

# expect CODE SUBSTRING DESCRIPTION CURL_ARGS... (URL paths are relative to the server)
expect() {
  local code=$1 want=$2 what=$3 got body
  shift 3
  got=$(curl -s -m 30 -o "$tmp/body" -w '%{http_code}' "$@")
  body=$(head -c 400 "$tmp/body")
  if [ "$got" = "$code" ] && { [ -z "$want" ] || grep -qF -- "$want" "$tmp/body"; }; then
    ok "$what: $code ${body:0:120}"
  else
    bad "$what: got $got '$body', expected $code with '$want'"
  fi
}

# ---- server 1 ------------------------------------------------------------------------
log1=$tmp/server1.log
if start_server "$log1" --workers 2; then
  u=http://127.0.0.1:$port
  infer=$u/v2/models/sample/infer
  expect 200 "" "ready" "$u/v2/health/ready"
  expect 200 "" "model ready" "$u/v2/models/sample/ready"
  expect 200 '"name":"infer-server"' "server metadata" "$u/v2"
  expect 200 '"inputs":[{"name":"image","datatype":"FP32","shape":[2,3,32,32]}]' \
    "model metadata inputs" "$u/v2/models/sample"
  expect 200 '"outputs":[{"name":"probabilities","datatype":"FP32","shape":[2,10]}]' \
    "model metadata outputs" "$u/v2/models/sample/versions/1"
  expect 200 '"platform":"onnx"' "model metadata platform" "$u/v2/models/sample"
  expect 404 '"error"' "unknown path" "$u/v1/models"
  expect 404 "unknown model" "unknown model" "$u/v2/models/nope"
  expect 404 "unknown model" "unknown model infer" -d '{}' "$u/v2/models/nope/infer"
  expect 404 "version" "unknown version" "$u/v2/models/sample/versions/7"
  expect 405 "not allowed" "GET on infer" "$infer"
  expect 405 "not allowed" "POST on live" -X POST "$u/v2/health/live"
  expect 405 "not allowed" "DELETE on metadata" -X DELETE "$u/v2/models/sample"

  "$client" check --port "$port" --model sample --input "image=$input" \
    --reference "probabilities=$reference" && ok "infer: answer matches sample_output.npy (1e-5)" ||
    bad "infer: answer matches sample_output.npy"
  "$client" load --port "$port" --model sample --input "image=$input" \
    --reference "probabilities=$reference" --requests 500 --threads 8 &&
    ok "load: 500 requests over 8 connections, every answer checked" || bad "load run"

  good='"name":"image","datatype":"FP32","shape":[2,3,32,32]'
  zeros=$(printf '0,%.0s' $(seq 1 6143))0
  # the same zeros nested as the shape: [2][3][32][32]
  row="[$(printf '0,%.0s' $(seq 1 31))0]"
  plane="[$(printf "$row,%.0s" $(seq 1 31))$row]"
  image="[$plane,$plane,$plane]"
  nested="[$image,$image]"
  expect 200 '"model_name":"sample"' "infer with zeros (nested data, id echoed)" \
    -d "{\"id\":\"z\",\"inputs\":[{$good,\"data\":$nested}]}" "$infer"
  expect 200 '"model_name":"sample"' "infer with zeros (flat data)" \
    -d "{\"inputs\":[{$good,\"data\":[$zeros]}]}" "$infer"
  expect 400 "data has 1 entry, shape [2,3,32,32] needs 2 there" \
    "data nested two levels for a shape of four" \
    -d "{\"inputs\":[{$good,\"data\":[[$zeros]]}]}" "$infer"
  short="[$(printf '0,%.0s' $(seq 1 30))0]"
  expect 400 "data[1][2][31] has 31 entries, shape [2,3,32,32] needs 32 there" \
    "nested data with a short last row" \
    -d "{\"inputs\":[{$good,\"data\":[$image,[$plane,$plane,[$(printf "$row,%.0s" $(seq 1 31))$short]]]}]}" \
    "$infer"
  expect 400 "data[1] is not an array" "nested data with a value for an image" \
    -d "{\"inputs\":[{$good,\"data\":[$image,0]}]}" "$infer"
  expect 400 "data[1] is an array in flat data" "flat data with an array inside" \
    -d "{\"inputs\":[{$good,\"data\":[0,[0],$zeros]}]}" "$infer"
  expect 400 "nested deeper than the 4 levels of its shape" "nested data one level too deep" \
    -d "{\"inputs\":[{$good,\"data\":[$image,[$plane,$plane,[$(printf "$row,%.0s" $(seq 1 31))[$(printf '0,%.0s' $(seq 1 31))[0]]]]]}]}" \
    "$infer"
  expect 400 "invalid JSON" "bad JSON" -d '{"inputs": [' "$infer"
  expect 400 "not a JSON object" "JSON array body" -d '[1,2]' "$infer"
  expect 400 "invalid JSON" "empty body" -X POST "$infer"
  expect 400 "unknown input 'x'" "unknown input" \
    -d '{"inputs":[{"name":"x","datatype":"FP32","shape":[1],"data":[1]}]}' "$infer"
  expect 400 "missing input 'image'" "missing input" -d '{"inputs":[]}' "$infer"
  expect 400 "no \\\"inputs\\\" array" "no inputs" -d '{"outputs":[]}' "$infer"
  expect 400 "datatype INT64 does not match the model's FP32" "wrong datatype" \
    -d '{"inputs":[{"name":"image","datatype":"INT64","shape":[2,3,32,32],"data":[1]}]}' "$infer"
  expect 400 "shape [1,3,32,32] does not match the model's [2,3,32,32]" "wrong shape" \
    -d '{"inputs":[{"name":"image","datatype":"FP32","shape":[1,3,32,32],"data":[1]}]}' "$infer"
  expect 400 "3 values in" "data count mismatch" -d "{\"inputs\":[{$good,\"data\":[1,2,3]}]}" "$infer"
  expect 400 "6145 values in" "one value too many" \
    -d "{\"inputs\":[{$good,\"data\":[$zeros,1]}]}" "$infer"
  expect 400 "data[1] is not a number" "non-numeric data" \
    -d "{\"inputs\":[{$good,\"data\":[1,\"two\",3]}]}" "$infer"
  expect 400 "no \\\"data\\\" array" "no data" -d "{\"inputs\":[{$good}]}" "$infer"
  expect 400 "given twice" "input twice" \
    -d "{\"inputs\":[{$good,\"data\":[$zeros]},{$good,\"data\":[$zeros]}]}" "$infer"
  expect 400 "unknown output 'nope'" "unknown output" \
    -d "{\"inputs\":[{$good,\"data\":[$zeros]}],\"outputs\":[{\"name\":\"nope\"}]}" "$infer"
  head -c 3000000 /dev/zero | tr '\0' ' ' >"$tmp/big.json"
  expect 413 "larger than the limit" "body over the limit (Content-Length)" \
    --data-binary @"$tmp/big.json" "$infer"
  expect 413 "larger than the limit" "body over the limit (chunked)" \
    -H "Transfer-Encoding: chunked" --data-binary @"$tmp/big.json" "$infer"
  expect 200 "" "still live after the bad requests" "$u/v2/health/live"
  stop_server TERM "$log1"
fi

# ---- server 2: queue full (503) and shutdown while a run is in flight --------------------
log2=$tmp/server2.log
if start_server "$log2" --workers 1 --queue 1 --test-delay-ms 1000; then
  "$client" burst --port "$port" --model sample --input "image=$input" \
    --reference "probabilities=$reference" --threads 6 --expect-503 &&
    ok "burst: matching 200s and 503s (queue full)" || bad "burst with a full queue"
  "$client" check --port "$port" --model sample --input "image=$input" \
    --reference "probabilities=$reference" >"$tmp/inflight.out" 2>&1 &
  cpid=$!
  sleep 0.5
  stop_server INT "$log2"
  if wait "$cpid"; then
    ok "the request in flight at SIGINT was answered: $(cat "$tmp/inflight.out")"
  else
    bad "the request in flight at SIGINT: $(cat "$tmp/inflight.out")"
  fi
fi

# ---- 7. the README's request against the default server ----------------------------------
readme=$(cd "$(dirname "$0")/.." && pwd)/tools/server/README.md
awk '/^```json/ { n++; on = n == 1; next } /^```/ { on = 0 } on' "$readme" >"$tmp/readme_request.json"
# "data": [v1, v2, ...] -> the listed values repeated to the element count of "shape"
awk '{ text = text $0 "\n" }
  END {
    if (!match(text, /"shape": *\[[0-9, ]+\]/)) exit 1
    s = substr(text, RSTART, RLENGTH); sub(/^[^[]*\[/, "", s); sub(/\]$/, "", s)
    n = split(s, d, ","); count = 1
    for (i = 1; i <= n; i++) count *= d[i]
    if (!match(text, /"data": *\[[^]]*\.\.\. *\]/)) exit 1
    head = substr(text, 1, RSTART - 1); tail = substr(text, RSTART + RLENGTH)
    seg = substr(text, RSTART, RLENGTH); sub(/^[^[]*\[/, "", seg); sub(/, *\.\.\. *\]$/, "", seg)
    m = split(seg, v, ","); out = ""
    for (i = 0; i < count; i++) out = out (i ? "," : "") v[i % m + 1]
    printf "%s\"data\": [%s]%s", head, out, tail
  }' "$tmp/readme_request.json" >"$tmp/readme_body.json"
if [ $? -ne 0 ] || [ ! -s "$tmp/readme_body.json" ]; then
  bad "tools/server/README.md: no request with \"shape\" and \"data\": [..., ...] in its first json block"
else
  server_batch=()
  log3=$tmp/server3.log
  if start_server "$log3"; then
    expect 200 '"name":"probabilities"' "README request ($(grep -o '"shape": *\[[0-9, ]*\]' \
      "$tmp/readme_request.json" | head -1)) to a default server" \
      --data-binary @"$tmp/readme_body.json" -H 'Content-Type: application/json' \
      "http://127.0.0.1:$port/v2/models/sample/infer"
    stop_server TERM "$log3"
  fi
fi

echo "server: $passed passed, $failed failed"
[ "$failed" = 0 ]
