"""The suite server: one counting worker under Valgrind, started once per suite and side, that forks one fresh
counting process per (case, process) request (runner/suite_server.py starts it with `COLBENCH_SUITE_SERVER`).

A fresh counting process of an asv case pays Valgrind's and the interpreter's start and the suite's imports (the
library under test with them) before its case's setup: 5-14.5 s of CPU a process on pyarrow's suite, more than its
counted calls. asv's own `forkserver` launch method (asv_runner/server.py) imports the whole suite once ("preimport":
every module, import errors ignored) and forks one process per benchmark. This is that, under callgrind, with less
imported before the fork: the server is `python -m colbench.worker PRELOAD.json -` started exactly as a counting
worker is (the same command, variables and callgrind options), it looks its first case's benchmark up as a fresh
worker does (colbench's module of the source, asv_runner's benchmark type: not the suite's modules nor the library,
which each process imports in its case's setup as a fresh one does; runner/suite_server.py `import_group` says why)
and answers ready; then per request line
`{"case": CASE_JSON, "result": RESULT_JSON}` it forks, and the forked process goes on as `python -m colbench.worker
CASE_JSON RESULT_JSON` would, from reading its case on: the benchmark's lookup (its module imported already), its
setup, warm-ups, warm-up count and counted calls, its own result file. Its CPU is its own (`wait4`, in the reply).

Forking before the case's setup, not after it (as the case-level counting server, count_server.py, does), keeps a
process's path from its setup on a fresh worker's: the state of CPython's small-object pools at the counted call is
the path the process took to it (docs/metrics.md, "A counting server").

Only the standard library and the worker's own modules are imported here, Python 3.8-compatible: this runs in the
environment under test.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import IO, Any, Callable

#: the variable that makes a counting worker a suite server: the file descriptors of its request and reply pipes
SUITE_VAR = "COLBENCH_SUITE_SERVER"


def _send(out: IO[str], message: dict[str, Any]) -> None:
    # as count_server.py's, not imported from it: a forked process must hold only the modules a fresh worker holds
    out.write(json.dumps(message, default=str) + "\n")
    out.flush()


#: the value of SUITE_VAR that asks only for the imports, natively, then exit (runner/suite_server.py compile_first)
COMPILE_ONLY = "compile"


def serve(fds: str, preload_path: Path, preload: Callable[[dict[str, Any]], None]) -> tuple[Path, Path] | None:
    """Import what a fresh worker imports before its case's setup (`preload`, the worker's: its first case's
    benchmark looked up as a fresh worker looks it up, and nothing else, so that a forked process reaches its case's
    setup with a fresh worker's modules),
    answer ready, then fork one process per request. Returns only in a forked process, with its case and result
    paths (or None at once when `fds` is COMPILE_ONLY); the server itself ends with SystemExit once the requests
    end."""
    doc = json.loads(preload_path.read_text())
    if fds == COMPILE_ONLY:  # natively: the modules a forked process imports too (the probe opens after setup)
        preload(doc)
        import colbench.workers.python.callgrind_probe  # noqa: F401

        return None
    requests_fd, replies_fd = (int(fd) for fd in fds.split(","))
    requests, replies = os.fdopen(requests_fd, "r"), os.fdopen(replies_fd, "w")
    preload(doc)
    user, system = os.times()[:2]
    _send(replies, {"ready": True, "pid": os.getpid(), "hash_seed": os.environ.get("PYTHONHASHSEED"),
                    "setup_cpu_s": round(user + system, 3)})
    dumps = os.environ.get("COLBENCH_CALLGRIND_DIR")
    for line in requests:
        request = json.loads(line)
        pid = os.fork()
        if pid == 0:  # the measured process: a fresh counting worker from its case on
            requests.close()
            replies.close()
            os.environ.pop(SUITE_VAR, None)  # what the case starts is not a server
            return Path(request["case"]), Path(request["result"])
        _, status, usage = os.wait4(pid, 0)
        code = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
        if dumps:  # callgrind's own dump at the process's exit (the counts were read from numbered ones)
            Path(dumps, f"callgrind.out.{pid}").unlink(missing_ok=True)
        _send(replies, {"exit_code": code, "user_s": usage.ru_utime, "sys_s": usage.ru_stime,
                        "maxrss_bytes": usage.ru_maxrss * 1024})
    sys.stdout.flush()
    raise SystemExit(0)

