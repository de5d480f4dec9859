"""A small client of Conbench's HTTP API (colbench.bounded_http and a cookie jar: no dependency): login, which
generation of the API the server speaks, the results a run holds there, run records, posting results.

Two generations are in use (read in conbench/conbench, https://github.com/conbench/conbench, `conbench/api/`):

- up to release 2023.4.10 (the newest on PyPI): results at `/api/benchmarks/` (a plain JSON list when read),
  run records at `POST /api/runs/` and `PUT /api/runs/<id>/` (name, reason, finish time, info, errors), and a
  `github` object that, when sent, must carry both `repository` and `commit`;
- later (April 2023 on, served from container images): results at `/api/benchmark-results/` (read page by page:
  `{"data": [...], "metadata": {"next_page_cursor": ...}}`), `github.repository` required and `commit` optional;
  since August 2023 there are no run records (`/api/runs/` is read-only: a run is its results).

The generation is found by asking, never configured: `GET /api/benchmark-results/` is 404 on the older servers.
`GET /api/ping/` cannot tell: the PyPI release answers it with HTTP 500 (it has no build info).
"""

from __future__ import annotations

import json
import os
import re
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass
from http.cookiejar import CookieJar
from typing import Any

from colbench.backoff import Backoff
from colbench.bounded_http import NetError, answer_reason, deadline_from_env, request
from colbench.redact import redact
from colbench.store.base import StoreError


class ConbenchError(StoreError):
    """Publishing cannot go on: an unreachable server, a refused login, a server that is not Conbench."""


@dataclass(frozen=True)
class ApiGeneration:
    """Where a Conbench server takes results, and what its `github` object requires."""

    results_path: str
    description: str
    #: `github` must carry `commit` when sent (so a run without a commit leaves it out)
    commit_required: bool
    #: `github.repository` is required on every result
    repository_required: bool


LEGACY = ApiGeneration("/api/benchmarks/", "Conbench up to 2023.4 (/api/benchmarks/)",
                       commit_required=True, repository_required=False)
CURRENT = ApiGeneration("/api/benchmark-results/", "Conbench after 2023.4 (/api/benchmark-results/)",
                        commit_required=False, repository_required=True)

def _reason(body: bytes) -> str:
    """The server's explanation in an error answer, on one line."""
    return answer_reason(body)


