"""What a counted call costs beyond its own instructions, in the worker's own protocol (#46: "a counting process
costs close to what its counted calls cost").

    uv run python scripts/measure_counted_call_overhead.py [--rows 10] [--calls 5]

One interpreter under callgrind with colbench's options and client-request helper (`--instr-atstart=no`, the helper
built as `run --measure instructions` builds it) imports numpy, pandas and pyarrow, sets up an Arrow array of
`--rows` integers, warms `to_pandas()` up uninstrumented, switches instrumentation on, and then makes `--calls`
counted calls as the worker does (`CallgrindProbe.count`: `gc.collect()`, zero, the call, dump, the dump read),
timing each part with `getrusage`: the setup run again before the call (as asv re-runs a benchmark's setup between
calls), the collection, and the counted call with its dump. Twice: the setup run instrumented, and with
instrumentation off around it (`CallgrindProbe.uninstrumented`, as the worker does for an asv setup re-run between
calls, which makes callgrind translate the counted code again). The counted call is `to_pandas()` of a 10-row array:
a few hundred thousand instructions, so what the figures show is the protocol's cost, which every counted call of a
suite pays whatever its size.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

PROBE = """
import gc, os, resource, sys
from colbench.workers.python.callgrind_probe import CallgrindProbe, DUMP_DIR_VAR, LIB_VAR
probe = CallgrindProbe(os.environ[LIB_VAR], os.environ[DUMP_DIR_VAR])
import numpy as np, pandas as pd, pyarrow as pa

def cpu():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime

rows, calls, toggle = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3] == "off"
state = {}

def setup():
    state["array"] = pa.array(np.arange(rows))

def call():
    return state["array"].to_pandas()

setup()
for _ in range(3):
    call()
print(f"objects tracked by the collector: {len(gc.get_objects())}")
started = cpu()
probe.start()
print(f"instrumentation on: {cpu() - started:.3f} s")
for index in range(calls):
    t0 = cpu()
    probe.uninstrumented(setup) if toggle else setup()
    t1 = cpu()
    gc.collect()
    t2 = cpu()
    count, _ = probe.count(call)
    t3 = cpu()
    print(f"call {index}: setup {t1 - t0:.3f} s, a gc.collect() {t2 - t1:.3f} s, "
          f"count (gc.collect, the call, the dump) {t3 - t2:.3f} s, {count:,} instructions counted", flush=True)
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=10)
    parser.add_argument("--calls", type=int, default=5)
    args = parser.parse_args()
    from colbench.runner.instructions import VALGRIND_OPTIONS, find_toolchain
    from colbench.workers.python.callgrind_probe import DUMP_DIR_VAR, LIB_VAR

    toolchain = find_toolchain()
    src = str(Path(__file__).resolve().parents[1] / "src")
    with tempfile.TemporaryDirectory(prefix="colbench-call-overhead-") as dumps:
        env = {**os.environ, LIB_VAR: str(toolchain.helper), DUMP_DIR_VAR: dumps,
               "PYTHONPATH": os.pathsep.join(filter(None, [src, os.environ.get("PYTHONPATH")]))}
        options = [o.replace(f"%q{{{DUMP_DIR_VAR}}}", dumps) for o in VALGRIND_OPTIONS]
        for mode in ("on", "off"):
            print(f"== the setup re-run with instrumentation {mode}")
            done = subprocess.run([toolchain.valgrind, *options, sys.executable, "-c", PROBE, str(args.rows),
                                   str(args.calls), mode], env=env, capture_output=True, text=True)
            if done.returncode != 0:
                raise SystemExit(done.stderr[-2000:])
            print(done.stdout, end="")


if __name__ == "__main__":
    main()
