"""A sampled profile of one case's timed call: the worker as the workload of `perf record` (`explain --profiler perf`).

Where callgrind counts instructions exactly but runs the case 20–50× slower and one thread at a time, perf samples
the real execution: real time on the CPU, every thread at once, kernel frames included (page faults, reads). The
worker runs as it does for a wall-time measurement; perf's events start disabled (`--delay=-1`) and the worker
enables them around the timed call through perf's control FIFOs (workers/python/perf_control.py).

- The event: `cpu-clock` (a software timer: works in VMs without hardware counters, as this project's are), its
  period in nanoseconds, so a profile's total is CPU time of the timed call, every thread summed.
- Stacks: `--call-graph dwarf` — Debian's Python and pyarrow's wheels are built without frame pointers, so frame
  pointer stacks would stop at the first such frame; DWARF unwinding copies 8 KiB of stack per sample instead.
- Kept: the `perf script` text (one sample per paragraph, leaf first), gzipped, read by profiles/perf_script.py;
  `perf.data` is removed (it holds raw stack copies and is only readable beside the same binaries).
- Sampling has noise, unlike callgrind: the listing marks changes within two standard errors of the sample counts.
- Python functions (3.12+): the worker switches CPython's perf trampolines on around the timed calls and moves their
  map into the profile's folder as `perf.map` (workers/python/python_names.py), so /tmp keeps nothing of it. perf
  script then prints those frames as `[unknown]` in `/tmp/perf-PID.map` with their address, and the reader names
  them from the kept map (profiles/perf_script.py), as callgrind's addresses are named.
"""

from __future__ import annotations

import dataclasses
import gzip
import os
import subprocess
import tempfile
import time
from pathlib import Path
from typing import IO

from colbench.model.records import CaseSpec
from colbench.paths import atomic_path, create_new, owned_dir, remove
from colbench.processes import streaming
from colbench.profiles.bounded import MAX_PROFILE_BYTES
from colbench.runner.isolate import WorkerLaunch, run_worker
from colbench.runner.profile import ProfileRun, failure_text
from colbench.workers.python.perf_control import CTL_VAR
from colbench.workers.python.python_names import FOLDER_VAR, PERF_MAP_NAME

#: samples per second of CPU time (a prime, so the timer does not beat with periodic work)
FREQUENCY_HZ = 2999
#: CPU time to sample: the timed call is repeated until about this much (a 60 ms read: 25 calls, so about
#: 1.5 s × 2999 Hz ≈ 4,500 samples)
TARGET_SAMPLED_S = 1.5
MAX_ITERATIONS = 200
PERF_PROFILE_NAME = "profile.perf.gz"
SCRIPT_FIELDS = "comm,tid,event,period,ip,sym,dso"
TIMEOUT_FACTOR = 3.0
#: `perf script` of a few seconds of samples takes seconds (minutes with many unresolved addresses); past ten
#: minutes it is stopped
SCRIPT_TIMEOUT_S = 600.0


def perf_command(perf: str, data: Path, ctl: Path, ack: Path) -> list[str]:
    return [perf, "record", "--event", "cpu-clock", "--freq", str(FREQUENCY_HZ), "--call-graph", "dwarf",
            "--delay", "-1", "--control", f"fifo:{ctl},{ack}", "--output", str(data), "--quiet", "--"]


def sampled_iterations(call_s: float | None) -> int:
    """How many timed calls to sample: enough for ~TARGET_SAMPLED_S of CPU time (sampling error shrinks with the
    square root of the samples), 10 when the call's time is unknown (a run of instructions only)."""
    if not call_s or call_s <= 0:
        return 10
    return max(1, min(MAX_ITERATIONS, round(TARGET_SAMPLED_S / call_s)))


def perf_profile_case(spec: CaseSpec, launch: WorkerLaunch, perf: str, folder: Path,
                      iterations: int = 1) -> ProfileRun:
    """Run the case (its warm-ups, then `iterations` timed calls) under `perf record` in a fresh worker and keep
    the samples as `folder/profile.perf.gz` (and `folder/perf.map` when the worker could name Python functions); a
    failed execution leaves the folder empty and says why."""
    owned_dir(folder, "profile directory")
    for stale in folder.iterdir():
        remove(stale, within=folder)
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="colbench-perf-") as tmp:
        ctl, ack, data = Path(tmp) / "ctl.fifo", Path(tmp) / "ack.fifo", Path(tmp) / "perf.data"
        os.mkfifo(ctl, 0o600)
        os.mkfifo(ack, 0o600)
        sampled = dataclasses.replace(
            launch, command=[*perf_command(perf, data, ctl, ack), *launch.command],
            env={**launch.env, CTL_VAR: f"{ctl}:{ack}", FOLDER_VAR: str(folder)},
            timeout_s=launch.timeout_s * TIMEOUT_FACTOR,
            memory_limit_bytes=None)  # perf's own buffers are not the case's memory
        outcome = run_worker(dataclasses.replace(spec, iterations=iterations), sampled)
        report = outcome.report
        failed = failure_text(report)
        error = failed or _script(perf, data, folder / PERF_PROFILE_NAME)
    if error:
        for stale in folder.iterdir():
            remove(stale, within=folder)
        return ProfileRun(time.monotonic() - started, error=error)
    perf_map = folder / PERF_MAP_NAME
    return ProfileRun(time.monotonic() - started, folder / PERF_PROFILE_NAME, perf_map if perf_map.exists() else None,
                      warnings=[*report.warnings,
                                f"perf sampled {iterations} timed call(s) at {FREQUENCY_HZ} Hz of CPU time"])


def _script(perf: str, data: Path, kept: Path) -> str | None:
    """`perf script` of the samples into `kept` (gzipped, whole or not at all: colbench.paths.atomic_path); an error
    line, or None."""
    try:
        with atomic_path(kept, "profile") as partial, create_new(partial) as out, \
                gzip.GzipFile(fileobj=out, mode="wb", compresslevel=6) as packed:
            # --no-inline: resolving inlined frames runs addr2line per address (most of perf script's time)
            with streaming([perf, "script", "--input", str(data), "--fields", SCRIPT_FIELDS, "--no-inline"],
                           timeout_s=SCRIPT_TIMEOUT_S, what="perf script") as proc:
                assert proc.stdout is not None
                _copy_bounded(proc.stdout, packed)
                _, stderr = proc.communicate()
            if proc.returncode != 0:
                raise _ScriptFailed(proc.returncode, stderr)
    except subprocess.TimeoutExpired as exc:
        return str(exc)
    except _ScriptFailed as failed:
        last = next((line for line in reversed(failed.stderr.decode(errors="replace").splitlines()) if line.strip()),
                    "")
        return f"perf script failed (exit {failed.code}): {last.strip()[:200]}"
    return None


def _copy_bounded(source: IO[bytes], target: gzip.GzipFile) -> None:
    """perf script's text into the kept profile, refused past what a profile may decompress to (its reader's
    bound: colbench.profiles.bounded)."""
    copied = 0
    while chunk := source.read(1 << 20):
        copied += len(chunk)
        if copied > MAX_PROFILE_BYTES:
            raise _ScriptFailed(0, f"more than {MAX_PROFILE_BYTES:,} bytes of samples: too many to keep".encode())
        target.write(chunk)


class _ScriptFailed(Exception):
    def __init__(self, code: int, stderr: bytes) -> None:
        super().__init__(code)
        self.code, self.stderr = code, stderr
