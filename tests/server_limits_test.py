#!/usr/bin/env python3
"""server_limits_test.py SERVER_BIN MODEL_DIR [DEVICE]: infer-server's defences, over raw
loopback sockets (the standard library only).

Server A (--max-connections 128 --max-connections-per-ip 16, default timeouts):
  1. framing: two Content-Length headers, Content-Length with chunked, a
     Transfer-Encoding other than chunked (gzip; "gzip, chunked"), two Transfer-Encoding
     headers: each a 400 with a JSON {"error"} within a second, on a GET and on an
     inference; a well-framed chunked inference still 200;
  2. body limits on every route: a GET announcing 100 MiB is a 413 at once, a GET with
     a 5 KiB body (sent, or chunked) a 413, one with 100 bytes a 200; a chunked body that
     keeps coming is cut off (the connection closed) after at most 8 MiB past the limit;
  3. libmicrohttpd's own refusals (a malformed Content-Length, HTTP/2.0, a 40 KB URL, a
     40 KB header) keep their status codes (400, 505, 414, 431); their bodies are
     libmicrohttpd's HTML, which 0.9.75 cannot replace (tools/server/README.md says so);
  4. the per-address cap: 16 connections from 127.0.0.9 held open, a 17th from there is
     closed unanswered while 127.0.0.1 is still served; once they close, 127.0.0.9 is
     served again;
  5. the slow-client flood: 256 connections (2x the limit) from 127.0.0.10-41, 8 each,
     each sending one byte of a never-ending request every 2 s and reconnecting when
     closed, for 20 s; meanwhile a new client on 127.0.0.1 asks for /v2/health/live
     every 0.25 s and runs an inference every second: every one must be answered 200
     in under a second (the server closes the connection that has waited longest for
     its request when the limit is reached); the server's stop line must report those
     evictions.
Server B (--idle-timeout 2 --request-timeout 4):
  6. a silent connection is closed after the idle timeout (~2 s); a request trickled one
     byte a second (headers, or a body), and a second request trickled on a kept-alive
     connection, are closed at the deadline (~4 s), though each byte resets the idle
     timer; the stop line reports them.
Prints one line per check and `server_limits: N passed, M failed`; exits 0 when all
pass, 1 otherwise, 77 when SERVER_BIN was not built. SERVER_WRAPPER="..." runs the
server under a wrapper (valgrind: the timing checks may then fail, read its exit code)."""
import json
import os
import re
import selectors
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

if len(sys.argv) not in (3, 4):
    sys.exit("usage: server_limits_test.py SERVER_BIN MODEL_DIR [cpu|cuda[:N]]")
server_bin, models = sys.argv[1], sys.argv[2]
device = sys.argv[3] if len(sys.argv) == 4 else os.environ.get("SERVER_DEVICE", "cpu")
if not os.access(server_bin, os.X_OK):
    print("SKIP: %s not built (needs libmicrohttpd-dev and libjansson-dev)" % server_bin)
    sys.exit(77)

passed = failed = 0


def ok(what):
    global passed
    print("ok   " + what, flush=True)
    passed += 1


def bad(what):
    global failed
    print("FAIL " + what, flush=True)
    failed += 1


def check(cond, what):
    (ok if cond else bad)(what)
    return cond


# ---- the server -----------------------------------------------------------------------

class Server:
    def __init__(self, *args):
        self.log = tempfile.NamedTemporaryFile("w+", prefix="server_limits_", suffix=".log")
        # SERVER_WRAPPER="valgrind -q --error-exitcode=9": memory checking (the timing
        # checks may then fail; the exit code is the one to read)
        cmd = os.environ.get("SERVER_WRAPPER", "").split() + [
            server_bin, os.path.join(models, "sample.onnx"), "--host", "127.0.0.1", "--port", "0",
            "--device", device] + list(args)
        self.proc = subprocess.Popen(cmd, stdout=self.log, stderr=subprocess.STDOUT)
        self.port = None
        for _ in range(600):
            m = re.search(r"on http://127\.0\.0\.1:(\d+)/", self.text())
            if m:
                self.port = int(m.group(1))
                break
            if self.proc.poll() is not None:
                break
            time.sleep(0.1)
        if not self.port:
            print(self.text())
            raise SystemExit("FAIL server start: " + " ".join(cmd))

    def text(self):
        with open(self.log.name) as f:
            return f.read()

    def stop(self):
        """SIGTERM; returns the log once it exited (0 expected)."""
        self.proc.send_signal(signal.SIGTERM)
        try:
            rc = self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            rc = "killed after 30 s"
        check(rc == 0, "server exits 0 on SIGTERM (got %s)" % rc)
        return self.text()


