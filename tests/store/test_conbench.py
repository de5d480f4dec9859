"""Conbench: the documents (one BenchmarkResult per case), the export as Conbench's own client library takes it,
and publishing to a real Conbench server (tests/store/conbench_server.py): runs, results, idempotency, compare,
and what a user sees when something goes wrong."""

from __future__ import annotations

import copy
import hashlib
import json
import urllib.error
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import Any

import benchadapt
import pytest

from colbench.model.records import Result, Run
from colbench.model.result import case_id, result_id
from colbench.store import open_store
from colbench.store.base import ResultQuery
from colbench.store.conbench import (
    ConbenchError,
    ConbenchSession,
    Project,
    case_documents,
    export_documents,
    group_cases,
    run_record,
)
from tests.conftest import colbench
from tests.store.conbench_schema import refusals
from tests.store.helpers import synthetic_result, synthetic_run
from tests.store.pgserver import free_port

REPO = "https://github.com/example/project"


def process(run_id: str, index: int, wall: list[float] | None, *, params: dict | None = None,
            env: str = "default") -> Result:
    """One worker process of a placebo case: `wall` its timed iterations, None for a failed process."""
    result = synthetic_result(run_id, 0)
    result.params = params or {"duration": 0.01, "threads": 1}
    result.tags = {"name": "placebo", **result.params}
    result.case_id = case_id("placebo", result.params)
    result.env_name, result.process_index = env, index
    result.result_id = result_id(run_id, result.case_id, env, index)
    if wall is None:
        result.status, result.samples = "error", {}
        result.error = {"kind": "crash", "message": "worker died (SIGSEGV)"}
    else:
        result.samples = {"wall_s": wall}
    return result


def test_one_result_per_case_with_each_process_median():
    run = synthetic_run("r1")
    fast = [process("r1", i, [0.010 + i * 1e-3, 0.011, 0.030]) for i in range(3)]
    other = {"duration": 0.02, "threads": 1}
    partial = [process("r1", 0, [0.02, 0.02, 0.021], params=other), process("r1", 1, None, params=other)]
    failed = [process("r1", i, None, params={"duration": 0.03, "threads": 1}) for i in range(2)]
    # the environments of an A/B run are separate cases (colbench compare pairs them, Conbench's context tells them)
    ab = [process("r1", i, [0.01, 0.01], env="new") for i in range(2)]
    docs = case_documents([fast[2], *partial, fast[0], *failed, fast[1], *ab], run, Project(REPO))
    assert len(docs) == 4 and len({d["batch_id"] for d in docs}) == 4
    first = docs[0]
    assert first["stats"] == {"data": [0.011, 0.011, 0.012], "times": [0.011, 0.011, 0.012], "unit": "s",
                              "time_unit": "s", "iterations": 3}  # median of each process, in process order
    assert first["tags"] == {"name": "placebo", "duration": 0.01, "threads": 1} and "error" not in first
    assert first["batch_id"] == f"r1-{fast[0].case_id}-default"
    assert first["optional_benchmark_info"]["colbench_result_ids"] == [r.result_id for r in fast]
    assert docs[1]["stats"]["data"] == [0.02] and docs[1]["error"] == {
        "kind": "crash", "failed_processes": 1, "processes": 2, "message": "worker died (SIGSEGV)"}
    assert "stats" not in docs[2] and docs[2]["error"]["failed_processes"] == 2
    assert docs[3]["context"]["env_name"] == "new" and docs[3]["tags"] == first["tags"]
    assert first["context"] == {"benchmark_language": "Python", "engine": "python", "env_name": "default",
                                "colbench_machine_id": "m1"}
    assert first["info"] == {"benchmark_language_version": "Python 3.11"}
    assert [len(c) for c in group_cases(fast + ab)] == [3, 2]
    record = run_record(replace(run, status="finished", finished_at="2026-01-01T00:05:00+00:00"), docs,
                        Project(REPO))
    assert record["error_type"] == "partial" and record["error_info"] == {"failed_cases": 2, "cases": 4}
    assert record["finished_timestamp"] == "2026-01-01T00:05:00+00:00" and "github" not in record  # no commit


def test_github_says_commit_or_conbench_s_own_no_commit():
    run, results = synthetic_run("r2"), [process("r2", 0, [0.01])]
    sha = "0123456789abcdef0123456789abcdef01234567"
    cases = {
        (Project(REPO, sha), False): {"repository": REPO, "commit": sha},
        (Project(REPO, sha), True): {"repository": REPO, "commit": sha},
        (Project(REPO), False): {"repository": REPO},  # current API: no commit = "not associated with a commit"
        (Project(REPO), True): None,  # up to 2023.4: github needs a commit; without it, the no-context commit
        (Project(), False): None,
    }
    for (project, commit_required), expected in cases.items():
        doc = case_documents(results, run, project, commit_required=commit_required)[0]
        assert doc.get("github") == expected, (project, commit_required)


