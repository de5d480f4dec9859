"""The `instructions` metric: how many instructions the timed call executes, counted by Valgrind's callgrind.

`colbench run … --measure instructions` (or `--measure wall,instructions`) starts each Python worker under
`valgrind --tool=callgrind --instr-atstart=no` and records, per timed iteration, the instructions the
benchmark's `run` executed — imports, data generation, `setup`, `before_each`, checks and teardown excluded —
as the sample series `instructions`, next to `wall_s` when both are asked for.

How only the timed call is counted — three ways were weighed:

- **Client requests (chosen).** Valgrind's CALLGRIND_* macros are a magic no-op instruction sequence that the
  program executes itself; they need native code, so colbench compiles a 1 KB C helper (`HELPER_SOURCE`) with
  the system `cc` against Valgrind's own `valgrind/callgrind.h` on first use, caches it under
  `$COLBENCH_HOME/valgrind/`, and the worker loads it with ctypes (pytest-codspeed does the same with a cffi
  extension). The worker switches instrumentation on before the first timed iteration (setup and warm-ups run
  uninstrumented, several times faster) and, per iteration, zeroes the counters just before `run` and dumps them
  just after: the dump's `totals:` is that one call, read back and removed at once. The count includes a
  constant ~2,400 instructions of the ctypes round trip (measured on an empty region), nothing else.
- `--toggle-collect=FUNC` on a C function wrapping the call: needs the same compiled helper plus a callback
  through ctypes, and collection toggled that way is per thread, so Arrow's worker threads would be missed.
- Two runs per process count (N timed iterations and 0) and their difference: no C needed, but twice the
  Valgrind runs, one figure per process instead of per iteration, and the difference inherits the noise of two
  whole-process counts (Python start-up and `import pyarrow` are ~10⁹ instructions: 0.05% of that is as big as
  a small case's whole timed region).

What the count is: user-space instructions of the worker process (callgrind's `Ir`), all threads summed —
Valgrind runs threads one at a time, so a multi-threaded case is deterministic only as far as its work split is
(Arrow's CSV and Parquet readers split by blocks: measured identical totals at 1 and 2 threads). Kernel work
(system calls, page faults), waiting (I/O, locks, sleeps) and everything about speed per instruction (caches,
branch prediction, memory bandwidth, SIMD width, frequency) are invisible; see docs/metrics.md.

The Arrow memory pool is left as the case asks (`allocator` param): jemalloc, mimalloc and the system
allocator all run under Valgrind and repeated within 0.1% here, and forcing one would make the `allocator`
cases meaningless. Valgrind runs everything 20–50× slower, so the worker's timeout is `TIMEOUT_FACTOR` times
`--timeout` and the memory limit gets `MEMORY_ALLOWANCE_BYTES` more for Valgrind's own tables. When wall time is
asked for too, each execution is two worker processes, one after the other in the same block: the usual one
(wall, CPU, memory) and one under Valgrind (instructions only); both land in one record, whose `measure` field
says so. Python workers only for now: the R and Java workers have no client-request hook (and Java's JIT
compiles on background threads at varying times, so its counts would not repeat anyway).
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from colbench.model.metrics import metric
from colbench.model.records import CaseSpec, ErrorInfo, MeasureInfo, MemoryUse, WorkerReport
from colbench.paths import colbench_home
from colbench.processes import run_bounded
from colbench.runner.compile_pass import compile_before_counting
from colbench.runner.isolate import WorkerLaunch, WorkerOutcome, run_worker
from colbench.runner.lifeline import exec_dir_prefix
from colbench.workers.python.callgrind_probe import DUMP_DIR_VAR, LIB_VAR, METRIC

TIMEOUT_FACTOR = 50
MEMORY_ALLOWANCE_BYTES = 512 << 20
UNIT = "instructions"

HELPER_SOURCE = """\
/* colbench's callgrind client requests (built on first use; see colbench/runner/instructions.py). */
#include <valgrind/callgrind.h>
int colbench_running_on_valgrind(void) { return RUNNING_ON_VALGRIND; }
void colbench_start(void) { CALLGRIND_START_INSTRUMENTATION; }
void colbench_stop(void) { CALLGRIND_STOP_INSTRUMENTATION; }
void colbench_zero(void) { CALLGRIND_ZERO_STATS; }
void colbench_dump(const char *reason) { CALLGRIND_DUMP_STATS_AT(reason); }
"""

VALGRIND_OPTIONS = (
    "--tool=callgrind",
    "--instr-atstart=no",        # setup runs uninstrumented; the worker switches it on after setup
    "--separate-threads=no",     # one cost table: a dump counts every thread
    "--dump-line=no",            # totals are all colbench reads: keep the dumps small
    f"--callgrind-out-file=%q{{{DUMP_DIR_VAR}}}/callgrind.out.%p",
    "-q",
)


#: Arrow's runtime SIMD dispatch (https://arrow.apache.org/docs/cpp/env_vars.html, ARROW_USER_SIMD_LEVEL) capped
#: under Valgrind on a CPU with AVX-512: Valgrind does not emulate AVX-512, yet pyarrow 18 and 19 pick their
#: AVX-512 bit-unpacking kernels there and die with SIGILL (measured: `UnpackBits512` in libarrow.so.1801 on a
#: Parquet read). AVX2 code runs; the count is then that of the AVX2 path, which the record says.
SIMD_CAP = {"ARROW_USER_SIMD_LEVEL": "AVX2"}


def simd_cap(user_env: dict[str, str]) -> dict[str, str]:
    """The variables that keep native code inside what Valgrind emulates, unless the user set them already."""
    if not _has_avx512():
        return {}
    return {k: v for k, v in SIMD_CAP.items() if k not in user_env and k not in os.environ}


def _has_avx512() -> bool:
    try:
        text = Path("/proc/cpuinfo").read_text(errors="replace")
    except OSError:
        return False
    return any(line.startswith("flags") and " avx512f" in line for line in text.splitlines())


class InstructionsUnavailable(RuntimeError):
    """This machine cannot count instructions; the message says what to install."""


@dataclass(frozen=True)
class Toolchain:
    valgrind: str
    version: str
    helper: Path

    def settings(self) -> dict[str, Any]:
        """What the record keeps about how instructions were counted."""
        return {"tool": "callgrind", "valgrind": self.version, "options": list(VALGRIND_OPTIONS),
                "timeout_factor": TIMEOUT_FACTOR, "counts": "user-space instructions of run(), all threads",
                **({"simd_cap": simd_cap({})} if simd_cap({}) else {})}


def unsupported_reason(runtime: str) -> str | None:
    """Why a runtime's worker cannot count instructions (None: it can)."""
    from colbench.runtimes import RUNTIMES

    known = RUNTIMES.get(runtime)
    note = known.instructions_unsupported if known else f"unknown runtime {runtime!r}"
    return f"instructions are counted for Python workers only for now ({note})" if note else None


