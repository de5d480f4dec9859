"""E1's headline, Arrow → data frame vs data.table's fread on the taxi twin: what moves the ratio.

    uv run python scripts/e1_headline.py [--study threads,text,star,dates,size,load,colbench]
                                         [--rows 500000] [--sizes 100000,500000,2000000] [--rounds 5]

Plain timing, outside colbench: every measurement is one fresh process (Python: pyarrow.csv.read_csv then
Table.to_pandas, as colbench's pyarrow engine does; R: data.table::fread as workers/r/worker.R calls it),
pinned to the first `threads` CPUs with OMP_NUM_THREADS set, as colbench's orchestrator does. A process runs
`--warmup` untimed reads and `--iterations` timed ones and is reduced to their median. One *round* runs every
variant of a study once, in a shuffled order; the ratio fread / pyarrow is taken inside each round (the two
sides ran seconds apart, under the same load), and the rounds give its spread: median [min–max].

Studies (each prints a table):
- threads  1 vs 2 threads for both readers (and what fread reports it used);
- text     the twin's `%.17g` floats vs the same rows with the shortest round-trip text (≤ 8 digits);
- star     the taxi file's single `*` flag where the twin puts it (outside fread's type-detection sample, as
           on the real file) vs the middle row (the twin before v2: inside the sample at 100k and 2M rows);
- dates    fread parsing the two datetime columns (its default since 1.14) vs keeping them as text,
           and pyarrow's read alone (Arrow table) vs read + to_pandas;
- size     the ratio at 100k, 500k and 2M rows;
- load     the same pair with one extra busy process pinned to CPU 1 (the other helpers' load, controlled);
- omp      fread's OpenMP threads waiting passively (OMP_WAIT_POLICY=passive) vs libgomp's default spinning;
- first    the first read of a process vs the later ones (from every process of the other studies).

The machine's load (/proc/loadavg) is printed with each round and at the start and end.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import time
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

HERE = Path(__file__).resolve().parent
FREAD = HERE / "e1_headline_fread.R"
FLOAT17 = ("trip_distance", "pickup_longitude", "pickup_latitude", "dropoff_longitude", "dropoff_latitude")

PY_CHILD = r"""
import json, sys, time, os
path, output = sys.argv[1], sys.argv[5]
threads, warmup, iterations = (int(a) for a in sys.argv[2:5])
import pyarrow as pa, pyarrow.csv as pacsv
pa.set_cpu_count(threads); pa.set_io_thread_count(threads)
open(path, "rb").read()  # page cache warm, as the worker does
wall, read, cpu = [], [], []
for i in range(warmup + iterations):
    c0, t0 = time.process_time(), time.perf_counter()
    table = pacsv.read_csv(path, parse_options=pacsv.ParseOptions(delimiter=","))
    t1 = time.perf_counter()
    out = table if output == "arrow_table" else table.to_pandas()
    t2, c2 = time.perf_counter(), time.process_time()
    wall.append(t2 - t0); read.append(t1 - t0); cpu.append(c2 - c0)
    assert table.num_columns == 18
    del out, table
