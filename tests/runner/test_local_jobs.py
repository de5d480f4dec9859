"""Counting processes side by side on this machine (runner/local_jobs.py): `run --jobs N` runs up to N counting
processes at once, counting what one at a time counts for code that does not depend on time (the placebo; a
multi-threaded pyarrow read shifts by up to 0.3%, docs/metrics.md, which is why it is not the default); wall time is
never measured side by side; a stop signal kills every running worker; a run resumes with the jobs it was counted
with."""

from __future__ import annotations

import shutil
import signal
import statistics
import time
from pathlib import Path

import psutil
import pytest

from colbench.model.run_config import RunConfig
from colbench.runner.local_jobs import local_jobs
from colbench.runner.plan import PlanError
from colbench.store import open_store
from colbench.store.base import ResultQuery
from tests.conftest import colbench
from tests.runner.helpers import gone, kill_leftovers, start_run
from tests.runner.test_instructions import results_of

needs_valgrind = pytest.mark.skipif(shutil.which("valgrind") is None or shutil.which("cc") is None,
                                    reason="Valgrind and a C compiler are needed to count instructions")


def test_only_a_run_that_counts_instructions_alone_runs_processes_side_by_side_and_only_when_asked():
    assert local_jobs(RunConfig(targets=["placebo"])) == 1
    assert local_jobs(RunConfig(targets=["placebo"], measure=("instructions",))) == 1  # the default: one at a time
    assert local_jobs(RunConfig(targets=["placebo"], jobs=1)) == 1
    cpus = len(psutil.Process().cpu_affinity())
    assert local_jobs(RunConfig(targets=["placebo"], measure=("instructions",), jobs=cpus)) == cpus
    too_many = RunConfig(targets=["placebo"], measure=("instructions",), jobs=cpus + 1)
    with pytest.raises(PlanError, match=f"at most {cpus} counting process(es)? at once .*give --jobs {cpus} or "
                       "leave it out"):
        local_jobs(too_many, check=True)
    assert local_jobs(too_many) == cpus  # a later look of a run: fewer at once, never an error
    for refused in (RunConfig(targets=["placebo"], jobs=2),
                    RunConfig(targets=["placebo"], measure=("wall", "instructions"), jobs=2),
                    RunConfig(targets=["placebo"], measure=("instructions",), profile=True, jobs=2)):
        with pytest.raises(PlanError, match="--measure instructions"):
            local_jobs(refused, check=True)
        assert local_jobs(refused) == 1


def test_the_jobs_a_run_was_counted_with_are_kept_with_it():
    config = RunConfig(targets=["placebo"], measure=("instructions",), jobs=2)
    assert config.to_json()["jobs"] == 2
    assert RunConfig.from_json(config.to_json()).jobs == 2
    assert "jobs" not in RunConfig(targets=["placebo"], jobs=1).to_json()


def test_jobs_with_wall_time_is_refused_in_one_line_before_a_run_exists(home: Path):
    done = colbench("run", "placebo", "--param", "duration=0", "--jobs", "2", home=home)
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert done.returncode == 2 and len(lines) == 1, done.stderr
    assert "--jobs 2" in lines[0] and "--measure instructions" in lines[0]
    assert not (home / "results.duckdb").exists() or not open_store(str(home / "results.duckdb")).list_runs()


def test_jobs_with_a_cluster_is_refused_in_one_line(home: Path):
    done = colbench("run", "placebo", "--measure", "instructions", "--jobs", "2", "--cluster", "local:1", home=home)
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert done.returncode == 2 and len(lines) == 1, done.stderr
    assert "--jobs 2" in lines[0] and "--cluster" in lines[0]


@pytest.mark.slow
@needs_valgrind
def test_processes_counted_side_by_side_count_what_one_at_a_time_counts(home: Path):
    counted = ("run", "placebo", "--param", "duration=0", "--param", "work=200000", "--measure", "instructions",
               "--processes", "2", "--iterations", "2", "--warmup", "1", "--fresh-counts")
    colbench(*counted, "--jobs", "1", "--run-name", "one", home=home, check=True, timeout=600)
    colbench(*counted, "--jobs", "2", "--run-name", "two", home=home, check=True, timeout=600)
    one, two = results_of(home, "one"), results_of(home, "two")
    assert all(r["status"] == "ok" for r in one + two) and len(one) == len(two) == 2

    def spans(results: list[dict]) -> list[tuple[float, float]]:
        processes = [r["measure"]["instructions"]["process"] for r in results]  # the counting process's own
        return [(p["started_at"], p["started_at"] + p["spawn_to_result_s"]) for p in processes]

    # side by side: the second process started before the first ended; one at a time: never
    (a, b), (c, d) = sorted(spans(two)), sorted(spans(one))
    assert b[0] < a[1]
    assert d[0] >= c[1]
    reference = statistics.median(v for r in one for v in r["samples"]["instructions"])
    for r in two:  # each process within the metric's noise (0.2%) of the processes counted one at a time
        assert statistics.median(r["samples"]["instructions"]) == pytest.approx(reference, rel=0.002)


