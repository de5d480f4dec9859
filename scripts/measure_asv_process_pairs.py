"""Is colbench's figure of a short asv case systematically apart from asv's, or is it the spread between fresh
processes? (issue #43: the sub-millisecond cases of pyarrow's suite read 1.33x asv's figure over the whole suite)

    uv run python scripts/measure_asv_process_pairs.py SUITE_DIR [--case NAME:INDEX ...] [--pairs 20] [--cpu N]

SUITE_DIR is an asv benchmark folder, e.g. apache/arrow's `python/benchmarks` (fetched into a temporary folder: it is
Apache's code, never part of this repository). Each case is an asv benchmark name and the index of its parameter
combination in asv's cartesian order (asv's own `NAME-INDEX` id); the default is the eight 10-row
`PandasConversionsToArrow` / `PandasConversionsFromArrow` cases of pyarrow's suite, 0.2-0.5 ms calls.

For every pair, one case at a time, the script runs the case once in a fresh process as asv runs it (asv_runner's
own `run` command: discovery by name, setup, asv's warm-up and sampling, `rounds` left to the caller as asv does) and
once as colbench runs it (`colbench run asv:SUITE_DIR -b NAME -p ... --processes 1`: one fresh worker), a few seconds
apart, both with this interpreter (so the same pyarrow, pandas and numpy) and pinned to one CPU with `--cpu`. Each
side's figure is its process's median sample. It prints, per case, each tool's median of its process medians with
their range across processes, and the geometric mean of colbench / asv over the pairs: a ratio near 1 with each
tool's processes spread far wider says the difference of a whole-suite comparison was the processes drawn.

`--same-layout` gives each asv process what colbench gives each worker: an environment variable of a random size
(0-4095 bytes, `COLBENCH_ENV_OFFSET`), which moves the stack and the environment's layout per process so that layout
luck averages out over a case's processes (runner/isolate.py). Without it, every asv process has the one layout of
this script's environment.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from measure_asv_suite_count import colbench, results_of  # noqa: E402

SHORT_CASES = tuple(f"convert_pandas.PandasConversions{side}Arrow.time_{kind}-{index}"
                    for side, kind in (("To", "from_series"), ("From", "to_series")) for index in range(4))

ASV_RUN = "import sys; from asv_runner.run import _run; _run(tuple(sys.argv[1:]))"


def pinned(cpu: int | None) -> list[str]:
    return ["taskset", "-c", str(cpu)] if cpu is not None else []


def asv_process(suite: Path, case: str, cpu: int | None, work: Path, same_layout: bool) -> float:
    """asv_runner's `run` of the case in a fresh interpreter (what asv's `run` command starts per case and round):
    the median of its samples."""
    out = work / "asv-result.json"
    out.unlink(missing_ok=True)
    env = {k: v for k, v in os.environ.items() if k != "COLBENCH_ENV_OFFSET"}
    if same_layout:
        env["COLBENCH_ENV_OFFSET"] = "x" * random.randrange(0, 4096)
    done = subprocess.run([*pinned(cpu), sys.executable, "-c", ASV_RUN, str(suite), case, "{}", "None", str(out)],
                          cwd=work, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0 or not out.exists():
        raise SystemExit(f"asv_runner failed on {case}: {done.stderr.strip()[-400:]}")
    return float(statistics.median(json.loads(out.read_text())["samples"]))


def case_params(home: Path, suite: Path, case: str) -> tuple[str, list[str]]:
    """The benchmark's name and colbench's `-p NAME=VALUE` options for asv's combination index."""
    name, _, index = case.rpartition("-")
    done = colbench(home, "list", f"asv:{suite}", "-b", f"^{name}$", "-f", "json")
    if done.returncode != 0:
        raise SystemExit(f"colbench list failed: {done.stderr.strip()[-400:]}")
    params: dict[str, list[str]] = json.loads(done.stdout)["benchmarks"][name]["params"]
    combos = list(itertools.product(*params.values())) if params else [()]
    combo = combos[int(index or 0)]
    return name, [option for axis, value in zip(params, combo, strict=True) for option in ("-p", f"{axis}={value}")]