def test_export_is_what_benchadapt_and_the_current_api_take(tmp_path):
    runs = {"r3": replace(synthetic_run("r3"), name="nightly", commit={"sha": "abc123"}), "r4": synthetic_run("r4")}
    results = [process("r3", i, [0.01, 0.012]) for i in range(3)] + [process("r4", 0, None)]
    for r in results:
        r.commit = runs[r.run_id].commit
    assert export_documents(results, runs, tmp_path / "c.json", repository=REPO) == 2
    docs = json.loads((tmp_path / "c.json").read_text())
    for doc in docs:
        assert refusals(doc) == [], doc
        adapted = benchadapt.BenchmarkResult(**doc)  # Conbench's own client library takes every document
        assert adapted.to_publishable_dict()["tags"] == doc["tags"] and adapted.github == doc["github"]
    assert docs[0]["github"] == {"repository": REPO, "commit": "abc123"} and docs[0]["run_name"] == "nightly"
    assert docs[1]["github"] == {"repository": REPO} and "stats" not in docs[1]
    assert export_documents(results, runs, tmp_path / "c.jsonl", repository=REPO) == 2
    assert [json.loads(line) for line in (tmp_path / "c.jsonl").read_text().splitlines()] == docs


def test_machine_info_in_conbench_s_units():
    doc = case_documents([process("r5", 0, [0.01])], synthetic_run("r5"), Project())[0]
    machine = doc["machine_info"]
    assert (machine["cpu_l1d_cache_bytes"], machine["cpu_l2_cache_bytes"], machine["cpu_l3_cache_bytes"]) == (
        48 * 1024, 2048 * 1024, 0)
    assert machine["cpu_core_count"] == 2 and machine["memory_bytes"] == 8 << 30


def test_the_url_is_checked_before_anything_is_sent():
    with pytest.raises(ConbenchError, match="http"):
        ConbenchSession("conbench.example.org")
    with pytest.raises(ConbenchError, match="CONBENCH_PASSWORD") as caught:
        ConbenchSession("https://me:S3cret@conbench.example.org")
    assert "S3cret" not in str(caught.value)
    with pytest.raises(ConbenchError, match="set CONBENCH_EMAIL and CONBENCH_PASSWORD"):
        ConbenchSession("http://127.0.0.1:9", email="", password="").login()


# -- against a real Conbench ---------------------------------------------------------------------------------------


def runs_in(home: Path) -> dict[str | None, Run]:
    store = open_store(str(home / "results.duckdb"), create=False, read_only=True)
    try:
        return {r.name: r for r in store.list_runs()}
    finally:
        store.close()


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory) -> Path:
    """Two runs of the same two placebo cases (one fails on purpose), the second 2x slower
    (COLBENCH_PLACEBO_FACTOR) and at a commit; 6 processes a side, what a rank test needs to decide."""
    home = tmp_path_factory.mktemp("home")
    args = ("run", "placebo", "--param", "duration=0.01", "--param", "error=none,exception", "--processes", "6",
            "--iterations", "3")
    colbench(*args, "--run-name", "base", home=home, check=True)
    colbench(*args, "--run-name", "slow", "--commit", "0123456789abcdef0123456789abcdef01234567", home=home,
             check=True, env={"COLBENCH_PLACEBO_FACTOR": "2"})
    return home


def login_env(server, **extra: str) -> dict[str, str]:
    return {"CONBENCH_EMAIL": server.email, "CONBENCH_PASSWORD": server.password, **extra}


def server_results(server, run_id: str) -> list[dict[str, Any]]:
    return server.get(f"/api/benchmarks/?run_id={run_id}")  # type: ignore[return-value]


