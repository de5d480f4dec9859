"""`colbench watch`, end to end and offline: a real package index (pypiserver on 127.0.0.1) serving wheels of a tiny
library built here, a user-written benchmark that imports it, environments built by uv from that index, real
runs counted under Valgrind, explain's profiles, a real webhook receiver, and the tests' PostgreSQL as the shared
store. The first test is the issue's "done when"; the second a pass killed with -9 while a second pass tries to
start, with releases that do not install or crash the case."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from colbench.store import open_store
from colbench.store.base import ResultQuery, WatchQuery
from tests.app.watch_probe import BENCHMARK, NAME, build_wheel, install_benchmark
from tests.conftest import colbench, require_tools
from tests.index_server import IndexServer, Receiver
from tests.runner.helpers import kill_leftovers

pytestmark = pytest.mark.slow  # real index, uv environments and Valgrind runs: minutes

#: six processes a release at the first look decide "no change" at a 2% threshold in one look; 3 timed calls each
CHEAP = ("--param", "rounds=8", "--iterations", "3", "--warmup", "1", "--processes", "6", "--threshold", "2%",
         "--measure", "instructions")
#: 24 KiB of Adler-32 a call: about 4% more instructions than 8 rounds of CRC-32 over 64 KiB
SLOWER = 24576


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, object]]:
    """The index of releases 1.0.0-1.5.0, the benchmark on a PYTHONPATH, one COLBENCH_HOME (shared environments)."""
    require_tools("valgrind")
    root = tmp_path_factory.mktemp("watch")
    for minor in range(6):
        build_wheel(root / "wheels", f"1.{minor}.0")
    index = IndexServer(root / "wheels").start()
    receiver = Receiver()
    try:
        yield {"root": root, "index": index, "site": install_benchmark(root / "site"), "home": root / "home",
               "receiver": receiver}
    finally:
        receiver.close()
        index.stop()


def watch(lab: dict[str, object], store: str, *extra: str, index: IndexServer | None = None,
          timeout: float = 900) -> subprocess.CompletedProcess[str]:
    server = index or lab["index"]
    assert isinstance(server, IndexServer)
    return colbench("watch", BENCHMARK, "--package", NAME, "--index", server.url, *CHEAP, "--store", store, *extra,
                    home=Path(str(lab["home"])), timeout=timeout, env={"PYTHONPATH": str(lab["site"])})


def releases_of(doc: dict) -> dict[str, dict]:
    (package,) = doc["packages"]
    return {r["version"]: r for r in package["releases"]}


def test_each_new_release_is_decided_a_regression_is_explained_and_told_once(lab):
    store = str(Path(str(lab["root"])) / "a.duckdb")
    receiver = lab["receiver"]
    assert isinstance(receiver, Receiver)
    notify = ("--notify", receiver.url, "--format", "json")

    first = watch(lab, store, *notify)
    assert first.returncode == 0, first.stderr
    found = releases_of(json.loads(first.stdout))
    assert {v: r["verdict"] for v, r in found.items()} == {"1.4.0": "baseline", "1.5.0": "no change"}
    assert receiver.posts == []  # nothing worth telling

    build_wheel(Path(str(lab["root"])) / "wheels", "1.6.0")
    build_wheel(Path(str(lab["root"])) / "wheels", "1.7.0", extra=SLOWER)
    second = watch(lab, store, *notify, "--summary", str(Path(str(lab["root"])) / "summary.md"))
    assert second.returncode == 1, second.stderr  # 1: a regression
    found = releases_of(json.loads(second.stdout))
    assert (found["1.6.0"]["baseline"], found["1.6.0"]["verdict"]) == ("1.5.0", "no change")
    regressed = found["1.7.0"]
    assert (regressed["baseline"], regressed["verdict"], regressed["first_bad"]) == ("1.6.0", "regression", "1.7.0")
    (case,) = regressed["cases"]
    assert case["metric"] == "instructions" and 1.02 < case["ci_low"] <= case["ratio"] <= case["ci_high"] < 1.08
    grown = case["explained"]["functions"][0]
    assert grown["function"] == "adler32_z" and grown["library"].startswith("libz") and grown["share"] > 0.8
    assert Path(case["explained"]["flamegraph"]).is_file()
    (post,) = receiver.posts  # one webhook
    assert "1.7.0" in post["text"] and "adler32_z" in post["text"] and "regression" in post["text"]
    assert [r["version"] for r in post["colbench"]["releases"]] == ["1.6.0", "1.7.0"]
    summary = (Path(str(lab["root"])) / "summary.md").read_text()
    assert "| **regression** |" in summary and "`adler32_z`" in summary and "flamegraph.svg" in summary

    runs_before = len(open_store(store, create=False, read_only=True).list_runs())
    third = watch(lab, store, *notify)
    assert third.returncode == 0, third.stderr
    doc = json.loads(third.stdout)
    assert releases_of(doc) == {} and doc["packages"][0]["candidates"] == []
    assert len(receiver.posts) == 1  # nothing new: nothing posted
    assert len(open_store(store, create=False, read_only=True).list_runs()) == runs_before  # nothing measured

    # seen where people look: history over the versions with the verdicts, and the report's watch section
    history = colbench("history", BENCHMARK, "--by", "version", "--package", NAME, "--metric", "instructions",
                       "--store", store, "--format", "json", home=Path(str(lab["home"])),
                       env={"PYTHONPATH": str(lab["site"])})
    assert history.returncode == 0, history.stderr
    (series,) = json.loads(history.stdout)
    assert [p["label"] for p in series["points"]] == ["1.4.0", "1.5.0", "1.6.0", "1.7.0"]
    assert [(w["version"], w["verdict"]) for w in series["watched"]] == [
        ("1.4.0", "baseline"), ("1.5.0", "no change"), ("1.6.0", "no change"), ("1.7.0", "regression")]
    report = colbench("report", regressed["run_id"], "--store", store, "--output",
                      str(Path(str(lab["root"])) / "report"), home=Path(str(lab["home"])),
                      env={"PYTHONPATH": str(lab["site"])})
    assert report.returncode == 0, report.stderr
    page = (Path(str(lab["root"])) / "report" / "index.html").read_text()
    assert 'id="watch"' in page and "1.7.0" in page and "flamegraph.svg" in page


def _results(url: str, run_id: str) -> int:
    return len(open_store(url, create=False, read_only=True).results(ResultQuery(run_ids=(run_id,))))


def _watch_run(url: str) -> str | None:
    runs = [r for r in open_store(url, create=False, read_only=True).list_runs() if r.watch]
    return runs[0].run_id if runs else None


def test_a_pass_killed_with_9_goes_on_where_it_stopped_and_broken_releases_are_error_rows(lab, pg_url, tmp_path):
    """2.1.0 does not install, 2.2.0 fails the case, 2.3.0 is slower: compared with 2.0.0, the last that worked,
    and bisected over the two between. The pass is killed in 2.2.0's run; a second pass meanwhile leaves the watch
    alone; the rerun finishes that run without measuring again what it had."""
    wheels = tmp_path / "wheels"
    build_wheel(wheels, "2.0.0")
    build_wheel(wheels, "2.1.0", kind="corrupt")
    build_wheel(wheels, "2.2.0", kind="raises")
    build_wheel(wheels, "2.3.0", extra=SLOWER)
    index = IndexServer(wheels).start()
    open_store(pg_url).close()  # the test reads it while the pass goes
    env = {**os.environ, "COLBENCH_HOME": str(lab["home"]), "PYTHONPATH": str(lab["site"])}
    env.pop("COLBENCH_STORE", None)
    args = [sys.executable, "-m", "colbench", "watch", BENCHMARK, "--package", NAME, "--index", index.url, *CHEAP,
            "--since", "2.0.0", "--no-explain", "--format", "json", "--store", pg_url]
    proc = subprocess.Popen(args, env=env, text=True, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        deadline, run_id = time.monotonic() + 600, None
        while time.monotonic() < deadline and proc.poll() is None:  # until 2.2.0's run has stored some results
            run_id = _watch_run(pg_url)
            if run_id and _results(pg_url, run_id) >= 2:
                break
            time.sleep(0.5)
        assert proc.poll() is None and run_id is not None
        busy = watch(lab, pg_url, "--since", "2.0.0", index=index)
        assert busy.returncode == 0, busy.stderr
        assert "another pass of this watch is going on" in busy.stdout and str(proc.pid) in busy.stdout
        workers = psutil.Process(proc.pid).children(recursive=True)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        for worker in workers:  # the killed pass's worker, if one was running, ends on its own
            with __import__("contextlib").suppress(psutil.NoSuchProcess):
                worker.wait(timeout=120)
        stored = _results(pg_url, run_id)
        rerun = watch(lab, pg_url, "--since", "2.0.0", "--no-explain", "--format", "json", index=index)
    finally:
        kill_leftovers(proc)
        index.stop()
    assert rerun.returncode == 1, rerun.stderr
    found = releases_of(json.loads(rerun.stdout))
    state = {r.version: r for r in open_store(pg_url, create=False).watched(WatchQuery(package=NAME))}
    assert sorted(state) == ["2.0.0", "2.1.0", "2.2.0", "2.3.0"] and state["2.0.0"].verdict == "baseline"
    assert "2.1.0" not in found  # recorded by the pass that was killed: not again
    assert state["2.1.0"].verdict == "error" and state["2.1.0"].cause.startswith("does not install")
    crashed = found["2.2.0"]
    assert crashed["verdict"] == "error" and "watchprobe 2.2.0 is broken on purpose" in crashed["cause"]
    assert crashed["run_id"] == run_id  # the killed run went on, not a new one
    assert crashed["reused"] == stored and crashed["measured"] == _results(pg_url, run_id) - stored
    slower = found["2.3.0"]
    assert (slower["baseline"], slower["verdict"], slower["between"]) == ("2.0.0", "regression", ["2.1.0", "2.2.0"])
    assert slower["bisect_id"] and slower["first_bad"] == "2.3.0" and slower["last_good"] == "2.0.0"
    assert any("first bad: 2.3.0, or 2.1.0 or 2.2.0 before it" in note for note in slower["notes"])
