"""The runner with real worker processes: every way a case can fail becomes an error result and the run goes on."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import jsonschema
import pytest

from colbench.machine.cpu_busy import QUIET_BELOW
from colbench.model.result import SCHEMA_PATH
from colbench.runner.estimate import reference_costs
from colbench.store import open_store
from colbench.store.base import ResultQuery

SCHEMA = json.loads(SCHEMA_PATH.read_text())


def stored(home: Path, run_id: str | None = None) -> list[dict]:
    """The run's results as stored: their JSON documents (what the schema checks)."""
    store = open_store(str(home / "results.duckdb"), create=False)
    run = run_id or store.list_runs()[0].run_id
    return [r.to_json() for r in store.results(ResultQuery(run_ids=(run,)))]


def by_error(results: list[dict]) -> dict[str, dict]:
    return {r["params"]["error"]: r for r in results}


@pytest.mark.slow
def test_every_failure_mode_becomes_an_error_result_and_the_run_goes_on(cli, home):
    proc = cli("run", "placebo", "--param", "error=none,exception,segfault,oom,hang,junk",
               "--param", "duration=0.012", "--processes", "1", "--iterations", "3", "--warmup", "1",
               "--timeout", "4", "--memory-limit", "400MB")
    assert proc.returncode == 0, proc.stderr
    results = by_error(stored(home))
    assert set(results) == {"none", "exception", "segfault", "oom", "hang", "junk"}
    for result in results.values():
        jsonschema.validate(result, SCHEMA)

    ok = results["none"]
    assert ok["status"] == "ok" and ok["error"] is None
    assert len(ok["samples"]["wall_s"]) == 3 and len(ok["warmup_samples"]["wall_s"]) == 1
    assert all(0.012 <= s < 0.1 for s in ok["samples"]["wall_s"])
    if sys.platform == "linux":  # time spent waiting for a CPU, per iteration (analysis/basis.py)
        delays = ok["samples"]["run_delay_s"]
        assert len(delays) == 3 and all(0 <= d < s for d, s in zip(delays, ok["samples"]["wall_s"], strict=True))
    assert ok["first_iteration"]["wall_s"] == ok["warmup_samples"]["wall_s"][0]
    assert ok["summary"]["wall_s"]["n"] == 3 and ok["output"]["rows"] == 1

    exc = results["exception"]["error"]
    assert exc["kind"] == "exception" and "placebo raised on purpose" in exc["message"]
    assert "Traceback" in exc["traceback"]

    seg = results["segfault"]["error"]
    assert seg["kind"] == "crash" and seg["signal"] == "SIGSEGV"
    assert "Fatal Python error" in seg["stderr_tail"]

    oom = results["oom"]["error"]
    assert oom["kind"] == "oom" and "limit of 381 MiB" in oom["message"]

    hang = results["hang"]["error"]
    assert hang["kind"] == "timeout"
    assert 4 <= results["hang"]["process"]["spawn_to_result_s"] < 15

    junk = results["junk"]
    assert junk["status"] == "ok" and len(junk["samples"]["wall_s"]) == 3  # garbage on stdout is never parsed

    show = cli("show", "--format", "json", check=True)
    rows = {json.loads(show.stdout)[i]["error_message"] for i in range(6)}
    assert any("SIGSEGV" in (r or "") for r in rows)


@pytest.mark.slow
def test_threads_pin_the_worker_and_reach_engine_variables(cli, home):
    ncpu = len(os.sched_getaffinity(0))
    cli("run", "placebo", "--threads", "1,2", "--processes", "1", "--iterations", "1", check=True)
    results = {r["params"]["threads"]: r for r in stored(home)}
    # one CPU, the quietest when it started (machine/cpu_busy.py), and the record says which and how quiet
    assert results[1]["threads"]["applied"]["cpu_affinity"] == results[1]["process"]["cpus"]
    assert len(results[1]["process"]["cpus"]) == 1 and results[1]["process"]["cpus"][0] in os.sched_getaffinity(0)
    if ncpu > 1:
        assert results[1]["process"]["quiet_cpu"] == (results[1]["process"]["cpu_busy"] < QUIET_BELOW)
    assert len(results[2]["threads"]["applied"]["cpu_affinity"]) == min(2, ncpu)
    assert results[2]["threads"]["applied"]["OMP_NUM_THREADS"] == "2"
    assert results[2]["threads"]["applied"]["POLARS_MAX_THREADS"] == "2"
    # OpenMP threads wait passively unless the user says otherwise (spinning makes others' load part of a figure)
    assert results[1]["threads"]["applied"]["OMP_WAIT_POLICY"] == os.environ.get("OMP_WAIT_POLICY", "passive")


@pytest.mark.slow
def test_an_env_of_the_user_overrides_the_default_openmp_wait_policy(cli, home):
    cli("run", "placebo", "--threads", "2", "--processes", "1", "--iterations", "1", "--warmup", "0",
        "--env", "spin=@current OMP_WAIT_POLICY=active", check=True)
    (result,) = stored(home)
    assert result["threads"]["applied"]["OMP_WAIT_POLICY"] == "active"


