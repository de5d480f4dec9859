"""Inside a worker running under Valgrind's callgrind: count the instructions of each timed call.

The orchestrator (runner/instructions.py) starts the worker as
`valgrind --tool=callgrind --instr-atstart=no … python -m colbench.worker`, builds the client-request helper
library once, and names it and the dump directory in the environment. Here the worker

- turns instrumentation on once, before the first timed iteration: imports, data generation, `setup` and the
  warm-up iterations run uninstrumented (several times faster) and are never counted — a warm-up is often the
  call that imports a whole library, which instrumented would take minutes;
- per iteration, outside the timed call: `before_each`, a `gc.collect()` (so every iteration starts with the
  same garbage-collector state), then CALLGRIND_ZERO_STATS; the timed call; CALLGRIND_DUMP_STATS_AT, whose
  dump file's `totals:` line is the count of that call alone, every thread included (callgrind keeps one cost
  table for all threads unless `--separate-threads=yes`);
- turns instrumentation off after the last iteration, so teardown and exit run fast again.

For a profile (`colbench explain`, `run --profile`: runner/profile.py) the orchestrator also names a folder in
`KEEP_VAR`: each dump is then moved there (`iteration-N.callgrind`) instead of deleted — the same file, whose
`fn=`/`calls=` records are the timed call's cost per function and per call edge. On Python 3.12+ the worker
then also switches CPython's perf trampolines on before instrumenting (workers/python/python_names.py): each Python
function runs through a small stub of its own, which callgrind shows as a code address, and the perf map CPython
writes names those addresses; the map (and the functions' first lines) is moved next to the dumps. Python 3.11 has
no trampolines: its Python frames all show as the interpreter's functions.

Only the standard library is imported: this module is on the worker's path.
"""

from __future__ import annotations

import ctypes
import gc
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from colbench.workers.python.python_names import PythonNames

if TYPE_CHECKING:
    from colbench.model.worker_records import CaseSpec

#: where the orchestrator put the helper library and where callgrind writes its dumps
LIB_VAR = "COLBENCH_CALLGRIND_LIB"
DUMP_DIR_VAR = "COLBENCH_CALLGRIND_DIR"
#: set for a profile: the folder the dumps (and CPython's perf map) are moved to instead of deleted
KEEP_VAR = "COLBENCH_CALLGRIND_KEEP"
METRIC = "instructions"


class ProbeUnavailable(RuntimeError):
    """The worker was asked to count instructions but is not set up for it (a one-line reason)."""


class CallgrindProbe:
    def __init__(self, lib_path: str, dump_dir: str) -> None:
        try:
            self._lib = ctypes.CDLL(lib_path)
        except OSError as exc:
            raise ProbeUnavailable(f"cannot load the callgrind helper {lib_path}: {exc}") from None
        if not self._lib.colbench_running_on_valgrind():
            raise ProbeUnavailable("measure=instructions, but this worker is not running under Valgrind "
                                   "(start it with `colbench run --measure instructions`)")
        self._lib.colbench_dump.argtypes = [ctypes.c_char_p]
        self._dumps = Path(dump_dir)
        self._prefix = f"callgrind.out.{os.getpid()}."
        self._on = False
        keep = os.environ.get(KEEP_VAR)
        self._keep = Path(keep) if keep else None
        self._kept = 0
        self._names = PythonNames(self._keep)

    def forked(self) -> None:
        """In a process forked by the counting server (count_server.py): callgrind names this process's dumps by its
        own pid, and the dumps kept for a profile are this process's alone."""
        self._prefix = f"callgrind.out.{os.getpid()}."
        self._kept = 0

    def start(self) -> None:
        """Instrument from here on (after setup). Instrumentation is global: every thread is counted."""
        self._names.start()
        self._lib.colbench_start()
        self._on = True

    def stop(self) -> None:
        if self._on:
            self._lib.colbench_stop()
            self._on = False
        self._names.keep()

    def uninstrumented(self, call: Callable[[], Any]) -> Any:
        """`call()` with instrumentation off, then on again (if it was on): untranslated code runs at 4-5x native
        cost instead of 20-50x, but callgrind discards its translations at each switch, so the next counted call
        translates its code again (about 1 s of CPU for a pyarrow read). Worth it for a setup between calls."""
        if not self._on:
            return call()
        self._lib.colbench_stop()
        try:
            return call()
        finally:
            self._lib.colbench_start()

    def count(self, call: Callable[[], Any]) -> tuple[int, Any]:
        """Instructions executed by `call()` (all threads), and what it returned."""
        gc.collect()
        self._lib.colbench_zero()
        output = call()
        self._lib.colbench_dump(b"colbench")
        return self._read_dump(), output

    def _read_dump(self) -> int:
        # The helper's dump is the only file with this process's numbered prefix: each is removed once read.
        dumps = [p for p in self._dumps.iterdir() if p.name.startswith(self._prefix)]
        if len(dumps) != 1:
            raise ProbeUnavailable(f"expected one callgrind dump in {self._dumps}, found {len(dumps)}")
        text = dumps[0].read_text(errors="replace")
        if self._keep is None:
            dumps[0].unlink()
        else:
            os.replace(dumps[0], self._keep / f"iteration-{self._kept}.callgrind")
            self._kept += 1
        for line in text.splitlines():
            if line.startswith("totals:"):
                return int(line.split()[1])
        raise ProbeUnavailable(f"callgrind dump {dumps[0].name} has no totals line")


def open_probe(spec: CaseSpec) -> CallgrindProbe | None:
    """The probe when the case asks for instructions (`"measure": "instructions"`), else None."""
    if spec.measure != METRIC:
        return None
    lib, dump_dir = os.environ.get(LIB_VAR), os.environ.get(DUMP_DIR_VAR)
    if not lib or not dump_dir:
        raise ProbeUnavailable(f"measure=instructions needs {LIB_VAR} and {DUMP_DIR_VAR} (set by "
                               "`colbench run --measure instructions`)")
    return CallgrindProbe(lib, dump_dir)
