"""Which allocation tracer for `explain --metric memory`? What each sees of each Arrow allocator, its overhead, and
its peak against the peak RSS, on a 200k-row Parquet read (docs/explain.md, "Where the memory went").

    uv run python scripts/memory_tracers.py [--python PY] [--rows 200000] [--reps 2] [--cases arrow,pandas]
                                            [--tracers none,heaptrack,heaptrack-noshim,memray,massif,massif-pages,dhat]

Every measurement is a fresh process of `--python` (an interpreter with pyarrow and pandas; memray too for its
rows: they are skipped where it cannot be imported) running one case as colbench's worker does: imports, one
warm-up call, `gc.collect()`, then ONE timed call; the pool comes from ARROW_DEFAULT_MEMORY_POOL as colbench's
`allocator` parameter sets it. Per (case, allocator, tracer), the median of `--reps` processes:

- traced: the tracer's peak. heaptrack and memray record the timed call only (heaptrack paused outside it as the
  worker does, memray's Tracker around it), so their peak is the call's live bytes at its high-water mark; massif
  and DHAT cannot be limited to a call, so theirs is the whole process's peak heap (massif's heap+extra, DHAT's
  bytes at t-gmax; `massif --pages-as-heap=yes`: every mapped page, code and reserved arenas included).
- pool: the Arrow pool's own high-water mark in that process (`max_memory()`): what a tracer that sees the pool
  should find; `traced/pool` says how much of it the tracer saw.
- call ×, process ×: wall time of the timed call and of the whole process against the untraced runs.
- peak RSS: the untraced process's VmHWM (what colbench records), and its RSS before the first call: the
  difference is the calls' memory (live and retained) plus the code and imports the first call touches.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "src"
sys.path.insert(0, str(SRC))

ALLOCATORS = ("mimalloc", "jemalloc", "system")
TRACERS = ("none", "heaptrack", "heaptrack-noshim", "memray", "massif", "massif-pages", "dhat")
#: Valgrind's tools run a Parquet read 20-50x slower: measured on the Arrow-table case only, one process
VALGRIND = ("massif", "massif-pages", "dhat")

DRIVER = r'''
import gc, json, os, sys, time
T0 = time.perf_counter()
sys.path.insert(0, os.environ["MT_SRC"])
case, path, tracer, out = sys.argv[1:5]
window = None
if tracer.startswith("heaptrack"):
    from colbench.workers.python.heap_window import HeapWindow
    window = HeapWindow()  # paused from here, as colbench's worker is
def status(field):
    for line in open("/proc/self/status"):
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024
import pyarrow as pa, pyarrow.parquet as pq
if case == "pandas":
    import pandas  # noqa: F401  (imported before the call, as the engine's setup does)
    call = lambda: pq.read_table(path).to_pandas()
else:
    call = lambda: pq.read_table(path)
pool = pa.default_memory_pool()
gc.collect()
rss_first = status("VmRSS")
del_ = call(); del del_
gc.collect()
tracker = None
if tracer == "memray":
    import memray
    tracker = memray.Tracker(out + ".memray", native_traces=True)
    tracker.__enter__()
t = time.perf_counter()
if window is not None:
    metrics, result = window.trace(call)
else:
    result = call()
call_s = time.perf_counter() - t
if tracker is not None:
    tracker.__exit__(None, None, None)
doc = {"call_s": call_s, "pool": pool.backend_name, "pool_peak": pool.max_memory(), "rss_first": rss_first,
       "peak_rss": status("VmHWM")}
if tracer == "memray":
    reader = memray.FileReader(out + ".memray")
    doc["traced"] = sum(r.size for r in reader.get_high_watermark_allocation_records(merge_threads=True))
json.dump(doc, open(out, "w"))
'''


def run_one(python: str, case: str, data: Path, allocator: str, tracer: str, shim: Path, tmp: Path) -> dict:
    out = tmp / f"{case}-{allocator}-{tracer}-{time.monotonic_ns()}.json"
    driver = tmp / "driver.py"
    driver.write_text(DRIVER)
    env = {**os.environ, "MT_SRC": str(SRC), "ARROW_DEFAULT_MEMORY_POOL": allocator,
           "OMP_NUM_THREADS": "1", "ARROW_NUM_THREADS": "1"}
    command = [python, str(driver), case, str(data), tracer, str(out)]
    trace = tmp / f"trace-{time.monotonic_ns()}"
    if tracer.startswith("heaptrack"):
        command = ["heaptrack", "--output", str(trace), *command]
        if tracer == "heaptrack":
            env["LD_PRELOAD"] = str(shim)
    elif tracer.startswith("massif"):
        pages = ["--pages-as-heap=yes"] if tracer == "massif-pages" else []
        command = ["valgrind", "--tool=massif", *pages, f"--massif-out-file={trace}.massif", "-q", *command]
    elif tracer == "dhat":
        command = ["valgrind", "--tool=dhat", f"--dhat-out-file={trace}.dhat", "-q", *command]
    started = time.monotonic()
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=1800)
    seconds = time.monotonic() - started
    if done.returncode != 0 or not out.exists():
        return {"error": (done.stderr.strip().splitlines() or ["failed"])[-1][:160]}
    doc = json.loads(out.read_text())
    doc["process_s"] = seconds
    if tracer.startswith("heaptrack"):
        from colbench.profiles.heaptrack import read_heaptrack

        doc["traced"] = read_heaptrack(next(tmp.glob(trace.name + ".*"))).peak_bytes
    elif tracer.startswith("massif"):
        doc["traced"] = _massif_peak(Path(f"{trace}.massif"))
    elif tracer == "dhat":
        doc["traced"] = _dhat_peak(Path(f"{trace}.dhat"))
    return doc


def _massif_peak(path: Path) -> int:
    peak = heap = 0
    for line in path.read_text().splitlines():
        if line.startswith("mem_heap_B="):
            heap = int(line.split("=")[1])
        elif line.startswith("mem_heap_extra_B="):
            peak = max(peak, heap + int(line.split("=")[1]))
    return peak


def _dhat_peak(path: Path) -> int:
    doc = json.loads(path.read_text())
    return sum(pp.get("gb", 0) for pp in doc["pps"])


def _median(rows: list[dict], key: str) -> float | None:
    values = [r[key] for r in rows if r.get(key) is not None]
    return statistics.median(values) if values else None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--reps", type=int, default=2)
    parser.add_argument("--cases", default="arrow,pandas")
    parser.add_argument("--tracers", default=",".join(TRACERS))
    args = parser.parse_args()

    from colbench.data.cache import materialize
    from colbench.model.benchmark import DataRequest
    from colbench.runner.memory_profile import build_shim

    home = Path(os.environ.get("COLBENCH_HOME") or tempfile.mkdtemp(prefix="memory-tracers-"))
    os.environ["COLBENCH_HOME"] = str(home)
    data = materialize(DataRequest("fanniemae_2016Q4", "parquet", "snappy", args.rows)).path
    shim = build_shim(home)
    tracers = [t for t in args.tracers.split(",") if t]
    missing = [t for t in ("heaptrack", "valgrind") if shutil.which(t) is None]
    memray_ok = subprocess.run([args.python, "-c", "import memray"], capture_output=True).returncode == 0
    print(f"{args.rows:,}-row Parquet (snappy, {Path(data).stat().st_size / 1e6:.1f} MB), {args.python}; "
          f"load {os.getloadavg()[0]:.1f}; missing: {', '.join(missing) or 'none'}; memray: {memray_ok}")
    print(f"{'case':7} {'pool':9} {'tracer':17} {'traced MB':>10} {'pool MB':>8} {'traced/pool':>11} "
          f"{'call s':>7} {'call ×':>7} {'proc s':>7} {'proc ×':>7} {'peak RSS MB':>11} {'RSS 1st MB':>10}")
    with tempfile.TemporaryDirectory(prefix="memory-tracers-") as tmp_name:
        tmp = Path(tmp_name)
        for case in args.cases.split(","):
            for allocator in ALLOCATORS:
                plain: list[dict] = []
                for tracer in tracers:
                    if tracer in VALGRIND and (case != "arrow" or "valgrind" in missing) or \
                            tracer.startswith("heaptrack") and "heaptrack" in missing or \
                            tracer == "memray" and not memray_ok:
                        continue
                    reps = 1 if tracer in VALGRIND else args.reps
                    rows = [run_one(args.python, case, Path(data), allocator, tracer, shim, tmp)
                            for _ in range(reps)]
                    errors = [r["error"] for r in rows if "error" in r]
                    rows = [r for r in rows if "error" not in r]
                    if tracer == "none":
                        plain = rows
                    if not rows:
                        print(f"{case:7} {allocator:9} {tracer:17} error: {errors[0]}")
                        continue
                    traced, pool = _median(rows, "traced"), _median(rows, "pool_peak")
                    call_s, proc_s = _median(rows, "call_s"), _median(rows, "process_s")
                    base_call, base_proc = _median(plain, "call_s"), _median(plain, "process_s")
                    print(f"{case:7} {rows[0]['pool']:9} {tracer:17} "
                          f"{traced / 1e6 if traced is not None else float('nan'):10.1f} {(pool or 0) / 1e6:8.1f} "
                          f"{traced / pool if traced is not None and pool else float('nan'):11.2f} "
                          f"{call_s:7.3f} {call_s / base_call if base_call else float('nan'):7.1f} "
                          f"{proc_s:7.2f} {proc_s / base_proc if base_proc else float('nan'):7.1f} "
                          f"{_median(rows, 'peak_rss') / 1e6:11.1f} {_median(rows, 'rss_first') / 1e6:10.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
