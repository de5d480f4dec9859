"""The counting server: `python -m colbench.workers.python.count_server case.json REQUESTS_FD REPLIES_FD`, started
under Valgrind's callgrind by the orchestrator (runner/count_server.py).

A counting process started fresh pays Valgrind's start, the interpreter's, the library's imports, the case's setup,
its uninstrumented warm-ups and the first instrumented call (Valgrind translates all code again with
instrumentation) before it counts anything: 5-6 s of CPU of the 100k-row Parquet read's 9.5-10.6 s at load 1
(docs/metrics.md). The server pays that once per (environment, case, server) and then forks one process per measured
process, as asv's `forkserver` launch method does for wall time (asv_runner/server.py: import once, fork per
benchmark). Each forked process inherits the set-up case and Valgrind's instrumented translations, makes the timed
counted calls, writes its own result.json and exits; its CPU is what its counted calls cost.

What a fork shares with its server, and so with the other processes of that server: the hash seed, the address-space
layout, the heap as setup and warm-ups left it, and the imports the first call made. The orchestrator therefore starts
more than one server per side (each with its own `PYTHONHASHSEED` and layout) and spreads a side's processes over
them, and each forked process perturbs its own heap with an allocation of random size before it counts
(`_perturb_heap`), as a fresh process's differing environment shifts its stack. docs/metrics.md ("A counting server")
has the measured comparison with fresh processes.

Protocol (one JSON object a line): the server writes `{"ready": true, ...}` once set up, or `{"ready": false,
"report": {...}}` with the error report every process of it gets. Then per request line `{"result": PATH, "seed": N}`
it forks; the process writes PATH and exits; the server answers `{"exit_code": ..., "user_s": ..., "sys_s": ...}`
(the process's own rusage, from `wait4`). End of the requests: the server tears the case down and exits.

Before it instruments anything the server forks once to see that the case survives a fork (a library whose threads
do not, e.g. one without `pthread_atfork` handlers, hangs or dies there): if not, its ready line says why and the
orchestrator counts that case in fresh processes.

Only the standard library and the worker's own modules are imported here, Python 3.8-compatible: this runs in the
environment under test.
"""

from __future__ import annotations

import gc
import json
import os
import random
import signal
import sys
import time
from pathlib import Path
from typing import IO, Any

from colbench.model.worker_records import PROTOCOL, CaseSpec, WorkerReport
from colbench.workers.python.worker import (
    CaseState,
    InvalidCase,
    _finish_report,
    _Phases,
    _runtime,
    benchmark_lookup,
    finish_measuring,
    guarded,
    iterate,
    loaded_versions,
    set_up,
    start_counting,
    write_atomically,
)

#: the most a forked trial call may take, as a multiple of the CPU seconds the server's warm-ups took (at least
#: TRIAL_MIN_S): uninstrumented it costs what a warm-up does
TRIAL_FACTOR = 10
TRIAL_MIN_S = 60


def _send(out: IO[str], message: dict[str, Any]) -> None:
    out.write(json.dumps(message, default=str) + "\n")
    out.flush()


def _wait_at_most(pid: int, limit_s: float) -> int | None:
    """The wait status of a child that ends within `limit_s`, else None. Polls (the server measures nothing while it
    waits for its trial) rather than set an alarm: no Python signal handler is installed in a process that counts (one
    seemed to make later calls count more; docs/metrics.md says how far that was confirmed)."""
    deadline = time.monotonic() + limit_s
    pause = 0.01
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return status
        if time.monotonic() >= deadline:
            return None
        time.sleep(pause)
        pause = min(0.5, pause * 2)


def _exit_code(status: int) -> int:
    """A wait status as an exit code, negative for a signal (os.waitstatus_to_exitcode, which Python 3.8 lacks)."""
    if os.WIFSIGNALED(status):
        return -os.WTERMSIG(status)
    return os.WEXITSTATUS(status)


def _fork_trial(case: CaseState, warmup_cpu_s: float) -> str | None:
    """One uninstrumented call in a forked process: None when it ran through, else why this case cannot be forked."""
    bench, ctx = case.bench, case.ctx
    assert bench is not None and ctx is not None
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the forked trial
        code = 0
        try:
            bench.before_each(ctx)
            bench.run(ctx)
        except BaseException:
            code = 3
        os._exit(code)
    limit = max(TRIAL_MIN_S, TRIAL_FACTOR * warmup_cpu_s)
    status = _wait_at_most(pid, limit)
    if status is None:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        return (f"a forked process of this case made no progress in {limit:.0f} s (its library's threads do not "
                "survive a fork)")
    code = _exit_code(status)
    if code != 0:
        return f"a forked process of this case failed (exit status {code})"
    return None