print(json.dumps({"wall": wall, "read": read, "cpu": cpu, "warmup": warmup, "threads_applied": pa.cpu_count()}))
"""


@dataclass(frozen=True)
class Variant:
    reader: str  # pyarrow | fread
    threads: int = 2
    rows: int = 500_000
    text: str = "17g"  # 17g | short
    star: str = "twin"  # twin: where the twin puts the `*` | middle: row rows // 2 (the twin's place before v2)
    mode: str = "default"  # pyarrow: dataframe | arrow_table ; fread: default | chr_dates
    load: int = 0  # extra busy processes on CPU 1
    wait: str = ""  # OMP_WAIT_POLICY for fread's OpenMP threads ("" = libgomp's default, spin then sleep)

    def side(self) -> str:
        return self.reader

    def pair_key(self) -> tuple[Any, ...]:
        return (self.threads, self.rows, self.text, self.star, self.load)


# ------------------------------------------------------------------------------------------------ files


def twin_file(rows: int, text: str, star: str, root: Path) -> Path:
    """The colbench taxi twin (seed 0, as `csv-read` asks for it), or a variant of it written next to it."""
    from colbench.data.cache import materialize
    from colbench.model.benchmark import DataRequest

    base = materialize(DataRequest("nyctaxi_2010-01", "csv", rows=rows)).path
    if text == "17g" and star == "twin":
        return Path(base)
    out = root / f"taxi-r{rows}-{text}-{star}.csv"
    if not out.exists():
        _write_variant(out, rows, text, star)
    return out


def _write_variant(out: Path, rows: int, text: str, star: str) -> None:
    """The twin's rows, with its `%.17g` floats printed shortest (`text=short`) and/or its one `*` flag moved
    to the middle row (`star=middle`), inside fread's type sample at some sizes. Same layout: header, blank
    line, CRLF."""
    from colbench.data.synth.nyctaxi2010 import NycTaxi2010

    class Variant(NycTaxi2010):
        def tables(self, rows: int, seed: int, options: dict[str, Any]) -> Iterator[pa.Table]:
            moved = rows // 2
            start = 0
            for table in super().tables(rows, seed, options):
                n = table.num_rows
                if text == "short":
                    for name in FLOAT17:
                        i = table.schema.get_field_index(name)
                        values = pc.cast(table.column(name), pa.float64())
                        table = table.set_column(i, name, pc.cast(values, pa.string()))
                if star == "middle":
                    i = table.schema.get_field_index("store_and_fwd_flag")
                    flags = table.column(i).combine_chunks()
                    arr = np.array(flags.to_pylist(), dtype=object)
                    arr[arr == "*"] = None
                    if start <= moved < start + n:
                        arr[moved - start] = "*"
                    table = table.set_column(i, "store_and_fwd_flag", pa.array(list(arr), pa.string()))
                start += n
                yield table

    tmp = out.with_suffix(".tmp")
    with open(tmp, "wb") as handle:
        Variant().write_csv(handle, rows, 0, {})
    tmp.rename(out)


# ------------------------------------------------------------------------------------------------ running


def run_one(v: Variant, path: Path, warmup: int, iterations: int) -> dict[str, Any]:
    cpus = list(range(v.threads))
    env = {**os.environ, "OMP_NUM_THREADS": str(v.threads)}
    if v.wait:
        env["OMP_WAIT_POLICY"] = v.wait
    if v.reader == "pyarrow":
        cmd = [sys.executable, "-c", PY_CHILD, str(path), str(v.threads), str(warmup), str(iterations), v.mode]
    else:
        cmd = ["Rscript", str(FREAD), str(path), str(v.threads), str(warmup), str(iterations), v.mode]
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False,
                         preexec_fn=lambda: os.sched_setaffinity(0, cpus))
    if out.returncode != 0:
        sys.exit(f"{v}: exit {out.returncode}\n{out.stderr[-2000:]}")
    doc = json.loads(out.stdout.strip().splitlines()[-1])
    timed = doc["wall"][warmup:]
    doc["median"] = statistics.median(timed)
    doc["first"] = doc["wall"][0]
    doc["later"] = statistics.median(doc["wall"][1:]) if len(doc["wall"]) > 1 else None
    doc["cpu_median"] = statistics.median(doc["cpu"][warmup:])
    doc["cpu_per_wall"] = statistics.median(c / w for c, w in zip(doc["cpu"][warmup:], timed, strict=True))
    return doc


def loadavg() -> str:
    return Path("/proc/loadavg").read_text().split(" ", 3)[0]


class Spinner:
    """`count` busy-looping processes pinned to CPU 1, for the duration of one measurement."""

    def __init__(self, count: int) -> None:
        self.count = count
        self.procs: list[subprocess.Popen[bytes]] = []

    def __enter__(self) -> Spinner:
        for _ in range(self.count):
            self.procs.append(subprocess.Popen([sys.executable, "-c", "while True: pass"],
                                               preexec_fn=lambda: os.sched_setaffinity(0, [1])))
        time.sleep(0.2)
        return self

    def __exit__(self, *exc: object) -> None:
        for p in self.procs:
            p.kill()
            p.wait()


def star_in_fread_sample(path: Path) -> bool | None:
    """Does fread's type-detection sample see the `*` flag (column 9 typed string in a jump's type codes)?

    Read from fread's verbose log in a separate process: data.table 1.14.8 crashes (segfault) in a verbose
    read that bumps a type out of sample, after the sample's type codes have been printed."""
    code = f'data.table::setDTthreads(1); data.table::fread("{path}", sep = ",", verbose = TRUE)'
    out = subprocess.run(["Rscript", "-e", code], capture_output=True, text=True, check=False)
    codes = [line.split(":", 1)[1].split()[0] for line in out.stdout.splitlines() if "Type codes (jump" in line]
    return any(c[8] == "C" for c in codes) if codes else None


def study(name: str, variants: list[Variant], args: argparse.Namespace, root: Path,
          firsts: dict[str, list[tuple[float, float]]]) -> None:
    paths = {v: twin_file(v.rows, v.text, v.star, root) for v in variants}
    per_round: list[dict[Variant, dict[str, Any]]] = []
    print(f"\n## {name}  (load before: {loadavg()})", flush=True)
    if name == "star":
        for v in variants:
            if v.reader == "fread":
                print(f"  {_label(v)}: the `*` is in fread's type sample: {star_in_fread_sample(paths[v])}")
    for r in range(args.rounds):
        order = variants[:]
        random.shuffle(order)
        got: dict[Variant, dict[str, Any]] = {}
        loads = [loadavg()]
        for v in order:
            with Spinner(v.load):
                got[v] = run_one(v, paths[v], args.warmup, args.iterations)
            firsts[v.reader].append((got[v]["first"], got[v]["later"]))
        loads.append(loadavg())
        per_round.append(got)
        print(f"  round {r + 1}: load {'→'.join(loads)}  " + "  ".join(
            f"{_label(v)}={got[v]['median'] * 1e3:.0f}ms" for v in variants), flush=True)
    _table(variants, per_round)