@pytest.mark.slow
@needs_valgrind
def test_suite_servers_serve_processes_side_by_side(home: Path):
    """Five cases on one side are counted by suite servers (two slots): with two jobs, a case's processes 0 and 1
    are forked at once from the two servers, which started at once (the suite's compile pass made once, before
    both), and count what the same run counts one process at a time."""
    counted = ("run", "placebo", "--param", "duration=0", "--param", "work=1000,2000,3000,4000,5000",
               "--param", "setup_work=20000", "--measure", "instructions", "--processes", "2", "--iterations", "2",
               "--warmup", "1", "--counting-server")
    colbench(*counted, "--jobs", "1", "--run-name", "one", home=home, check=True, timeout=600)
    colbench(*counted, "--jobs", "2", "--run-name", "two", home=home, check=True, timeout=600)
    one, two = results_of(home, "one"), results_of(home, "two")
    assert all(r["status"] == "ok" for r in one + two) and len(one) == len(two) == 10
    servers = [r["measure"]["instructions"]["server"] for r in two]
    assert {s["scope"] for s in servers} == {"suite"}
    assert len({s["pid"] for s in servers}) == 2
    assert sorted(s["child"] for s in servers) == sorted(list(range(5)) * 2)  # each server forked 5, one at a time
    for work in (1000, 2000, 3000, 4000, 5000):
        reference = statistics.median(v for r in one if r["params"]["work"] == work
                                      for v in r["samples"]["instructions"])
        for r in (r for r in two if r["params"]["work"] == work):
            assert statistics.median(r["samples"]["instructions"]) == pytest.approx(reference, rel=0.002)


@pytest.mark.slow
@needs_valgrind
def test_a_stop_signal_kills_every_process_counted_side_by_side(home: Path, tmp_path: Path):
    # natively quick (the compile pass before the first count), minutes under Valgrind
    runner = start_run(home, tmp_path / "tmp", "placebo", "--param", "duration=0", "--param", "work=30000000",
                       "--measure", "instructions", "--processes", "2", "--iterations", "1", "--warmup", "0",
                       "--fresh-counts", "--jobs", "2", "--run-name", "stopped")
    workers: list[psutil.Process] = []
    try:
        deadline = time.monotonic() + 120
        while len(workers) < 2 and time.monotonic() < deadline:
            assert runner.poll() is None, runner.stderr.read() if runner.stderr else ""
            workers = [p for p in psutil.Process(runner.pid).children()
                       if "valgrind" in " ".join(_cmdline(p))]
            time.sleep(0.1)
        assert len(workers) == 2, "two counting workers never ran at once"
        runner.send_signal(signal.SIGINT)
        _, stderr = runner.communicate(timeout=60)
        assert all(gone(w, timeout=5) for w in workers)
    finally:
        kill_leftovers(runner, *workers)
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert runner.returncode == 130 and len(lines) == 1, stderr
    assert "interrupted by SIGINT" in lines[0] and "--resume" in lines[0]
    store = open_store(str(home / "results.duckdb"), create=False)
    (run,) = store.list_runs()
    assert run.status == "interrupted"
    assert store.results(ResultQuery(run_ids=(run.run_id,))) == []


def _cmdline(process: psutil.Process) -> list[str]:
    try:
        return process.cmdline()
    except psutil.Error:
        return []


def test_a_run_resumes_only_with_the_jobs_it_was_counted_with(home: Path):
    colbench("run", "placebo", "--param", "duration=0", "--processes", "1", "--iterations", "1", "--run-name", "one",
             home=home, check=True)
    done = colbench("run", "--resume", "one", "--jobs", "2", home=home)
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert done.returncode == 2 and len(lines) == 1, done.stderr
    assert "--jobs 2" in lines[0] and "resume it without --jobs" in lines[0]
