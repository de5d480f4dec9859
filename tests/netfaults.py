"""A misbehaving HTTP server on 127.0.0.1 for the network tests: the first segment of a request's path says what it
does (`/slow-body/api/login/` trickles its body), so one server can stand in for a Conbench server, a package index
or a download host that misbehaves in one way. Raw sockets, so every byte (and the lack of one) is the test's."""

from __future__ import annotations

import contextlib
import json
import socket
import struct
import threading
import time
from collections.abc import Iterator

#: how long the slow answers wait between two bytes
TRICKLE_S = 0.2


class FaultServer:
    def __init__(self) -> None:
        self._sock = socket.create_server(("127.0.0.1", 0))
        self.port = self._sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.requests: list[str] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        self._sock.settimeout(0.2)
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except OSError:
                continue
            threading.Thread(target=self._answer, args=(conn,), daemon=True).start()

    def close(self) -> None:
        self._stop.set()
        self._sock.close()

    def _answer(self, conn: socket.socket) -> None:
        with contextlib.closing(conn), contextlib.suppress(OSError):
            head = b""
            while b"\r\n\r\n" not in head:
                data = conn.recv(65536)
                if not data:
                    return
                head += data
            line = head.split(b"\r\n", 1)[0].decode("latin-1")
            self.requests.append(line)
            path = line.split(" ")[1] if " " in line else "/"
            behaviour = path.strip("/").split("/", 1)[0].split("?", 1)[0]
            getattr(self, "_" + behaviour.replace("-", "_"), self._not_found)(conn, path)

    # -- behaviours -------------------------------------------------------------------------------------------

    def _send(self, conn: socket.socket, status: str, body: bytes, ctype: str = "application/json",
              extra: str = "") -> None:
        conn.sendall(f"HTTP/1.1 {status}\r\nContent-Type: {ctype}\r\nContent-Length: {len(body)}\r\n{extra}"
                     "Connection: close\r\n\r\n".encode() + body)

    def _not_found(self, conn: socket.socket, path: str) -> None:
        self._send(conn, "404 Not Found", b'{"description": "no such thing"}')

    def _json(self, conn: socket.socket, path: str) -> None:
        self._send(conn, "200 OK", json.dumps({"ok": True, "path": path}).encode())

    def _slow_body(self, conn: socket.socket, path: str) -> None:
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n")
        while not self._stop.is_set():
            conn.sendall(b" ")
            time.sleep(TRICKLE_S)

    def _slow_headers(self, conn: socket.socket, path: str) -> None:
        conn.sendall(b"HTTP/1.1 200 OK\r\n")
        while not self._stop.is_set():
            conn.sendall(b"X-Wait: 1\r\n")
            time.sleep(TRICKLE_S)

    def _silent(self, conn: socket.socket, path: str) -> None:
        self._stop.wait(60)

    def _huge(self, conn: socket.socket, path: str) -> None:
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100000000000\r\n\r\n")
        conn.sendall(b" " * 65536)

    def _endless(self, conn: socket.socket, path: str) -> None:
        """A chunked body that never ends, as fast as it can."""
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n")
        chunk = b"10000\r\n" + b" " * 65536 + b"\r\n"
        while not self._stop.is_set():
            conn.sendall(chunk)

    def _error500(self, conn: socket.socket, path: str) -> None:
        self._send(conn, "500 Internal Server Error", b'{"description": "the server broke"}')

    def _error401(self, conn: socket.socket, path: str) -> None:
        self._send(conn, "401 Unauthorized", b'{"description": "who are you"}')

    def _error403(self, conn: socket.socket, path: str) -> None:
        self._send(conn, "403 Forbidden", b'{"description": "not you"}')

    def _redirect(self, conn: socket.socket, path: str) -> None:
        """307 to the same path on another port (where nothing should ever be asked)."""
        with socket.create_server(("127.0.0.1", 0)) as other:
            port = other.getsockname()[1]
        self._send(conn, "307 Temporary Redirect", b"", extra=f"Location: http://127.0.0.1:{port}{path}\r\n")

    def _html(self, conn: socket.socket, path: str) -> None:
        self._send(conn, "200 OK", b"<html><body><h1>Welcome to the captive portal</h1></body></html>",
                   ctype="text/html")

    def _reset(self, conn: socket.socket, path: str) -> None:
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"a\":")
        conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))  # close = RST

    def _garbage(self, conn: socket.socket, path: str) -> None:
        conn.sendall(b"SSH-2.0-OpenSSH_9.2\r\nProtocol mismatch.\r\n")


@contextlib.contextmanager
def fault_server() -> Iterator[FaultServer]:
    server = FaultServer()
    try:
        yield server
    finally:
        server.close()


def closed_port() -> int:
    """A port on 127.0.0.1 where nothing listens (a connection is refused)."""
    with socket.create_server(("127.0.0.1", 0)) as sock:
        return int(sock.getsockname()[1])