def connect(port, source="127.0.0.1", timeout=5.0):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.settimeout(timeout)
    s.bind((source, 0))
    s.connect(("127.0.0.1", port))
    return s


def read_response(s, deadline):
    """One HTTP response from s: (status, headers dict, body), or (None, {}, error text)
    when the connection closed or failed before a whole one came."""
    data = b""
    try:
        while b"\r\n\r\n" not in data:
            s.settimeout(max(0.01, deadline - time.monotonic()))
            chunk = s.recv(65536)
            if not chunk:
                return None, {}, "closed without an answer"
            data += chunk
        head, _, body = data.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split()[1])
        headers = {}
        for line in lines[1:]:
            k, _, v = line.partition(":")
            headers[k.strip().lower()] = v.strip()
        n = int(headers.get("content-length", "0"))
        while len(body) < n:
            s.settimeout(max(0.01, deadline - time.monotonic()))
            chunk = s.recv(65536)
            if not chunk:
                return None, {}, "closed in the middle of the answer"
            body += chunk
        return status, headers, body[:n]
    except (socket.timeout, TimeoutError):
        return None, {}, "no answer in time"
    except OSError as e:
        return None, {}, "connection error: %s" % e


def exchange(port, raw, source="127.0.0.1", timeout=5.0):
    """Sends raw bytes on a new connection, returns (status, headers, body, seconds)."""
    t0 = time.monotonic()
    s = connect(port, source, timeout)
    try:
        try:
            s.sendall(raw)
        except OSError:
            pass  # answered (and closed) before all of it was taken: read the answer
        status, headers, body = read_response(s, t0 + timeout)
    finally:
        s.close()
    return status, headers, body, time.monotonic() - t0


def json_error(headers, body):
    """The message of a {"error": "..."} answer, or None."""
    if headers.get("content-type") != "application/json":
        return None
    try:
        v = json.loads(body)
    except ValueError:
        return None
    return v.get("error") if isinstance(v, dict) and isinstance(v.get("error"), str) else None


def expect_error(port, raw, code, want, what, within=1.0):
    status, headers, body, dt = exchange(port, raw)
    msg = json_error(headers, body) if status else None
    check(status == code and msg is not None and want in msg and dt < within,
          "%s: %s %s in %.3f s (expected %d with a JSON error naming '%s' within %.1f s)"
          % (what, status, msg if msg is not None else body[:120], dt, code, want, within))


def chunked(data, size=65536):
    out = b""
    for i in range(0, len(data), size):
        part = data[i:i + size]
        out += b"%x\r\n" % len(part) + part + b"\r\n"
    return out + b"0\r\n\r\n"


zeros = ("[" + ",".join(["0"] * 3072) + "]").encode()
infer_body = (b'{"inputs":[{"name":"image","datatype":"FP32","shape":[1,3,32,32],"data":'
              + zeros + b"}]}")
LIVE = b"GET /v2/health/live HTTP/1.1\r\nHost: t\r\n"
INFER = b"POST /v2/models/sample/infer HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n"

# ---- server A ----------------------------------------------------------------------------
A = Server("--max-connections", "128", "--max-connections-per-ip", "16")
port = A.port
print("server A on port %d: %s" % (port, A.text().strip().splitlines()[-1]))

# 1. framing
expect_error(port, LIVE + b"Content-Length: 0\r\nContent-Length: 5\r\n\r\n", 400,
             "Content-Length", "GET with two Content-Length headers")
expect_error(port, INFER + b"Content-Length: %d\r\nContent-Length: 5\r\n\r\n" % len(infer_body)
             + infer_body, 400, "Content-Length", "inference with two Content-Length headers")
expect_error(port, INFER + b"Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n"
             + chunked(infer_body), 400, "both Content-Length and Transfer-Encoding",
             "inference with Content-Length and chunked")
expect_error(port, LIVE + b"Transfer-Encoding: gzip\r\n\r\n", 400, "'gzip' is not supported",
             "GET with Transfer-Encoding: gzip")
