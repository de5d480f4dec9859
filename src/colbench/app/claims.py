"""Evaluate the reference posts' claims over stored runs: the use case behind `colbench claims` and the claims
after a run (the report's claims section reads the same evaluation, `report.claims.evaluate_results`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from colbench.analysis.claims import ClaimVerdict
from colbench.experiments.registry import EXPERIMENTS, all_suites
from colbench.model.claims import Untestable
from colbench.model.records import Run
from colbench.report.claims import evaluate_results, experiments_of_run
from colbench.store.base import ResultQuery, Store, resolve_run_id
from colbench.store.selection import latest_run_of_suite


@dataclass(frozen=True)
class ClaimsAnswer:
    verdicts: list[ClaimVerdict]
    untestable: list[Untestable]
    run_ids: list[str]
    cores: int | None  # of the machine of the first run, for the table's heading


def evaluate_runs(store: Store, run_ids: Sequence[str], experiments: Sequence[str] = ()
                  ) -> tuple[list[ClaimVerdict], list[Untestable]]:
    """The claims of these experiments (all when none named) over these runs' stored results, as one family."""
    results = store.results(ResultQuery(run_ids=tuple(run_ids)))
    runs = {run_id: store.get_run(run_id) for run_id in run_ids}
    return evaluate_results(results, runs, experiments)


def evaluate(store: Store, refs: Sequence[str] = ("latest",)) -> ClaimsAnswer:
    """`refs`: runs (id, prefix, name, `latest`) and experiment suites (`e1` … `e5`: the latest run of each). The
    claims are those of the suites named, else of the experiments the runs ran."""
    run_ids: list[str] = []
    experiments: list[str] = []
    suites = all_suites()
    for ref in refs or ("latest",):
        if ref in suites:
            run_ids.append(latest_run_of_suite(store, ref))
            experiments.extend(e.key for e in EXPERIMENTS if any(s.name == ref for s in e.suites))
        else:
            run_ids.append(resolve_run_id(store, ref))
    run_ids = list(dict.fromkeys(run_ids))
    if not experiments:
        for run_id in run_ids:
            experiments.extend(experiments_of_run(store.get_run(run_id)))
    verdicts, untestable = evaluate_runs(store, run_ids, sorted(set(experiments)))
    cores = store.get_run(run_ids[0]).machine.get("cpu_threads")
    return ClaimsAnswer(list(verdicts), list(untestable), run_ids, cores)


def claims_of_run(store: Store, run: Run) -> ClaimsAnswer | None:
    """The claims of the reference experiments a run ran (None: it ran none), over what it measured."""
    experiments = experiments_of_run(run)
    if not experiments:
        return None
    verdicts, untestable = evaluate_runs(store, [run.run_id], experiments)
    return ClaimsAnswer(list(verdicts), list(untestable), [run.run_id], run.machine.get("cpu_threads"))
