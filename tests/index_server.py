"""Real servers on 127.0.0.1 for the watch tests: a package index (pypiserver, from PyPI) serving a folder of wheels
the test builds (a wheel dropped into the folder is listed at once), and a webhook receiver (http.server in a
thread) that records what it was sent and answers with the status it is told to."""

from __future__ import annotations

import contextlib
import json
import shutil
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any


def _die_with_parent() -> None:
    """In the server's child process (Linux): SIGTERM when the process that started it dies, even by kill -9, so
    no server outlives a test or script that was killed."""
    import ctypes
    import signal

    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class IndexServer:
    """`pypi-server run` over `folder`, on a free local port; `.url` is its simple index."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/simple"
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> IndexServer:
        exe = shutil.which("pypi-server", path=str(Path(sys.executable).parent))
        assert exe, "pypiserver is a dev dependency: `uv sync`"
        self.folder.mkdir(parents=True, exist_ok=True)
        self.proc = subprocess.Popen([exe, "run", "-p", str(self.port), "-i", "127.0.0.1", "-a", ".", "-P", ".",
                                      "--disable-fallback", str(self.folder)],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                     preexec_fn=_die_with_parent)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(self.url + "/", timeout=2):
                    return self
            except OSError:
                time.sleep(0.1)
        self.stop()
        raise RuntimeError("pypiserver did not start")

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.terminate()
            self.proc.wait(timeout=10)
            self.proc = None


class Receiver:
    """A webhook: POSTs recorded in `.posts` (decoded JSON); answers `.status` (200 unless told otherwise)."""

    def __init__(self) -> None:
        self.posts: list[dict[str, Any]] = []
        self.status = 200
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if receiver.status == 200:
                    receiver.posts.append(json.loads(body))
                self.send_response(receiver.status)
                self.end_headers()
                self.wfile.write(b"ok")

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hooks/secret-token"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
