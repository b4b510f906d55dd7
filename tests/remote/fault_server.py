#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""A misbehaving HTTP server for the remote-reading tests, on 127.0.0.1 only.

The first path component picks the fault; the rest names a file under --root:

  /ok/F          honest Range support (206, strong ETag)
  /norange/F     ignores Range: 200 with the whole body
  /badrange/F    206 whose Content-Range names other bytes than asked
  /short/F       206 with a Content-Length and body shorter than the range (non-first requests)
  /reset/F       drops the connection half-way through the first non-first request, then honest
  /resetalways/F drops every non-first request half-way
  /changing/F    a new ETag on every request (If-Range mismatch gives 200, as the RFC says)
  /slow/F        waits --slow seconds before the body of non-first requests
  /nomulti/F     a multi-range request gets 200 with the whole body (no multi-range support)
  /firstonly/F   a multi-range request gets a single 206 part: the first range only
  /reverse/F     multipart/byteranges with the parts in reverse order
  /badpart/F     multipart/byteranges whose second part is one byte further on than asked
  /truncmulti/F  multipart/byteranges without its closing boundary
  /status/N      answers HTTP N
  /redirect/F    302 to /ok/F on this server
  /redirect-away/F  302 to --away (another port) + F
  /loop/N        302 to /loop/N+1, forever
  /stop          exits

Other paths answer a multi-range request (`Range: bytes=a-b,c-d`) with multipart/byteranges.

Every request is logged to --log: method, path, Range, and "bearer" when an Authorization
header came (never its value).
"""
import argparse
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ARGS = None
LOCK = threading.Lock()
COUNTS = {}


def log(line):
    with LOCK:
        with open(ARGS.log, "a") as f:
            f.write(line + "\n")


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body go as separate writes: no delayed-ACK stall

    def log_message(self, *args):
        pass

    def count(self, key):
        with LOCK:
            COUNTS[key] = COUNTS.get(key, 0) + 1
            return COUNTS[key]

    def do_GET(self):
        auth = "bearer" if self.headers.get("Authorization") else "-"
        rng = self.headers.get("Range", "")
        log(f"GET {self.path} \"{rng}\" {auth}")
        parts = self.path.lstrip("/").split("/", 1)
        mode = parts[0]
        rest = parts[1] if len(parts) > 1 else ""
        if mode == "stop":
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()
            threading.Thread(target=self.server.shutdown).start()
            return
        if mode == "status":
            self.send_response(int(rest))
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if mode == "loop":
            self.redirect(f"/loop/{int(rest) + 1}")
            return
        if mode == "redirect":
            self.redirect(f"/ok/{rest}")
            return
        if mode == "redirect-away":
            self.redirect(ARGS.away + rest)
            return
        path = os.path.join(ARGS.root, rest)
        if not os.path.isfile(path):
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        with open(path, "rb") as f:
            data = f.read()
        first = rng.startswith("bytes=0-")
        n = self.count(self.path) if not first else 0
        etag = '"v1"'
        if mode == "changing":
            etag = '"v%d"' % self.count("etag:" + rest)
            if_range = self.headers.get("If-Range")
            if if_range and if_range != etag:
                rng = ""  # RFC 9110: a failed If-Range gets the whole representation
        if mode == "norange" or not rng:
            self.send_response(200)
            self.send_header("Content-Length", str(len(data)))
            self.send_header("ETag", etag)
            self.end_headers()
            try:
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass
            return
        spec = rng[len("bytes="):]
        if "," in spec:
            self.multi_range(mode, data, etag, spec, n)
            return
        a, b = spec.split("-")
        a = int(a)
        b = min(int(b), len(data) - 1)
        body = data[a:b + 1]
        content_range = f"bytes {a}-{b}/{len(data)}"
        if mode == "badrange" and not first:
            content_range = f"bytes {a + 1}-{b + 1}/{len(data)}"
        if mode == "short" and not first:
            body = body[: len(body) // 2]
        if mode == "slow" and not first:
            time.sleep(ARGS.slow)
        self.send_response(206)
        self.send_header("Content-Range", content_range)
        self.send_header("Content-Length", str(b - a + 1 if mode != "short" else len(body)))
        self.send_header("ETag", etag)
        self.end_headers()
        if (mode == "reset" and not first and n == 1) or (mode == "resetalways" and not first):
            self.wfile.write(body[: len(body) // 2])
            self.wfile.flush()
            self.close_connection = True
            self.connection.shutdown(2)
            return
        try:
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            pass

    def multi_range(self, mode, data, etag, spec, n):
        ranges = []
        for item in spec.split(","):
            a, b = item.strip().split("-")
            ranges.append((int(a), min(int(b), len(data) - 1)))
        if mode == "nomulti":
            self.send_response(200)
            self.send_header("Content-Length", str(len(data)))
            self.send_header("ETag", etag)
            self.end_headers()
            try:
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass
            return
        if mode == "firstonly":
            a, b = ranges[0]
            self.send_response(206)
            self.send_header("Content-Range", f"bytes {a}-{b}/{len(data)}")
            self.send_header("Content-Length", str(b - a + 1))
            self.send_header("ETag", etag)
            self.end_headers()
            self.wfile.write(data[a:b + 1])
            return
        boundary = "st-fault-boundary"
        body = bytearray()
        parts = list(reversed(ranges)) if mode == "reverse" else ranges
        for i, (a, b) in enumerate(parts):
            if mode == "badpart" and i == 1:
                a, b = a + 1, b + 1
            body += (f"\r\n--{boundary}\r\nContent-Type: application/octet-stream\r\n"
                     f"Content-Range: bytes {a}-{b}/{len(data)}\r\n\r\n").encode()
            body += data[a:b + 1]
        if mode != "truncmulti":
            body += f"\r\n--{boundary}--\r\n".encode()
        self.send_response(206)
        self.send_header("Content-Type", f"multipart/byteranges; boundary={boundary}")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("ETag", etag)
        self.end_headers()
        if (mode == "reset" and n == 1) or mode == "resetalways":
            self.wfile.write(bytes(body[: len(body) // 2]))
            self.wfile.flush()
            self.close_connection = True
            self.connection.shutdown(2)
            return
        try:
            self.wfile.write(bytes(body))
        except (BrokenPipeError, ConnectionResetError):
            pass

    def redirect(self, location):
        self.send_response(302)
        self.send_header("Location", location)
        self.send_header("Content-Length", "0")
        self.end_headers()


def main():
    global ARGS
    p = argparse.ArgumentParser()
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--root", required=True)
    p.add_argument("--log", required=True)
    p.add_argument("--away", default="")
    p.add_argument("--slow", type=float, default=3.0)
    ARGS = p.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", ARGS.port), Handler)
    server.daemon_threads = True
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    server.serve_forever()


if __name__ == "__main__":
    main()
