# SPDX-License-Identifier: Apache-2.0
"""nginx for the Python tests and benchmarks, on 127.0.0.1 only, from the same config as the
C++ remote tests (tests/remote/nginx.conf.in): plain HTTP, TLS with a throwaway self-signed
certificate (`cert`, to trust as a CA file), and a /private/ location that needs the bearer
token TOKEN. The C++ helper (tests/remote/remote_servers.cpp) cannot be driven from Python,
so this is its counterpart: start, serve a folder, read the access log, stop.

    with NginxServer(root) as server:
        url = server.url("ckpt/model.safetensors.index.json")    # server.tls_url(...) for HTTPS
        mark = server.access_mark()
        ...
        lines = server.access_since(mark)   # [AccessLine(method, uri, status, range, bytes, auth)]
"""

import collections
import os
import shutil
import socket
import subprocess
import tempfile
import time

_SOURCE_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CONFIG_TEMPLATE = os.path.join(_SOURCE_DIR, "tests", "remote", "nginx.conf.in")
TOKEN = "st-test-token-3f9c2a"

# auth: "bearer" when the request carried an Authorization header (never its value), else "-".
AccessLine = collections.namedtuple("AccessLine", "method uri status range bytes auth")


def find_nginx():
    for path in ("/usr/sbin/nginx", "/usr/bin/nginx", "/usr/local/sbin/nginx"):
        if os.access(path, os.X_OK):
            return path
    return None


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _accepts(port):
    with socket.socket() as s:
        s.settimeout(0.2)
        return s.connect_ex(("127.0.0.1", port)) == 0


class NginxServer:
    """Serves `root` over plain HTTP on a free port of 127.0.0.1 until stopped."""

    def __init__(self, root):
        self.root = os.path.abspath(root)
        self._dir = None
        self._process = None
        self.port = None
        self.tls_port = None
        self.cert = None

    def start(self):
        nginx = find_nginx()
        if nginx is None:
            raise RuntimeError("nginx is not installed (scripts/install-deps installs it)")
        self._dir = tempfile.mkdtemp(prefix="st-nginx-")
        prefix = os.path.join(self._dir, "nginx")
        os.makedirs(prefix)
        cert, key = os.path.join(self._dir, "cert.pem"), os.path.join(self._dir, "key.pem")
        # The IP address as subjectAltName: a client given the certificate as its CA verifies the host.
        subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                        "-nodes", "-keyout", key, "-out", cert, "-days", "2", "-subj", "/CN=127.0.0.1",
                        "-addext", "subjectAltName=IP:127.0.0.1"],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.cert = cert
        self.port, tls_port = _free_port(), _free_port()
        self.tls_port = tls_port
        with open(CONFIG_TEMPLATE) as f:
            conf = f.read()
        for field, value in (("@PREFIX@", prefix), ("@ROOT@", self.root), ("@PORT@", str(self.port)),
                             ("@TLS_PORT@", str(tls_port)), ("@CERT@", cert), ("@KEY@", key), ("@TOKEN@", TOKEN)):
            conf = conf.replace(field, value)
        config = os.path.join(self._dir, "nginx.conf")
        with open(config, "w") as f:
            f.write(conf)
        self._log = open(os.path.join(self._dir, "nginx.out"), "wb")
        self._process = subprocess.Popen([nginx, "-p", prefix, "-e", os.path.join(prefix, "error.log"), "-c", config],
                                         stdin=subprocess.DEVNULL, stdout=self._log, stderr=subprocess.STDOUT)
        for _ in range(200):
            if _accepts(self.port) and _accepts(tls_port):
                return self
            if self._process.poll() is not None:
                break
            time.sleep(0.025)
        self.stop()
        raise RuntimeError("nginx did not start")

    def stop(self):
        if self._process is not None:
            self._process.terminate()
            self._process.wait(timeout=10)
            self._process = None
            self._log.close()
        if self._dir is not None:
            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir = None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()
        return False

    def url(self, path):
        return f"http://127.0.0.1:{self.port}/{path}"

    def tls_url(self, path):
        return f"https://127.0.0.1:{self.tls_port}/{path}"

    @property
    def _access_log(self):
        return os.path.join(self._dir, "nginx", "access.log")

    def _log_size(self):
        try:
            return os.path.getsize(self._access_log)
        except FileNotFoundError:
            return 0

    def _settled_log_size(self):
        """The access log's size once it has been still for a moment: nginx logs a request after
        answering it, so the line of a request just answered may still be on its way."""
        seen, still = self._log_size(), 0
        for _ in range(100):
            time.sleep(0.02)
            now = self._log_size()
            still = still + 1 if now == seen else 0
            seen = now
            if still >= 3:
                break
        return seen

    def access_mark(self):
        """The access log's end for access_since, after the requests already answered are logged."""
        return self._settled_log_size()

    def access_since(self, mark):
        """Requests logged after `mark`, once the log has been still for a moment."""
        self._settled_log_size()
        with open(self._access_log, "rb") as f:
            f.seek(mark)
            text = f.read().decode()
        out = []
        for line in text.splitlines():
            # GET /uri STATUS "Range" BYTES auth
            head, quoted, tail = line.split('"')
            method, uri, status = head.split()
            sent, auth = tail.split()
            out.append(AccessLine(method, uri, int(status), quoted, int(sent), auth))
        return out