def colbench_process(home: Path, suite: Path, name: str, options: list[str], cpu: int | None) -> float:
    run_name = f"pairs-{time.time_ns()}"
    done = colbench(home, "run", f"asv:{suite}", "-b", f"^{name}$", *options, "--processes", "1", "--run-name",
                    run_name, prefix=tuple(pinned(cpu)))
    results = [r for r in results_of(home, run_name) if r["status"] == "ok"] if done.returncode == 0 else []
    if not results:
        raise SystemExit(f"colbench failed on {name}: {(done.stderr or done.stdout).strip()[-400:]}")
    return float(statistics.median(results[0]["samples"]["wall_s"]))


def spread(values: list[float]) -> str:
    return f"{statistics.median(values) * 1e3:.3f} ms ({min(values) * 1e3:.3f}-{max(values) * 1e3:.3f})"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("suite", type=Path)
    parser.add_argument("--case", action="append", default=None, help="NAME-INDEX, asv's id (repeatable)")
    parser.add_argument("--pairs", type=int, default=20)
    parser.add_argument("--cpu", type=int, default=None, help="pin both tools' processes to this CPU")
    parser.add_argument("--same-layout", action="store_true",
                        help="a random-size environment variable for each asv process, as colbench's workers get")
    args = parser.parse_args(argv)
    suite = args.suite.resolve()
    work = Path(tempfile.mkdtemp(prefix="colbench-asv-pairs-"))
    home = work / "home"
    cases = args.case or list(SHORT_CASES)
    options = {case: case_params(home, suite, case) for case in cases}
    started = time.strftime("%Y-%m-%d %H:%M:%S %Z")
    load0 = os.getloadavg()[0]
    sides: dict[str, Callable[[str], float]] = {
        "asv": lambda case: asv_process(suite, case, args.cpu, work, same_layout=False),
        "colbench": lambda case: colbench_process(home, suite, *options[case], args.cpu)}
    if args.same_layout:
        sides["asv, random layout"] = lambda case: asv_process(suite, case, args.cpu, work, same_layout=True)
    figures: dict[str, dict[str, list[float]]] = {case: {side: [] for side in sides} for case in cases}
    for pair in range(args.pairs):
        order = list(sides)[pair % len(sides):] + list(sides)[:pair % len(sides)]  # no side always goes first
        for case in cases:
            for side in order:
                figures[case][side].append(sides[side](case))
        print(f"pair {pair + 1}/{args.pairs} done, load {os.getloadavg()[0]:.1f}", file=sys.stderr, flush=True)
    print(f"{started} to {time.strftime('%H:%M:%S')}, {args.pairs} pairs a case, load {load0:.1f} at the start and "
          f"{os.getloadavg()[0]:.1f} at the end, CPU {args.cpu if args.cpu is not None else 'any'}\n")
    ratios = [("colbench", "asv")] + ([("colbench", "asv, random layout"), ("asv, random layout", "asv")]
                                      if args.same_layout else [])
    print("| case | " + " | ".join(f"{side}: median of process medians (range)" for side in sides) + " | "
          + " | ".join(f"{a} / {b}, geometric mean of the pairs" for a, b in ratios) + " |")
    print("| --- |" + " ---: |" * (len(sides) + len(ratios)))
    every: dict[tuple[str, str], list[float]] = {pair: [] for pair in ratios}
    for case, by_side in figures.items():
        cells = [spread(by_side[side]) for side in sides]
        for a, b in ratios:
            paired = [x / y for x, y in zip(by_side[a], by_side[b], strict=True)]
            every[(a, b)] += paired
            close = sum(1 for r in paired if 0.9 <= r <= 1.1)
            cells.append(f"{statistics.geometric_mean(paired):.3f} ({close}/{len(paired)} within ±10%)")
        print(f"| `{case}` | " + " | ".join(cells) + " |")
    print()
    for (a, b), values in every.items():
        print(f"over all {len(values)} pairs: {a} / {b} geometric mean {statistics.geometric_mean(values):.3f}, "
              f"median {statistics.median(values):.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
