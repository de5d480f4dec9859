"""Counting servers: a case's counting processes forked from a set-up process under Valgrind, not started fresh.

A fresh counting process pays Valgrind's start, the interpreter's, the library's imports, the case's setup, its
warm-ups and Valgrind's instrumented translation of the code before it counts a call: most of its CPU
(docs/metrics.md, "A counting server"). A server is a fresh counting worker started with `COLBENCH_COUNT_SERVER`
(workers/python/count_server.py): it pays that once per (environment, case, server) and, at its first timed call,
forks one process per measured process; each forked process makes only the counted calls.

Honesty of the counts: what a fresh process varies (hash seed, address-space layout, heap state) a forked one
shares with its server: two processes of one server agree within 0.003-0.012% where fresh processes spread 0.04%
(the placebo), and where a case's counts sit on two levels (pyarrow 17's Parquet read, 187.4 M or 188.6 M) each
server's processes all sit on its one (docs/metrics.md). A server is one draw of what a process varies, and the
statistics count processes (analysis/verdicts.py: the process is the unit of replication). So a server forks at most
one process of a case on a side (`PROCESSES_PER_SERVER`): process i of a side comes from its server `server_slot(i)`,
started fresh with its own `PYTHONHASHSEED` (drawn here, recorded in the result) and layout, and every counted
process names its server (`measure.instructions.server`). A side's processes are as many draws as fresh processes
would be. What a server then saves is what its processes share across cases: a suite server (runner/suite_server.py)
forks process i of every case of the suite; a case's own server, one process, costs more than a fresh one
(`servers_pay`), and serves only when asked (`--counting-server`).
A case's bytecode is compiled natively before its first counting process (runner/compile_pass.py): a server that
compiled what it imported reached its first timed call with another heap, and passed that to every process it forked
(+1.9% on the placebo, the first server of each new home).
"""

from __future__ import annotations

import atexit
import contextlib
import dataclasses
import hashlib
import json
import os
import random
import select
import signal
import subprocess
import tempfile
import threading
import time
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from colbench.model.records import CaseSpec, WorkerReport
from colbench.runner.isolate import STDERR_TAIL_LINES, WorkerLaunch, WorkerOutcome, _read_result, _tail
from colbench.runner.lifeline import die_with_parent_hook, exec_dir_prefix
from colbench.runner.worker_wait import MemoryWatch
from colbench.workers.python.callgrind_probe import DUMP_DIR_VAR, LIB_VAR

#: servers of a side at the first look (2 processes a side): each its own hash seed and address-space layout
SERVERS_PER_SIDE = 2
#: processes of one case and side that one server forks at most: processes of a server share what a process varies
#: (an A/A of 5 cases, 3 processes a server: `to_pandas` sat 0.23% apart by server, its processes 0.02-0.1% apart
#: within one), so each is its own server's, as each fresh process is its own draw
PROCESSES_PER_SERVER = 1
#: servers alive at once (each a set-up case under Valgrind: 0.3-1 GB of memory for a pyarrow read)
MAX_SERVERS = 8
WORKER_MODULE = "colbench.worker"
#: the variable that makes a counting worker a server (workers/python/count_server.py SERVE_VAR)
SERVE_VAR = "COLBENCH_COUNT_SERVER"


#: the fewest cases a run's suite servers serve: each forks one process of every case, and its own start costs
#: about one fresh process
SUITE_FROM_CASES = 3


def servers_pay(cases: int) -> bool:
    """Whether counting servers cost less than fresh processes for a run (`run`'s default). A server forks at most
    one process of a case and side (`PROCESSES_PER_SERVER`), so what it saves is shared across cases: a suite
    server forks process i of every case (runner/suite_server.py) and pays from SUITE_FROM_CASES cases on; a
    case's own server forks one process and costs a fresh process and a forked trial call more, so it never pays
    (`--counting-server` still asks for it)."""
    return server_scope(cases) == "suite"


def server_scope(cases: int) -> str:
    """What a run's counting servers hold: from 3 cases on the suite (runner/suite_server.py: imported once per side
    and slot, one process forked per case and process, each setting its case up as a fresh process does), where a
    server's forks are spread over the cases; for fewer, a case each (forked after its setup, one process a server:
    only when asked, `servers_pay`)."""
    return "suite" if cases >= SUITE_FROM_CASES else "case"


class ServerUnavailable(RuntimeError):
    """This case cannot be counted by a server (the message says why); it is counted in fresh processes."""