def restrict_plan(plan: Any, measure: Sequence[str]) -> None:
    """With instructions only, cases whose worker cannot count them are skipped with the reason (with wall
    time too, they run for wall time and their records say why instructions are missing)."""
    from colbench.runner.plan import PlanError

    if tuple(measure) != (METRIC,):
        return
    kept = []
    for case in plan.cases:
        reason = unsupported_reason(case.runtime)
        if reason:
            plan.skipped.append((case.benchmark.name, case.params, reason))
        else:
            kept.append(case)
    if not kept:
        raise PlanError(f"no case of this plan can count instructions: {reason}")
    plan.cases[:] = kept


def find_toolchain(home: Path | None = None) -> Toolchain:
    """Valgrind and the client-request helper, building the helper on first use."""
    valgrind = os.environ.get("COLBENCH_VALGRIND") or shutil.which("valgrind")
    if not valgrind:
        raise InstructionsUnavailable("--measure instructions needs Valgrind: install it (Debian/Ubuntu: "
                                      "`apt-get install valgrind`)")
    try:
        version = run_bounded([valgrind, "--version"], timeout_s=30, what=f"{valgrind} --version",
                              check=True).stdout.strip().removeprefix("valgrind-")
    except (OSError, subprocess.SubprocessError) as exc:
        raise InstructionsUnavailable(f"cannot run {valgrind} --version: {exc}") from None
    return Toolchain(valgrind, version, build_helper(version, home or colbench_home()))