def _perturb_heap() -> bytearray:
    """An allocation of random size kept for the process's life: the heap after it differs per forked process, as a
    fresh process's does with its environment's size and the hash seed's effect on what it allocates."""
    return bytearray(random.SystemRandom().randrange(16, 1 << 16))


def _child(spec: CaseSpec, report: WorkerReport, case: CaseState, result_path: Path, seed: int) -> None:
    """In the forked process: the measured iterations, counted; the result file; exit without cleanup (the server
    owns the case's setup and tears it down once)."""
    code = 0
    try:
        keep = _perturb_heap()
        assert case.probe is not None and case.ctx is not None and case.bench is not None
        case.probe.forked()
        case.ctx.seed = seed
        case.phases = _Phases(True)
        ok = guarded(report, lambda: iterate(spec, report, case, start=spec.warmup))
        if ok:
            finish_measuring(report, case.bench, case.ctx)
        case.probe.stop()  # exit at native speed
        case.phases.mark("counting")
        case.phases.seconds.pop("start", None)  # the fork: nothing; start, setup and warm-ups are the server's
        _finish_report(spec, report, case)
        del keep
        write_atomically(result_path, report.to_json())
    except BaseException:  # pragma: no cover - the orchestrator reports a process that wrote no result
        code = 1
    finally:
        os._exit(code)


def serve(case_path: Path, requests: IO[str], replies: IO[str]) -> int:

    doc = json.loads(case_path.read_text())
    report = WorkerReport(runtime=_runtime())
    case = CaseState(True)
    spec: CaseSpec | None = None

    def prepare() -> None:
        nonlocal spec
        if doc.get("protocol") != PROTOCOL:
            raise InvalidCase(f"case protocol {doc.get('protocol')!r}; this worker speaks {PROTOCOL}")
        spec = CaseSpec.from_json(doc)
        report.threads = {"requested": spec.threads}
        report.allocator = {"requested": spec.allocator, "actual": None}
        report.cache = {"requested": spec.cache, "achieved": None}
        set_up(spec, report, case, benchmark_lookup(spec))
        iterate(spec, report, case, stop=spec.warmup)

    if not guarded(report, prepare) or spec is None:
        report.versions = loaded_versions()
        _send(replies, {"ready": False, "report": report.to_json()})
        return 0
    warm = case.phases
    warm_cpu = sum(os.times()[:2])
    unforkable = _fork_trial(case, warm_cpu)
    if unforkable:
        _send(replies, {"ready": False, "unforkable": unforkable})
        return 0
    if not guarded(report, lambda: start_counting(report, case)):
        report.versions = loaded_versions()
        _send(replies, {"ready": False, "report": report.to_json()})
        return 0
    warm.mark("counting")
    _send(replies, {"ready": True, "pid": os.getpid(), "phases": warm.seconds,
                    "hash_seed": os.environ.get("PYTHONHASHSEED")})
    gc.collect()
    for line in requests:
        request = json.loads(line)
        pid = os.fork()
        if pid == 0:  # pragma: no cover - runs in the forked process, which exits in _child
            _child(spec, report, case, Path(request["result"]), int(request.get("seed", spec.seed)))
        _, status, usage = os.wait4(pid, 0)
        code = _exit_code(status)
        _send(replies, {"exit_code": code, "user_s": usage.ru_utime, "sys_s": usage.ru_stime,
                        "maxrss_bytes": usage.ru_maxrss * 1024})
    if case.probe is not None:
        case.probe.stop()
    bench, ctx = case.bench, case.ctx
    if bench is not None and ctx is not None:
        guarded(report, lambda: bench.teardown(ctx))
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 3:
        print("usage: python -m colbench.workers.python.count_server CASE_JSON REQUESTS_FD REPLIES_FD",
              file=sys.stderr)
        return 2
    import faulthandler

    faulthandler.enable()
    with open(int(argv[1])) as requests, open(int(argv[2]), "w") as replies:
        return serve(Path(argv[0]), requests, replies)


if __name__ == "__main__":
    sys.exit(main())
