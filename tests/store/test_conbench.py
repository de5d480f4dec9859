"""Conbench: the BenchmarkResult mapping checked against Conbench's schema, and the publisher against a local HTTP
server that behaves like Conbench's API (login, session cookie, validation, 201/400/401)."""

from __future__ import annotations

import json
import secrets
import threading
from datetime import datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import jsonschema
import pytest

from colbench.cli.store_cmd import export_conbench
from colbench.store import open_store
from colbench.store.base import ResultQuery
from colbench.store.conbench import (
    BENCHMARK_RESULT_SCHEMA,
    ConbenchError,
    ConbenchSession,
    PublishLedger,
    problems,
    publish,
    to_conbench,
)
from tests.conftest import colbench
from tests.store.helpers import publish_cli, synthetic_result

REPO = "https://github.com/example/project"
VALIDATOR = jsonschema.Draft202012Validator(BENCHMARK_RESULT_SCHEMA)


def conbench_refusals(doc: Any) -> list[str]:
    """What Conbench's API would answer 400 for: its marshmallow schema (transcribed) plus the checks in
    BenchmarkResult.create (tags, units, iterations vs samples) and the timestamp parse."""
    found = [f"{'/'.join(map(str, e.path))}: {e.message}" for e in VALIDATOR.iter_errors(doc)]
    if found:
        return found
    for key, value in doc["tags"].items():
        if isinstance(value, list | dict):
            found.append(f"tags: bad value type for key `{key}`")
    data = (doc.get("stats") or {}).get("data") or []
    if len(data) >= 2 and doc["stats"].get("iterations") != len(data):
        found.append("iterations count does not match sample count")
    try:
        datetime.fromisoformat(doc["timestamp"])
    except ValueError:
        found.append("timestamp: Not a valid datetime.")
    return found


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    home = tmp_path_factory.mktemp("home")
    colbench("run", "placebo", "--param", "duration=0.001", "--param", "error=none,exception", "--processes", "2",
             "--iterations", "3", "--commit", "0123abcd", "--run-name", "to-publish", home=home, check=True)
    store = open_store(str(home / "results.duckdb"), create=False)
    runs = {r["run_id"]: r for r in store.list_runs()}
    return home, store.results(ResultQuery(run_ids=tuple(runs))), runs


@pytest.mark.slow
def test_export_validates_against_conbench_schema(finished, tmp_path):
    _, results, runs = finished
    assert export_conbench(results, list(runs.values()), tmp_path / "c.json", repository=REPO) == 4
    docs = json.loads((tmp_path / "c.json").read_text())
    for doc in docs:
        assert conbench_refusals(doc) == [], doc
        assert doc["tags"] == {"name": "placebo", "duration": 0.001, "error": doc["tags"]["error"], "threads": 1,
                               "work": 0, "setup_work": 0, "allocator": "default", "cache": "warm"}
        assert doc["github"] == {"repository": REPO, "commit": "0123abcd"} and doc["run_name"] == "to-publish"
        assert doc["machine_info"]["cpu_core_count"] >= 1 and doc["machine_info"]["memory_bytes"] > 0
        assert doc["context"]["colbench_machine_id"] == results[0]["machine_id"]
        assert doc["info"]["benchmark_language_version"].startswith("Python 3")
    ok = [d for d in docs if d["tags"]["error"] == "none"]
    failed = [d for d in docs if d["tags"]["error"] == "exception"]
    assert len(ok) == len(failed) == 2
    assert all(d["stats"]["unit"] == "s" and d["stats"]["iterations"] == len(d["stats"]["data"]) == 3 for d in ok)
    assert all("stats" not in d and d["error"]["kind"] == "exception" for d in failed)
    assert ok[0]["batch_id"] == ok[1]["batch_id"] != failed[0]["batch_id"]  # a batch: the processes of a case
    assert export_conbench(results, runs, tmp_path / "c.jsonl", repository=REPO) == 4
    assert [json.loads(line) for line in (tmp_path / "c.jsonl").read_text().splitlines()] == docs


def test_the_schema_refuses_what_conbench_refuses(finished):
    _, results, runs = finished
    good = to_conbench(results[0], runs[results[0]["run_id"]], repository=REPO)
    assert conbench_refusals(good) == []
    bad = [
        {k: v for k, v in good.items() if k != "github"},
        {**good, "cluster_info": {"name": "c", "info": {}, "optional_info": {}}},
        {**good, "unknown_field": 1},
        {**good, "stats": {**good["stats"], "unit": "ms"}},
        {**good, "stats": {**good["stats"], "iterations": 5}},
        {**good, "tags": {"duration": "1"}},
        {**good, "github": {"repository": "/home/me/project"}},
        {**good, "machine_info": {**good["machine_info"], "cpu_frequency_max_Hz": 1}},
        {k: v for k, v in good.items() if k != "stats"},
    ]
    for doc in bad:
        assert conbench_refusals(doc), doc
    nameless = to_conbench(results[0], None, repository=None)
    assert "github" not in nameless and "GitHub repository" in problems(nameless)[0]
    assert to_conbench(synthetic_result("r", 0), None, repository="git@github.com:org/repo.git")["github"] == {
        "repository": "https://github.com/org/repo", "commit": synthetic_result("r", 0)["commit"]["sha"]}
    caches = to_conbench(synthetic_result("r", 0), None)["machine_info"]
    assert (caches["cpu_l1d_cache_bytes"], caches["cpu_l2_cache_bytes"], caches["cpu_l3_cache_bytes"]) == (
        48 * 1024, 2048 * 1024, 0)


