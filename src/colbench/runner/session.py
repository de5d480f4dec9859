"""`run --until-decided`: run environments against the first one, look at the verdicts, add blocks to the
cases still inconclusive, until every case is decided or the time budget is spent.

The statistics live in `analysis/sequential.py` (how alpha is split over looks, how big the next look is),
`analysis/comparison.py` (the one comparison: inputs, noise from history) and `analysis/verdicts.py` (the tests and
the verdict rule); this module only orchestrates: run, collect, look, repeat. The metric that decides is the run's
own: instruction counts when the run counts them, else time. What each look used (its blocks, its alpha and the
noise earlier runs lent) is kept in the run record under "sequential", so `colbench compare`, the report and the
dashboard reproduce exactly these verdicts instead of re-testing the final data at the full alpha (which, after
stopping on the data, would no longer be valid).
"""

from __future__ import annotations

import dataclasses
import functools
import sys
import time
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from colbench.analysis.comparison import case_inputs, noise_priors, short_labels
from colbench.analysis.sequential import FIRST_LOOK_FRACTION, LookPlan, SequentialCompare, Spending, plan_next_look
from colbench.analysis.verdicts import CaseComparison, CaseInput, Method
from colbench.model.metrics import deciding_metric as measured_decider
from colbench.model.metrics import metric
from colbench.model.records import Result, Run, Side
from colbench.model.run_config import EnvChoice, RunConfig
from colbench.model.run_parts import CASE_KEY_SEPARATOR, CaseLook, LookRecord, NoisePriorRecord, SequentialLooks
from colbench.runner.execute import Execution, ExecutionHooks, execute_run, start_run
from colbench.runner.executor import current_executor
from colbench.runner.plan import Plan, PlannedCase
from colbench.store.base import ResultQuery, Store
from colbench.store.selection import comparison_evidence

Key = tuple[str, str]  # (contender environment, case label)


@dataclass(frozen=True)
class GateSettings:
    """How `--until-decided` decides: the verdict rule's settings (threshold None: the metric's default), the time
    budget, and the look sizes."""

    threshold: float | None = None
    alpha: float = 0.01
    floor: float = 0.0
    budget_s: float = 600.0
    max_looks: int | None = None
    growth: float = 0.5
    #: the fewest blocks a later look adds (None: the deciding metric's `look_step`: 1 for counts, 4 for time)
    min_step: int | None = None
    method: Method = "holm"
    spending: Spending = "pocock"
    basis: str = "auto"
    until_decided: bool = True
    #: each look after the first spends at least this share of the alpha-spending time left (0: by the time used
    #: alone). A budget far longer than the comparison (a watch pass gives a release what is left of its hour, `run
    #: --until-decided --budget 1h` the same) would otherwise leave the looks after the first, which is charged
    #: FIRST_LOOK_FRACTION, nothing to spend until the time used passes that share: an unchanged release took 11
    #: processes a side (#46). Data-independent, so the looks' alphas still sum to alpha.
    least_share: float = FIRST_LOOK_FRACTION
    #: where the run's cost could not be estimated (cases never run here, with no model: an asv suite's first run),
    #: the budget is this many times the first look's measured time (at least `budget_s`), set once that look is done
    budget_per_first_look: float | None = None


@dataclass(frozen=True)
class Look:
    number: int
    elapsed_s: float
    fraction: float
    alpha: float
    pending: int
    blocks_added: int
    #: blocks per case once this look's data were in
    blocks: int = 0
    #: the budget in effect at this look (`GateSettings.budget_per_first_look` sets it after the first)
    budget_s: float = 0.0
    #: on the last look: why no more followed ("decided", "budget", "looks", "fixed": one look was asked for, or
    #: "none": not one case had results on both sides to compare, so nothing was decided)
    ended: str | None = None


@dataclass
class SessionResult:
    run: Run
    baseline: str
    comparisons: dict[str, list[CaseComparison]]  # contender environment → its comparisons
    notes: list[str]
    looks: list[Look]
    elapsed_s: float
    #: "decided", "budget", "looks", "fixed" (one look of the planned blocks: --no-until-decided), or "none" (no case
    #: had results on both sides: nothing to compare, which is not "every comparison decided")
    stopped: str

    @property
    def inconclusive(self) -> list[CaseComparison]:
        return [c for comps in self.comparisons.values() for c in comps if str(c.verdict) == "inconclusive"]


