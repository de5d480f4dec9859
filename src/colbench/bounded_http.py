"""Every HTTP call colbench makes (Conbench, the package index, Maven Central, data downloads), bounded.

A call has one total deadline, not a timeout per read: a watchdog shuts the call's sockets down when the deadline
passes, so a server that trickles its answer a byte a second (or its headers a line a second) is given up on in
time, whatever it sends. Beside the deadline: the most bytes a body may have (announced or sent), which redirects
are followed (the same server only, unless a caller allows https on another host), and the content types a
successful answer must have. Whatever goes wrong ends in one `NetError` line that says what the server (or the
network) did: unreachable, too slow, too big, redirected elsewhere, not HTTP, cut off, another content type. An
HTTP error status is an answer, not an exception: `status_problem` words it, with server errors (5xx), refused
requests (401/403) and the rest told apart.

The deadline defaults to a minute; `$COLBENCH_NET_DEADLINE_S` (or a command's `--net-deadline`) changes it.
Standard library only (urllib, for proxies from the environment and cookies).
"""

from __future__ import annotations

import base64
import contextlib
import http.client
import math
import os
import socket
import ssl
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from email.message import Message
from http.cookiejar import CookieJar
from typing import IO, Any, Literal
from urllib.parse import urlsplit

from colbench.redact import clip, printable, redact

DEADLINE_ENV = "COLBENCH_NET_DEADLINE_S"
DEFAULT_DEADLINE_S = 60.0
#: what an API answer (a JSON page, an index page, a metadata file) may weigh
DEFAULT_MAX_BYTES = 64 * 2**20
_BLOCK = 1 << 16

#: which redirects are followed: to the same scheme, host and port only; or to https anywhere too (downloads)
Redirects = Literal["same-origin", "https-anywhere"]
Kind = Literal["unreachable", "timeout", "too-large", "redirect", "not-http", "reset", "content-type", "bad-url",
               "server-error", "refused", "status"]


class NetError(Exception):
    """A network call that did not give a usable answer; the message is one line saying what happened."""

    def __init__(self, kind: Kind, message: str, detail: str | None = None) -> None:
        super().__init__(redact(message))
        self.kind = kind
        #: the message without the server's name in front ("connection refused …"), for callers that name it
        self.detail = redact(detail if detail is not None else message)


def deadline_from_env() -> float:
    """`$COLBENCH_NET_DEADLINE_S`, else a minute; a value that is not a positive number is a NetError."""
    raw = os.environ.get(DEADLINE_ENV, "").strip()
    if not raw:
        return DEFAULT_DEADLINE_S
    return check_deadline(raw, DEADLINE_ENV)


def check_deadline(value: object, what: str = "--net-deadline") -> float:
    """A deadline in seconds: a finite number above 0."""
    try:
        seconds = float(str(value))
    except ValueError:
        seconds = math.nan
    if not math.isfinite(seconds) or seconds <= 0:
        raise NetError("bad-url", f"{what} {clip(str(value), 40)!r}: give the seconds a network call may take, "
                                  "a number above 0 (e.g. 60)")
    return seconds


@dataclass(frozen=True)
class Answer:
    """An HTTP answer read whole (or into a sink): its final URL, status, headers and body."""

    url: str
    status: int
    headers: Message
    body: bytes

    @property
    def content_type(self) -> str:
        return (self.headers.get("Content-Type") or "").split(";", 1)[0].strip().lower()

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300


def _origin(url: str) -> tuple[str, str, int | None]:
    parts = urlsplit(url)
    try:
        port = parts.port or {"http": 80, "https": 443}.get(parts.scheme)
    except ValueError:
        port = None
    return parts.scheme, (parts.hostname or ""), port


def host_of(url: str) -> str:
    """`host:port` of a URL as messages show it (no user name, no password)."""
    parts = urlsplit(url)
    return redact(parts.netloc.rsplit("@", 1)[-1] or url)