expect_error(port, INFER + b"Transfer-Encoding: gzip, chunked\r\n\r\n" + chunked(infer_body), 400,
             "is not supported (only chunked)", "inference with Transfer-Encoding: gzip, chunked")
expect_error(port, INFER + b"Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n"
             + chunked(infer_body), 400, "2 Transfer-Encoding headers",
             "inference with two Transfer-Encoding headers")
status, headers, body, dt = exchange(port, INFER + b"Transfer-Encoding: Chunked\r\n\r\n"
                                     + chunked(infer_body, 1000))
check(status == 200 and b'"probabilities"' in body,
      "chunked inference (1000-byte chunks): %s in %.3f s" % (status, dt))
status, headers, body, dt = exchange(port, INFER + b"Content-Length: %d\r\n\r\n" % len(infer_body)
                                     + infer_body)
check(status == 200 and b'"probabilities"' in body, "inference: %s in %.3f s" % (status, dt))

# 2. body limits on every route
expect_error(port, LIVE + b"Content-Length: 104857600\r\n\r\n", 413, "larger than the limit",
             "GET announcing a 100 MiB body (none sent)")
expect_error(port, LIVE + b"Content-Length: 5120\r\n\r\n" + b"x" * 5120, 413,
             "larger than the limit (4096 bytes on this route)", "GET with a 5 KiB body")
expect_error(port, LIVE + b"Transfer-Encoding: chunked\r\n\r\n" + chunked(b"x" * 5120, 1024), 413,
             "larger than the limit", "GET with a 5 KiB chunked body")
expect_error(port, b"GET /v2/nope HTTP/1.1\r\nHost: t\r\nContent-Length: 104857600\r\n\r\n", 413,
             "larger than the limit", "unknown path announcing a 100 MiB body")
expect_error(port, INFER + b"Content-Length: 104857600\r\n\r\n", 413, "larger than the limit",
             "inference announcing a 100 MiB body")
status, headers, body, dt = exchange(port, LIVE + b"Content-Length: 100\r\n\r\n" + b"x" * 100)
check(status == 200, "GET with a 100-byte body: %s" % status)


def endless_chunked_body(port, path, limit_mib):
    """Sends a chunked body until the server stops taking it; returns the MiB sent."""
    s = connect(port, timeout=5.0)
    head = b"POST %s HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n" % path
    piece = b"%x\r\n" % 65536 + b" " * 65536 + b"\r\n"
    sent = 0
    try:
        s.sendall(head)
        while sent < limit_mib << 20:
            s.sendall(piece)
            sent += 65536
    except OSError:
        pass
    s.close()
    return sent / (1 << 20)


mib = endless_chunked_body(port, b"/v2/models/sample/infer", 64)
check(mib < 16, "an endless chunked inference body is cut off after %.1f MiB "
      "(limit ~1.2 MiB + at most 8 MiB dropped)" % mib)
mib = endless_chunked_body(port, b"/v2/health/live", 64)
check(mib < 12, "an endless chunked body to /v2/health/live is cut off after %.1f MiB" % mib)

# 3. libmicrohttpd's own refusals: status codes kept, bodies its HTML (documented)
for raw, code, what in [
        (LIVE + b"Content-Length: abc\r\n\r\n", 400, "malformed Content-Length"),
        (b"GET /v2/health/live HTTP/2.0\r\nHost: t\r\n\r\n", 505, "HTTP/2.0 request line"),
        (b"GET /" + b"a" * 40000 + b" HTTP/1.1\r\nHost: t\r\n\r\n", 414, "40 KB URL"),
        (LIVE + b"X-Pad: " + b"a" * 40000 + b"\r\n\r\n", 431, "40 KB header")]:
    status, headers, body, dt = exchange(port, raw)
    check(status == code, "%s: %s (libmicrohttpd's own answer, %s body)"
          % (what, status, "JSON" if json_error(headers, body) else "HTML"))

# 4. the per-address cap (16)
held = [connect(port, "127.0.0.9") for _ in range(16)]
time.sleep(0.2)
status, headers, body, dt = exchange(port, LIVE + b"\r\n", source="127.0.0.9", timeout=2.0)
check(status is None and dt < 1.0,
      "a 17th connection from 127.0.0.9 is closed unanswered: %s in %.3f s" % (body, dt))