@dataclass
class _Server:
    key: str
    slot: int
    popen: subprocess.Popen[bytes]
    requests: IO[str]
    replies: IO[str]
    folder: tempfile.TemporaryDirectory[str]
    hash_seed: int
    started_at: float
    phases: dict[str, float] = field(default_factory=dict)
    user_s: float = 0.0
    ready_s: float = 0.0
    children: int = 0
    buffer: str = ""

    @property
    def stderr_path(self) -> Path:
        return Path(self.folder.name) / "stderr.log"

    def info(self, child_index: int) -> dict[str, Any]:
        """What a counted process's record says of the server it was forked from."""
        return {"slot": self.slot, "pid": self.popen.pid, "hash_seed": self.hash_seed, "child": child_index,
                "setup_cpu_s": round(self.user_s, 3), "ready_s": round(self.ready_s, 3), "phases": self.phases}


def server_command(command: list[str]) -> list[str]:
    """The server's command for a worker command: the Python worker itself (`python -m colbench.worker`), which
    `SERVE_VAR` turns into a server; ServerUnavailable for other runtimes' workers."""
    if len(command) >= 2 and command[-2:] == ["-m", WORKER_MODULE]:
        return list(command)
    raise ServerUnavailable("only Python workers are counted by a server")


def server_key(spec: CaseSpec, launch: WorkerLaunch, side: str = "") -> str:
    """What makes two counting processes the same case on the same side: the side's name (two sides never share a
    server, even of one environment: an A/A comparison stays one), the command, the variables and the case, less
    what differs per process (seed, scratch and dump folders, the random-size variable)."""
    case = {k: v for k, v in spec.to_json().items() if k not in ("seed", "scratch_dir")}
    env = {k: v for k, v in launch.env.items() if k not in ("COLBENCH_ENV_OFFSET", DUMP_DIR_VAR)}
    text = json.dumps([side, launch.command, env, case, launch.cwd and str(launch.cwd)], sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:20]


