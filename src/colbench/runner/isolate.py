"""Run one execution in a fresh worker process and turn whatever happens into a result document.

Crashes, signals, hangs past the timeout, memory past the limit and missing or unreadable result files all
become error results with their cause; the caller never sees an exception for a failing case.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import random
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from colbench.machine.cpu_busy import Choice, QuietCpus
from colbench.machine.facts import isolated_cpus, read_steal_seconds
from colbench.model.protocol import report_violation
from colbench.model.records import CaseSpec, WorkerProcess, WorkerReport
from colbench.runner.interrupt import signal_name
from colbench.runner.lifeline import die_with_parent_hook, exec_dir_prefix
from colbench.runner.worker_wait import ExitWatch, MemoryWatch

STDERR_TAIL_LINES = 30


@dataclass
class WorkerLaunch:
    """How to start one worker: its command (the case and result paths are appended), env and CPUs."""

    command: list[str]
    env: dict[str, str]
    cpus: list[int] | None = None
    timeout_s: float = 900.0
    memory_limit_bytes: int | None = None
    cwd: Path | None = None
    #: pin to the quietest `len(cpus)` CPUs at start (machine/cpu_busy.py) rather than to `cpus` themselves
    quietest: bool = False


@dataclass
class WorkerOutcome:
    """What one worker process produced, plus what the orchestrator saw from outside."""

    report: WorkerReport
    process: WorkerProcess = field(default_factory=lambda: WorkerProcess())


def thread_env(threads: int) -> dict[str, str]:
    """Environment variables that set thread pools of engines that read them at import time."""
    value = str(threads)
    return {var: value for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                                   "POLARS_MAX_THREADS", "RAYON_NUM_THREADS", "ARROW_NUM_THREADS",
                                   "ARROW_IO_THREADS", "NUMEXPR_NUM_THREADS", "COLBENCH_THREADS")}


#: Defaults under the user's own environment (and any --env variables), which win over them.
#: OpenMP threads that wait for a sibling spin by default (libgomp). On a dedicated machine that costs no wall
#: time, since the spinning thread has a core of its own; on a shared or loaded one it burns the time slices
#: the descheduled sibling needs: data.table's fread with 2 threads on this loaded 2-core VM took twice the
#: CPU time of 1 thread and its ratio to Arrow swung 1.2–3.5× between rounds, while with passive waiting its
#: CPU time equalled the 1-thread read (docs/experiments.md, "E1: why the headline moved").
DEFAULT_ENV = {"OMP_WAIT_POLICY": "passive"}


def choose_cpus(threads: int, isolated: list[int] | None = None) -> tuple[list[int] | None, str | None]:
    """CPUs to pin a worker of `threads` threads to, and a warning when there are fewer than asked.

    The kernel's isolated CPUs (`isolcpus=`) when there are enough of them and this process may use them,
    as pyperf does: no other task is scheduled there. Otherwise the first `threads` CPUs of this process's
    affinity, which a launch with `quietest` replaces by the quietest ones when it starts (`worker_cpus`)."""
    try:
        allowed = sorted(os.sched_getaffinity(0))
    except AttributeError:
        return None, "CPU pinning is not available on this OS"
    isolated = usable_isolated_cpus() if isolated is None else isolated
    if threads <= len(isolated):
        return isolated[:threads], None
    if threads > len(allowed):
        return allowed, f"{threads} threads requested on {len(allowed)} CPUs: oversubscribed, not pinned tighter"
    return allowed[:threads], None


def worker_cpus(threads: int) -> tuple[list[int] | None, str | None, bool]:
    """`choose_cpus`, and whether the worker should rather go to the quietest CPUs when it starts: when they are not
    isolated ones (no other task runs there) and the worker does not take every CPU anyway."""
    cpus, warning = choose_cpus(threads)
    try:
        allowed = len(os.sched_getaffinity(0))
    except AttributeError:
        return cpus, warning, False
    isolated = usable_isolated_cpus()
    return cpus, warning, bool(cpus) and threads < allowed and not (isolated and threads <= len(isolated))


#: one chooser per orchestrator: it remembers its last look at the CPUs and what colbench's own workers used since
_QUIET = QuietCpus()


def _pick(launch: WorkerLaunch) -> tuple[list[int] | None, Choice | None]:
    if not launch.quietest or not launch.cpus:
        return launch.cpus, None
    choice = _QUIET.choose(sorted(os.sched_getaffinity(0)), len(launch.cpus))
    return choice.cpus, choice


@functools.cache
def usable_isolated_cpus() -> list[int]:
    """The isolated CPUs a child of this process may be pinned to. A normal process's affinity leaves them out,
    but a cgroup's cpuset may forbid them too: tried once on this process, whose affinity is then restored."""
    isolated = isolated_cpus()
    if not isolated:
        return []
    own = os.sched_getaffinity(0)
    try:
        os.sched_setaffinity(0, isolated)
    except OSError:
        return []
    os.sched_setaffinity(0, own)
    return isolated