status, headers, body, dt = exchange(port, LIVE + b"\r\n")
check(status == 200 and dt < 1.0, "127.0.0.1 is served meanwhile: %s in %.3f s" % (status, dt))
for s in held:
    s.close()
time.sleep(0.3)
status, headers, body, dt = exchange(port, LIVE + b"\r\n", source="127.0.0.9")
check(status == 200, "127.0.0.9 is served once its connections closed: %s" % status)

# 5. the slow-client flood
FLOOD, PER_IP, DURATION, TRICKLE = 256, 8, 20.0, 2.0
flood_req = b"GET /v2/health/live HTTP/1.1\r\nHost: t\r\nX-Slow: " + b"a" * 100000


class Flood(threading.Thread):
    """FLOOD sockets, each sending one byte of flood_req every TRICKLE seconds and
    reconnecting 50 ms after the server closes it."""

    def __init__(self):
        super().__init__(daemon=True)
        self.sel = selectors.DefaultSelector()
        self.closed = 0        # connections the server closed
        self.connects = 0
        self.peak_open = 0
        self.stop_at = time.monotonic() + DURATION

    def open_one(self, i):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.bind(("127.0.0.%d" % (10 + i // PER_IP), 0))
        s.setblocking(False)
        s.connect_ex(("127.0.0.1", port))
        self.connects += 1
        # slot: [socket, index, bytes sent, next send time, opened at]
        now = time.monotonic()
        slot = [s, i, 0, now + (i % 20) * TRICKLE / 20, now]
        self.sel.register(s, selectors.EVENT_READ, slot)
        return slot

    def run(self):
        slots = [self.open_one(i) for i in range(FLOOD)]
        reopen = []  # (time, index)
        while time.monotonic() < self.stop_at:
            now = time.monotonic()
            for ev, _ in self.sel.select(timeout=0.05):
                slot = ev.data
                try:
                    data = slot[0].recv(4096)
                except BlockingIOError:
                    continue
                except OSError:
                    data = b""
                if not data:  # closed by the server (or refused at the per-address cap)
                    self.sel.unregister(slot[0])
                    slot[0].close()
                    slot[0] = None
                    self.closed += 1
                    reopen.append((time.monotonic() + 0.05, slot[1]))
            now = time.monotonic()
            for slot in slots:
                if slot[0] is not None and now >= slot[3]:
                    try:
                        slot[0].send(flood_req[slot[2]:slot[2] + 1])
                        slot[2] += 1
                    except (BlockingIOError, OSError):
                        pass
                    slot[3] = now + TRICKLE
            due = [r for r in reopen if r[0] <= now]
            reopen = [r for r in reopen if r[0] > now]
            for _, i in due:
                slots[i] = self.open_one(i)
            self.peak_open = max(self.peak_open, sum(1 for x in slots if x[0] is not None))
        for slot in slots:
            if slot[0] is not None:
                self.sel.unregister(slot[0])
                slot[0].close()




def slow_upload(out):
    """One inference from 127.0.0.1 whose body takes ~3 s to arrive (10 pieces): a
    legitimate slow client, older than the flood's reconnected connections, that the
    eviction must spare."""
    t0 = time.monotonic()
    try:
        s = connect(port, timeout=10.0)
        s.sendall(INFER + b"Connection: close\r\nContent-Length: %d\r\n\r\n" % len(infer_body))
        step = len(infer_body) // 10 + 1
        for i in range(0, len(infer_body), step):
            time.sleep(0.3)
            s.sendall(infer_body[i:i + step])
        status, headers, body = read_response(s, time.monotonic() + 5.0)
        s.close()
    except OSError as e:
        status, body = None, str(e).encode()
    out.append((status, body[:80], time.monotonic() - t0))


flood = Flood()
flood.start()
time.sleep(3.0)  # the flood is in: every slot taken, the limit reached
uploads = []
uploader = threading.Thread(target=slow_upload, args=(uploads,))
uploader.start()
probes, slow, failures = [], [], []
next_infer = time.monotonic()
while time.monotonic() < flood.stop_at - 1.0:
    status, headers, body, dt = exchange(port, LIVE + b"Connection: close\r\n\r\n", timeout=5.0)
    probes.append(dt)
    if status != 200:
        failures.append("live: %s %s" % (status, body[:80]))
    elif dt >= 1.0:
        slow.append("live %.2f s" % dt)
    if time.monotonic() >= next_infer:
        next_infer += 1.0
        status, headers, body, dt = exchange(
            port, INFER + b"Connection: close\r\nContent-Length: %d\r\n\r\n" % len(infer_body)
            + infer_body, timeout=5.0)
        probes.append(dt)
        if status != 200 or b'"probabilities"' not in body:
            failures.append("infer: %s %s" % (status, body[:80]))
        elif dt >= 1.0:
            slow.append("infer %.2f s" % dt)
    time.sleep(0.25)
flood.join()
uploader.join()
status, body, dt = uploads[0]
check(status == 200 and b"model_name" in body,
      "a slow upload from 127.0.0.1 during the flood (10 pieces over %.1f s) is answered: %s %s"
      % (dt, status, body))
probes.sort()
check(not failures and not slow and len(probes) > 40,
      "flood of %d trickling connections (2x the limit of 128; %d connects, %d closed by the "
      "server): %d requests of a new client on 127.0.0.1 all answered 200 in under 1 s "
      "(median %.3f s, max %.3f s)%s"
      % (FLOOD, flood.connects, flood.closed, len(probes), probes[len(probes) // 2],
         probes[-1], "; failures: %s; slow: %s" % (failures[:5], slow[:5])
         if failures or slow else ""))
log = A.stop()
m = re.search(r"(\d+) connections? closed past the request deadline, (\d+) at the connection "
              r"limit", log)
check(m is not None and int(m.group(2)) > 0,
      "server A's stop line: %s" % (m.group(0) if m else "missing"))

# ---- server B: the idle timeout and the request deadline ----------------------------------
B = Server("--idle-timeout", "2", "--request-timeout", "4")
port = B.port
print("server B on port %d: %s" % (port, B.text().strip().splitlines()[-1]))
results = {}


def lifetime(name, first, trickle):
    """Opens a connection, sends `first`, then one byte of `trickle` a second; records
    how long until the server closed it (None: still open after 10 s)."""
    s = connect(port, "127.0.0.2", timeout=0.1)
    t0 = time.monotonic()
    answered = 0
    s.sendall(first)
    i = 0
    while time.monotonic() - t0 < 10.0:
        try:
            data = s.recv(65536)
            if not data:
                results[name] = (time.monotonic() - t0, answered)
                s.close()
                return
            answered += data.count(b"HTTP/1.1 ")
        except (socket.timeout, TimeoutError):
            pass
        except OSError:
            results[name] = (time.monotonic() - t0, answered)
            s.close()
            return
        if trickle and time.monotonic() - t0 >= i + 1 and i < len(trickle):
            try:
                s.send(trickle[i:i + 1])
            except OSError:
                pass
            i += 1
    results[name] = (None, answered)
    s.close()


cases = {
    "silent": (b"", b""),
    "headers trickled": (b"", b"GET /v2/health/live HTTP/1.1\r\nHost: t\r\nX-Slow: " + b"a" * 100),
    "body trickled": (INFER + b"Content-Length: %d\r\n\r\n" % len(infer_body), infer_body),
    "second request trickled": (LIVE + b"\r\n", LIVE + b"X-Slow: " + b"a" * 100),
}
threads = [threading.Thread(target=lifetime, args=(n, f, t)) for n, (f, t) in cases.items()]
for t in threads:
    t.start()
for t in threads:
    t.join()
dt, _ = results["silent"]
check(dt is not None and 1.5 <= dt <= 3.7,
      "a silent connection is closed after the 2 s idle timeout: %s s" % (dt and round(dt, 2)))
for name in ("headers trickled", "body trickled", "second request trickled"):
    dt, answered = results[name]
    check(dt is not None and 3.5 <= dt <= 5.5 and answered == (name == "second request trickled"),
          "%s one byte a second is closed at the 4 s deadline: %s s (%d answer%s before)"
          % (name, dt and round(dt, 2), answered, "" if answered == 1 else "s"))
log = B.stop()
m = re.search(r"(\d+) connections? closed past the request deadline, (\d+) at the connection "
              r"limit", log)
check(m is not None and int(m.group(1)) >= 3,
      "server B's stop line: %s" % (m.group(0) if m else "missing"))

print("server_limits: %d passed, %d failed" % (passed, failed))
sys.exit(0 if failed == 0 else 1)