class CountServers:
    """The live servers of this orchestrator, by case and slot. Safe for processes counted side by side
    (runner/local_jobs.py): a server serves one request at a time (its slot's lock, held from its start to the
    forked process's reply), and a server busy in another thread is never the one closed to make room."""

    def __init__(self, max_servers: int = MAX_SERVERS) -> None:
        self.max_servers = max_servers
        self._live: OrderedDict[tuple[str, int], _Server] = OrderedDict()
        #: cases found not to survive a fork: counted fresh from then on, with the reason
        self.unforkable: dict[str, str] = {}
        self._guard = threading.RLock()
        self._locks: dict[tuple[str, int], threading.Lock] = {}

    def count(self, spec: CaseSpec, launch: WorkerLaunch, valgrind: list[str], slot: int,
              side: str = "") -> WorkerOutcome:
        """One counted process of `spec`, forked from the case's server number `slot` (started if need be).
        `launch` is the fresh counting launch (runner/instructions.py `counting_launch`): its command under Valgrind,
        variables, timeout and memory limit; `valgrind` the Valgrind part of its command. ServerUnavailable when
        this case must be counted fresh."""
        key = server_key(spec, launch, side)
        with self.serving(key, slot):
            if key in self.unforkable:
                raise ServerUnavailable(self.unforkable[key])
            server = self._live_server(key, slot)
            if server is None:
                server = self._start(key, slot, spec, launch, valgrind)
            try:
                return self._fork(server, spec, launch)
            finally:
                if self._one_fork_each:  # a case's server forks one process (PROCESSES_PER_SERVER): its work is done
                    self._drop((key, slot))

    #: whether a server is done after one fork: a case's own (`PROCESSES_PER_SERVER`), not a suite's (SuiteServers)
    _one_fork_each = PROCESSES_PER_SERVER == 1

    @contextlib.contextmanager
    def serving(self, key: str, slot: int) -> Iterator[None]:
        """Held while a request of server (`key`, `slot`) is made: one at a time."""
        with self._guard:
            lock = self._locks.setdefault((key, slot), threading.Lock())
        with lock:
            yield

    def _live_server(self, key: str, slot: int) -> _Server | None:
        """The server of (`key`, `slot`) if it is alive, made the most recently used."""
        with self._guard:
            server = self._live.get((key, slot))
            if server is None or server.popen.poll() is not None:
                return None
            self._live.move_to_end((key, slot))
            return server

    def close(self) -> None:
        with self._guard:
            servers = list(self._live.values())
            self._live.clear()
        for server in servers:
            self._stop(server)

    def kill_all(self) -> None:
        """Every live server's group killed now (a stop signal while processes are counted side by side): a
        thread waiting on a server's reply wakes to its end."""
        with self._guard:
            for server in self._live.values():
                self._kill_group(server)

    def _start(self, key: str, slot: int, spec: CaseSpec, launch: WorkerLaunch, valgrind: list[str]) -> _Server:
        python = server_command(launch.command[len(valgrind):])
        folder = tempfile.TemporaryDirectory(prefix=exec_dir_prefix())
        base = Path(folder.name)
        (base / "scratch").mkdir()
        (base / "dumps").mkdir()
        case_path = base / "case.json"
        case_path.write_text(json.dumps(dataclasses.replace(spec, scratch_dir=str(base / "scratch")).to_json(),
                                        default=str))
        server = self._spawn(key, slot, [*valgrind, *python, str(case_path), str(base / "result.json")], launch,
                             folder, SERVE_VAR, "counting server")
        ready = self._reply(server, launch)
        if ready.get("ready"):
            server.phases = {k: float(v) for k, v in (ready.get("phases") or {}).items()}
            server.user_s = sum(server.phases.values())
            server.ready_s = time.perf_counter() - server.started_at
            return server
        failed = base / "result.json"
        report = _read_result(failed, 0, _tail(base / "stderr.log")) if failed.exists() else None
        self._drop((key, slot))
        if ready.get("unforkable"):
            self.unforkable[key] = str(ready["unforkable"])
            raise ServerUnavailable(self.unforkable[key])
        if report is not None:  # the case failed before its first timed call: every process of it gets that error
            raise _SetupFailed(report)
        raise ServerUnavailable(f"the counting server did not start: {ready.get('error', 'no reply')}")

    def _fork(self, server: _Server, spec: CaseSpec, launch: WorkerLaunch) -> WorkerOutcome:
        with tempfile.TemporaryDirectory(prefix=exec_dir_prefix()) as tmp:
            result_path = Path(tmp) / "result.json"
            return self._request(server, {"result": str(result_path), "seed": spec.seed}, result_path, launch,
                                 "counting server")

    def _spawn(self, key: str, slot: int, command: list[str], launch: WorkerLaunch,
               folder: tempfile.TemporaryDirectory[str], var: str, what: str) -> _Server:
        """A server process started under `command` with its own hash seed and layout, its request and reply pipes
        named in `var` (a case's counting server, or a suite server: runner/suite_server.py), and kept live (the
        least recently used closed first when `max_servers` are)."""
        self._drop((key, slot))
        self._make_room()
        base = Path(folder.name)
        hash_seed = random.SystemRandom().randrange(1, 2**32)
        req_r, req_w = os.pipe()
        rep_r, rep_w = os.pipe()
        env = {**launch.env, "PYTHONHASHSEED": str(hash_seed), DUMP_DIR_VAR: str(base / "dumps"),
               "COLBENCH_ENV_OFFSET": "x" * random.randrange(0, 4096), var: f"{req_r},{rep_w}"}
        assert LIB_VAR in env, "a counting launch names the callgrind helper"
        started = time.perf_counter()
        try:
            with open(base / "stdout.log", "wb") as out, open(base / "stderr.log", "wb") as err:
                popen = subprocess.Popen(command, stdout=out, stderr=err, stdin=subprocess.DEVNULL, env=env,
                                         cwd=launch.cwd, start_new_session=True, preexec_fn=die_with_parent_hook(),
                                         pass_fds=(req_r, rep_w))
        except (OSError, subprocess.SubprocessError) as exc:
            os.close(req_w)
            os.close(rep_r)
            folder.cleanup()
            raise ServerUnavailable(f"cannot start a {what}: {exc}") from None
        finally:
            os.close(req_r)
            os.close(rep_w)
        server = _Server(key, slot, popen, os.fdopen(req_w, "w"), os.fdopen(rep_r, "r"), folder, hash_seed, started)
        with self._guard:
            self._live[(key, slot)] = server
        return server

    def _make_room(self) -> None:
        """Close the least recently used idle servers while `max_servers` are alive (a busy one is left: more may
        live for a moment than the cap when every one is busy)."""
        while True:
            with self._guard:
                if len(self._live) < self.max_servers:
                    return
                idle = [k for k in self._live if not (self._locks.get(k) and self._locks[k].locked())]
                if not idle:
                    return
                server = self._live.pop(idle[0])
            self._stop(server)

    def _request(self, server: _Server, request: dict[str, Any], result_path: Path, launch: WorkerLaunch,
                 what: str, **info: Any) -> WorkerOutcome:
        """One forked process: the request sent, the orchestrator asleep on the reply, the child's result read as a
        fresh worker's is, its CPU its own (the server's `wait4`); `info` added to the record's `server`."""
        started, wall_started = time.perf_counter(), time.time()
        try:
            server.requests.write(json.dumps(request) + "\n")
            server.requests.flush()
        except OSError as exc:
            self._drop((server.key, server.slot))
            raise ServerUnavailable(f"the {what} went away: {exc}") from None
        reply = self._reply(server, launch)
        elapsed = time.perf_counter() - started
        index = server.children
        server.children += 1
        if "exit_code" not in reply:  # killed for its timeout or memory, or died: the next request starts anew
            self._drop((server.key, server.slot))
            report = WorkerReport.failure(reply.get("kind", "crash"), reply.get("error", f"the {what} died"),
                                          stderr_tail=_tail(server.stderr_path, STDERR_TAIL_LINES))
            return WorkerOutcome(report, {"spawn_to_result_s": elapsed, "started_at": wall_started})
        code = int(reply["exit_code"])
        report = _read_result(result_path, code, _tail(server.stderr_path)) if code >= 0 else \
            WorkerReport.failure("crash", f"counted process killed by signal {-code}",
                                 stderr_tail=_tail(server.stderr_path))
        process = {"spawn_to_result_s": elapsed, "started_at": wall_started, "exit_code": code,
                   "child_user_s": float(reply["user_s"]), "child_sys_s": float(reply["sys_s"]),
                   "child_maxrss_bytes": int(reply.get("maxrss_bytes") or 0), "cpus": None,
                   "server": {**server.info(index), **info}}
        return WorkerOutcome(report, process)  # type: ignore[arg-type]

    def _reply(self, server: _Server, launch: WorkerLaunch) -> dict[str, Any]:
        """The server's next reply line; sleeps on its pipe until then, waking for the memory watch. A timeout or the
        memory limit kills the server: the reply says so."""
        deadline = time.perf_counter() + launch.timeout_s
        memory = MemoryWatch(server.popen.pid, launch.memory_limit_bytes) if launch.memory_limit_bytes else None
        fd = server.replies.fileno()
        while "\n" not in server.buffer:
            wake = deadline - time.perf_counter()
            if memory is not None:
                wake = min(wake, memory.next_look_in())
            readable, _, _ = select.select([fd], [], [], max(0.0, wake))
            if readable:
                chunk = os.read(fd, 65536).decode()
                if not chunk:
                    code = server.popen.wait()
                    return {"kind": "crash", "error": f"the counting server exited ({code}) without a reply"}
                server.buffer += chunk
                continue
            if memory is not None and memory.over_limit():
                self._kill(server)
                return {"kind": "oom", "error": f"memory {memory.last_bytes / 2**20:.0f} MiB passed the limit of "
                        f"{memory.limit_bytes / 2**20:.0f} MiB: killed (--memory-limit)"}
            if time.perf_counter() >= deadline:
                self._kill(server)
                return {"kind": "timeout", "error": f"no result after {launch.timeout_s:g} s: killed (raise "
                        "--timeout if the case is just slow)"}
        line, server.buffer = server.buffer.split("\n", 1)
        return dict(json.loads(line))

    def _drop(self, key: tuple[str, int]) -> None:
        with self._guard:
            server = self._live.pop(key, None)
        if server is not None:
            self._stop(server)

    def _stop(self, server: _Server) -> None:
        """End of requests: the server tears its case down and exits; it gets a few seconds, then its group is
        killed (a forked process included)."""
        with contextlib.suppress(OSError, ValueError):
            server.requests.close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            server.popen.wait(timeout=30)
        self._kill(server)
        with contextlib.suppress(OSError, ValueError):
            server.replies.close()
        server.folder.cleanup()

    @classmethod
    def _kill(cls, server: _Server) -> None:
        cls._kill_group(server)
        with contextlib.suppress(ChildProcessError):
            server.popen.wait()

    @staticmethod
    def _kill_group(server: _Server) -> None:
        if server.popen.returncode is None:  # unreaped: its group id is still its own
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(server.popen.pid, signal.SIGKILL)


class _SetupFailed(ServerUnavailable):
    """The case's setup failed in the server: the report every counted process of it gets."""

    def __init__(self, report: WorkerReport) -> None:
        super().__init__("setup failed")
        self.report = report


#: one set per orchestrator, closed when it exits
SERVERS = CountServers()
atexit.register(SERVERS.close)


def server_slot(process_index: int) -> int:
    """The server of a side's process i: server i (`PROCESSES_PER_SERVER`: one process of a case a server), the
    first look's processes 0 and 1 from the first two."""
    return process_index // PROCESSES_PER_SERVER


def count_in_server(spec: CaseSpec, launch: WorkerLaunch, valgrind: list[str], side: str,
                    process_index: int) -> WorkerOutcome:
    """A counted process of `spec` on `side` from this orchestrator's servers (`server_slot`); ServerUnavailable
    when it must be fresh."""
    try:
        return SERVERS.count(spec, launch, valgrind, server_slot(process_index), side)
    except _SetupFailed as exc:
        return WorkerOutcome(exc.report, {})
