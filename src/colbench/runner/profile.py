"""A profile of one case's timed call: the worker under callgrind, its dump kept instead of read and deleted.

The instruction metric (runner/instructions.py) already runs a case's worker under Valgrind's callgrind, switches
instrumentation on only around the timed call and dumps the counters after it. A profile is the same execution
with the dump kept: `KEEP_VAR` names a folder, the worker moves each dump there (workers/python/callgrind_probe.py), and
the dump's `fn=`/`calls=` records are the cost of every function and call edge of that one call, every thread
summed. Always in a fresh worker process, never in the orchestrator: the same case spec, environment variables,
threads, CPU pinning and input files as the case's own executions (runner/execute.py builds the launch).

Options beyond the counting ones:
- `--separate-callers=N`: callgrind keeps the last N callers of every function as part of its name
  (`f'g'h`: f called from g called from h), so costs are known per call chain rather than per function.
  The flame graph is built from these chains (profiles/stacks.py); deeper chains are split at N
  levels and joined back by the callers' own chains (the gprof assumption, made only beyond N frames). With
  N=20 the 200k-row Parquet read of docs/explain.md writes 60 MB of text (2.4 MB gzipped) for 342 M instructions.
- `--dump-line=no` stays: no view here reads costs per source line.
"""

from __future__ import annotations

import dataclasses
import gzip
import shutil
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from colbench.model.records import CaseSpec, ErrorInfo, WorkerReport
from colbench.paths import atomic_path, create_new, owned_dir, remove
from colbench.runner.instructions import Toolchain, counting_launch
from colbench.runner.isolate import WorkerLaunch, run_worker
from colbench.workers.python.callgrind_probe import DUMP_DIR_VAR, KEEP_VAR, METRIC
from colbench.workers.python.python_names import PERF_MAP_NAME

#: callers kept in each function's name (callgrind --separate-callers)
CALLER_DEPTH = 20

PROFILE_OPTIONS = (
    "--tool=callgrind",
    "--instr-atstart=no",
    "--separate-threads=no",
    "--dump-line=no",
    f"--separate-callers={CALLER_DEPTH}",
    f"--callgrind-out-file=%q{{{DUMP_DIR_VAR}}}/callgrind.out.%p",
    "-q",
)

#: gzip: callgrind's text with call chains compresses ~25× (a 200k-row Parquet read: 60 MB → 2.4 MB, 0.4 s)
PROFILE_NAME = "profile.callgrind.gz"


@dataclass(frozen=True)
class ProfileRun:
    """What one profiling execution left: the profile file (None when it failed, with the error), the perf map
    that names Python functions (Python 3.12+ workers), how long it took and the worker's warnings."""

    seconds: float
    path: Path | None = None
    perf_map: Path | None = None
    error: str | None = None
    warnings: list[str] = field(default_factory=list)


def _compress(source: Path, target: Path) -> None:
    """`source` gzipped into `target`, whole or not at all (colbench.paths.atomic_path: a temporary name in the
    checked folder, renamed when complete)."""
    with atomic_path(target, "profile") as partial, open(source, "rb") as raw, create_new(partial) as out, \
            gzip.GzipFile(fileobj=out, mode="wb", compresslevel=6) as packed:
        shutil.copyfileobj(raw, packed, 1 << 20)


def profile_spec(spec: CaseSpec) -> CaseSpec:
    """The case spec a profile runs: the same case, counted (measure=instructions) for one timed iteration — a
    count repeats to hundredths of a percent, so one iteration is the call's profile — after the same warm-ups."""
    return dataclasses.replace(spec, measure=METRIC, iterations=1)


def profile_case(spec: CaseSpec, launch: WorkerLaunch, toolchain: Toolchain, folder: Path,
                 options: Sequence[str] = PROFILE_OPTIONS) -> ProfileRun:
    """Run the case once under callgrind in a fresh worker and keep its profile as `folder/profile.callgrind.gz`
    (and `folder/perf.map` with `perf.map.lines.json` when the worker could name Python functions: Python 3.12+,
    workers/python/python_names.py). `folder` is made (an owned path) and holds nothing else afterwards; a failed
    execution leaves it empty and says why."""
    owned_dir(folder, "profile directory")
    for stale in folder.iterdir():  # an earlier profile of the same case and side is replaced, not mixed in
        remove(stale, within=folder)
    started = time.monotonic()
    with counting_launch(launch, toolchain, options, env={KEEP_VAR: str(folder)}) as counting:
        outcome = run_worker(profile_spec(spec), counting)
    seconds = time.monotonic() - started
    dumps = sorted(folder.glob("iteration-*.callgrind"))
    perf_map = folder / PERF_MAP_NAME
    error = failure_text(outcome.report)
    if error is None and not dumps:
        error = "the worker under callgrind left no profile"
    if error:
        for stale in folder.iterdir():
            remove(stale, within=folder)
        return ProfileRun(seconds, error=error)
    kept = folder / PROFILE_NAME
    _compress(dumps[-1], kept)  # the last timed iteration (there is one)
    for extra in dumps:
        remove(extra, within=folder)
    return ProfileRun(seconds, kept, perf_map if perf_map.exists() else None,
                      warnings=list(outcome.report.warnings))


def failure_text(report: WorkerReport) -> str | None:
    """A failed profiling worker's error in one line (None when it succeeded); the profiler refusing to start
    says why only on stderr, so its last line is added."""
    if report.status == "ok":
        return None
    failure = report.error or ErrorInfo("error", "no result")
    error = f"{failure.kind}: {failure.message or 'no result'}"
    said = _last_line(failure.stderr_tail)
    return error + f" (stderr: {said})" if said and said not in error else error


def _last_line(text: object) -> str:
    """The last non-empty line of a worker's stderr, without Valgrind's `==PID==` prefix, clipped."""
    lines = [line.split("==", 2)[-1].strip() if line.startswith("==") else line.strip()
             for line in str(text or "").splitlines()]
    lines = [line for line in lines if line]
    return lines[-1][:200] if lines else ""
