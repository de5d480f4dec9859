"""SIGINT, SIGTERM and SIGHUP (a closed terminal) stop a run: worker group killed, run marked interrupted, temp dir
gone, exit 130/143/129."""

from __future__ import annotations

import os
import signal
import time

import pytest

from colbench.runner.interrupt import Interrupted, stop_on_signals
from colbench.store import open_store
from colbench.store.base import ResultQuery
from tests.runner.helpers import exec_dirs, gone, kill_leftovers, start_run, wait_for_worker


@pytest.mark.slow
@pytest.mark.parametrize("signum, exit_code", [(signal.SIGTERM, 143), (signal.SIGINT, 130), (signal.SIGHUP, 129)])
def test_a_stop_signal_kills_the_worker_marks_the_run_and_keeps_what_completed(home, tmp_path, signum, exit_code):
    tmpdir = tmp_path / "tmp"
    # the `none` case completes first, then the `hang` case's worker is running when the signal comes
    runner = start_run(home, tmpdir, "placebo", "--param", "error=none,hang", "--param", "duration=0",
                       "--processes", "1", "--iterations", "1", "--warmup", "0", "--timeout", "120",
                       "--run-name", "stopped")
    worker = None
    try:
        worker = wait_for_worker(runner, error="hang")
        assert "colbench.worker" in " ".join(worker.cmdline())
        runner.send_signal(signum)
        _, stderr = runner.communicate(timeout=30)
        assert gone(worker, timeout=1)
    finally:
        kill_leftovers(runner, worker)

    assert runner.returncode == exit_code, stderr
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1, stderr
    assert f"interrupted by {signal.Signals(signum).name}" in lines[0] and "--resume" in lines[0]
    assert "Traceback" not in stderr
    assert exec_dirs(tmpdir, runner.pid) == []

    store = open_store(str(home / "results.duckdb"), create=False)
    (run,) = store.list_runs()
    assert run.status == "interrupted" and run.finished_at
    results = store.results(ResultQuery(run_ids=(run.run_id,)))
    assert [(r.params["error"], r.status) for r in results] == [("none", "ok")]


def test_a_signal_inside_a_deferred_block_is_raised_when_the_block_ends():
    with stop_on_signals() as stop:
        finished_block = False
        with pytest.raises(Interrupted) as stopped, stop.deferred():
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(0.05)  # the handler has run by now: it only noted the signal
            finished_block = True
        assert finished_block and stopped.value.exit_code == 143
        os.kill(os.getpid(), signal.SIGINT)  # a second signal of the same stop is ignored
        time.sleep(0.05)
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL


def test_a_signal_ignored_when_colbench_started_stays_ignored():
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        with stop_on_signals():
            assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
            assert callable(signal.getsignal(signal.SIGTERM))
        assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGINT, previous)