class ConbenchSession:
    """A logged-in conversation with one Conbench server. The login comes from $CONBENCH_EMAIL and
    $CONBENCH_PASSWORD (never from argv or the URL); messages show the URL redacted."""

    def __init__(self, url: str, *, email: str | None = None, password: str | None = None,
                 timeout_s: float | None = None) -> None:
        if not re.match(r"^https?://[^/\s]+", url or ""):
            raise ConbenchError(f"--conbench {redact(url or '')!r}: give the server's http(s):// URL, "
                                "e.g. https://conbench.example.org")
        if "@" in url.split("://", 1)[1].split("/", 1)[0]:
            raise ConbenchError(f"--conbench {redact(url)}: put the login in $CONBENCH_EMAIL and $CONBENCH_PASSWORD, "
                                "not in the URL")
        self.url = url.rstrip("/")
        self.shown_url = redact(self.url)
        self.email = email if email is not None else os.environ.get("CONBENCH_EMAIL", "")
        self.password = password if password is not None else os.environ.get("CONBENCH_PASSWORD", "")
        try:  # one call's total deadline, its retries included (a minute by default: a result's POST makes the
            # server fetch an unknown commit from GitHub, which it gives up on after 20 s)
            self.timeout_s = timeout_s if timeout_s is not None else deadline_from_env()
        except NetError as exc:
            raise ConbenchError(str(exc)) from None
        self._cookies = CookieJar()
        self._generation: ApiGeneration | None = None
        self.logged_in = False

    # -- transport -----------------------------------------------------------------------------------------------

    def _call(self, method: str, path: str, body: Mapping[str, Any] | None = None, *,
              retry: bool = True) -> tuple[int, bytes]:
        """One request, done within the session's deadline (`timeout_s`, its retries included); `retry`: try again
        on a 5xx answer or a dropped connection (only for requests that change nothing twice — a result's POST is
        never repeated blindly: the next publish asks what arrived)."""
        data = json.dumps(body).encode() if body is not None else None
        backoff = Backoff(0.5, within_s=self.timeout_s, retries=2 if retry else 0, margin_s=1.0)
        while True:
            try:
                answer = request(self.url + path, method=method, data=data, cookies=self._cookies,
                                 deadline_s=max(0.001, backoff.left_s), content_types=("json",),
                                 headers={"Content-Type": "application/json", "Accept": "application/json"})
            except NetError as exc:
                again = exc.kind in ("reset", "not-http") or (exc.kind == "unreachable" and "refused" not in
                                                                exc.detail)
                if again and backoff.wait():
                    continue
                raise self._network_error(exc) from None
            if answer.status >= 500 and backoff.wait():
                continue
            return answer.status, answer.body

    def _network_error(self, exc: NetError) -> ConbenchError:
        later = "; publishing again later goes on where this stopped"
        if exc.kind == "unreachable":
            return ConbenchError(f"cannot reach Conbench at {self.shown_url}: {exc.detail}{later}")
        if exc.kind == "bad-url":
            return ConbenchError(f"--conbench {self.shown_url}: {exc.detail}")
        return ConbenchError(f"Conbench at {self.shown_url}: {exc}{later}")

    def _server_error(self, what: str, status: int, body: bytes) -> ConbenchError:
        return ConbenchError(f"Conbench at {self.shown_url} failed with a server error {what} (HTTP {status}"
                             f"{_reason(body)}): the server's own fault; publishing again later goes on where "
                             "this stopped")

    def _json(self, method: str, path: str, body: Mapping[str, Any] | None = None) -> Any:
        status, answer = self._call(method, path, body)
        self._check_login(status)
        if status >= 500:
            raise self._server_error(f"at {method} {path.split('?')[0]}", status, answer)
        if status != 200:
            raise ConbenchError(f"Conbench at {self.shown_url} answered {method} {path.split('?')[0]} with HTTP "
                                f"{status}{_reason(answer)}")
        try:
            return json.loads(answer)
        except ValueError:
            raise ConbenchError(f"{self.shown_url}{path.split('?')[0]} did not answer JSON: is it a Conbench "
                                "server?") from None

    def _check_login(self, status: int) -> None:
        if status in (401, 403):
            raise ConbenchError(f"Conbench at {self.shown_url} refused the request (HTTP {status}): the login of "
                                f"{self.email} was not accepted, or the user may not do this")

    # -- the API -------------------------------------------------------------------------------------------------

    def login(self) -> None:
        if not (self.email and self.password):
            raise ConbenchError("set CONBENCH_EMAIL and CONBENCH_PASSWORD in the environment: the login of a user "
                                f"of the Conbench server at {self.shown_url} (never on the command line)")
        status, body = self._call("POST", "/api/login/", {"email": self.email, "password": self.password})
        if status >= 500:
            raise self._server_error(f"at the login of {self.email}", status, body)
        if status in (400, 401, 403):
            raise ConbenchError(f"Conbench at {self.shown_url} refused the login of {self.email} (HTTP {status}"
                                f"{_reason(body)}): check CONBENCH_EMAIL and CONBENCH_PASSWORD")
        if status not in (200, 204):
            raise ConbenchError(f"Conbench at {self.shown_url} answered the login with HTTP {status}{_reason(body)}: "
                                "give the server's base URL")
        self.logged_in = True

    def generation(self) -> ApiGeneration:
        """Which API the server speaks: asked once, by reading an empty page of results."""
        if self._generation is None:
            found = None
            for candidate in (CURRENT, LEGACY):
                status, _ = self._call("GET", candidate.results_path + "?run_id=colbench-probe&page_size=1")
                self._check_login(status)
                if status == 200:
                    found = candidate
                    break
            if found is None:
                raise ConbenchError(f"no Conbench API at {self.shown_url}: neither /api/benchmark-results/ nor "
                                    "/api/benchmarks/ answers there (give the server's base URL)")
            self._generation = found
        return self._generation

    def batches(self, run_id: str) -> set[str]:
        """The batch ids of the results the server holds for `run_id` (all pages of them)."""
        path = self.generation().results_path
        found: set[str] = set()
        cursor: str | None = None
        while True:
            query = {"run_id": run_id, "page_size": "1000", **({"cursor": cursor} if cursor else {})}
            answer = self._json("GET", f"{path}?{urllib.parse.urlencode(query)}")
            page = answer.get("data", []) if isinstance(answer, dict) else answer
            found.update(str(r.get("batch_id")) for r in page if isinstance(r, dict))
            cursor = (answer.get("metadata") or {}).get("next_page_cursor") if isinstance(answer, dict) else None
            if not cursor or not page:
                return found

    def save_run(self, record: Mapping[str, Any], update: Mapping[str, Any]) -> bool:
        """Create the run record, or bring the one the server holds up to date (`update`: its finish time, info
        and errors). False when the server keeps no run records (Conbench since August 2023)."""
        status, body = self._call("POST", "/api/runs/", record)
        self._check_login(status)
        if status in (404, 405):
            return False
        if status == 409:  # published before: the run may have finished (or been resumed) since
            status, body = self._call("PUT", f"/api/runs/{urllib.parse.quote(str(record['id']), safe='')}/", update)
            self._check_login(status)
        if status not in (200, 201):
            raise ConbenchError(f"Conbench at {self.shown_url} refused run {record['id']} (HTTP {status}"
                                f"{_reason(body)})")
        return True

    def post_result(self, doc: Mapping[str, Any]) -> str | None:
        """Post one BenchmarkResult: None when the server took it, else its reason for refusing it."""
        status, body = self._call("POST", self.generation().results_path, doc, retry=False)
        self._check_login(status)
        if status in (200, 201):
            return None
        return f"HTTP {status}{_reason(body)}"
