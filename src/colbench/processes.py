"""Every helper process colbench starts (import checks, interpreter probes, uv, git, Valgrind, heaptrack, perf,
compilers, build scripts) runs through `run_bounded`: under a deadline, in a process group of its own, and killed
with that whole group when the deadline passes or the caller is interrupted, so nothing it started lives on with
parent 1 (issue 48: a hung `python3.X` was killed, the child it had started was not).

A deadline is the nearer of the call's own (`timeout_s`) and the innermost `deadline_at` block around it: a watch
pass or a bisect sets its budget's end once, and every process started below it, however deep (the uv install and
the import check of an environment build), ends by then without the budget being passed down each call.

The measured worker processes are not started here: `runner/isolate.py` owns those (they are waited for with wait4,
for their rusage), and it kills their groups the same way."""

from __future__ import annotations

import contextlib
import contextvars
import os
import signal
import subprocess
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

#: the end (time.monotonic) of the innermost `deadline_at` block, if any
_DEADLINE: contextvars.ContextVar[float | None] = contextvars.ContextVar("colbench_process_deadline", default=None)


class ProcessTimeout(subprocess.TimeoutExpired):
    """A helper process ran past its deadline and was killed with its whole process group; `str()` is one line."""

    def __init__(self, argv: Sequence[str], timeout_s: float, what: str, by_budget: bool,
                 output: str | bytes | None = None, stderr: str | bytes | None = None) -> None:
        super().__init__(list(argv), timeout_s, output, stderr)
        self.what = what
        self.by_budget = by_budget

    def __str__(self) -> str:
        why = "the budget's end" if self.by_budget else "its deadline"
        return f"{self.what} did not finish within {self.timeout:.0f} s ({why}): stopped, with what it started"


@contextlib.contextmanager
def deadline_at(end: float) -> Iterator[None]:
    """Every `run_bounded` inside this block ends by `end` (a time.monotonic value); nested blocks keep the
    nearer end."""
    outer = _DEADLINE.get()
    token = _DEADLINE.set(end if outer is None else min(outer, end))
    try:
        yield
    finally:
        _DEADLINE.reset(token)


def remaining_s() -> float | None:
    """Seconds left before the innermost `deadline_at` block ends (None outside any)."""
    end = _DEADLINE.get()
    return None if end is None else end - time.monotonic()


def effective_timeout(timeout_s: float | None) -> tuple[float | None, bool]:
    """The timeout a process started now gets, and whether the enclosing budget (not its own) sets it."""
    left = remaining_s()
    if left is None:
        return timeout_s, False
    left = max(left, 0.0)
    if timeout_s is None or left < timeout_s:
        return left, True
    return timeout_s, False


def kill_group(pid: int) -> None:
    """SIGKILL the process group led by `pid` (started with start_new_session); gone already is fine."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


def run_bounded(argv: Sequence[str], *, timeout_s: float | None, what: str, cwd: Path | str | None = None,
                env: Mapping[str, str] | None = None, stdin: str | None = None,
                capture: bool = True, check: bool = False,
                own_deadline_only: bool = False) -> subprocess.CompletedProcess[str]:
    """`subprocess.run(argv)` as text, bounded: in a new session (its own process group), its output captured
    (`capture=False`: inherited, for a script whose progress the user watches), waited for at most the nearer of
    `timeout_s` and the enclosing `deadline_at`. Past that, or on any exception while waiting (Ctrl-C: the group
    is out of the terminal's reach), the whole group is killed and `ProcessTimeout` (a subprocess.TimeoutExpired)
    raised. `check=True` raises subprocess.CalledProcessError on a non-zero exit, as subprocess.run does.
    `OSError` (no such program) propagates as from subprocess.run.

    `own_deadline_only`: a short check whose verdict must not depend on when the budget ends (an import check
    cut by the budget would call a sound release broken): it gets `timeout_s` whole, the budget decides only
    whether it starts (none once the budget has ended)."""
    timeout, by_budget = effective_timeout(timeout_s)
    if own_deadline_only and timeout is not None and timeout > 0:
        timeout, by_budget = timeout_s, False
    if timeout is not None and timeout <= 0:
        raise ProcessTimeout(argv, 0.0, what, by_budget)
    pipe = subprocess.PIPE if capture else None
    with subprocess.Popen(list(argv), cwd=cwd, env=None if env is None else dict(env), text=True,
                          stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
                          stdout=pipe, stderr=pipe, start_new_session=True) as proc:
        out: str | None
        err: str | None
        try:
            out, err = proc.communicate(stdin, timeout=timeout)
        except subprocess.TimeoutExpired:
            kill_group(proc.pid)
            out, err = _drain(proc)
            raise ProcessTimeout(argv, timeout or 0.0, what, by_budget, out, err) from None
        except BaseException:
            kill_group(proc.pid)
            proc.wait()
            raise
    done = subprocess.CompletedProcess(list(argv), proc.returncode, out, err)
    if check:
        done.check_returncode()
    return done


@contextlib.contextmanager
def streaming(argv: Sequence[str], *, timeout_s: float | None, what: str) -> Iterator[subprocess.Popen[bytes]]:
    """A process whose binary stdout the caller reads as it comes (`perf script`, `zstd -dc`), bounded as
    `run_bounded` is: a timer kills its whole group at the deadline (the read then ends), and leaving the block
    early (an exception, a reader that stops) kills it too. Past the deadline the block raises ProcessTimeout; the
    caller reads `returncode` after the block."""
    timeout, by_budget = effective_timeout(timeout_s)
    proc = subprocess.Popen(list(argv), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True)
    fired = threading.Event()

    def expire() -> None:
        fired.set()
        kill_group(proc.pid)

    timer = threading.Timer(timeout, expire) if timeout is not None else None
    if timer is not None:
        timer.daemon = True
        timer.start()
    try:
        with proc:
            try:
                yield proc
            except BaseException:
                kill_group(proc.pid)
                raise
    finally:
        if timer is not None:
            timer.cancel()
    if fired.is_set():
        raise ProcessTimeout(argv, timeout or 0.0, what, by_budget)


def _drain(proc: subprocess.Popen[str]) -> tuple[str | None, str | None]:
    """What a killed group wrote; a grandchild that left the group (its own setsid) may hold the pipes open, so
    the read is bounded too and the pipes closed after it."""
    try:
        return proc.communicate(timeout=5)
    except subprocess.TimeoutExpired:
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()
        proc.wait()
        return None, None


def last_line(text: str | None, limit: int = 300) -> str:
    """The last non-blank line of a process's output, printable and clipped: the one a crash's cause is in."""
    lines = [line.strip() for line in (text or "").splitlines() if line.strip()]
    if not lines:
        return ""
    line = "".join(ch if ch.isprintable() else "?" for ch in lines[-1])
    return line if len(line) <= limit else line[: limit - 1] + "…"


def exit_cause(returncode: int) -> str:
    """How a process ended, in words: 'exit status 3', 'killed by SIGSEGV (a crash)'."""
    if returncode >= 0:
        return f"exit status {returncode}"
    try:
        name = signal.Signals(-returncode).name
    except ValueError:
        name = f"signal {-returncode}"
    crash = {"SIGSEGV", "SIGBUS", "SIGILL", "SIGFPE", "SIGABRT"}
    return f"killed by {name}" + (" (a crash)" if name in crash else "")