@pytest.mark.slow
def test_publish_two_runs_then_conbench_compares_them_as_colbench_does(conbench_server, two_runs):
    runs = runs_in(two_runs)
    base, slow = runs["base"].run_id, runs["slow"].run_id
    env = login_env(conbench_server, CONBENCH_PROJECT_REPOSITORY=REPO)
    done = colbench("publish", "--conbench", conbench_server.url, "base", "slow", home=two_runs, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"run {base}: 2 cases, 2 posted" in done.stdout and "run record with its finish time" in done.stdout

    for run_id in (base, slow):
        results = server_results(conbench_server, run_id)
        assert len(results) == 2 and len({r["batch_id"] for r in results}) == 2  # one result per case
        ok = next(r for r in results if r["tags"]["error"] == "none")
        failed = next(r for r in results if r["tags"]["error"] == "exception")
        assert ok["stats"]["iterations"] == len(ok["stats"]["data"]) == 6 and ok["stats"]["unit"] == "s"
        assert ok["error"] is None and ok["tags"] == {"name": "placebo", "duration": "0.01", "error": "none",
                                                      "threads": "1", "work": "0", "setup_work": "0",
                                                      "allocator": "default", "cache": "warm"}
        assert "stats" not in failed or not failed["stats"]["data"]
        assert failed["error"]["kind"] == "exception" and failed["error"]["failed_processes"] == 6
        record = conbench_server.get(f"/api/runs/{run_id}/")
        finished = datetime.fromisoformat(runs["base" if run_id == base else "slow"].finished_at)
        assert record["finished_timestamp"] == finished.strftime("%Y-%m-%dT%H:%M:%SZ")
        assert record["error_type"] == "partial" and record["has_errors"] is True
        assert record["info"]["colbench_run_id"] == run_id and record["hardware"]["cpu_core_count"] >= 1
    assert conbench_server.get(f"/api/runs/{slow}/")["commit"]["sha"] == "0123456789abcdef0123456789abcdef01234567"
    assert conbench_server.get(f"/api/runs/{base}/")["commit"]["sha"] == ""  # Conbench's own "no commit"

    again = colbench("publish", "--conbench", conbench_server.url, "base", "slow", home=two_runs, env=env)
    assert again.returncode == 0 and "0 posted, 2 there already" in again.stdout, again.stdout + again.stderr
    assert len(server_results(conbench_server, base)) == len(server_results(conbench_server, slow)) == 2

    rows = conbench_server.get(f"/api/compare/runs/{base}...{slow}/")
    assert len(rows) == 2  # exactly one row per case
    timed = next(r for r in rows if r["baseline_error"] is None)
    ours = json.loads(colbench("compare", "base", "slow", "--metric", "time", "--format", "json",
                               home=two_runs).stdout)
    verdict = next(c for c in ours["comparisons"] if c["key"] == "placebo error=none")
    assert verdict["verdict"] == "regression" and verdict["ratio"] > 1.5
    assert timed["regression"] is True and timed["improvement"] is False  # Conbench agrees: slower
    assert float(timed["change"].rstrip("%")) < -50


@pytest.mark.slow
def test_a_publish_cut_short_goes_on_where_it_stopped(conbench_server, two_runs):
    """The server is asked what it holds: a run of which it has only part gets the rest, nothing twice."""
    base = runs_in(two_runs)["base"].run_id
    env = login_env(conbench_server)
    assert colbench("publish", "--conbench", conbench_server.url, "base", home=two_runs, env=env).returncode == 0
    session = ConbenchSession(conbench_server.url, email=conbench_server.email, password=conbench_server.password)
    session.login()
    gone = server_results(conbench_server, base)[0]
    status, _ = session._call("DELETE", f"/api/benchmarks/{gone['id']}/")
    assert status == 204 and len(server_results(conbench_server, base)) == 1
    done = colbench("publish", "--conbench", conbench_server.url, "base", home=two_runs, env=env)
    assert done.returncode == 0 and "1 posted, 1 there already" in done.stdout, done.stdout + done.stderr
    held = server_results(conbench_server, base)
    assert len(held) == 2 and gone["batch_id"] in {r["batch_id"] for r in held}


def one_line(done) -> str:
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    return lines[0]


def store_fingerprint(home: Path) -> str:
    return hashlib.sha256((home / "results.duckdb").read_bytes()).hexdigest()


@pytest.mark.slow
def test_what_goes_wrong_is_one_line_and_nothing_is_lost(conbench_server, two_runs, tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    source = open_store(str(two_runs / "results.duckdb"), create=False, read_only=True)
    run = source.get_run(runs_in(two_runs)["base"].run_id)
    results = source.results(ResultQuery(run_ids=(run.run_id,)))
    source.close()
    # a run (from a shared store, written by anything) with a case Conbench refuses: a parameter without a name
    run = replace(run, run_id="20260101T000000-odd000", name="odd")
    odd = copy.deepcopy(results[0])
    odd.params = {**odd.params, "": "x"}
    odd.tags = {"name": odd.benchmark, **odd.params}
    odd.case_id = case_id(odd.benchmark, odd.params)
    copied = [replace(copy.deepcopy(r), run_id=run.run_id) for r in results] + [replace(odd, run_id=run.run_id)]
    for r in copied:
        r.result_id = result_id(r.run_id, r.case_id, r.env_name, r.process_index)
    store = open_store(str(home / "results.duckdb"), create=True)
    store.create_run(run)
    store.add_results(copied)
    store.close()
    before = store_fingerprint(home)
    url = conbench_server.url

    done = colbench("publish", "--conbench", url, home=home, env=login_env(conbench_server, CONBENCH_PASSWORD="no"))
    assert done.returncode == 2 and f"refused the login of {conbench_server.email}" in one_line(done)
    assert "Invalid email or password" in done.stderr
    done = colbench("publish", "--conbench", f"http://127.0.0.1:{free_port()}", home=home, env=login_env(
        conbench_server))
    assert done.returncode == 2 and "cannot reach Conbench at http://127.0.0.1:" in one_line(done)
    done = colbench("publish", "--conbench", url, home=home, env={"CONBENCH_EMAIL": "", "CONBENCH_PASSWORD": ""})
    assert done.returncode == 2 and "set CONBENCH_EMAIL and CONBENCH_PASSWORD" in one_line(done)
    with pytest.raises(urllib.error.HTTPError):  # none of that left anything on the server
        conbench_server.get(f"/api/runs/{run.run_id}/")

    done = colbench("publish", "--conbench", url, home=home, env=login_env(conbench_server))
    assert done.returncode == 1, done.stdout + done.stderr
    line = one_line(done)
    assert "refused placebo" in line and "=x" in line and "zero-length string as key is not allowed" in line
    assert "3 cases, 2 posted, 1 refused" in done.stdout
    assert len(server_results(conbench_server, run.run_id)) == 2  # the rest of the run is published
    assert store_fingerprint(home) == before  # and nothing changed locally
    again = colbench("publish", "--conbench", url, home=home, env=login_env(conbench_server))
    assert again.returncode == 1 and "0 posted, 2 there already, 1 refused" in again.stdout


@pytest.mark.slow
def test_a_commit_needs_its_repository(conbench_server, two_runs):
    env = login_env(conbench_server, CONBENCH_PROJECT_REPOSITORY="")
    done = colbench("publish", "--conbench", conbench_server.url, "slow", home=two_runs, env=env)
    assert done.returncode == 2 and "no GitHub repository: run" in one_line(done)
    assert "is at commit 0123456789abcdef0123456789abcdef01234567" in done.stderr



@pytest.mark.slow
def test_a_watch_pass_publishes_its_runs_to_conbench_as_a_watch(conbench_server, tmp_path, monkeypatch):
    """`watch --conbench URL`: the pass's runs go to Conbench through `publish`, their reason "watch"; a server that
    is away is a note and the pass stands."""
    from colbench.app.watch import PackagePass, PackagePlan, WatchOutcome, WatchRequest, _publish
    from colbench.model.watch import WatchedRelease

    home = tmp_path / "home"
    colbench("run", "placebo", "--param", "duration=0.001", "--processes", "1", "--iterations", "2",
             "--run-name", "watch-pkg-1.1.0", home=home, check=True)
    (run,) = runs_in(home).values()
    release = WatchedRelease(watch_id="w1", package="pkg", version="1.1.0", machine_id=run.machine_id or "m",
                             verdict="no change", watched_at=run.started_at, baseline="1.0.0", run_id=run.run_id)
    plan = PackagePlan(package="pkg", watch_id="w1", index="http://127.0.0.1:1/simple", baseline="1.0.0",
                       candidates=("1.1.0",))
    outcome = WatchOutcome(passes=[PackagePass(plan=plan, releases=[release])], measure=("time",))
    for name, value in login_env(conbench_server, CONBENCH_PROJECT_REPOSITORY=REPO).items():
        monkeypatch.setenv(name, value)
    store = open_store(str(home / "results.duckdb"), create=False)
    try:
        request = WatchRequest(targets=("placebo",), packages=("pkg",), conbench=conbench_server.url)
        assert _publish(store, request, outcome) == ["published 1 run to Conbench"]
        (posted,) = server_results(conbench_server, run.run_id)
        assert posted["tags"]["name"] == "placebo"
        assert conbench_server.get(f"/api/runs/{run.run_id}/")["reason"] == "watch"
        away = WatchRequest(targets=("placebo",), packages=("pkg",), conbench=f"http://127.0.0.1:{free_port()}")
        (note,) = _publish(store, away, outcome)
        assert note.startswith("not published to Conbench: ") and conbench_server.password not in note
    finally:
        store.close()
