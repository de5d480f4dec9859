"""Where the noise of a two-environment run comes from, per case: processes or iterations, wall or CPU time.

    uv run python scripts/noise_components.py [RUN] [--store URL] [--alpha 0.01] [--effect 0.05]

RUN (default: latest) must have two environments (e.g. an A/A from `colbench calibrate` or `colbench run
--env A=@current --env B=@current`). Per case and per time basis (wall; CPU = user + sys of the worker),
on the log scale (0.02 ~ 2%):

- `iter`: spread of iterations inside a process (pooled);
- `proc`: spread of the per-process medians;
- `ICC`: the share of the variance of one iteration that is between processes (0: processes are
  exchangeable, iterations could be pooled; 1: only processes count);
- `block`: robust spread of the per-block log-ratios the verdict uses;
- `cpu/wall`: median CPU time per wall second (1 = one busy core);
- `blocks for 5%`: blocks a paired comparison needs to call a true +5% a regression with 95% probability,
  at the suite-wide level alpha / cases.
"""

from __future__ import annotations

import argparse
import math
from collections import defaultdict

import numpy as np

from colbench.analysis.basis import iteration_values
from colbench.analysis.comparison import case_label
from colbench.analysis.power import blocks_needed
from colbench.analysis.stats import qn_sigma as robust_sigma
from colbench.analysis.verdicts import CaseInput, block_log_ratios
from colbench.model.records import Result
from colbench.paths import default_store_url
from colbench.store import open_store
from colbench.store.base import ResultQuery, resolve_run_id


def components(procs: list[np.ndarray]) -> tuple[float, float, float]:
    """(within sd, between sd of process medians, ICC) of log values, one array per process."""
    procs = [p for p in procs if p.size >= 2]
    if len(procs) < 2:
        return math.nan, math.nan, math.nan
    within = math.sqrt(float(np.mean([p.var(ddof=1) for p in procs])))
    means = np.array([p.mean() for p in procs])
    k = float(np.mean([p.size for p in procs]))
    between_var = max(0.0, float(means.var(ddof=1)) - within**2 / k)
    icc = between_var / (between_var + within**2) if between_var + within**2 > 0 else math.nan
    return within, robust_sigma([np.median(p) for p in procs]), icc


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("run", nargs="?", default="latest")
    parser.add_argument("--store", default=None)
    parser.add_argument("--alpha", type=float, default=0.01)
    parser.add_argument("--effect", type=float, default=0.05)
    args = parser.parse_args()
    db = open_store(args.store or default_store_url(), create=False)
    run_id = resolve_run_id(db, args.run)
    results = [r for r in db.results(ResultQuery(run_ids=(run_id,))) if r.ok]
    envs = list(dict.fromkeys(r.env_name for r in results))
    if len(envs) != 2:
        raise SystemExit(f"run {run_id} has environments {envs}: need exactly two")
    by_case: dict[str, dict[str, list[Result]]] = defaultdict(lambda: defaultdict(list))
    for r in results:
        by_case[case_label(r.benchmark, r.params)][r.env_name].append(r)
    level = args.alpha / max(1, len(by_case))
    print(f"run {run_id}: {len(by_case)} cases, environments {envs[0]} / {envs[1]}; level {level:.2g}")
    header = (f"{'case':<58} {'basis':<5} {'median':>9} {'iter':>6} {'proc':>6} {'ICC':>5} {'block':>6} "
              f"{'cpu/wall':>8} {'blocks for ' + format(args.effect, '.0%'):>14}")
    print(header)
    for label, sides in by_case.items():
        a, b = sides[envs[0]], sides[envs[1]]
        ratio = np.median([c / w for r in a + b for w, c in zip(r.samples["wall_s"],
                                                                   iteration_values(r, "cpu") or [], strict=False)
                           if w]) if iteration_values(a[0], "cpu") else math.nan
        for basis in ("wall", "cpu"):
            va = [iteration_values(r, basis) for r in a]
            vb = [iteration_values(r, basis) for r in b]
            if not all(va) or not all(vb):
                continue
            logs = [np.log(np.asarray(v)) for v in va + vb]
            within, between, icc = components(logs)
            case = CaseInput(va, vb, baseline_blocks=[r.block for r in a], contender_blocks=[r.block for r in b])
            sigma_d = robust_sigma(block_log_ratios(case))
            need = blocks_needed(sigma_d, args.effect, level=level, power=0.95)
            median = float(np.median([x for v in va + vb for x in v]))
            print(f"{label[:58]:<58} {basis:<5} {median * 1e3:>7.1f}ms {within:>6.3f} {between:>6.3f} {icc:>5.2f} "
                  f"{sigma_d:>6.3f} {ratio:>8.2f} {need if need else '-':>14}")


if __name__ == "__main__":
    main()
