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


class HostileIndex:
    """A package index on 127.0.0.1 that misbehaves on purpose (issue 48), serving the wheels of a folder through
    the Simple API (PEP 691 JSON when asked for it, else PEP 503 HTML) and the files themselves:

    - `login=("user", "secret")`: every request needs that HTTP Basic login; `.url` carries it (`user:secret@`),
      as a private index's URL does, `.bare_url` does not;
    - `page_delay_s`: each index page is answered that late (`delay_for`: only to clients whose User-Agent holds
      that word, e.g. "uv", so colbench's own listing is quick and uv's is slow);
    - `yank_all`: every file is yanked (PEP 592);
    - `bad_entries`: the JSON page also lists entries of the wrong types and a file whose version has 5,000 digits.

    Wheels that hang or segfault on import are wheels (tests/app/watch_probe.py `build_wheel(kind=...)`): the index
    serves them as any other. `.requests` counts the page requests by User-Agent's first word."""

    def __init__(self, folder: Path, *, login: tuple[str, str] | None = None, page_delay_s: float = 0.0,
                 delay_for: str = "", yank_all: bool = False, bad_entries: bool = False) -> None:
        self.folder = folder
        self.login, self.page_delay_s, self.delay_for = login, page_delay_s, delay_for
        self.yank_all, self.bad_entries = yank_all, bad_entries
        self.requests: dict[str, int] = {}
        handler = type("Handler", (_HostileHandler,), {"index": self})

        class Server(ThreadingHTTPServer):
            daemon_threads = True

            def handle_error(self, request: Any, client_address: Any) -> None:
                pass  # a client that gave up on a slow page (uv at its deadline): its broken pipe is the point

        self.server = Server(("127.0.0.1", 0), handler)
        port = self.server.server_address[1]
        self.bare_url = f"http://127.0.0.1:{port}/simple"
        self.url = (f"http://{login[0]}:{login[1]}@127.0.0.1:{port}/simple" if login else self.bare_url)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def start(self) -> HostileIndex:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def _authorized(self, header: str) -> bool:
        if self.login is None:
            return True
        import base64

        return header == "Basic " + base64.b64encode(f"{self.login[0]}:{self.login[1]}".encode()).decode()

    def _entry(self, name: str) -> dict[str, Any]:
        import hashlib

        digest = hashlib.sha256((self.folder / name).read_bytes()).hexdigest()
        return {"filename": name, "url": f"/files/{name}", "hashes": {"sha256": digest},
                "yanked": "withdrawn on purpose" if self.yank_all else False}

    def _json(self, project: str, wheels: list[str]) -> dict[str, Any]:
        files: list[Any] = [self._entry(name) for name in wheels]
        if self.bad_entries:
            files += [42, "a string", ["a", "list"], {"filename": 7}, {"no": "filename"},
                      {"filename": f"{project}-1.0.1-py3-none-any.whl", "yanked": {"why": "an object"}},
                      {"filename": f"{project}-{'9' * 5000}-py3-none-any.whl", "url": "/files/none",
                       "hashes": {}}]
        return {"meta": {"api-version": "1.1"}, "name": project, "files": files}

    def _html(self, wheels: list[str]) -> str:
        links = []
        for name in wheels:
            entry = self._entry(name)
            yanked = ' data-yanked="withdrawn on purpose"' if self.yank_all else ""
            links.append(f'<a href="{entry["url"]}#sha256={entry["hashes"]["sha256"]}"{yanked}>{name}</a><br/>')
        return "<!DOCTYPE html><html><body>\n" + "\n".join(links) + "\n</body></html>\n"


class _HostileHandler(BaseHTTPRequestHandler):
    """HostileIndex's requests (its `index`, set on a subclass per server)."""

    index: HostileIndex

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        if not self.index._authorized(self.headers.get("Authorization", "")):
            self.send_response(401)
            self.send_header("WWW-Authenticate", 'Basic realm="hostile"')
            self.end_headers()
            return
        if self.path.startswith("/files/"):
            self._file(self.path.removeprefix("/files/"))
        elif self.path.startswith("/simple/"):
            self._page(self.path.removeprefix("/simple/").strip("/"))
        else:
            self.send_error(404)

    def do_HEAD(self) -> None:  # noqa: N802 - uv asks for a file's size (range requests) first
        if not self.index._authorized(self.headers.get("Authorization", "")):
            self.send_response(401)
            self.end_headers()
            return
        self._file(self.path.removeprefix("/files/"), body=False)

    def _file(self, name: str, body: bool = True) -> None:
        path = self.index.folder / Path(name).name
        if not path.is_file():
            self.send_error(404)
            return
        data = path.read_bytes()
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if body:
            self.wfile.write(data)

    def _page(self, project: str) -> None:
        agent = (self.headers.get("User-Agent") or "?").split("/")[0].split()[0].lower()
        self.index.requests[agent] = self.index.requests.get(agent, 0) + 1
        if self.index.page_delay_s and (not self.index.delay_for or self.index.delay_for in agent):
            time.sleep(self.index.page_delay_s)
        wheels = sorted(p.name for p in self.index.folder.glob("*.whl")
                        if p.name.split("-")[0].replace("_", "-") == project)
        if not wheels:
            self.send_error(404)
            return
        if "json" in (self.headers.get("Accept") or ""):
            body = json.dumps(self.index._json(project, wheels)).encode()
            kind = "application/vnd.pypi.simple.v1+json"
        else:
            body, kind = self.index._html(wheels).encode(), "text/html"
        self.send_response(200)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass
