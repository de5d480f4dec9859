"""`run --until-decided`: run environments against the first one, look at the verdicts, add blocks to the
cases still inconclusive, until every case is decided or the time budget is spent.

The statistics live in `analysis/sequential.py` (how alpha is split over looks, how big the next look is)
and `analysis/compare.py` (the verdict rule); this module only orchestrates: run, collect, look, repeat.
What each look used (its blocks and its alpha) is kept in the run record under "sequential", so a later
`colbench compare` of the two environments reproduces exactly these verdicts instead of re-testing the
final data at the full alpha (which, after stopping on the data, would no longer be valid).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from colbench.analysis.compare import CaseComparison, CaseInput, Method
from colbench.analysis.sequential import FIRST_LOOK_FRACTION, LookPlan, SequentialCompare, Spending, plan_next_look
from colbench.runner.execute import EnvChoice, Execution, RunConfig, RunObserver, execute_run, start_run
from colbench.runner.plan import Plan, PlannedCase
from colbench.store.base import ResultQuery, Store

Key = tuple[str, str]  # (contender environment, case label)


@dataclass(frozen=True)
class GateSettings:
    """How `--until-decided` decides: the verdict rule's settings, the time budget, and the look sizes."""

    threshold: float = 0.03
    alpha: float = 0.01
    floor: float = 0.0
    budget_s: float = 600.0
    max_looks: int | None = None
    growth: float = 0.5
    min_step: int = 4
    method: Method = "holm"
    spending: Spending = "pocock"
    basis: str = "auto"
    until_decided: bool = True


@dataclass(frozen=True)
class Look:
    number: int
    elapsed_s: float
    fraction: float
    alpha: float
    pending: int
    blocks_added: int


@dataclass
class SessionResult:
    run: dict[str, Any]
    baseline: str
    comparisons: dict[str, list[CaseComparison]]  # contender environment → its comparisons
    notes: list[str]
    looks: list[Look]
    elapsed_s: float
    stopped: str  # "decided", "budget", "looks"

    @property
    def inconclusive(self) -> list[CaseComparison]:
        return [c for comps in self.comparisons.values() for c in comps if str(c.verdict) == "inconclusive"]


class _Timing(RunObserver):
    """Passes every event on, and measures how long one execution of each case takes."""

    def __init__(self, inner: RunObserver, clock: Callable[[], float]) -> None:
        self.inner, self.clock = inner, clock
        self.seconds: dict[str, float] = {}
        self.executions: dict[str, int] = {}
        self._started: float | None = None

    def start(self, run: dict[str, Any], cases: int, executions: int) -> None:
        self.inner.start(run, cases, executions)

    def case_started(self, case: PlannedCase) -> None:
        self._started = self.clock()
        self.inner.case_started(case)

    def execution_done(self, execution: Execution, result: dict[str, Any]) -> None:
        self.inner.execution_done(execution, result)

    def case_done(self, case: PlannedCase, results: list[dict[str, Any]]) -> None:
        if self._started is not None:
            self.seconds[case.case_id] = self.seconds.get(case.case_id, 0.0) + self.clock() - self._started
            self.executions[case.case_id] = self.executions.get(case.case_id, 0) + len(results)
        self.inner.case_done(case, results)

    def finish(self, run: dict[str, Any]) -> None:
        self.inner.finish(run)

    def per_execution(self, case_id: str, recorded: dict[str, float]) -> float:
        """Seconds one execution of the case took here; else what its results recorded (a resumed run)."""
        n = self.executions.get(case_id)
        return self.seconds[case_id] / n if n else recorded.get(case_id, 0.0)


def _inputs(store: Store, run_id: str, baseline: str, contenders: Sequence[str], basis: str,
            blocks_used: dict[Key, int] | None = None
            ) -> tuple[dict[Key, CaseInput], dict[Key, str], dict[str, float], list[str]]:
    """CaseInputs keyed by (contender, case label), the case id of each key, the median seconds of one
    execution per case id as its results recorded them, and notes."""
    from colbench.analysis.sides import case_inputs, short_labels
    from colbench.model.records import Side

    results = store.results(ResultQuery(run_ids=(run_id,)))
    spans: dict[str, list[float]] = {}
    for r in results:
        span = (r.get("process") or {}).get("spawn_to_result_s")
        if span:
            spans.setdefault(r["case_id"], []).append(float(span))
    seconds = {case_id: float(np.median(v)) for case_id, v in spans.items()}
    labels = short_labels(results)
    ids = {label: case_id for case_id, label in labels.items()}
    cases: dict[Key, CaseInput] = {}
    notes: list[str] = []
    base = Side(baseline, run_id, baseline, [r for r in results if r["env_name"] == baseline])
    for contender in contenders:
        cont = Side(contender, run_id, contender, [r for r in results if r["env_name"] == contender])
        inputs, more = case_inputs(base, cont, metric="time", basis=basis)
        notes += more
        for label, case in inputs.items():
            cases[(contender, label)] = case
    if blocks_used:
        cases = {k: truncate_blocks(c, blocks_used[k]) if k in blocks_used else c for k, c in cases.items()}
    return cases, {k: ids[k[1]] for k in cases}, seconds, notes


def truncate_blocks(case: CaseInput, blocks: int) -> CaseInput:
    """The case as it was when only blocks 0 .. blocks-1 had run (for reproducing an earlier look)."""
    import dataclasses

    if case.baseline_blocks is None or case.contender_blocks is None:
        return case
    keep_b = [i for i, b in enumerate(case.baseline_blocks) if b < blocks]
    keep_c = [i for i, b in enumerate(case.contender_blocks) if b < blocks]
    out = dataclasses.replace(
        case,
        baseline=[case.baseline[i] for i in keep_b], contender=[case.contender[i] for i in keep_c],
        baseline_blocks=[case.baseline_blocks[i] for i in keep_b],
        contender_blocks=[case.contender_blocks[i] for i in keep_c],
        check=truncate_blocks(case.check, blocks) if case.check is not None else None,
    )
    return out


def run_until_decided(
    store: Store,
    config: RunConfig,
    plan: Plan,
    envs: Sequence[EnvChoice],
    settings: GateSettings,
    *,
    observer: RunObserver | None = None,
    run: dict[str, Any] | None = None,
    on_look: Callable[[Look, LookPlan | None], None] | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> SessionResult:
    """Run (or continue) a run of several environments and compare each against the first, adding blocks
    to inconclusive cases while the budget lasts (`settings.until_decided`), else one look at full alpha."""
    if len(envs) < 2:
        raise ValueError("a comparison needs at least two environments")
    started = clock()
    observer = observer or RunObserver()
    timing = _Timing(observer, clock)
    if run is None:
        run = start_run(store, config, plan, envs, sys.argv)
    run = execute_run(store, run, plan, envs, config, timing)
    baseline, contenders = envs[0].name, [e.name for e in envs[1:]]
    seq: SequentialCompare[Key] = SequentialCompare(
        alpha=settings.alpha, threshold=settings.threshold, floor=settings.floor,
        max_looks=settings.max_looks if settings.until_decided else None,
        method=settings.method, spending=settings.spending, paired=True)
    cases, ids, results_seconds, notes = _inputs(store, run["run_id"], baseline, contenders, settings.basis)
    first_fraction = FIRST_LOOK_FRACTION if settings.until_decided else 1.0
    results = seq.look(cases, fraction=first_fraction)
    blocks = config.resolved(plan)[2]
    used: dict[Key, int] = {k: blocks for k in cases}
    looks = [Look(1, clock() - started, seq.fraction, seq.spent_alphas[-1], len(seq.pending), blocks)]
    record = {"baseline": baseline, "alpha": settings.alpha, "threshold": settings.threshold,
              "floor": settings.floor, "family_size": seq.family_size, "spending": settings.spending,
              "basis": settings.basis, "looks": [], "cases": {}}
    stopped, reported = "decided", False
    while seq.pending and settings.until_decided:
        if seq.exhausted:  # the last look the budget (or --max-looks) allowed is done
            limited = settings.max_looks is not None and seq.looks_done >= settings.max_looks
            stopped = "looks" if limited else "budget"
            break
        pending = list(seq.pending)
        per_block = sum(2 * timing.per_execution(ids[key], results_seconds) for key in pending)
        next_look = plan_next_look(elapsed_s=clock() - started, budget_s=settings.budget_s,
                                   seconds_per_block=per_block, blocks_so_far=blocks,
                                   growth=settings.growth, min_step=settings.min_step)
        if on_look:
            on_look(looks[-1], next_look)
        if next_look is None:
            stopped, reported = "budget", True
            break
        blocks += next_look.blocks
        config.processes = blocks
        run["config"]["processes"] = blocks
        pending_envs = [e for e in envs[1:] if any(k[0] == e.name for k in pending)]
        pending_ids = {ids[k] for k in pending}

        def undecided(case: PlannedCase, wanted: set[str] = pending_ids) -> bool:
            return case.case_id in wanted

        run = execute_run(store, run, plan, [envs[0], *pending_envs], config, timing, only_cases=undecided)
        cases, ids, results_seconds, _ = _inputs(store, run["run_id"], baseline, contenders, settings.basis)
        for key in pending:
            used[key] = blocks
        results = seq.look({k: v for k, v in cases.items() if k in results},
                           fraction=max(next_look.fraction, seq.fraction))
        looks.append(Look(len(looks) + 1, clock() - started, seq.fraction, seq.spent_alphas[-1],
                          len(seq.pending), next_look.blocks))
    if on_look and not reported:
        on_look(looks[-1], None)
    record["looks"] = [{"fraction": look.fraction, "alpha": look.alpha, "blocks_added": look.blocks_added}
                       for look in looks]
    record["cases"] = {f"{k[0]}\x1f{k[1]}": {"blocks": used[k], "alpha": results[k].alpha} for k in results}
    if settings.until_decided:  # a single look at full alpha is what `compare` does anyway
        run["sequential"] = record
        store.update_run(run)
    by_env: dict[str, list[CaseComparison]] = {c: [] for c in contenders}
    for key, comparison in results.items():
        by_env[key[0]].append(_relabel(comparison, key[1]))
    return SessionResult(run, baseline, by_env, list(dict.fromkeys(notes)), looks, clock() - started, stopped)


def _relabel(comparison: CaseComparison, label: Hashable) -> CaseComparison:
    import dataclasses

    return dataclasses.replace(comparison, key=label)


def replay(store: Store, run: dict[str, Any], baseline: str, contender: str, *,
           threshold: float | None = None, floor: float | None = None) -> list[CaseComparison] | None:
    """The time verdicts `run_until_decided` reached for this pair of environments, recomputed from the
    stored results with the blocks and alpha of each case's last look; None when the run has no such record."""
    from colbench.analysis.compare import compare_suite

    record = run.get("sequential")
    if not record or record.get("baseline") != baseline:
        return None
    wanted = {k.split("\x1f", 1)[1]: v for k, v in record["cases"].items() if k.split("\x1f", 1)[0] == contender}
    if not wanted:
        return None
    cases, _, _, _ = _inputs(store, run["run_id"], baseline, [contender], record.get("basis", "auto"),
                          {(contender, label): v["blocks"] for label, v in wanted.items()})
    out = []
    for (_, label), case in cases.items():
        if label not in wanted:
            continue
        (comparison,) = compare_suite({label: case}, threshold=threshold or record["threshold"],
                                      alpha=wanted[label]["alpha"], family_size=record["family_size"],
                                      floor=record["floor"] if floor is None else floor, paired=True)
        out.append(comparison)
    return out

