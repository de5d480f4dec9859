"""A git server over HTTP on 127.0.0.1 that wants a login (Basic auth), for the tests of credentials in URLs: git's
own `git http-backend` behind a small http.server, so clones and fetches are real git traffic."""

from __future__ import annotations

import base64
import contextlib
import http.server
import os
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path


class GitHttpServer:
    def __init__(self, root: Path, user: str, password: str) -> None:
        self.root, self.user, self.password = root, user, password
        self.logins: list[str] = []  # each Authorization the server saw, decoded ("" when none)
        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    def url(self, repo: str, login: str | None = None) -> str:
        return f"http://{login + '@' if login else ''}127.0.0.1:{self.port}/{repo}"

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _handler(self) -> type[http.server.BaseHTTPRequestHandler]:
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802 - http.server's naming
                self._backend()

            def do_POST(self) -> None:  # noqa: N802
                self._backend()

            def _backend(self) -> None:
                header = self.headers.get("Authorization", "")
                login = base64.b64decode(header[6:]).decode() if header.startswith("Basic ") else ""
                server.logins.append(login)
                if login != f"{server.user}:{server.password}":
                    self.send_response(401)
                    self.send_header("WWW-Authenticate", 'Basic realm="git"')
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                path, _, query = self.path.partition("?")
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                env = {**os.environ, "GIT_PROJECT_ROOT": str(server.root), "GIT_HTTP_EXPORT_ALL": "1",
                       "PATH_INFO": path, "QUERY_STRING": query, "REQUEST_METHOD": self.command,
                       "CONTENT_TYPE": self.headers.get("Content-Type", ""), "CONTENT_LENGTH": str(len(body)),
                       "REMOTE_USER": server.user, "REMOTE_ADDR": "127.0.0.1",
                       "HTTP_CONTENT_ENCODING": self.headers.get("Content-Encoding", ""),
                       "GIT_PROTOCOL": self.headers.get("Git-Protocol", "")}
                done = subprocess.run(["git", "http-backend"], input=body, capture_output=True, env=env)
                head, _, payload = done.stdout.partition(b"\r\n\r\n")
                status = 200
                headers = []
                for line in head.decode("latin-1").split("\r\n"):
                    name, _, value = line.partition(":")
                    if name.lower() == "status":
                        status = int(value.split()[0])
                    elif name:
                        headers.append((name, value.strip()))
                self.send_response(status)
                for name, value in headers:
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        return Handler


@contextlib.contextmanager
def git_http_server(root: Path, user: str, password: str) -> Iterator[GitHttpServer]:
    server = GitHttpServer(root, user, password)
    try:
        yield server
    finally:
        server.close()