class _Watch:
    """The total deadline of one call: at its end every socket the call opened is shut down, which wakes any read
    blocked on it (a recv returns at once), however the server trickles."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.end = time.monotonic() + seconds
        self.expired = False
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self._timer = threading.Timer(seconds, self._expire)
        self._timer.daemon = True
        self._timer.start()

    def remaining(self) -> float:
        return max(0.001, self.end - time.monotonic())

    def watch(self, sock: socket.socket | None) -> None:
        if sock is None:
            return
        with self._lock:
            self._sockets.append(sock)
            if self.expired:
                _shut(sock)

    def extend(self, seconds: float) -> None:
        """Allow `seconds` more (a download's body, by its announced size), from the deadline set so far."""
        with self._lock:
            if self.expired or seconds <= 0:
                return
            self._timer.cancel()
            self.seconds += seconds
            self.end += seconds
            self._timer = threading.Timer(max(0.0, self.end - time.monotonic()), self._expire)
            self._timer.daemon = True
            self._timer.start()

    def _expire(self) -> None:
        with self._lock:
            self.expired = True
            for sock in self._sockets:
                _shut(sock)

    def close(self) -> None:
        with self._lock:
            self._timer.cancel()


def _shut(sock: socket.socket) -> None:
    # the plain socket's shutdown, also for a TLS socket (SSLSocket.shutdown would tear its state down under a
    # reader in another thread): the reader sees the connection end and returns
    with contextlib.suppress(OSError):
        socket.socket.shutdown(sock, socket.SHUT_RDWR)


class _WatchedOpen:
    """An urllib handler whose connections hand their socket to the call's watch once connected."""

    watch: _Watch

    def do_open(self, http_class: Any, req: Any, **kwargs: Any) -> Any:
        watch = self.watch

        class Watched(http_class):  # type: ignore[misc]  # http.client's connection classes
            def connect(self) -> None:
                super().connect()
                watch.watch(self.sock)

        return super().do_open(Watched, req, **kwargs)  # type: ignore[misc]  # the handler base class's


class _HTTP(_WatchedOpen, urllib.request.HTTPHandler):
    def __init__(self, watch: _Watch) -> None:
        super().__init__()
        self.watch = watch


class _HTTPS(_WatchedOpen, urllib.request.HTTPSHandler):
    def __init__(self, watch: _Watch) -> None:
        super().__init__()
        self.watch = watch


class _Redirects(urllib.request.HTTPRedirectHandler):
    max_redirections = 5

    def __init__(self, policy: Redirects) -> None:
        super().__init__()
        self.policy = policy

    def redirect_request(self, req: urllib.request.Request, fp: IO[bytes], code: int, msg: str,
                         headers: http.client.HTTPMessage, newurl: str) -> urllib.request.Request | None:
        target = urllib.parse.urljoin(req.full_url, newurl)
        same = _origin(req.full_url) == _origin(target)
        if not same and not (self.policy == "https-anywhere" and urlsplit(target).scheme == "https"):
            raise NetError("redirect", f"{req.full_url} redirected (HTTP {code}) to {target}, another server: "
                                       "colbench does not follow that; give the URL you mean")
        follow = super().redirect_request(req, fp, code, msg, headers, target)
        if follow is not None and not same:  # a login goes to the server it was given for, never on
            follow.headers = {k: v for k, v in follow.headers.items() if k.lower() != "authorization"}
        return follow


def _opener(watch: _Watch, cookies: CookieJar | None, redirects: Redirects) -> urllib.request.OpenerDirector:
    handlers: list[Any] = [_HTTP(watch), _HTTPS(watch), _Redirects(redirects)]
    if cookies is not None:
        handlers.append(urllib.request.HTTPCookieProcessor(cookies))
    return urllib.request.build_opener(*handlers)


def _sizes(n: int) -> str:
    return f"{n:,} bytes"


def _timed_out(url: str, watch: _Watch, got: int, total: int | None) -> NetError:
    sent = f"sent {_sizes(got)}" + (f" of {_sizes(total)}" if total is not None else "") if got else \
        "sent no complete answer"
    return NetError("timeout", f"{host_of(url)} {sent} in {watch.seconds:.3g} s, the deadline of a network call: "
                               f"gave up on {url} (a slow or stuck server; ${DEADLINE_ENV} or --net-deadline "
                               "allows more)")


def _failure(url: str, exc: BaseException, watch: _Watch, got: int = 0, total: int | None = None) -> NetError:
    """What a low-level failure means, in one line."""
    if isinstance(exc, NetError):
        return exc
    reason = getattr(exc, "reason", exc) if isinstance(exc, urllib.error.URLError) else exc
    host = host_of(url)
    if watch.expired or isinstance(reason, TimeoutError):
        return _timed_out(url, watch, got, total)
    if isinstance(reason, http.client.RemoteDisconnected | http.client.BadStatusLine | http.client.LineTooLong) \
            or (isinstance(reason, http.client.HTTPException) and not isinstance(reason, http.client.IncompleteRead)):
        if isinstance(reason, http.client.RemoteDisconnected):
            return NetError("not-http", f"{host} closed the connection without an HTTP answer to {url}")
        said = printable(str(reason).strip()) or type(reason).__name__
        return NetError("not-http", f"{host} did not answer HTTP to {url} (it said {clip(said, 80)})")
    if isinstance(reason, http.client.IncompleteRead | ConnectionResetError | BrokenPipeError):
        return NetError("reset", f"{host} cut the connection off after {_sizes(got)}"
                                 f"{f' of {_sizes(total)}' if total is not None else ''} of {url}")
    if isinstance(reason, ssl.SSLError):
        why = f"TLS failed: {clip(str(reason), 120)}"
    elif isinstance(reason, socket.gaierror):
        why = "the name does not resolve (no network?)"
    elif isinstance(reason, ConnectionRefusedError):
        why = "connection refused (nothing listens there?)"
    elif isinstance(reason, OSError):
        why = str(reason.strerror or reason)
    else:
        why = clip(str(reason), 120)
    return NetError("unreachable", f"cannot reach {host}: {why}", why)


def request(url: str, *, method: str = "GET", data: bytes | None = None, headers: Mapping[str, str] | None = None,
            deadline_s: float | None = None, max_bytes: int = DEFAULT_MAX_BYTES,
            content_types: tuple[str, ...] = (), cookies: CookieJar | None = None,
            redirects: Redirects = "same-origin", open_sink: Callable[[int, Message], IO[bytes] | None] | None = None,
            progress: Callable[[int], None] | None = None, seconds_per_byte: float = 0.0) -> Answer:
    """One HTTP call, done (its body read whole) within `deadline_s` (default: `deadline_from_env()`).

    `content_types`: what a 2xx answer must be (substrings of its content type: "json", "html" …), else NetError.
    `max_bytes`: the most the body may have (a larger Content-Length is refused before reading). `open_sink(status,
    headers)`: where the body goes (block by block, `progress(n)` after each) instead of into `Answer.body`, or None
    to keep it there (an error answer); the caller closes it. `seconds_per_byte`: a
    body announced at N bytes gets N × this more time (a large download; `max_bytes` bounds it). An error status
    is returned as an answer (its body read, bounded); every other failure is a NetError."""
    seconds = deadline_s if deadline_s is not None else deadline_from_env()
    scheme = urlsplit(url).scheme
    if scheme not in ("http", "https"):
        raise NetError("bad-url", f"{redact(url)}: colbench fetches http:// and https:// URLs only")
    url, login = without_login(url)
    call = _Call(url, method, max_bytes, content_types, open_sink, progress, seconds_per_byte, _Watch(seconds))
    watch = call.watch
    try:
        req = urllib.request.Request(url, data=data, method=method, headers={**login, **dict(headers or {})})
        try:
            response = _opener(watch, cookies, redirects).open(req, timeout=watch.remaining())
        except urllib.error.HTTPError as exc:
            response = exc  # an error status: an answer too, read (bounded) below
        with contextlib.closing(response):
            return _read_answer(call, response)
    except NetError:
        if watch.expired:
            raise _timed_out(url, watch, call.got, call.total) from None
        raise
    except (OSError, http.client.HTTPException, ValueError) as exc:
        if isinstance(exc, ValueError) and not isinstance(exc, OSError) and not watch.expired:
            raise NetError("bad-url", f"{url}: {clip(str(exc), 120)}") from None  # http.client.InvalidURL …
        raise _failure(url, exc, watch, call.got, call.total) from None
    finally:
        watch.close()


def without_login(url: str) -> tuple[str, dict[str, str]]:
    """A URL's `user:password@` taken out of it and made a Basic Authorization header (RFC 7617), as pip and uv
    send it: urllib would take `user:password@host` for a host name. A private index or a webhook with its login
    in the URL works, and no message names the password (the URL left has none)."""
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url, {}
    userinfo, _, host = parts.netloc.rpartition("@")
    user, _, password = userinfo.partition(":")
    token = base64.b64encode(f"{urllib.parse.unquote(user)}:{urllib.parse.unquote(password)}".encode()).decode()
    return parts._replace(netloc=host).geturl(), {"Authorization": f"Basic {token}"}


@dataclass
class _Call:
    """One request's bounds and where its body goes, and how much of the body has come (for the error messages)."""

    url: str
    method: str
    max_bytes: int
    content_types: tuple[str, ...]
    open_sink: Callable[[int, Message], IO[bytes] | None] | None
    progress: Callable[[int], None] | None
    seconds_per_byte: float
    watch: _Watch
    got: int = 0
    total: int | None = None


def _read_answer(call: _Call, response: Any) -> Answer:
    """The answer's status and headers checked against the call's bounds, then its body read whole."""
    url = call.url
    status = int(getattr(response, "status", None) or getattr(response, "code", None) or 0)
    answer_headers: Message = response.headers
    final_url = response.geturl() if hasattr(response, "geturl") else url
    length = answer_headers.get("Content-Length")
    call.total = total = int(length) if length and length.strip().isascii() and length.strip().isdigit() else None
    if total is not None and total > call.max_bytes:
        raise NetError("too-large", f"{host_of(url)} announced {_sizes(total)} for {url}, more than the "
                                    f"{_sizes(call.max_bytes)} colbench takes from it")
    _check_content_type(call, status, answer_headers)
    if total is not None and call.seconds_per_byte > 0:
        call.watch.extend(total * call.seconds_per_byte)
    sink = call.open_sink(status, answer_headers) if call.open_sink is not None else None
    body = _read_body(call, response, sink)
    if call.watch.expired:
        raise _timed_out(url, call.watch, call.got, total)
    if total is not None and call.got < total and call.method != "HEAD":
        raise NetError("reset", f"{host_of(url)} cut the connection off after {_sizes(call.got)} of "
                                f"{_sizes(total)} of {url}")
    return Answer(final_url, status, answer_headers, body)


def _check_content_type(call: _Call, status: int, answer_headers: Message) -> None:
    """A successful answer with a body must be of one of the content types the caller expects."""
    ctype = (answer_headers.get("Content-Type") or "").lower()
    empty = status == 204 or call.total == 0  # nothing to read: no content type to check
    if 200 <= status < 300 and call.content_types and not empty \
            and not any(kind in ctype for kind in call.content_types):
        raise NetError("content-type", f"{call.url} answered {ctype.split(';')[0] or 'without a content type'} "
                                       f"where {' or '.join(call.content_types)} was expected: is it the right "
                                       "server (and path)?")


def _read_body(call: _Call, response: Any, sink: IO[bytes] | None) -> bytes:
    """The body, block by block, into `sink` (then b"") or kept; more than the call's most bytes is a NetError."""
    chunks: list[bytes] = []
    while True:
        block = response.read1(_BLOCK) if hasattr(response, "read1") else response.read(_BLOCK)
        if not block:
            break
        call.got += len(block)
        if call.got > call.max_bytes:
            raise NetError("too-large", f"{host_of(call.url)} sent more than {_sizes(call.max_bytes)} for "
                                        f"{call.url}, the most colbench takes from it: stopped reading")
        if sink is not None:
            sink.write(block)
        else:
            chunks.append(block)
        if call.progress is not None:
            call.progress(len(block))
    return b"".join(chunks)


def status_problem(answer: Answer, what: str) -> NetError:
    """An answer's error status in one line, `what` naming the server (e.g. "Conbench at https://…"): server errors
    (5xx), refused requests (401, 403) and other statuses are worded apart."""
    reason = answer_reason(answer.body)
    if answer.status >= 500:
        return NetError("server-error", f"{what} failed with a server error (HTTP {answer.status}{reason}): the "
                                        "server's own fault; try again later")
    if answer.status in (401, 403):
        return NetError("refused", f"{what} refused the request (HTTP {answer.status}{reason})")
    return NetError("status", f"{what} answered HTTP {answer.status}{reason}")


def answer_reason(body: bytes) -> str:
    """The server's explanation in an error answer, on one line (": …"), or ""."""
    import json
    import re

    try:
        parsed = json.loads(body)
    except ValueError:
        lines = [line for line in body.decode(errors="replace").strip().splitlines() if line.strip()]
        text = re.sub(r"<[^>]+>", "", lines[-1] if lines else "").strip()
        return f": {clip(text, 200)}" if text else ""
    detail = (parsed.get("description") or parsed.get("name")) if isinstance(parsed, dict) else parsed
    return f": {clip(json.dumps(detail), 300)}" if detail else ""


def json_body(answer: Answer, what: str) -> Any:
    """The answer's body as JSON, or a NetError saying it is something else."""
    import json

    try:
        return json.loads(answer.body)
    except ValueError:
        shown = answer.content_type or "no content type"
        raise NetError("content-type", f"{what} did not answer JSON ({shown}, {_sizes(len(answer.body))}): is it "
                                       "the right server?") from None


@contextlib.contextmanager
def deadline_window(seconds: float | None = None) -> Iterator[Callable[[], float]]:
    """One deadline shared by several calls (retries of one request): yields a function giving what is left of it;
    raises NetError("timeout") when asked after it passed."""
    total = seconds if seconds is not None else deadline_from_env()
    end = time.monotonic() + total

    def left() -> float:
        remaining = end - time.monotonic()
        if remaining <= 0:
            raise NetError("timeout", f"the deadline of a network call ({total:g} s) passed; ${DEADLINE_ENV} or "
                                      "--net-deadline allows more")
        return remaining

    yield left
