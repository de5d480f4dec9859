"""Make colbench's reference cost model (src/colbench/runner/reference_costs.json) from real runs, and check
estimates against real run times.

    uv run python scripts/reference_costs.py make --home DIR            # runs of the reference suites in DIR
    uv run python scripts/reference_costs.py check --home DIR [--reference-only]

`make` fits the same model `run --dry-run` fits on a user's own history (colbench.runner.estimate.fit_costs: per
row of data, the iteration and setup time of each benchmark and parameter set; a bare process per runtime) over every
ok result in DIR's store, and the build rate of each data format from DIR's data manifests. `check` estimates each
run of DIR again, from the reference model alone (`--reference-only`, what a fresh machine gets) or from the store's
own history, and prints estimate / real (wall time from the run's start to its finish) per run.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from datetime import datetime
from pathlib import Path

from colbench.runner.estimate import REFERENCE_FILE, Costs, build_rates, estimate_plan, fit_costs, local_manifests
from colbench.runner.execute import config_from_run
from colbench.runner.plan import make_plan
from colbench.store import open_store
from colbench.store.base import ResultQuery

TARGET = Path(__file__).resolve().parents[1] / "src" / "colbench" / "runner" / REFERENCE_FILE


#: a command's wall time less its run record's span, for the six suite runs the reference was made from (quick, e1,
#: e2, e4, e5, e3 on 27 Nov 2026 at load 1-2: 5.9 (the Java worker's build before the run began), 1.5, 1.6, 1.5, 2.3,
#: 2.9 s; on 25 Nov at load 3-7: 17, 9, 7, 10, 17, 10 s): start, planning, checks, calibration, final tables
RUN_OVERHEAD_S = 3.0
#: what a fresh machine is assumed to pay besides processes, measured on the reference VM on 26 Nov 2026 (load 6-7,
#: normalized to an idle machine as runner/estimate.py does):
#: - a counting process's seconds per second of the reference model's plain process of the same case, on 27 Nov 2026
#:   at load 1 (the VM's fast CPU speed), environments compiled to bytecode when built, against this model (made
#:   at load 1-2 the same day): 36.0 (Parquet read, snappy, 100k rows: 10.4 s / 0.289 s), 22.0 (pyarrow CSV read,
#:   100k rows: 8.68 / 0.395), 28.8 (Feather read into a data frame, 100k rows: 7.9 / 0.274); median 28.8, weighted
#:   for the VM's slow speed (1.5x, about 3 processes in 10: docs/gating.md) 28.8 x 1.15 = 33 (on 26 Nov, against
#:   the model made at load 3-7 and before the bytecode: 27.7, 17.5, 19.4)
#: - a fresh uv environment with uv's package cache holding the wheels: 5.4-6.5 s (pyarrow 17.0.0, 21.0.0); with the
#:   wheels to download, 28 s (issue #33): 12 s between the two
#: - a cached one, resolved again: 1.2-1.3 s
#: - the Java worker's Maven build: 26-47 s with Maven's repository empty (issue #33); with it holding the Arrow
#:   version, 3.0-3.7 s at load 1 on 27 Nov 2026 (13 s at load 6-7 the day before)
#: - the counting process of a case with no model (an asv or pytest case never counted here): the median over the
#:   cases of pyarrow's own asv suite (apache/arrow 515410b2a1, python/benchmarks/) counted for pyarrow 17.0.0 and
#:   21.0.0 from suite servers on 29 Nov 2026 (`run --jobs 2`, load 3, run 20261129T063657-ec0b88), each case's
#:   processes normalized to an idle machine as runner/estimate.py does: 19.9 s over the first 80 cases (5.6-358 s)
REFERENCE_SCALARS = {"valgrind_factor": 33.0, "counting_process_s": 20.0, "env_build_s": 12.0, "env_cached_s": 1.3,
                     "java_build_s": 25.0, "java_build_cached_s": 4.0}


def make(home: Path) -> None:
    store = open_store(str(home / "results.duckdb"), read_only=True)
    results = store.results(ResultQuery(status="ok"))
    costs = fit_costs(results)
    costs.build_s_per_byte = build_rates(local_manifests(home / "data"))
    costs.run_s = RUN_OVERHEAD_S
    for name, value in REFERENCE_SCALARS.items():
        setattr(costs, name, value)
    doc = {"made_from": f"{len(results)} ok results of {len(store.list_runs())} runs on the reference VM "
                        f"(2 cores, load 1-2); scripts/reference_costs.py, {datetime.now():%Y-%m-%d}",
           **costs.to_json()}
    TARGET.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")
    print(f"wrote {TARGET} ({len(costs.per_row)} model keys, {len(costs.startup_s)} runtimes, "
          f"{len(costs.build_s_per_byte)} data formats)")


def check(home: Path, reference_only: bool) -> None:
    from colbench.runner.estimate import reference_costs

    store = open_store(str(home / "results.duckdb"), read_only=True)
    manifests = local_manifests(home / "data")
    for run in sorted(store.list_runs(), key=lambda r: r.started_at):
        if not run.finished_at:
            continue
        run_config = config_from_run(run)
        plan = make_plan(run_config.targets, run_config.overrides, run_config.scale)
        saved = run.config  # resolved when the run began; a suite entry's own processes still win over the default
        iterations, warmup, processes = saved.iterations, saved.warmup, saved.processes
        run_config.processes = None
        results = store.results(ResultQuery(run_ids=(run.run_id,)))
        history = Costs() if reference_only else fit_costs(
            r for r in store.results(ResultQuery(status="ok")) if r.run_id != run.run_id)
        start, end = datetime.fromisoformat(run.started_at), datetime.fromisoformat(run.finished_at)
        # the data this run built (the cache already held the rest): its bytes at the model's build rates
        built = [m for m in manifests if start <= datetime.fromisoformat(m["created"]) <= end]
        reference = reference_costs() if reference_only else Costs(build_s_per_byte=build_rates(manifests))
        estimate = estimate_plan(plan, iterations, warmup, lambda c, rc=run_config, n=processes: rc.processes_of(c, n),
                                 history, reference_costs() if reference_only else reference,
                                 new_data=[(m["format"], m["size_bytes"]) for m in built])
        real = (end - start).total_seconds()
        print(f"{run.name or run.run_id:>14}: {len(results):4d} processes, real {real:7.0f} s, estimate "
              f"{estimate.seconds:7.0f} s, ratio {estimate.seconds / real:5.2f}  (data {estimate.data_seconds:.0f} s; "
              f"{estimate.sources()})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("what", choices=("make", "check"))
    parser.add_argument("--home", type=Path, required=True)
    parser.add_argument("--reference-only", action="store_true")
    args = parser.parse_args()
    os.environ["COLBENCH_HOME"] = str(args.home)
    (make if args.what == "make" else lambda h: check(h, args.reference_only))(args.home)


if __name__ == "__main__":
    sys.exit(main())
