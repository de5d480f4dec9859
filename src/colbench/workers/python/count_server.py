"""The counting server: a fresh counting worker (`python -m colbench.worker case.json result.json` under Valgrind's
callgrind) that, started with `COLBENCH_COUNT_SERVER=REQUESTS_FD,REPLIES_FD` by the orchestrator
(runner/count_server.py), turns into a fork server at its first timed call.

A counting process started fresh pays Valgrind's start, the interpreter's, the library's imports, the case's setup,
its uninstrumented warm-ups and the first instrumented call (Valgrind translates all code again with
instrumentation) before it counts anything: most of its CPU (docs/metrics.md). The server pays that once per
(environment, case, server) and then forks one process per measured process, as asv's `forkserver` launch method
does for wall time (asv_runner/server.py: import once, fork per benchmark). Each forked process inherits the set-up
case and Valgrind's instrumented translations, goes on with the worker's own loop at its first timed call, writes its
own result.json and exits: its CPU is what its counted calls cost.

Why the server is the worker itself, stopped where a fresh worker would make its first timed call, and not a
program of its own: a counted call that allocates many small Python objects counts what the state of CPython's
small-object pools makes it cost, and that state is the path the process took to the call. A server with its own
entry point (its own imports, its own reading of the case) reached the call along another path, and on a placebo of
2,000 int allocations its processes counted +1.9% over fresh ones in about half of its servers (docs/metrics.md, "A
counting server"). Forked at this point, a process has the heap of a fresh worker at that call, but for the few
objects of one request line.

What a fork still shares with its server, and so with the other processes of that server: the hash seed, the
address-space layout, the heap. The orchestrator therefore starts more than one server per side (each with its own
`PYTHONHASHSEED` and layout) and spreads a side's processes over them.

Protocol (one JSON object a line): the server writes `{"ready": true, ...}` at its first timed call, or exits without
a reply, leaving its error in result.json as a fresh worker would (a case whose setup fails). Then per request line
`{"result": PATH, "seed": N}` it forks; the process writes PATH and exits; the server answers `{"exit_code": ...,
"user_s": ..., "sys_s": ...}` (the process's own rusage, from `wait4`). End of the requests: the server tears the
case down and exits (its own result.json is not written).

Before it answers ready the server forks once to see that the case survives a fork (a library whose threads do not,
e.g. one without `pthread_atfork` handlers, hangs or dies there): if not, its ready line says why and the
orchestrator counts that case in fresh processes.

Only the standard library and the worker's own modules are imported here, Python 3.8-compatible: this runs in the
environment under test, and only in a server, once it is set up.
"""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path
from typing import IO, Any, Callable

#: the variable that makes a counting worker a server: the file descriptors of its request and reply pipes
SERVE_VAR = "COLBENCH_COUNT_SERVER"
#: the most a forked trial call may take, as a multiple of the CPU seconds the server took to get there (at least
#: TRIAL_MIN_S)
TRIAL_FACTOR = 10
TRIAL_MIN_S = 60


def _send(out: IO[str], message: dict[str, Any]) -> None:
    out.write(json.dumps(message, default=str) + "\n")
    out.flush()


def _wait_at_most(pid: int, limit_s: float) -> int | None:
    """The wait status of a child that ends within `limit_s`, else None. Polls (the server measures nothing while it
    waits for its trial) rather than set an alarm: no Python signal handler is installed in a process that counts."""
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


def _fork_trial(case: Any) -> str | None:
    """One call in a forked process, uninstrumented: None when it ran through, else why this case cannot be
    forked."""
    bench, ctx, probe = case.bench, case.ctx, case.probe
    assert bench is not None and ctx is not None and probe is not None
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the forked trial
        code = 0

        def call() -> None:
            bench.before_each(ctx)
            bench.run(ctx)

        try:
            probe.uninstrumented(call)
        except BaseException:
            code = 3
        os._exit(code)
    limit = max(TRIAL_MIN_S, TRIAL_FACTOR * sum(os.times()[:2]))
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


def serve_here(case: Any, fds: str, forked: Callable[[int], None]) -> Path:
    """At the first timed call of a counting worker (after its warm-up count; `case` is the worker's CaseState): answer
    ready, then fork one process per request. Returns only in a forked process, after `forked(seed)` readied it, with
    the path its result goes to; the server itself ends with SystemExit once the requests end (the worker then tears
    the case down, as a fresh one would)."""
    requests_fd, replies_fd = (int(fd) for fd in fds.split(","))
    requests, replies = os.fdopen(requests_fd, "r"), os.fdopen(replies_fd, "w")
    case.phases.mark("counting")  # the warm-up count
    unforkable = _fork_trial(case)
    if unforkable:
        _send(replies, {"ready": False, "unforkable": unforkable})
        raise SystemExit(0)
    _send(replies, {"ready": True, "pid": os.getpid(), "phases": case.phases.seconds,
                    "hash_seed": os.environ.get("PYTHONHASHSEED")})
    for line in requests:
        request = json.loads(line)
        pid = os.fork()
        if pid == 0:  # the measured process: it goes on with the worker's loop
            requests.close()
            replies.close()
            forked(int(request.get("seed", case.ctx.seed)))
            return Path(request["result"])
        _, status, usage = os.wait4(pid, 0)
        _send(replies, {"exit_code": _exit_code(status), "user_s": usage.ru_utime, "sys_s": usage.ru_stime,
                        "maxrss_bytes": usage.ru_maxrss * 1024})
    raise SystemExit(0)
