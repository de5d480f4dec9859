"""Fixtures for the data layer: an isolated data root and local HTTP servers (our machines have no internet)."""

from __future__ import annotations

import http.server
import os
import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest


@dataclass
class ServerState:
    files: dict[str, bytes] = field(default_factory=dict)
    ranges: bool = True  # answer Range requests with 206
    drop_after: int | None = None  # close the connection after this many body bytes …
    drops_left: int = 0  # … this many times
    requests: list[dict[str, str]] = field(default_factory=list)


def _handler(state: ServerState) -> type[http.server.BaseHTTPRequestHandler]:
    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: object) -> None:  # keep pytest output clean
            pass

        def do_GET(self) -> None:  # noqa: N802 - http.server's naming
            state.requests.append({"path": self.path, "range": self.headers.get("Range", "")})
            body = state.files.get(self.path)
            if body is None:
                self.send_error(404)
                return
            start = 0
            match = re.fullmatch(r"bytes=(\d+)-", self.headers.get("Range", ""))
            if match and state.ranges:
                start = int(match.group(1))
                if start >= len(body):
                    self.send_response(416)
                    self.send_header("Content-Range", f"bytes */{len(body)}")
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                self.send_response(206)
                self.send_header("Content-Range", f"bytes {start}-{len(body) - 1}/{len(body)}")
            else:
                self.send_response(200)
            payload = body[start:]
            self.send_header("Content-Length", str(len(payload)))
            self.send_header("Accept-Ranges", "bytes" if state.ranges else "none")
            self.end_headers()
            if state.drop_after is not None and state.drops_left > 0 and len(payload) > state.drop_after:
                state.drops_left -= 1
                self.wfile.write(payload[: state.drop_after])
                self.wfile.flush()
                self.close_connection = True
                self.connection.shutdown(2)  # the peer sees the body end early
                return
            self.wfile.write(payload)

    return Handler


@dataclass
class Server:
    url: str
    state: ServerState


@pytest.fixture
def http_server() -> Iterator[Server]:
    """An HTTP server on 127.0.0.1 in a thread; put files in ``server.state.files``."""
    state = ServerState()
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _handler(state))
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield Server(f"http://127.0.0.1:{httpd.server_address[1]}", state)
    finally:
        httpd.shutdown()
        httpd.server_close()


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def file_bytes(path: Path) -> bytes:
    with open(path, "rb") as f:
        return f.read()


__all__ = ["Server", "ServerState", "file_bytes", "free_port", "os"]