def build_helper(valgrind_version: str, home: Path) -> Path:
    """Compile HELPER_SOURCE once per (source, Valgrind version) into home/valgrind/; returns the library."""
    from colbench.runner.native_build import BuildFailed, build_library

    key = hashlib.sha256(f"{valgrind_version}\n{HELPER_SOURCE}".encode()).hexdigest()[:16]
    try:
        return build_library(HELPER_SOURCE, home / "valgrind" / f"colbench-callgrind-{key}.so", "Valgrind helper",
                             home, missing_header=("callgrind.h", "valgrind/callgrind.h not found: install "
                                                   "Valgrind's headers (Debian/Ubuntu: part of `valgrind`; Fedora: "
                                                   "`valgrind-devel`)"))
    except BuildFailed as exc:
        raise InstructionsUnavailable(str(exc).replace("colbench builds", "--measure instructions builds")) \
            from None


#: where counting (and profiling) workers keep the bytecode of an environment that has none, under $COLBENCH_HOME
PYCACHE_DIR = "pycache"


def bytecode_cache(env: dict[str, str], home: Path | None = None) -> tuple[dict[str, str], list[str]]:
    """Variables for a worker under Valgrind whose environment says not to write bytecode (PYTHONDONTWRITEBYTECODE,
    as many container images and shells set), and the variables to drop: its imports would compile every module of
    pandas and pyarrow again in every process, 8x slower under Valgrind (41.7 s of CPU a counting process on
    `@current`, issue #46). Python then keeps the bytecode under colbench's home (PYTHONPYCACHEPREFIX), never in the
    user's environment, and the first process compiles what the next ones read. A prefix the user set is left alone."""
    if not env.get("PYTHONDONTWRITEBYTECODE") or env.get("PYTHONPYCACHEPREFIX"):
        return {}, []
    folder = (home or colbench_home()) / PYCACHE_DIR
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        return {}, []  # a home that cannot be written: the worker compiles as before
    return {"PYTHONPYCACHEPREFIX": str(folder)}, ["PYTHONDONTWRITEBYTECODE"]


@contextlib.contextmanager
def counting_launch(launch: WorkerLaunch, toolchain: Toolchain, options: Sequence[str] = VALGRIND_OPTIONS,
                    env: dict[str, str] | None = None) -> Iterator[WorkerLaunch]:
    """The same worker launch under callgrind, with its own dump folder (removed afterwards, and named like an
    execution directory so that one left by a killed colbench is swept by the next run). A profile
    (runner/profile.py) passes its own `options` and variables in `env`."""
    with tempfile.TemporaryDirectory(prefix=exec_dir_prefix()) as dumps:
        cache, drop = bytecode_cache(launch.env)
        child_env = {**simd_cap(launch.env), **launch.env, **cache, **(env or {}), LIB_VAR: str(toolchain.helper),
                     DUMP_DIR_VAR: dumps}
        for name in drop:
            child_env.pop(name, None)
        limit = launch.memory_limit_bytes + MEMORY_ALLOWANCE_BYTES if launch.memory_limit_bytes else None
        # not pinned: a count does not depend on the CPU that runs it, and a counting worker pinned to a CPU that
        # other work holds waits for it (137 s of wall time for 48 s of CPU, measured) while another CPU idles
        yield dataclasses.replace(launch, command=[toolchain.valgrind, *options, *launch.command],
                                  env=child_env, timeout_s=launch.timeout_s * TIMEOUT_FACTOR,
                                  memory_limit_bytes=limit, cpus=None, quietest=False)