def _tail(path: Path, lines: int = STDERR_TAIL_LINES) -> str:
    try:
        with open(path, "rb") as handle:
            handle.seek(0, os.SEEK_END)
            size = handle.tell()
            handle.seek(max(0, size - 16384))
            text = handle.read().decode("utf-8", errors="replace")
    except OSError:
        return ""
    return "\n".join(text.splitlines()[-lines:])


def run_worker(case_spec: CaseSpec, launch: WorkerLaunch) -> WorkerOutcome:
    """Start the worker, sleep until it exits or must be killed (timeout, memory), reap it, read its result.

    Whatever interrupts the wait (SIGINT/SIGTERM as `Interrupted`) kills the worker's process group and reaps
    it before propagating, and the execution directory goes with the `with` block."""
    with tempfile.TemporaryDirectory(prefix=exec_dir_prefix()) as tmp:
        tmpdir = Path(tmp)
        case_path, result_path = tmpdir / "case.json", tmpdir / "result.json"
        scratch = tmpdir / "scratch"
        scratch.mkdir()
        spec = replace(case_spec, scratch_dir=str(scratch))
        case_path.write_text(json.dumps(spec.to_json(), default=str))
        stdout_path, stderr_path = tmpdir / "stdout.log", tmpdir / "stderr.log"

        env = dict(launch.env)
        # A random-size variable shifts the stack and environment layout per process, so layout luck
        # averages out across processes instead of biasing one case (pyperf leaves that to ASLR and hash
        # randomization over its 20 processes; asv's processes all share the run's one environment).
        env["COLBENCH_ENV_OFFSET"] = "x" * random.randrange(0, 4096)
        cpus, choice = _pick(launch)
        preexec = _preexec(cpus)

        steal_before = read_steal_seconds()
        started = time.perf_counter()
        wall_started = time.time()
        with open(stdout_path, "wb") as out, open(stderr_path, "wb") as err:
            try:
                popen = subprocess.Popen(
                    [*launch.command, str(case_path), str(result_path)],
                    stdout=out, stderr=err, stdin=subprocess.DEVNULL, env=env, cwd=launch.cwd,
                    start_new_session=True, preexec_fn=preexec,
                )
            except (OSError, subprocess.SubprocessError) as exc:
                report = WorkerReport.failure("crash", f"cannot start worker {launch.command[0]!r}: {exc}")
                return WorkerOutcome(report, {"spawn_to_result_s": time.perf_counter() - started})
        RUNNING.add(popen.pid)
        try:
            killed_for, watched = _watch(popen.pid, started + launch.timeout_s, launch.memory_limit_bytes)
        except BaseException:
            RUNNING.reaping(popen.pid)
            os.wait4(popen.pid, 0)
            popen.returncode = -signal.SIGKILL
            raise
        # Whatever the worker left in its process group goes too. Done before reaping, while the unreaped
        # worker still holds its pid, so the group id cannot belong to anyone else yet.
        RUNNING.reaping(popen.pid)
        _, status, usage = os.wait4(popen.pid, 0)
        popen.returncode = os.waitstatus_to_exitcode(status)  # reaped here: Popen must not wait again
        elapsed = time.perf_counter() - started
        _QUIET.ran(cpus, usage.ru_utime + usage.ru_stime)
        steal_after = read_steal_seconds()
        process: WorkerProcess = {
            "spawn_to_result_s": elapsed,
            "started_at": wall_started,
            "exit_code": popen.returncode,
            "child_user_s": usage.ru_utime,
            "child_sys_s": usage.ru_stime,
            "child_maxrss_bytes": usage.ru_maxrss * 1024,
            "env_offset_bytes": len(env["COLBENCH_ENV_OFFSET"]),
            "cpus": cpus,
            "steal_s": (steal_after - steal_before) if steal_before is not None and steal_after is not None else None,
            **watched,
        }
        if choice is not None and choice.busy is not None:
            # other work's share of the chosen CPUs just before the start: quiet below machine.cpu_busy.QUIET_BELOW
            process["cpu_busy"] = round(choice.busy, 3)
            process["quiet_cpu"] = bool(choice.quiet)
        report = _report(launch, killed_for, watched, process["exit_code"], result_path, _tail(stderr_path))
        if process.get("stopped"):
            report.warnings.append(STOPPED_WARNING.format(count=process["stopped"]))
        return WorkerOutcome(report, process)


