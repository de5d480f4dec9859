"""How often does the gate catch an injected slowdown, and how often does it cry wolf? Repeated real trials.

    uv run python scripts/detection_rate.py [--trials 10] [--slowdown 1.05] [--budget 10m] [--case NAME ...]

Each trial is one `colbench run CASE --until-decided --budget B` with two interleaved environments that
are this interpreter with a `sitecustomize` on PYTHONPATH wrapping a library function (e.g.
`pyarrow.parquet.read_table`): after each call it busy-waits (factor - 1) x the call's own duration, so the
library is that much slower, inside the timed region, invisibly to colbench. A/B trials use factors 1 and
--slowdown; A/A trials (--aa, on by default) use 1 and 1: any regression or improvement there is a false
positive. Each trial is one pair of cases with its own budget; the verdict is read back with
`colbench compare base slow --format json` (which replays the run's looks).

Prints every trial (verdict, ratio and interval, blocks, MDE, time) and, per case, the detection rate and
the false-positive rate with Wilson 95% intervals, and the load average while it ran.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from colbench.analysis.stats import wilson_interval

#: Real >= 100 ms cases (on a 2-core VM) and the library function whose slowdown is injected.
CASES: dict[str, tuple[list[str], str]] = {
    "parquet-read": (["file-read", "--param", "format=parquet", "--param", "codec=snappy", "--param",
                      "engine=pyarrow", "--param", "source=fanniemae_2016Q4", "--param", "output=arrow_table",
                      "--param", "rows=1000000", "--param", "threads=1"], "pyarrow.parquet:read_table"),
    "csv-read-pyarrow": (["csv-read", "--param", "reader=pyarrow", "--param", "source=fanniemae_2016Q4",
                          "--param", "compression=none", "--param", "output=arrow_table", "--param",
                          "rows=500000", "--param", "threads=1"], "pyarrow.csv:read_csv"),
    "csv-read-polars": (["csv-read", "--param", "reader=polars", "--param", "source=fanniemae_2016Q4",
                         "--param", "compression=none", "--param", "output=dataframe", "--param", "rows=500000",
                         "--param", "threads=1"], "polars:read_csv"),
}

SITECUSTOMIZE = '''
"""Injected by scripts/detection_rate.py: make one library function slower by COLBENCH_INJECT_FACTOR."""
import functools, importlib.abc, importlib.util, os, sys, time

_TARGET = os.environ.get("COLBENCH_INJECT_TARGET", "")
_FACTOR = float(os.environ.get("COLBENCH_INJECT_FACTOR", "1"))
# a fixed amount of integer work after each call instead (the same instructions every time: for counts, where a
# wall-clock wait would count whatever Valgrind's slowness makes of it)
_UNITS = int(os.environ.get("COLBENCH_INJECT_UNITS", "0"))
_MODULE, _, _ATTR = _TARGET.partition(":")


def _busy(units):
    acc = 0
    for i in range(units):
        acc = (acc * 31 + i) & 0xFFFF
    return acc


def _slower(func):
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        start = time.perf_counter()
        out = func(*args, **kwargs)
        if _UNITS:
            _busy(_UNITS)
            return out
        deadline = time.perf_counter() + (_FACTOR - 1.0) * (time.perf_counter() - start)
        while time.perf_counter() < deadline:
            pass
        return out
    return wrapper


def _patch(module):
    setattr(module, _ATTR, _slower(getattr(module, _ATTR)))


class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name != _MODULE:
            return None
        sys.meta_path.remove(self)
        try:
            spec = importlib.util.find_spec(name)
        finally:
            sys.meta_path.insert(0, self)
        if spec is None or spec.loader is None:
            return None
        run = spec.loader.exec_module

        def exec_module(module):
            run(module)
            _patch(module)
        spec.loader.exec_module = exec_module
        return spec


if _MODULE and _ATTR and (_FACTOR != 1.0 or _UNITS):
    if _MODULE in sys.modules:
        _patch(sys.modules[_MODULE])
    else:
        sys.meta_path.insert(0, _Finder())
'''


def colbench(home: Path, *args: str, timeout: float | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLBENCH_HOME": str(home)}
    env.pop("COLBENCH_STORE", None)
    return subprocess.run([sys.executable, "-m", "colbench", *args], capture_output=True, text=True, env=env,
                          timeout=timeout)




def trial(home: Path, hook: Path, case: str, factor: float, budget: str, seed: int) -> dict | None:
    args, target = CASES[case]
    side = f"@current PYTHONPATH={hook} COLBENCH_INJECT_TARGET={target}"
    started = time.monotonic()
    run = colbench(home, "run", *args, "--env", f"base={side} COLBENCH_INJECT_FACTOR=1",
                   "--env", f"slow={side} COLBENCH_INJECT_FACTOR={factor}", "--until-decided", "--budget", budget,
                   "--seed", str(seed))
    if run.returncode not in (0, 1):  # 1: the run's own comparison found a regression
        print(f"colbench run failed ({run.returncode}), trial skipped:\n{run.stdout[-1500:]}\n{run.stderr[-1500:]}",
              file=sys.stderr, flush=True)
        return None
    out = colbench(home, "compare", "base", "slow", "--metric", "time", "--format", "json")
    (comparison,) = json.loads(out.stdout)["comparisons"]
    return {**comparison, "seconds": time.monotonic() - started, "load": os.getloadavg()[0]}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--trials", type=int, default=10, help="A/B trials per case (and as many A/A)")
    parser.add_argument("--slowdown", type=float, default=1.05)
    parser.add_argument("--budget", default="10m", help="per pair (one case, two environments)")
    parser.add_argument("--case", action="append", choices=sorted(CASES), help="default: all")
    parser.add_argument("--no-aa", action="store_true", help="skip the A/A trials")
    parser.add_argument("--home", type=Path, help="COLBENCH_HOME to keep (data cache, store) for re-analysis; "
                        "default: a temporary one")
    args = parser.parse_args()
    cases = args.case or list(CASES)
    factors = [args.slowdown] + ([] if args.no_aa else [1.0])
    with tempfile.TemporaryDirectory() as tmp:
        hook = Path(tmp) / "hook"
        hook.mkdir()
        (hook / "sitecustomize.py").write_text(SITECUSTOMIZE)
        home = args.home.resolve() if args.home else Path(tmp) / "home"
        outcomes: dict[tuple[str, float], list[dict]] = {}
        for t in range(args.trials):
            for case in cases:
                for factor in factors:
                    r = trial(home, hook, case, factor, args.budget, seed=1000 + t)
                    if r is None:
                        continue
                    outcomes.setdefault((case, factor), []).append(r)
                    mde = r.get("mde_95")
                    print(f"{case:<17} x{factor:<5g} trial {t + 1}: {r['verdict']:<12} ratio {r['ratio']:.4f} "
                          f"[{r['ci_low'] or math.nan:.4f}, {r['ci_high'] or math.nan:.4f}] {r['basis']:<4} "
                          f"{r['n_blocks']:>3} blocks, MDE95 {mde * 100 if mde else math.nan:.1f}%, "
                          f"{r['seconds'] / 60:.1f} min, load {r['load']:.1f}", flush=True)
    print()
    for (case, factor), rs in outcomes.items():
        verdicts = [r["verdict"] for r in rs]
        minutes = sorted(r["seconds"] / 60 for r in rs)
        if factor == 1.0:
            wrong = sum(v in ("regression", "improvement") for v in verdicts)
            lo, hi = wilson_interval(wrong, len(rs))
            what = f"false positives {wrong}/{len(rs)} ({wrong / len(rs):.0%}, 95% CI {lo:.0%}-{hi:.0%})"
        else:
            hits = verdicts.count("regression")
            lo, hi = wilson_interval(hits, len(rs))
            what = f"detected {hits}/{len(rs)} ({hits / len(rs):.0%}, 95% CI {lo:.0%}-{hi:.0%})"
        others = ", ".join(f"{v} {verdicts.count(v)}" for v in sorted(set(verdicts)))
        print(f"{case} x{factor:g}: {what}; verdicts: {others}; median {minutes[len(minutes) // 2]:.1f} min, "
              f"load {sum(r['load'] for r in rs) / len(rs):.1f}")


if __name__ == "__main__":
    main()