class FakeConbench:
    """Conbench's login and benchmark-results endpoints, with its validation, on 127.0.0.1."""

    def __init__(self, email: str = "bench@example.org", password: str = "s3cret") -> None:
        self.email, self.password = email, password
        self.sessions: set[str] = set()
        self.accepted: list[dict[str, Any]] = []
        self.refused: list[list[str]] = []
        self.logins = 0
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _answer(self, status: int, body: dict | None = None, headers: dict | None = None) -> None:
                payload = json.dumps(body).encode() if body is not None else b""
                self.send_response(status)
                for key, value in (headers or {}).items():
                    self.send_header(key, value)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def do_POST(self) -> None:  # noqa: N802
                try:
                    body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"null")
                except ValueError:
                    return self._answer(400, {"code": 400, "name": "Bad Request"})
                if self.path == "/api/login/":
                    fake.logins += 1
                    if not isinstance(body, dict) or (body.get("email"), body.get("password")) != (
                            fake.email, fake.password):
                        return self._answer(400, {"code": 400, "name": "Bad Request",
                                                  "description": "Invalid email or password."})
                    token = secrets.token_hex(8)
                    fake.sessions.add(token)
                    return self._answer(204, None, {"Set-Cookie": f"session={token}; Path=/; HttpOnly"})
                if self.path == "/api/benchmark-results/":
                    cookie = dict(c.strip().split("=", 1) for c in (self.headers.get("Cookie") or "").split(";")
                                  if "=" in c)
                    if cookie.get("session") not in fake.sessions:
                        return self._answer(401, {"code": 401, "name": "Unauthorized"})
                    found = conbench_refusals(body)
                    if found:
                        fake.refused.append(found)
                        return self._answer(400, {"code": 400, "name": "Bad Request", "description": found})
                    fake.accepted.append(body)
                    return self._answer(201, {"id": secrets.token_hex(16), "run_id": body["run_id"]})
                return self._answer(404, {"code": 404, "name": "Not Found"})

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def conbench_server():
    server = FakeConbench()
    yield server
    server.close()


def test_publish_posts_every_result_once(finished, conbench_server, tmp_path):
    _, results, runs = finished
    session = ConbenchSession(conbench_server.url, email="bench@example.org", password="s3cret")
    ledger = PublishLedger(conbench_server.url, root=tmp_path)
    report = publish(results, runs, conbench_server.url, session, repository=REPO, ledger=ledger)
    assert (report.posted, report.skipped, len(report.ids)) == (4, 0, 4)
    assert conbench_server.refused == [] and len(conbench_server.accepted) == 4
    assert {d["info"]["colbench_result_id"] for d in conbench_server.accepted} == {r["result_id"] for r in results}
    again = publish(results, runs, conbench_server.url, session, repository=REPO,
                    ledger=PublishLedger(conbench_server.url, root=tmp_path))
    assert (again.posted, again.skipped) == (0, 4) and len(conbench_server.accepted) == 4
    forced = publish(results, runs, conbench_server.url, session, repository=REPO, ledger=ledger, force=True)
    assert forced.posted == 4 and len(conbench_server.accepted) == 8


def test_publish_explains_what_went_wrong(finished, conbench_server, tmp_path):
    _, results, runs = finished

    def attempt(session: ConbenchSession, repository: str | None = REPO) -> str:
        with pytest.raises(ConbenchError) as caught:
            publish(results, runs, session.url, session, repository=repository,
                    ledger=PublishLedger(session.url, root=tmp_path))
        return str(caught.value)

    url = conbench_server.url
    assert "refused the login of bench@example.org" in attempt(ConbenchSession(url, email="bench@example.org",
                                                                               password="wrong"))
    assert "needs a login" in attempt(ConbenchSession(url, email="", password=""))
    assert "cannot reach Conbench at http://127.0.0.1:1" in attempt(ConbenchSession("http://127.0.0.1:1",
                                                                                   email="a@b.c", password="x"))
    assert "no GitHub repository" in attempt(ConbenchSession(url), repository=None)
    with pytest.raises(ConbenchError, match="http"):
        ConbenchSession("conbench.example.org")
    assert conbench_server.accepted == [] and conbench_server.logins == 1  # nothing half-published


@pytest.mark.slow
def test_publish_command(finished, conbench_server):
    home, results, _ = finished
    env = {"CONBENCH_EMAIL": "bench@example.org", "CONBENCH_PASSWORD": "s3cret", "CONBENCH_PROJECT_REPOSITORY": REPO}
    proc = publish_cli("--conbench", conbench_server.url, "to-publish", home=home, env=env)
    assert proc.returncode == 0 and "published 4 result(s) of 1 run(s)" in proc.stdout, proc.stderr
    assert len(conbench_server.accepted) == 4
    proc = publish_cli("--conbench", conbench_server.url, home=home, env=env)
    assert proc.returncode == 0 and "published 0 result(s)" in proc.stdout and "4 posted before" in proc.stdout
    proc = publish_cli("--conbench", conbench_server.url, "--force", home=home,
                       env={**env, "CONBENCH_PASSWORD": "nope"})
    assert proc.returncode == 2 and "refused the login" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and "Traceback" not in proc.stderr
    proc = publish_cli(home=home, env=env)
    assert proc.returncode == 2 and "--conbench URL is required" in proc.stderr
    assert len(results) == 4
