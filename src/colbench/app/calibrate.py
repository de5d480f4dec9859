"""A/A calibration: run a suite twice in the same environment, interleaved, and read what `compare` would say.

Every regression or improvement in an A/A run is a false positive; the spreads say how much each case varies on
this machine, the minimum detectable effect what a gate could see at this run's size, and `needed` how many blocks
a slowdown of `effect` takes. The comparison is the one `colbench compare` makes (`analysis.comparison`), on the
metric the run measured (instruction counts when counted, else time). An A/A run is ordinary history too: for
metrics of stable noise, later comparisons of these cases borrow its spread.
"""

from __future__ import annotations

import sys
from collections import defaultdict
from collections.abc import Hashable, Mapping
from dataclasses import dataclass, field

from colbench.analysis.calibrate import CalibrationReport, calibrate_suite
from colbench.analysis.comparison import case_inputs, short_labels
from colbench.analysis.verdicts import CaseInput
from colbench.app.errors import UsageError
from colbench.model.env_request import EnvRequest
from colbench.model.metrics import Measure
from colbench.model.records import Result, Side
from colbench.model.run_config import RunConfig
from colbench.runner.execute import ExecutionHooks, execute_run, start_run
from colbench.runner.plan import make_plan
from colbench.runner.session import deciding_metric
from colbench.runtimes.env_options import build_envs
from colbench.store.base import ResultQuery, Store, resolve_run_id

AA_ENVS = ("A", "B")


@dataclass(frozen=True)
class CalibrateRequest:
    """Run `targets` A/A (or analyse the earlier A/A run `from_run`) and judge it at these settings."""

    targets: tuple[str, ...] = ()
    overrides: Mapping[str, list[str]] = field(default_factory=dict)
    processes: int = 12
    iterations: int | None = None
    warmup: int | None = None
    measure: Measure = ("wall",)
    threshold: float | None = None
    alpha: float = 0.01
    effect: float = 0.05
    from_run: str | None = None


@dataclass(frozen=True)
class Calibration:
    run_id: str
    metric: str
    report: CalibrationReport


def aa_inputs(results: list[Result], metric_name: str = "time") -> tuple[dict[str, CaseInput], dict[str, float]]:
    """The A/A comparisons of a calibration run (the one comparison's inputs) and the seconds one block of each
    case took."""
    run_id = results[0].run_id if results else ""
    sides = [Side(env, run_id, env, [r for r in results if r.env_name == env]) for env in AA_ENVS]
    cases, _ = case_inputs(sides[0], sides[1], metric_name)
    labels = short_labels(results)
    seconds: dict[str, float] = defaultdict(float)
    blocks: dict[str, set[int | None]] = defaultdict(set)
    for r in results:
        span = r.process.get("spawn_to_result_s")
        if span:
            seconds[labels[r.case_id]] += float(span)
            blocks[labels[r.case_id]].add(r.block)
    per_block = {label: seconds[label] / len(blocks[label]) for label in seconds if blocks[label]}
    return cases, per_block


def calibrate(store: Store, request: CalibrateRequest, observer: ExecutionHooks | None = None) -> Calibration:
    """Run (or read) the A/A run and calibrate `compare` on it."""
    if request.from_run:
        run_id = resolve_run_id(store, request.from_run)
        run = store.get_run(run_id)
        measure = run.config.measure
    else:
        if not request.targets:
            raise UsageError("name a suite or benchmarks to calibrate (or --from-run RUN)")
        config = RunConfig(targets=list(request.targets), overrides=dict(request.overrides),
                           iterations=request.iterations, warmup=request.warmup, processes=request.processes,
                           run_name="calibration", measure=request.measure)
        plan = make_plan(config.targets, config.overrides)
        envs = build_envs([EnvRequest(name) for name in AA_ENVS])  # this interpreter twice, built as `@current` is
        run = start_run(store, config, plan, envs, sys.argv)
        run_id = execute_run(store, run, plan, envs, config, observer).run_id
        measure = request.measure
    results = store.results(ResultQuery(run_ids=(run_id,)))
    if {r.env_name for r in results} != set(AA_ENVS):
        raise UsageError(f"run {run_id} is not an A/A run with environments A and B")
    metric_name = deciding_metric(RunConfig(targets=[], measure=measure))
    cases, per_block = aa_inputs(results, metric_name)
    # calibrate_suite keys its cases by any hashable (the gate keys them by environment and case)
    keyed: dict[Hashable, CaseInput] = {label: case for label, case in cases.items()}
    blocks: dict[Hashable, float] = {label: seconds for label, seconds in per_block.items()}
    report = calibrate_suite(keyed, threshold=request.threshold, alpha=request.alpha, effect=request.effect,
                             seconds_per_block=blocks)
    return Calibration(run_id, metric_name, report)