@pytest.mark.slow
def test_kill_minus_9_of_the_runner_loses_nothing_and_resume_fills_the_gaps(home):
    env = {**os.environ, "COLBENCH_HOME": str(home)}
    runner = subprocess.Popen(
        [sys.executable, "-m", "colbench", "run", "placebo", "--param", "duration=0.15", "--processes", "6",
         "--iterations", "2", "--warmup", "0", "--run-name", "killed"],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    store_path = home / "results.duckdb"
    deadline = time.monotonic() + 60
    done = 0
    while time.monotonic() < deadline:
        time.sleep(0.2)
        if store_path.exists():
            try:
                runs = open_store(str(store_path), create=False).list_runs()
                done = len(stored(home)) if runs else 0
            except Exception:
                continue
            if done >= 2:
                break
    runner.send_signal(signal.SIGKILL)
    runner.wait()
    assert done >= 2, "the runner never stored two results"
    before = stored(home)
    assert 2 <= len(before) < 6, "kill came too late to test resume"
    run_id = before[0]["run_id"]

    resumed = subprocess.run([sys.executable, "-m", "colbench", "run", "--resume", "killed"], env=env,
                             capture_output=True, text=True, timeout=120)
    assert resumed.returncode == 0, resumed.stderr
    after = stored(home, run_id)
    assert sorted(r["process_index"] for r in after) == list(range(6))
    assert len({r["result_id"] for r in after}) == 6
    kept = {r["result_id"]: r for r in after}
    for r in before:  # results stored before the kill are untouched
        assert kept[r["result_id"]]["samples"] == r["samples"]
    run = open_store(str(store_path), create=False).get_run(run_id)
    assert run.status == "finished"


def test_dry_run_prints_plan_and_estimate_and_writes_nothing(cli, home):
    proc = cli("run", "placebo", "--param", "duration=0.5,1", "--processes", "2", "--iterations", "3",
               "--warmup", "1", "--dry-run", check=True)
    assert "2 cases × 2 processes" in proc.stdout
    assert "estimated time" in proc.stdout
    # 2 processes × 4 iterations × (0.5 + 1.0) s, plus start-ups and a run's own fixed cost (the reference model's
    # run_s, measured), the processes stretched by the load of the moment (said when the machine is busy)
    out = " ".join(proc.stdout.split())
    seconds = _duration(out.split("estimated time: ")[1].split(" (")[0])
    busy = re.search(r"counted ([\d.]+)x as long", out)
    load = float(busy.group(1)) if busy else 1.0
    assert 12 + reference_costs().run_s <= seconds < 40 * load
    assert "made of: 4 worker processes" in out
    assert not (home / "results.duckdb").exists()


def _duration(text: str) -> float:
    """'35 s', '1 min 05 s', '12 min', '1 h 05 min' → seconds."""
    seconds = 0.0
    for value, unit in re.findall(r"([\d.]+) (h|min|s)\b", text):
        seconds += float(value) * {"h": 3600, "min": 60, "s": 1}[unit]
    return seconds


@pytest.mark.parametrize("args, message", [
    (["run", "nosuchbench"], "unknown benchmark or suite 'nosuchbench'"),
    (["run", "placebo", "--param", "error=sometimes"], "choose from none, exception"),
    (["run", "placebo", "--param", "duration=-1"], "must be >= 0"),
    (["run", "placebo", "--param", "speed=1"], "unknown param 'speed'"),
    (["run", "placebo", "--param", "duration"], "NAME=VALUE"),
    (["run", "placebo", "--memory-limit", "lots"], "cannot read size"),
    (["show"], "no results store"),
    (["run", "--resume", "nope"], "no results store"),
])
def test_bad_input_gets_one_line_exit_2_and_nothing_written(cli, home, args, message):
    proc = cli(*args)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) <= 2 and message in " ".join(lines)
    assert not (home / "results.duckdb").exists()


def test_peak_rss_is_the_workers_own_not_the_forking_parents():
    """Linux's ru_maxrss survives exec and would report the orchestrator's size; the worker must not."""
    import sys as _sys

    from colbench.runner.execute import case_spec
    from colbench.runner.isolate import WorkerLaunch, run_worker
    from colbench.runner.plan import make_plan

    ballast = bytearray(os.urandom(1)) * (400 << 20)  # the parent is now > 400 MiB resident
    case = make_plan(["placebo"]).cases[0]
    done = run_worker(case_spec(case, {}, iterations=1, warmup=0, seed=1),
                      WorkerLaunch(command=[_sys.executable, "-m", "colbench.worker"], env=dict(os.environ)))
    assert done.report.status == "ok"
    assert done.report.memory["peak_rss_bytes"] < 200 << 20
    assert len(ballast) == 400 << 20


def test_a_short_call_is_timed_without_run_delay_reads_around_it(cli, home):
    """/proc reads between two calls slowed a 170 µs call by 9-20% (workers/python/worker.py `_RunDelay`): a
    process whose calls are shorter than 10 ms records no run delay; one of longer calls records it per iteration."""
    proc = cli("run", "placebo", "--param", "duration=0.0005,0.011", "--processes", "1", "--iterations", "3",
               "--warmup", "1")
    assert proc.returncode == 0, proc.stderr
    by_duration = {r["params"]["duration"]: r["samples"] for r in stored(home)}
    assert "run_delay_s" not in by_duration[0.0005]
    if sys.platform == "linux":
        assert len(by_duration[0.011]["run_delay_s"]) == 3
