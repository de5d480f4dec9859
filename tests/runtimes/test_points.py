"""A bisect's point environments: names, one-line build errors, and building ahead off the worker's CPUs."""

from __future__ import annotations

import os
import threading
import time

import pytest

from colbench.model.run_config import EnvChoice
from colbench.runtimes.points import AheadBuilder, Point, PointEnvironments, build_error_line, env_name


def test_env_names_are_names():
    assert env_name("14.0.2") == "14.0.2"
    assert env_name("1.0+local.7") == "1.0-local.7"
    assert env_name("bisectprobe-1.0.0-1-py3-none-any") == "bisectprobe-1.0.0-1-py3-none-any"
    assert env_name("+++") == "point"


def test_uv_errors_become_one_line_with_their_innermost_cause():
    message = ("resolving environment 'x' (/w/p-1.3.0-py3-none-any.whl) failed:\n"
               "error: Failed to read `p @ file:///w/p-1.3.0-py3-none-any.whl`\n"
               "  cause: Failed to read metadata: /w/p-1.3.0-py3-none-any.whl\n"
               "  cause: unable to locate the end of central directory record")
    assert build_error_line(message) == ("resolving failed: Failed to read `p @ file:///w/p-1.3.0-py3-none-any.whl` "
                                         "(unable to locate the end of central directory record)")
    boxed = "installing environment 'y' (q==1) failed:\n  × No solution found\n  ╰─▶ q==1 is not available"
    assert build_error_line(boxed) == "installing failed: No solution found (q==1 is not available)"
    assert build_error_line("environment 'z': q does not import") == "environment 'z': q does not import"
    assert "secret" not in build_error_line("installing failed:\nerror: https://u:secret@host/simple is down")


class Recording(PointEnvironments):
    """Builds nothing: records on which CPUs and threads each build ran."""

    def __init__(self) -> None:
        super().__init__()
        self.where: dict[str, tuple[set[int], str]] = {}
        self.release = threading.Event()

    def _build(self, point: Point, ahead: bool) -> None:
        self.where[point.label] = (os.sched_getaffinity(0), threading.current_thread().name)
        if ahead:
            self.release.wait(10)
        self.built[point.label] = EnvChoice(name=point.label)


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="building ahead needs a CPU the worker does not use")
def test_builds_ahead_run_on_the_cpus_the_worker_does_not_use_and_once_per_point():
    allowed = sorted(os.sched_getaffinity(0))
    envs = Recording()
    ahead = AheadBuilder(envs, worker_cpus=allowed[:1])
    assert ahead.possible and ahead.cpus == allowed[1:]
    ahead.want([Point("2.0", "p==2.0"), Point("3.0", "p==3.0")])
    deadline = time.monotonic() + 10
    while "2.0" not in envs.where and time.monotonic() < deadline:  # the build ahead has begun
        time.sleep(0.01)
    # the step needs 2.0 while it is being built ahead: it waits for that build instead of building it again
    waiter = threading.Thread(target=envs.get, args=(Point("2.0", "p==2.0"),))
    waiter.start()
    envs.release.set()
    waiter.join(10)
    ahead._queue.join()
    assert envs.where["2.0"] == (set(allowed[1:]), "colbench-build-ahead")
    assert envs.where["3.0"][0] == set(allowed[1:])
    assert set(envs.built) == {"2.0", "3.0"} and envs.ahead_seconds > 0
    assert os.sched_getaffinity(0) == set(allowed)  # the measuring thread's CPUs are untouched


def test_nothing_is_built_ahead_when_the_worker_needs_every_cpu():
    envs = Recording()
    ahead = AheadBuilder(envs, worker_cpus=sorted(os.sched_getaffinity(0)))
    ahead.want([Point("2.0", "p==2.0")])
    assert not ahead.possible and envs.where == {}


def test_differences_name_what_else_changed():
    envs = PointEnvironments()
    envs.versions = {"15.0.2": {"pyarrow": "15.0.2", "numpy": "1.26.4", "colbench": "1"},
                     "16.0.0": {"pyarrow": "16.0.0", "numpy": "2.3.5", "colbench": "1"}}
    assert envs.differences("15.0.2", "16.0.0", "pyarrow") == ["numpy 1.26.4 → 2.3.5"]
    envs.adopt("17.0.0", EnvChoice(name="17.0.0", spec="pyarrow==17.0.0 numpy<2", resolved={"numpy": "1.26.4"}))
    assert envs.notes == {"17.0.0": "numpy<2 (built against NumPy 1.x)"}


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="building ahead needs a CPU the worker does not use")
def test_closing_drops_what_is_queued_and_lets_the_build_under_way_finish():
    allowed = sorted(os.sched_getaffinity(0))
    envs = Recording()
    ahead = AheadBuilder(envs, worker_cpus=allowed[:1])
    ahead.want([Point("2.0", "p==2.0"), Point("3.0", "p==3.0")])
    deadline = time.monotonic() + 10
    while "2.0" not in envs.where and time.monotonic() < deadline:
        time.sleep(0.01)
    threading.Timer(2.0, envs.release.set).start()  # 2.0's build ends after close() has dropped 3.0
    ahead.close()
    assert "2.0" in envs.built and "3.0" not in envs.where
