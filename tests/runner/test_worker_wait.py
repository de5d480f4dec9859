"""The orchestrator sleeps while a worker runs; the memory limit still kills, and says limit and peak."""

from __future__ import annotations

import os
import subprocess
import sys

import psutil
import pytest

from colbench.runner.execute import case_spec
from colbench.runner.isolate import WorkerLaunch, run_worker
from colbench.runner.plan import make_plan
from colbench.runner.worker_wait import MIN_MEMORY_INTERVAL_S, MemoryWatch, tree_rss

WORKER = [sys.executable, "-m", "colbench.worker"]


def placebo(**params: str) -> dict:
    case = make_plan(["placebo"], {k: [v] for k, v in params.items()}).cases[0]
    return case_spec(case, {}, iterations=1, warmup=0, seed=1)


def test_past_the_memory_limit_a_worker_is_killed_with_its_limit_peak_and_mechanism():
    limit = 300 << 20
    done = run_worker(placebo(error="oom"), WorkerLaunch(command=WORKER, env=dict(os.environ), timeout_s=60,
                                                         memory_limit_bytes=limit))
    error = done.report.error
    watched = done.process["memory_limit"]
    assert error is not None and error.kind == "oom"
    assert watched["mechanism"] == "rss-poll" and watched["limit_bytes"] == limit
    assert watched["peak_tree_rss_bytes"] > limit
    assert f"memory {watched['peak_tree_rss_bytes'] / 2**20:.0f} MiB passed the limit of 300 MiB" in error.message
    assert done.process["exit_code"] == -9


@pytest.mark.slow
def test_a_long_worker_far_below_its_limit_is_looked_at_about_once_a_second():
    done = run_worker(placebo(duration="2.5"), WorkerLaunch(command=WORKER, env=dict(os.environ), timeout_s=60,
                                                            memory_limit_bytes=16 << 30))
    assert done.report.status == "ok", done.report.error
    looks = done.process["memory_limit"]["looks"]
    assert 1 <= looks <= done.process["spawn_to_result_s"] / 1.0 + 1  # not every 20 ms as it once was
    assert done.process["exit_wait"] == "pidfd"


def test_tree_rss_counts_the_children_a_worker_starts():
    code = "import subprocess, sys; subprocess.run([sys.executable, '-c', " \
           "'import time; b = bytearray(200 << 20); print(1, flush=True); time.sleep(60)'])"
    parent = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert parent.stdout.readline().strip() == "1"
        (child,) = psutil.Process(parent.pid).children()
        assert child.memory_info().rss > 200 << 20 > psutil.Process(parent.pid).memory_info().rss
        assert tree_rss(parent.pid) > 200 << 20
    finally:
        for proc in psutil.Process(parent.pid).children():
            proc.kill()
        parent.kill()
        parent.wait()


def test_the_memory_watch_looks_sooner_as_the_headroom_shrinks():
    watch = MemoryWatch(os.getpid(), limit_bytes=64 << 30, max_interval_s=1.0)
    assert watch.next_look_in() == 1.0
    watch.last_bytes = watch.limit_bytes - (1 << 20)
    assert watch.next_look_in() == MIN_MEMORY_INTERVAL_S
    assert not watch.over_limit() and watch.looks == 1 and watch.peak_bytes > 0
