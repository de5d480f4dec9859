"""Start a real `colbench run` in the background and find its worker, for the signal and orphan tests."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil


def start_run(home: Path, tmpdir: Path, *args: str) -> subprocess.Popen[str]:
    """`colbench run ARGS` with its own home and temp directory (where its execution directories go)."""
    tmpdir.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "COLBENCH_HOME": str(home), "TMPDIR": str(tmpdir)}
    env.pop("COLBENCH_STORE", None)
    return subprocess.Popen([sys.executable, "-m", "colbench", "run", *args], env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=_default_stop_signals)


def _default_stop_signals() -> None:
    """The run as a terminal starts it: stop signals at their defaults. Run from `nohup … &`, the tests would
    otherwise hand colbench SIGHUP and SIGINT ignored, and colbench rightly keeps a signal its parent ignores."""
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, signal.SIG_DFL)


def wait_for_worker(orchestrator: subprocess.Popen[str], error: str | None = None,
                    timeout: float = 90) -> psutil.Process:
    """The worker process colbench started (its child) once it exists; with `error`, the one running the
    placebo case with that error param (read from the case file the worker was given)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if orchestrator.poll() is not None:
            raise AssertionError(f"colbench ended first ({orchestrator.returncode}): {orchestrator.stderr.read()}")
        for child in psutil.Process(orchestrator.pid).children():
            # a child just forked (not yet exec'd) or already a zombie has no worker cmdline to read yet
            with contextlib.suppress(psutil.Error, OSError, ValueError, KeyError, IndexError):
                if error is None or json.loads(Path(child.cmdline()[-2]).read_text())["params"]["error"] == error:
                    return child
        time.sleep(0.05)
    raise AssertionError("no worker started")


def gone(proc: psutil.Process, timeout: float = 5) -> bool:
    """True once the process has ended (a zombie waiting for its reaper counts as ended)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if proc.status() == psutil.STATUS_ZOMBIE:
                return True
        except psutil.NoSuchProcess:
            return True
        time.sleep(0.05)
    return False


def exec_dirs(tmpdir: Path, pid: int) -> list[Path]:
    return sorted(tmpdir.glob(f"colbench-exec-{pid}-*"))


def kill_leftovers(*procs: psutil.Process | subprocess.Popen[str] | None) -> None:
    """After a failed assertion: end the processes this test started, by pid, so none outlives it."""
    for proc in procs:
        if proc is not None:
            with contextlib.suppress(psutil.NoSuchProcess, ProcessLookupError):
                proc.kill()