class _Timing(ExecutionHooks):
    """Passes every event on, and measures how long one execution of each case takes."""

    def __init__(self, inner: ExecutionHooks, clock: Callable[[], float]) -> None:
        self.inner, self.clock = inner, clock
        self.seconds: dict[str, float] = {}
        self.executions: dict[str, int] = {}
        self._started: float | None = None

    def at_once(self, slots: int) -> None:
        self.inner.at_once(slots)

    def start(self, run: Run, cases: int, executions: int) -> None:
        self.inner.start(run, cases, executions)

    def case_started(self, case: PlannedCase) -> None:
        self._started = self.clock()
        self.inner.case_started(case)

    def execution_started(self, execution: Execution) -> None:
        self.inner.execution_started(execution)

    def profiling(self, execution: Execution) -> None:
        self.inner.profiling(execution)

    def execution_done(self, execution: Execution, result: Result) -> None:
        self.inner.execution_done(execution, result)

    def case_done(self, case: PlannedCase, results: list[Result]) -> None:
        if self._started is not None:
            self.seconds[case.case_id] = self.seconds.get(case.case_id, 0.0) + self.clock() - self._started
            self.executions[case.case_id] = self.executions.get(case.case_id, 0) + len(results)
        self.inner.case_done(case, results)

    def finish(self, run: Run) -> None:
        self.inner.finish(run)

    def per_execution(self, case_id: str, recorded: dict[str, float]) -> float:
        """Seconds one execution of the case took here; else what its results recorded (a resumed run). On a cluster
        (runner/cluster.py) a case's results arrive together, so the time seen here says nothing: the processes' own
        times, which are never longer than what was seen here on the local runner, count instead."""
        n = self.executions.get(case_id)
        seen = self.seconds[case_id] / n if n else 0.0
        return max(seen, recorded.get(case_id, 0.0))


def deciding_metric(config: RunConfig) -> str:
    """The metric a run's verdicts decide on: instruction counts when it counts them (deterministic: a few
    processes decide), else time."""
    return measured_decider(config.measure)


def _inputs(store: Store, run_id: str, baseline: str, contenders: Sequence[str], basis: str, metric_name: str,
            ) -> tuple[dict[Key, CaseInput], dict[Key, str], dict[str, float], list[str]]:
    """CaseInputs keyed by (contender, case label), the case id of each key, the median seconds of one
    execution per case id as its results recorded them, and notes."""
    results = store.results(ResultQuery(run_ids=(run_id,)))
    spans: dict[str, list[float]] = {}
    for r in results:
        span = r.process.get("spawn_to_result_s")
        if span:
            spans.setdefault(r.case_id, []).append(float(span))
    seconds = {case_id: float(np.median(v)) for case_id, v in spans.items()}
    labels = short_labels(results)
    ids = {label: case_id for case_id, label in labels.items()}
    cases: dict[Key, CaseInput] = {}
    notes: list[str] = []
    base = Side(baseline, run_id, baseline, [r for r in results if r.env_name == baseline])
    for contender in contenders:
        cont = Side(contender, run_id, contender, [r for r in results if r.env_name == contender])
        history = comparison_evidence(store, base, cont, (metric_name,))["history"]
        inputs, more = case_inputs(base, cont, metric_name, basis=basis,
                                   priors=noise_priors(history, metric_name, {run_id}))
        notes += more
        for label, case in inputs.items():
            cases[(contender, label)] = case
    return cases, {k: ids[k[1]] for k in cases}, seconds, notes


def run_until_decided(
    store: Store,
    config: RunConfig,
    plan: Plan,
    envs: Sequence[EnvChoice],
    settings: GateSettings,
    *,
    observer: ExecutionHooks | None = None,
    run: Run | None = None,
    on_look: Callable[[Look, LookPlan | None], None] | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> SessionResult:
    """Run (or continue) a run of several environments and compare each against the first, adding blocks
    to inconclusive cases while the budget lasts (`settings.until_decided`), else one look at full alpha."""
    if len(envs) < 2:
        raise ValueError("a comparison needs at least two environments")
    started = clock()
    observer = observer or ExecutionHooks()
    timing = _Timing(observer, clock)
    if run is None:
        run = start_run(store, config, plan, envs, sys.argv)
    run = execute_run(store, run, plan, envs, config, timing)
    baseline, contenders = envs[0].name, [e.name for e in envs[1:]]
    metric_name = deciding_metric(config)
    seq = _sequential(settings)
    cases, ids, results_seconds, notes = _inputs(store, run.run_id, baseline, contenders, settings.basis,
                                                 metric_name)
    first_fraction = FIRST_LOOK_FRACTION if settings.until_decided else 1.0
    results = seq.look(cases, fraction=first_fraction)
    blocks = config.resolved(plan)[2]
    used: dict[Key, int] = {k: blocks for k in cases}
    settings = _budget_after_first_look(settings, clock() - started)
    looks = [Look(1, clock() - started, seq.fraction, seq.spent_alphas[-1], len(seq.pending), blocks, blocks,
                  settings.budget_s)]
    min_step = settings.min_step or metric(metric_name).look_step
    stopped = "decided" if settings.until_decided or not seq.pending else "fixed"
    while seq.pending and settings.until_decided:
        pending = list(seq.pending)
        next_look = _next_look(seq, settings, lambda: clock() - started,
                               functools.partial(_seconds_per_block, timing, pending, ids, results_seconds,
                                                 _slots(config), "wall" in config.measure),
                               blocks_so_far=blocks, min_step=min_step)
        if isinstance(next_look, str):
            stopped = next_look
            break
        if on_look:
            on_look(looks[-1], next_look)
        blocks += next_look.blocks
        run = _execute_undecided(store, run, plan, envs, config, timing, blocks, pending, ids)
        cases, ids, results_seconds, _ = _inputs(store, run.run_id, baseline, contenders, settings.basis,
                                                 metric_name)
        for key in pending:
            used[key] = blocks
        results = seq.look({k: v for k, v in cases.items() if k in results},
                           fraction=look_fraction(next_look.fraction, seq.fraction, settings.least_share))
        looks.append(Look(len(looks) + 1, clock() - started, seq.fraction, seq.spent_alphas[-1],
                          len(seq.pending), next_look.blocks, blocks, settings.budget_s))
    if not seq.pending:
        stopped = "decided" if results else "none"
    looks[-1] = dataclasses.replace(looks[-1], ended=stopped)
    if on_look:
        on_look(looks[-1], None)
    if settings.until_decided:  # a single look at full alpha is what `compare` does anyway
        run.sequential = _sequential_record(baseline, metric_name, settings, seq, looks, used, results, cases)
        store.update_run(run)
    return SessionResult(run, baseline, _by_env(results, contenders), list(dict.fromkeys(notes)), looks,
                         clock() - started, stopped)


def _budget_after_first_look(settings: GateSettings, first_look_s: float) -> GateSettings:
    """The settings with their budget sized on the first look's time where it was to be (`budget_per_first_look`)."""
    if settings.budget_per_first_look is None:
        return settings
    return dataclasses.replace(settings, budget_s=max(settings.budget_s,
                                                      settings.budget_per_first_look * first_look_s))


def look_fraction(planned: float, spent: float, least_share: float = 0.0) -> float:
    """The budget fraction a look is charged: what its plan says it will have used, never less than the fraction
    already spent, and at least `least_share` of what is left beyond it (`GateSettings.least_share`)."""
    return min(1.0, max(planned, spent, spent + least_share * (1.0 - spent)))


def _sequential(settings: GateSettings) -> SequentialCompare[Key]:
    return SequentialCompare(
        alpha=settings.alpha, threshold=settings.threshold, floor=settings.floor,
        max_looks=settings.max_looks if settings.until_decided else None,
        method=settings.method, spending=settings.spending, paired=True)


def _slots(config: RunConfig) -> int:
    """Tasks the run's executor runs at once (the local runner: its jobs, runner/local_jobs.py)."""
    executor = current_executor()
    if executor is not None:
        return executor.slots()
    from colbench.runner.local_jobs import local_jobs

    return local_jobs(config)


def _seconds_per_block(timing: _Timing, pending: list[Key], ids: Mapping[Key, str],
                       results_seconds: dict[str, float], slots: int = 1, whole_cases: bool = True) -> float:
    """What one more block of the pending cases adds to the run's wall time: an execution of each case in both
    environments, `slots` tasks at a time (a cluster's workers: the budget is the whole run's wall time, not the
    sum of its processes). A wall-time case runs whole on one worker, so a block never takes less than its longest
    case's; a counted one is spread by process."""
    by_case: dict[str, float] = {}
    for key in pending:
        by_case[ids[key]] = by_case.get(ids[key], 0.0) + 2 * timing.per_execution(ids[key], results_seconds)
    if not by_case:
        return 0.0
    longest = max(by_case.values()) if whole_cases else max(timing.per_execution(i, results_seconds) for i in by_case)
    return max(sum(by_case.values()) / max(1, slots), longest)


def _execute_undecided(store: Store, run: Run, plan: Plan, envs: Sequence[EnvChoice], config: RunConfig,
                       timing: _Timing, blocks: int, pending: list[Key], ids: Mapping[Key, str]) -> Run:
    """Run the cases still undecided up to `blocks` processes, in the environments they compare."""
    config.processes = blocks
    run.config.processes = blocks
    pending_envs = [e for e in envs[1:] if any(k[0] == e.name for k in pending)]
    pending_ids = {ids[k] for k in pending}

    def wanted(case: PlannedCase) -> bool:
        return case.case_id in pending_ids

    return execute_run(store, run, plan, [envs[0], *pending_envs], config, timing, only_cases=wanted)


def _sequential_record(baseline: str, metric_name: str, settings: GateSettings, seq: SequentialCompare[Key],
                       looks: list[Look], used: Mapping[Key, int], results: Mapping[Key, CaseComparison],
                       cases: Mapping[Key, CaseInput]) -> SequentialLooks:
    """The run's record of its looks: enough for `compare` to reproduce each case's last look."""
    record = SequentialLooks(baseline=baseline, metric=metric_name, alpha=settings.alpha,
                             threshold=settings.threshold, floor=settings.floor, family_size=seq.family_size,
                             spending=settings.spending, basis=settings.basis)
    record.looks = [LookRecord(look.fraction, look.alpha, look.blocks_added) for look in looks]
    record.cases = {f"{k[0]}{CASE_KEY_SEPARATOR}{k[1]}": _look_record(used[k], results[k], cases.get(k))
                    for k in results}
    return record


def _next_look(seq: SequentialCompare[Key], settings: GateSettings, elapsed_s: Callable[[], float],
               seconds_per_block: Callable[[], float], *, blocks_so_far: int, min_step: int) -> LookPlan | str:
    """The next look's plan, or why there is none: the looks (--max-looks) or the budget are used up. The time
    spent and a block's cost are asked only when the looks left allow one more."""
    if seq.exhausted:  # the last look the budget (or --max-looks) allowed is done
        limited = settings.max_looks is not None and seq.looks_done >= settings.max_looks
        return "looks" if limited else "budget"
    per_block = seconds_per_block()
    next_look = plan_next_look(elapsed_s=elapsed_s(), budget_s=settings.budget_s, seconds_per_block=per_block,
                               blocks_so_far=blocks_so_far, growth=settings.growth, min_step=min_step)
    return "budget" if next_look is None else next_look


def _by_env(results: Mapping[Key, CaseComparison], contenders: list[str]) -> dict[str, list[CaseComparison]]:
    """Each contender's comparisons, labelled by case."""
    by_env: dict[str, list[CaseComparison]] = {c: [] for c in contenders}
    for key, comparison in results.items():
        by_env[key[0]].append(_relabel(comparison, key[1]))
    return by_env


def _look_record(blocks: int, comparison: CaseComparison, case: CaseInput | None) -> CaseLook:
    """What `analysis.comparison` needs to reproduce a case's last look: its blocks, its alpha and the noise earlier
    runs lent it, and the spreads of the machine's other counted cases (history grows after the run; the verdict must
    not)."""
    prior = None
    if case is not None and case.prior is not None and comparison.prior_df:
        prior = NoisePriorRecord(case.prior.variance, case.prior.df, case.prior.runs, comparison.calibrated)
    machine = case.machine if case is not None else None
    return CaseLook(blocks, comparison.alpha, prior,
                    tuple(zip(machine.sigmas, machine.dfs, strict=True)) if machine is not None else None)


def _relabel(comparison: CaseComparison, label: Hashable) -> CaseComparison:
    return dataclasses.replace(comparison, key=label)