def _label(v: Variant) -> str:
    bits = [v.reader, f"t{v.threads}", f"{v.rows // 1000}k"]
    bits += [x for x, default in ((v.text, "17g"), (v.star, "twin"), (v.mode, "default"))
             if x != default and not (v.reader == "pyarrow" and x == "dataframe")]
    if v.load:
        bits.append(f"+{v.load}busy")
    if v.wait:
        bits.append(f"wait={v.wait}")
    return "/".join(bits)


def _spread(values: list[float], scale: float = 1.0, fmt: str = "{:.0f}") -> str:
    med = statistics.median(values)
    return f"{fmt.format(med * scale)} [{fmt.format(min(values) * scale)}–{fmt.format(max(values) * scale)}]"


def _table(variants: list[Variant], per_round: list[dict[Variant, dict[str, Any]]]) -> None:
    print("  variant | wall ms: median [min–max over rounds] | CPU ms | CPU/wall | threads used")
    for v in variants:
        docs = [g[v] for g in per_round]
        print(f"  {_label(v)} | {_spread([d['median'] for d in docs], 1e3)} | "
              f"{statistics.median(d['cpu_median'] for d in docs) * 1e3:.0f} | "
              f"{statistics.median(d['cpu_per_wall'] for d in docs):.2f} | "
              f"{sorted({d['threads_applied'] for d in docs})}")
    pairs: dict[tuple[Any, ...], dict[str, list[Variant]]] = defaultdict(lambda: defaultdict(list))
    for v in variants:
        pairs[v.pair_key()][v.reader].append(v)
    print("  ratio fread / pyarrow, within each round: wall median [min–max] | CPU time median [min–max]")
    for _, sides in pairs.items():
        for f in sides.get("fread", []):
            for p in sides.get("pyarrow", []):
                wall = [g[f]["median"] / g[p]["median"] for g in per_round]
                cpu = [g[f]["cpu_median"] / g[p]["cpu_median"] for g in per_round]
                print(f"    {_label(f)} / {_label(p)}: {_spread(wall, fmt='{:.2f}')} | {_spread(cpu, fmt='{:.2f}')}")


def studies(args: argparse.Namespace) -> dict[str, list[Variant]]:
    rows, wait = args.rows, args.wait
    both = [Variant("pyarrow", threads=args.threads, rows=rows),
            Variant("fread", threads=args.threads, rows=rows, wait=wait)]
    return {
        "threads": [replace(v, threads=t) for t in (1, 2) for v in both],
        "text": [replace(v, text=t) for t in ("17g", "short") for v in both],
        "star": [replace(v, star=s) for s in ("twin", "middle") for v in both],
        "dates": both + [replace(both[0], mode="arrow_table"), replace(both[1], mode="chr_dates")],
        "size": [replace(v, rows=n) for n in args.sizes for v in (*both, replace(both[1], wait="passive"))],
        "load": [replace(v, load=k) for k in (0, 1) for v in both],
        "omp": [replace(v, threads=t) for t in (1, 2) for v in both]
        + [replace(both[1], threads=t, wait="passive") for t in (2, 1)],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--study", default="threads,text,star,dates,size,load")
    parser.add_argument("--rows", type=int, default=500_000)
    parser.add_argument("--threads", type=int, default=2, help="threads of every study but threads/omp")
    parser.add_argument("--wait", default="", help="OMP_WAIT_POLICY for fread (default: unset, libgomp's)")
    parser.add_argument("--sizes", default="100000,500000,2000000")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--warmup", type=int, default=1)
    parser.add_argument("--iterations", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--work", default=os.environ.get("COLBENCH_HOME", "/tmp") + "/e1-headline")
    args = parser.parse_args()
    args.sizes = [int(s) for s in args.sizes.split(",")]
    random.seed(args.seed)
    root = Path(args.work)
    root.mkdir(parents=True, exist_ok=True)
    print(f"# E1 headline study: {os.cpu_count()} CPUs, warmup {args.warmup}, iterations {args.iterations}, "
          f"rounds {args.rounds}; uptime: {subprocess.run(['uptime'], capture_output=True, text=True).stdout.strip()}")
    firsts: dict[str, list[tuple[float, float]]] = defaultdict(list)
    table = studies(args)
    for name in args.study.split(","):
        study(name, table[name], args, root, firsts)
    print("\n## first read of a process vs the median of its later reads")
    for reader, pairs in firsts.items():
        ratio = [f / later for f, later in pairs if later]
        print(f"  {reader}: first / later = {_spread(ratio, fmt='{:.2f}')} over {len(ratio)} processes")
    print(f"\n# done; uptime: {subprocess.run(['uptime'], capture_output=True, text=True).stdout.strip()}")


if __name__ == "__main__":
    main()