def _report(launch: WorkerLaunch, killed_for: str | None, watched: WorkerProcess, exit_code: int, result_path: Path,
            stderr_tail: str) -> WorkerReport:
    """What the worker reported; or, killed or crashed, why not (an error keeps its stderr's tail and exit code)."""
    if killed_for == "timeout":
        report = WorkerReport.failure("timeout", f"no result after {launch.timeout_s:g} s: killed (raise "
                                      "--timeout if the case is just slow)", stderr_tail=stderr_tail)
    elif killed_for == "oom":
        memory = watched["memory_limit"]
        assert memory is not None  # killed for memory: it was watched
        report = WorkerReport.failure(
            "oom", f"memory {memory['peak_tree_rss_bytes'] / 2**20:.0f} MiB passed the limit of "
            f"{memory['limit_bytes'] / 2**20:.0f} MiB: killed (--memory-limit)", stderr_tail=stderr_tail)
    elif exit_code < 0:
        sig = signal_name(-exit_code)
        hint = " (the kernel's OOM killer uses SIGKILL)" if sig == "SIGKILL" else ""
        report = WorkerReport.failure("crash", f"worker killed by {sig}{hint}", signal=sig,
                                      stderr_tail=stderr_tail, traceback=_python_fault(stderr_tail))
    else:
        report = _read_result(result_path, exit_code, stderr_tail)
    if report.status == "error" and report.error is not None:
        if report.error.stderr_tail is None:
            report.error.stderr_tail = stderr_tail
        if report.error.exit_code is None:
            report.error.exit_code = exit_code
    return report


def _preexec(cpus: list[int] | None) -> Callable[[], None] | None:
    """What the child does between fork and exec: pin its CPUs, and ask to die with this process."""
    die_with_parent = die_with_parent_hook()
    if not cpus:
        return die_with_parent

    def pin_and_tie() -> None:
        os.sched_setaffinity(0, cpus)
        if die_with_parent is not None:
            die_with_parent()

    return pin_and_tie


