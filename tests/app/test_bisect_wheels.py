"""`colbench bisect --wheels`, end to end and offline: real wheels of a tiny library built here (one release made
slower on purpose, one that does not install, one that fails the case), real uv environments, real runs in a real
store; then the runs read by `show` and `compare`, a resume that measures nothing, and a resume after kill -9."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import psutil
import pytest
from packaging.version import Version

from tests.app.probe import BENCHMARK, build_wheel, install_benchmark
from tests.conftest import colbench
from tests.runner.helpers import kill_leftovers

#: version → (factor, kind): 1.6.0 is where it got twice as slow; 1.3.0 cannot install, 1.4.0 fails the case
RELEASES = {"1.0.0": (1, "ok"), "1.1.0": (1, "ok"), "1.2.0": (1, "ok"), "1.3.0": (1, "corrupt"),
            "1.4.0": (1, "raises"), "1.5.0": (1, "ok"), "1.6.0": (2, "ok"), "1.7.0": (2, "ok")}
#: wall time (the probe spins for a time): calls of 50 ms, not 20, because a busy machine overshoots a call's end
#: by a time slice (10-20 ms at load 14): ±15-30% a process at 20 ms made nearly every step look twice, ±4-7% at
#: 50 ms decides each at its first look (the bisect 188 → 112 s at load 14)
FAST = ("--processes", "4", "--iterations", "3", "--param", "duration=0.05", "--measure", "wall")


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Wheels, the benchmark on a PYTHONPATH, and one COLBENCH_HOME whose environments the tests share."""
    root = tmp_path_factory.mktemp("bisect")
    for version, (factor, kind) in RELEASES.items():
        build_wheel(root / "wheels", version, factor, kind)
    return {"root": root, "wheels": root / "wheels", "site": install_benchmark(root / "site"), "home": root / "home"}


def run(lab: dict[str, Path], store: str, *args: str, timeout: float = 900) -> subprocess.CompletedProcess[str]:
    return colbench(*args, "--store", str(lab["root"] / store), home=lab["home"], timeout=timeout,
                    env={"PYTHONPATH": str(lab["site"])})


def bisect_args(lab: dict[str, Path], *extra: str) -> list[str]:
    return ["bisect", BENCHMARK, "--wheels", str(lab["wheels"]), "--good", "1.0.0", "--bad", "1.7.0", *FAST,
            "--format", "json", *extra]


@pytest.mark.slow
def test_bisect_finds_the_slow_wheel_skips_the_broken_ones_and_stores_ordinary_runs(lab):
    done = run(lab, "a.duckdb", *bisect_args(lab))
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert (doc["status"], doc["last_good"], doc["first_bad"]) == ("found", "1.5.0", "1.6.0")
    assert doc["skipped_between"] == []
    assert doc["ratio"]["verdict"] == "regression" and doc["ratio"]["ci_low"] > 1.3
    assert doc["skipped"]["1.3.0"].startswith("does not install: resolving failed")
    assert "\n" not in doc["skipped"]["1.3.0"]
    assert doc["skipped"]["1.4.0"] == ("the case fails: exception: RuntimeError: bisectprobe 1.4.0 is broken on "
                                       "purpose")
    steps = {s["point"]: s for s in doc["steps"] if s["step"] > 0}
    assert steps["1.3.0"]["run_id"] is None and steps["1.3.0"]["processes"] == 0  # nothing built, nothing run
    assert steps["1.6.0"]["verdict"] == "bad" and steps["1.5.0"]["verdict"] == "good"
    # the point that fails failed at its first process: no more processes were spent on it
    from colbench.store import open_store
    from colbench.store.base import ResultQuery

    stored = open_store(str(lab["root"] / "a.duckdb"), create=False, read_only=True)
    broken = stored.results(ResultQuery(run_ids=(steps["1.4.0"]["run_id"],)))
    assert [r.ok for r in broken if r.env_name == "1.4.0"] == [False]
    assert sum(r.ok for r in broken if r.env_name != "1.4.0") == 4 * 2  # the step's other points, all 4 processes
    # one stored case is named by its id, not by a --param for each of its params
    named = run(lab, "a.duckdb", "bisect", "--case", broken[0].case_id[:8], "--wheels", str(lab["wheels"]),
                "--good", "1.0.0", "--bad", "1.7.0", "--measure", "wall", "--dry-run")
    assert named.returncode == 0 and "bisect over 8 points" in named.stdout, named.stdout + named.stderr
    assert 2 <= len(steps) <= len(RELEASES) - 2

    # each step is an ordinary run: show reads it, compare gives the same kind of verdict
    last = steps["1.6.0"]["run_id"]
    shown = run(lab, "a.duckdb", "show", last, "--format", "json")
    assert shown.returncode == 0, shown.stderr
    assert {row["env"] for row in json.loads(shown.stdout)} == {"1.5.0", "1.6.0", "1.7.0"}
    compared = run(lab, "a.duckdb", "compare", f"{last}:1.5.0", f"{last}:1.6.0", "--metric", "time")
    assert compared.returncode == 1, compared.stdout + compared.stderr  # 1: a regression
    assert "regression" in compared.stdout

    # a resumed search reads every step from the store: nothing is measured or built again
    again = run(lab, "a.duckdb", *bisect_args(lab, "--resume"))
    assert again.returncode == 0, again.stderr
    redo = json.loads(again.stdout)
    assert redo["bisect_id"] == doc["bisect_id"] and redo["resumed"] is True
    assert (redo["last_good"], redo["first_bad"]) == ("1.5.0", "1.6.0")
    measured = [s for s in redo["steps"] if s["run_id"]]
    assert measured and all(s["measure_s"] == 0 and s["reused"] for s in measured)
    assert [s["run_id"] for s in redo["steps"]] == [s["run_id"] for s in doc["steps"]]

    # the steps feed a history over the library's versions, in version order, failed releases left out
    history = run(lab, "a.duckdb", "history", BENCHMARK, "--by", "version", "--package", "bisectprobe",
                  "--format", "json")
    assert history.returncode == 0, history.stderr
    (series,) = json.loads(history.stdout)
    labels = [p["label"] for p in series["points"]]
    assert labels == sorted(labels, key=Version) and {"1.0.0", "1.5.0", "1.6.0", "1.7.0"} <= set(labels)
    assert "1.3.0" not in labels and "1.4.0" not in labels
    medians = {p["label"]: p["median"] for p in series["points"]}
    assert medians["1.6.0"] > 1.5 * medians["1.5.0"]

    # the report of a step's run draws the case over the versions
    report = run(lab, "a.duckdb", "report", last, "--output", str(lab["root"] / "report"))
    assert report.returncode == 0, report.stderr
    page = (lab["root"] / "report" / "index.html").read_text()
    assert f"{len(labels)} versions of bisectprobe" in page and 'data-plot="history-' in page


