"""A case's bytecode compiled natively before its first counting process.

A counting process that compiles the modules it imports (no `.pyc` yet: a new colbench home, whose bytecode cache
PYTHONPYCACHEPREFIX the counting workers use where the environment says not to write bytecode, or an environment
without bytecode) reaches its counted call with another heap than the processes after it, which read the bytecode it
wrote: on a placebo whose call allocates and frees 2,000 Python ints, the first counting process of a new home
counted 1,676,753 instructions where the next 23 counted 1,645,389-1,646,495 (+1.9%), and a counting server that
compiled passed that level to every process it forked (docs/metrics.md, "A counting server"). It also pays the
compilation under Valgrind, about 8x slower than natively.

So before the first counting process of a case (per environment and orchestrator) the same worker runs once natively,
with the same variables and one call, and `COMPILE_VAR` set: the worker imports what a counting worker imports
(its callgrind probe, the server's modules) and runs the case's setup and one call as a wall-time worker does, which
compiles what the counted processes would have compiled. Its result is not kept: a case that fails here fails again
in its counting process, which reports it.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import threading

from colbench.model.records import CaseSpec
from colbench.runner.isolate import WorkerLaunch, run_worker

#: the variable that makes a worker with `measure: instructions` import the counting modules and run natively
COMPILE_VAR = "COLBENCH_COMPILE_PASS"
#: what varies per process and so does not make another compile pass
_PER_PROCESS_VARS = ("COLBENCH_ENV_OFFSET", "COLBENCH_CALLGRIND_DIR")

_compiled: set[str] = set()
_guard = threading.Lock()
_locks: dict[str, threading.Lock] = {}


def compile_key(spec: CaseSpec, launch: WorkerLaunch) -> str:
    """One compile pass per worker command, variables and case (not per process: seed and scratch left out)."""
    env = {k: v for k, v in launch.env.items() if k not in _PER_PROCESS_VARS}
    case = {k: v for k, v in spec.to_json().items() if k not in ("seed", "scratch_dir")}
    text = json.dumps([launch.command, env, case, launch.cwd and str(launch.cwd)], sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:20]


def compile_before_counting(spec: CaseSpec, launch: WorkerLaunch, valgrind: list[str]) -> bool:
    """Run `launch`'s worker once natively (its command without the `valgrind` part) before the first counting
    process of `spec` with it; False when it was done already or the worker is not Python's."""
    python = launch.command[len(valgrind):]
    if python[-2:] != ["-m", "colbench.worker"]:
        return False
    key = compile_key(spec, launch)
    with _guard:
        lock = _locks.setdefault(key, threading.Lock())
    with lock:  # a process counted beside it waits for the pass, rather than compiling under Valgrind itself
        if key in _compiled:
            return False
        native = dataclasses.replace(launch, command=python, env={**launch.env, COMPILE_VAR: "1"})
        run_worker(dataclasses.replace(spec, iterations=1, warmup=min(spec.warmup, 1)), native)
        _compiled.add(key)
    return True