def run_measures(spec: CaseSpec, launch: WorkerLaunch, runtime: str, measure: Sequence[str],
                 toolchain: Toolchain | None, server: tuple[str, int] | None = None,
                 scope: str = "case") -> WorkerOutcome:
    """One execution: the wall-time worker and/or the counting worker, folded into one outcome. With `server` (the
    side's name and the process's index) the counting process is forked from one of that side's counting servers
    (runner/count_server.py; with `scope` "suite" from the side's suite servers, runner/suite_server.py) rather than
    started fresh."""
    wall = run_worker(spec, launch) if "wall" in measure else None
    if METRIC not in measure:
        assert wall is not None
        return wall
    reason = unsupported_reason(runtime)
    if reason or toolchain is None:
        reason = reason or "no Valgrind toolchain was prepared for this run"
        if wall is None:
            return WorkerOutcome(WorkerReport.failure("invalid", reason), {})
        wall.report.warn(reason)
        wall.report.measure = MeasureInfo(metrics=["wall"], instructions={"skipped": reason})
        return wall
    counting_spec = dataclasses.replace(spec, measure=METRIC, repeat_within=metric(METRIC).repeat_within)
    with counting_launch(launch, toolchain) as counting:
        compile_before_counting(counting_spec, counting, [toolchain.valgrind, *VALGRIND_OPTIONS])
        counted, fallback = _counted(counting_spec, counting, toolchain, server, scope)
    if fallback:
        counted.report.warn(f"counted in a fresh process: {fallback}")
    return merge(wall, counted, toolchain)


def _counted(spec: CaseSpec, launch: WorkerLaunch, toolchain: Toolchain,
             server: tuple[str, int] | None, scope: str = "case") -> tuple[WorkerOutcome, str | None]:
    """The counting process: forked from a server when asked (and possible), else fresh; and why it was fresh."""
    if server is None:
        return run_worker(spec, launch), None
    from colbench.runner.count_server import ServerUnavailable, count_in_server

    valgrind = [toolchain.valgrind, *VALGRIND_OPTIONS]
    try:
        if scope == "suite":
            from colbench.runner.suite_server import count_in_suite_server

            return count_in_suite_server(spec, launch, valgrind, *server), None
        return count_in_server(spec, launch, valgrind, *server), None
    except ServerUnavailable as exc:
        return run_worker(spec, launch), str(exc)


def _stopped_by(counts: WorkerReport) -> dict[str, str]:
    """Which rule ended the process's counted calls (workers/python/count_stop.py), or "iterations" (its budget)."""
    samples = counts.samples.get(METRIC)
    if counts.status != "ok" or not samples:
        return {}
    from colbench.workers.python.count_stop import settled

    return {"stopped_by": settled(samples, metric(METRIC).repeat_within) or "iterations"}


def merge(wall: WorkerOutcome | None, counted: WorkerOutcome, toolchain: Toolchain) -> WorkerOutcome:
    """Fold the counting worker's result into the wall worker's (or stand alone when wall was not asked for).

    Memory and process figures under Valgrind describe Valgrind as much as the case: they are kept apart, under
    `measure.instructions`, so `compare --metric memory` and run-time estimates never see them."""
    counts = counted.report
    process = dict(counted.process)
    server = process.pop("server", None)
    info = {**toolchain.settings(), "separate_process": wall is not None, "process": process,
            **({"server": server} if server else {}), **_stopped_by(counts),
            "memory": dict(counts.memory), "status": counts.status,
            **({"phases": counts.phases} if counts.phases else {})}
    if wall is None:
        alone = dataclasses.replace(counts, memory=MemoryUse(), units={**counts.units, METRIC: UNIT},
                                    measure=MeasureInfo(metrics=[METRIC], instructions=info), phases=None)
        return WorkerOutcome(alone, {})
    merged = dataclasses.replace(wall.report, warnings=list(wall.report.warnings))
    for key in ("samples", "warmup_samples"):
        series = getattr(counts, key).get(METRIC)
        if series:
            setattr(merged, key, {**getattr(merged, key), METRIC: series})
    first = (counts.first_iteration or {}).get(METRIC)
    if first is not None and merged.first_iteration is not None:
        merged.first_iteration = {**merged.first_iteration, METRIC: first}
    merged.units = {**merged.units, METRIC: UNIT}
    for warning in counts.warnings:
        merged.warn(warning)
    merged.measure = MeasureInfo(metrics=["wall", METRIC], instructions=info)
    if counts.status != "ok" and merged.status == "ok":
        error = counts.error or ErrorInfo("no-result", "no result")
        merged.status = "error"
        merged.error = dataclasses.replace(error, message=f"counting instructions under Valgrind: {error.message}")
    return WorkerOutcome(merged, wall.process)

