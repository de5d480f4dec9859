"""colbench.processes (issue 48): every helper process runs under a deadline, and past it its whole process group
goes, what it started included; the enclosing budget (`deadline_at`) bounds it too; a crash is named."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from colbench.processes import (
    ProcessTimeout,
    deadline_at,
    effective_timeout,
    exit_cause,
    last_line,
    run_bounded,
    streaming,
)

#: a Python that starts a child which hangs (and writes its pid), then hangs itself
HANGS_WITH_CHILD = textwrap.dedent("""
    import subprocess, sys, time
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    open(sys.argv[1], "w").write(str(child.pid))
    time.sleep(600)
""")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie is dead: it only waits for its parent (init here) to reap it
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[1][0] != "Z"
    except (OSError, IndexError):
        return False


def _gone(pid: int, within_s: float = 5.0) -> bool:
    end = time.monotonic() + within_s
    while time.monotonic() < end:
        if not _alive(pid):
            return True
        time.sleep(0.05)
    return False


def test_a_hung_process_is_killed_with_what_it_started(tmp_path: Path) -> None:
    pid_file = tmp_path / "child.pid"
    started = time.monotonic()
    with pytest.raises(ProcessTimeout) as caught:
        run_bounded([sys.executable, "-c", HANGS_WITH_CHILD, str(pid_file)], timeout_s=2, what="the probe")
    assert time.monotonic() - started < 10
    child = int(pid_file.read_text())
    try:
        assert _gone(child), "the hung process's child lives on"
    finally:
        if _alive(child):
            os.kill(child, signal.SIGKILL)
    message = str(caught.value)
    assert message.startswith("the probe did not finish within 2 s") and "\n" not in message
    assert isinstance(caught.value, subprocess.TimeoutExpired)


def test_the_enclosing_budget_bounds_a_process_sooner_than_its_own_deadline(tmp_path: Path) -> None:
    started = time.monotonic()
    with deadline_at(time.monotonic() + 1.5), pytest.raises(ProcessTimeout) as caught:
        run_bounded([sys.executable, "-c", "import time; time.sleep(600)"], timeout_s=300, what="uv")
    assert time.monotonic() - started < 10
    assert caught.value.by_budget and "the budget's end" in str(caught.value)


def test_a_check_with_its_own_deadline_only_gets_it_whole_once_started() -> None:
    started = time.monotonic()
    with deadline_at(time.monotonic() + 0.5):
        done = run_bounded([sys.executable, "-c", "import time; time.sleep(1.5)"], timeout_s=30, what="check",
                           own_deadline_only=True)
    assert done.returncode == 0 and time.monotonic() - started >= 1.5
    with deadline_at(time.monotonic() - 1), pytest.raises(ProcessTimeout):  # the budget over: it never starts
        run_bounded([sys.executable, "-c", "pass"], timeout_s=30, what="check", own_deadline_only=True)


def test_nested_budgets_keep_the_nearer_end_and_a_spent_one_starts_nothing(tmp_path: Path) -> None:
    now = time.monotonic()
    with deadline_at(now + 100):
        with deadline_at(now + 1000):
            timeout, by_budget = effective_timeout(500)
            assert by_budget and 90 < (timeout or 0) <= 100
        assert effective_timeout(5) == (5, False)
    assert effective_timeout(None) == (None, False)
    marker = tmp_path / "ran"
    with deadline_at(now - 1), pytest.raises(ProcessTimeout):
        run_bounded([sys.executable, "-c", f"open({str(marker)!r}, 'w')"], timeout_s=60, what="late")
    assert not marker.exists()


def test_output_exit_status_and_check_are_subprocess_runs() -> None:
    done = run_bounded([sys.executable, "-c", "import sys; print('out'); print('err', file=sys.stderr); "
                        "sys.exit(3)"], timeout_s=60, what="x")
    assert (done.returncode, done.stdout.strip(), done.stderr.strip()) == (3, "out", "err")
    with pytest.raises(subprocess.CalledProcessError):
        run_bounded([sys.executable, "-c", "raise SystemExit(1)"], timeout_s=60, what="x", check=True)
    echoed = run_bounded([sys.executable, "-c", "print(input())"], timeout_s=60, what="x", stdin="hello")
    assert echoed.stdout.strip() == "hello"


def test_a_crash_is_named_with_its_signal() -> None:
    done = run_bounded([sys.executable, "-c", "import ctypes; ctypes.string_at(0)"], timeout_s=60, what="x")
    assert exit_cause(done.returncode) == "killed by SIGSEGV (a crash)"
    assert exit_cause(2) == "exit status 2"
    assert last_line("a\n\nFatal \x1b[31merror\n\n") == "Fatal ?[31merror"


def test_a_streamed_process_is_killed_at_its_deadline() -> None:
    started = time.monotonic()
    with pytest.raises(ProcessTimeout), streaming(
            [sys.executable, "-c", "import time; print('x', flush=True); time.sleep(600)"], timeout_s=1.5,
            what="zstd") as proc:
        assert proc.stdout is not None
        assert proc.stdout.read() == b"x\n"  # ends when the group is killed
    assert time.monotonic() - started < 10