def _reader(stream, lines: list[str]) -> threading.Thread:
    def read() -> None:
        for line in stream:
            lines.append(line)
    thread = threading.Thread(target=read, daemon=True)
    thread.start()
    return thread


@pytest.mark.slow
def test_resume_after_kill_9_continues_the_step_it_was_in(lab):
    env = {**os.environ, "COLBENCH_HOME": str(lab["home"]), "PYTHONPATH": str(lab["site"])}
    env.pop("COLBENCH_STORE", None)
    store = str(lab["root"] / "k.duckdb")
    proc = subprocess.Popen([sys.executable, "-m", "colbench", *bisect_args(lab), "--store", store], env=env,
                            text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    lines: list[str] = []
    reader = _reader(proc.stderr, lines)
    worker = None
    try:
        deadline = time.monotonic() + 600
        # kill it once the ends are decided and the next measured step's run has started (its first worker runs)
        while time.monotonic() < deadline and proc.poll() is None:
            text = "".join(lines)
            if "step 0" in text and text.count("run ") >= 2:
                children = psutil.Process(proc.pid).children()
                if children:
                    worker = children[0]
                    break
            time.sleep(0.05)
        assert proc.poll() is None, "".join(lines)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        reader.join(timeout=10)
    finally:
        kill_leftovers(proc, worker)
    killed_runs = [line.split()[1].rstrip(":") for line in lines if line.startswith("run ")]
    resumed = run(lab, "k.duckdb", *bisect_args(lab, "--resume"))
    assert resumed.returncode == 0, resumed.stderr
    doc = json.loads(resumed.stdout)
    assert (doc["last_good"], doc["first_bad"]) == ("1.5.0", "1.6.0")
    by_run = {s["run_id"]: s for s in doc["steps"] if s["run_id"]}
    assert by_run[killed_runs[0]]["reused"] and by_run[killed_runs[0]]["measure_s"] == 0  # the ends: stored whole
    assert killed_runs[1] in by_run  # the step that was killed went on in its own run, not a new one
    status = run(lab, "k.duckdb", "show", "--runs", "--format", "json")
    assert status.returncode == 0, status.stderr


@pytest.mark.slow
def test_a_case_that_fails_on_both_sides_is_bad_input(lab, tmp_path):
    wheels = tmp_path / "broken"
    for version in ("2.0.0", "2.1.0"):
        build_wheel(wheels, version, kind="raises")
    done = run(lab, "b.duckdb", "bisect", BENCHMARK, "--wheels", str(wheels), "--good", "2.0.0", "--bad", "2.1.0",
               *FAST)
    assert done.returncode == 2
    error = done.stderr.strip().splitlines()[-1]
    assert error.startswith("colbench: error: good 2.0.0 cannot be measured: the case fails") and "bad 2.1.0" in error


@pytest.mark.slow
def test_the_dry_run_lists_the_points_and_the_expected_time_and_builds_nothing(lab, tmp_path):
    home = tmp_path / "home"
    done = colbench(*bisect_args(lab)[:-2], "--dry-run", "--store", str(tmp_path / "dry.duckdb"), home=home,
                    env={"PYTHONPATH": str(lab["site"])})
    assert done.returncode == 0, done.stdout + done.stderr
    assert "bisect over 8 points" in done.stdout and re.search(r"expected: (about|at least) ", done.stdout)
    assert "dry run: nothing built or measured" in done.stdout
    assert not (home / "envs").exists() and not (tmp_path / "dry.duckdb").exists()