class _Stops:
    """Counts how often the worker was stopped (SIGSTOP, SIGTSTP, a debugger) while it ran. The kernel tells the
    parent with SIGCHLD: the handler reads the stop with waitid(WSTOPPED), which never reaps an exit, and the
    orchestrator keeps sleeping (PEP 475 resumes its wait). Main thread only, where Python runs signal handlers."""

    def __init__(self, pid: int) -> None:
        self.pid, self.count = pid, 0
        self._previous: Any = None  # the SIGCHLD handler before ours, put back on exit

    def _handle(self, signum: int, frame: Any) -> None:
        with contextlib.suppress(ChildProcessError, OSError):
            info = os.waitid(os.P_PID, self.pid, os.WSTOPPED | os.WNOHANG)
            if info is not None and info.si_code == os.CLD_STOPPED:
                self.count += 1

    def __enter__(self) -> _Stops:
        if threading.current_thread() is threading.main_thread():
            self._previous = signal.signal(signal.SIGCHLD, self._handle)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._previous is not None:
            signal.signal(signal.SIGCHLD, self._previous)


STOPPED_WARNING = ("the worker was stopped {count} time(s) (SIGSTOP, SIGTSTP or a debugger) and resumed: an iteration "
                   "that spanned a pause timed the pause too")


def _watch(pid: int, deadline: float, memory_limit: int | None) -> tuple[str | None, WorkerProcess]:
    """Sleep until the worker exits (None) or must be killed ('timeout', 'oom'); it is left unreaped."""
    exits = ExitWatch(pid)
    memory = MemoryWatch(pid, memory_limit) if memory_limit else None
    killed_for: str | None = None
    stops = _Stops(pid)
    try:
        stops.__enter__()
        while True:
            wake = deadline - time.perf_counter()
            if memory is not None:
                wake = min(wake, memory.next_look_in())
            if exits.wait(wake):
                break
            if memory is not None and memory.over_limit():
                killed_for = "oom"
                break
            if time.perf_counter() >= deadline:
                killed_for = "timeout"
                break
    finally:
        stops.__exit__()
        exits.close()
    watched = WorkerProcess(exit_wait=exits.mechanism, memory_limit=memory.info() if memory else None)
    if stops.count:
        watched["stopped"] = stops.count
    return killed_for, watched


class RunningWorkers:
    """The process groups of this orchestrator's live workers, so that a run whose workers run side by side
    (runner/local_jobs.py) kills every one when it stops. A worker leaves the set, its group killed, before it is
    reaped: a group in the set is never one whose pid could have been reused."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._groups: set[int] = set()

    def add(self, pgid: int) -> None:
        with self._lock:
            self._groups.add(pgid)

    def reaping(self, pgid: int) -> None:
        """The worker exited or must go: its group killed and out of the set, before the caller reaps it."""
        with self._lock:
            self._groups.discard(pgid)
            _kill_group(pgid)

    def kill_all(self) -> None:
        with self._lock:
            for pgid in self._groups:
                _kill_group(pgid)


RUNNING = RunningWorkers()


def _kill_group(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


def _python_fault(stderr_tail: str) -> str | None:
    marker = "Fatal Python error"
    index = stderr_tail.find(marker)
    return stderr_tail[index:] if index >= 0 else None


def _read_result(path: Path, exit_code: int, stderr_tail: str) -> WorkerReport:
    """The worker's result.json as a report, once it is checked against the protocol's schema (model/protocol.py):
    a file that breaks it is an error report that names the field, whichever language wrote it."""
    if not path.exists():
        return WorkerReport.failure("no-result", f"worker exited with code {exit_code} and wrote no result",
                                    stderr_tail=stderr_tail)
    try:
        doc = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        return WorkerReport.failure("no-result", f"worker wrote an unreadable result file: {exc}",
                                    stderr_tail=stderr_tail)
    if not isinstance(doc, dict):
        return WorkerReport.failure("no-result", "worker's result file does not follow the protocol: not an object",
                                    stderr_tail=stderr_tail)
    violation = report_violation(doc)
    if violation:
        return WorkerReport.failure("invalid", f"worker's result file does not follow the protocol: {violation}",
                                    stderr_tail=stderr_tail)
    return WorkerReport.from_json(doc)
