"""Suite servers: the counting processes of a run of many cases forked from one set-up interpreter per side and
server, not started fresh.

A fresh counting process of an asv case pays Valgrind's and the interpreter's start and the suite's imports (the
library under test among them) before its case's own setup: on pyarrow's asv suite 5-14.5 s of a 11.5-26.8 s
process. The case-level counting server (runner/count_server.py) pays a case's whole setup once, but one server per
(case, side, slot): for a suite of 94 cases that is 376 servers, as many fresh processes as without it. A suite
server (workers/python/suite_server.py) is started exactly as a counting worker is (the same command, variables and
callgrind options), makes the imports a fresh worker makes before its case's setup once (not the suite's modules, as
asv's `forkserver` preimports them, asv_runner/server.py: `import_group` says why), and forks one process per (case,
process) request; each forked process is a fresh counting worker from its case on (setup,
warm-ups, warm-up count, counted calls, its own result), its CPU its own (`wait4`).

Honesty, as for the case-level servers: what a fork shares with its server (hash seed, address-space layout, the
heap of the imports) is one draw of what a process varies, so a server forks at most one process of a case on a
side: process i of every case goes to the side's server `server_slot(i)` = i, each started with its own
`PYTHONHASHSEED` and layout, two sides never share one, and each counted process's record names its server
(`measure.instructions.server`, `scope: "suite"`). The first look's 2 processes a side come from 2 servers a side;
a later look's processes from new ones. The servers live for the orchestrator's life (a session's looks reuse them)
and die with it.

A server that dies, or a process that times out (its server is killed with it: the next request starts another),
is an error or a fresh process, never a wrong count: a request the server cannot take is counted fresh with a
warning (`ServerUnavailable`).
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import json
import subprocess
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from colbench.model.records import CaseSpec
from colbench.runner.count_server import (
    CountServers,
    ServerUnavailable,
    _Server,
    server_command,
    server_slot,
)
from colbench.runner.isolate import WorkerLaunch, WorkerOutcome
from colbench.runner.lifeline import die_with_parent_hook, exec_dir_prefix
from colbench.workers.python.callgrind_probe import DUMP_DIR_VAR
from colbench.workers.python.suite_server import COMPILE_ONLY

#: the variable that makes a counting worker a suite server (workers/python/suite_server.py SUITE_VAR)
SUITE_VAR = "COLBENCH_SUITE_SERVER"
#: suite servers alive at once: one per process index and side (a look of 8 processes a side on 2 sides is 16; a
#: suite server waiting for requests is about 60 MB under Valgrind)
MAX_SUITE_SERVERS = 32


def preload_of(spec: CaseSpec) -> dict[str, Any]:
    """What a suite server does before it forks: look the benchmark of the first case it serves up as a fresh worker
    looks it up (`worker._preload`: colbench's module of the source, not the suite's own modules)."""
    return {"case": spec.to_json()}


def import_group(spec: CaseSpec) -> str:
    """The cases one suite server serves: one source (an asv suite's folder, a pytest file) or colbench's own
    benchmarks. The server imports only what the worker imports before a case's setup (the source's colbench module
    and asv_runner's benchmark type): the suite's module and the library under test are imported by each forked
    process in its case's setup, as in a fresh process, for two reasons measured or read here. Imported before the
    fork, the whole suite (as asv's forkserver imports it) made pyarrow 17's `ScalarAccess.time_as_py` count another
    call-to-call sequence than fresh processes (pandas imported, which that module never imports: another GC and
    heap state), where processes that import in their setup count fresh processes' sequence call for call
    (docs/metrics.md, "A suite server"); and an asv case seeds `random` with its own benchmark's seed before its
    module is imported (benchmarks/asv_suite.py), so module-level random data would be one case's for all."""
    source = spec.source or {}
    return json.dumps({k: str(v) for k, v in sorted(source.items()) if k in ("kind", "root")})


def suite_key(spec: CaseSpec, launch: WorkerLaunch, side: str = "") -> str:
    """What makes two counting processes the same suite server's: the side, the command, the variables (less what
    differs per process), the working folder, and the cases' import group (`import_group`)."""
    env = {k: v for k, v in launch.env.items() if k not in ("COLBENCH_ENV_OFFSET", DUMP_DIR_VAR)}
    text = json.dumps([side, launch.command, env, import_group(spec), launch.cwd and str(launch.cwd)],
                      sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:20]


def compile_first(python: list[str], preload: Path, launch: WorkerLaunch) -> None:
    """Where the counting workers keep their bytecode under colbench's home (PYTHONPYCACHEPREFIX, runner/instructions.py
    `bytecode_cache`: an environment without bytecode), import what the server will import once, natively, before the
    server does under Valgrind. A process that compiles modules reaches its counted call with another heap: on the
    placebo (2,000 int allocations), the first counting process of a new home, fresh or a server, counted 1,676,572
    instructions where every later one counted 1,645,520-1,646,310 (+1.9%), and a server's compiling passes it to
    every process it forks. Best effort: a failure here is the server's to report."""
    if "PYTHONPYCACHEPREFIX" not in launch.env or len(python) < 2 or python[-2:] != ["-m", "colbench.worker"]:
        return
    env = {**launch.env, SUITE_VAR: COMPILE_ONLY}
    command = [*python, str(preload), "-"]
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        subprocess.run(command, env=env, cwd=launch.cwd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, timeout=launch.timeout_s, check=False,
                       preexec_fn=die_with_parent_hook())


class SuiteServers(CountServers):
    """The live suite servers of this orchestrator, by (suite, side) and slot."""

    _one_fork_each = False  # a suite server forks one process of every case

    def __init__(self, max_servers: int = MAX_SUITE_SERVERS) -> None:
        super().__init__(max_servers)
        self._compiled: set[str] = set()

    def count(self, spec: CaseSpec, launch: WorkerLaunch, valgrind: list[str], slot: int,
              side: str = "") -> WorkerOutcome:
        """One counting process of `spec`, forked from its suite's server number `slot` on `side` (started if need
        be); ServerUnavailable when it must be counted fresh."""
        key = suite_key(spec, launch, side)
        with self.serving(key, slot):
            server = self._live_server(key, slot)
            if server is None:
                server = self._start_suite(key, slot, spec, launch, valgrind)
            return self._fork_case(server, spec, launch)

    def _start_suite(self, key: str, slot: int, spec: CaseSpec, launch: WorkerLaunch,
                     valgrind: list[str]) -> _Server:
        python = server_command(launch.command[len(valgrind):])
        folder = tempfile.TemporaryDirectory(prefix=exec_dir_prefix())
        base = Path(folder.name)
        (base / "dumps").mkdir()
        preload = base / "preload.json"
        preload.write_text(json.dumps(preload_of(spec)))
        with self.serving(key, -1):  # once per suite and side: its other slot's start waits for it
            if key not in self._compiled:
                compile_first(python, preload, launch)
                self._compiled.add(key)
        server = self._spawn(key, slot, [*valgrind, *python, str(preload), "-"], launch, folder, SUITE_VAR,
                             "suite server")
        ready = self._reply(server, launch)
        if not ready.get("ready"):
            self._drop((key, slot))
            raise ServerUnavailable(f"the suite server did not start: {ready.get('error', 'no reply')}")
        server.user_s = float(ready.get("setup_cpu_s") or 0.0)
        server.phases = {"start_and_imports": server.user_s}
        server.ready_s = time.perf_counter() - server.started_at
        return server

    def _fork_case(self, server: _Server, spec: CaseSpec, launch: WorkerLaunch) -> WorkerOutcome:
        """The request: the case file written as a fresh worker's is (its own scratch folder), the process forked,
        its result read as a fresh worker's is."""
        with tempfile.TemporaryDirectory(prefix=exec_dir_prefix()) as tmp:
            case_path, result_path = Path(tmp) / "case.json", Path(tmp) / "result.json"
            (Path(tmp) / "scratch").mkdir()
            case_path.write_text(json.dumps(replace(spec, scratch_dir=str(Path(tmp) / "scratch")).to_json(),
                                            default=str))
            return self._request(server, {"case": str(case_path), "result": str(result_path)}, result_path, launch,
                                 "suite server", scope="suite")


#: one set per orchestrator, closed when it exits
SUITE_SERVERS = SuiteServers()
atexit.register(SUITE_SERVERS.close)


def count_in_suite_server(spec: CaseSpec, launch: WorkerLaunch, valgrind: list[str], side: str,
                          process_index: int) -> WorkerOutcome:
    """A counted process of `spec` on `side` from this orchestrator's suite servers (process i from the side's
    server `server_slot(i)`: one process of a case a server); ServerUnavailable when it must be fresh."""
    return SUITE_SERVERS.count(spec, launch, valgrind, server_slot(process_index), side)
