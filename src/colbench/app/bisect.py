"""`colbench bisect`: find the release (wheel, commit) where a case got slower — or faster.

The use case: check the request, list the points (releases from the package index or Maven Central, wheels, git
commits: `app/bisect_points.py`), then let the search (`analysis/bisect.py`) drive the measurer
(`app/bisect_measure.py`), which measures each step as an ordinary run in the store. Everything that can be
checked before measuring is checked first, so bad input costs nothing and leaves nothing behind.

A search is identified by a fingerprint of everything that decides its path (the case, the points, how it is
measured and judged, the machine); `--resume` continues the newest search with the same fingerprint, reading the
steps already in the store instead of measuring them again.
"""

from __future__ import annotations

import hashlib
import json
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from colbench.analysis.bisect import BisectInputError, BisectOutcome, BisectSettings, Direction, Step, bisect
from colbench.app.bisect_measure import StepRuns, StoreMeasurer, stored_steps
from colbench.app.bisect_points import PointList, list_points
from colbench.app.errors import UsageError
from colbench.machine.facts import machine_info
from colbench.model.metrics import metric as metric_named
from colbench.runner.execute import RunConfig, RunObserver, counting_toolchain
from colbench.runner.instructions import restrict_plan
from colbench.runner.plan import make_plan
from colbench.runner.points import PointEnvironments
from colbench.runner.session import deciding_metric
from colbench.store.base import Store

#: processes a point at a step's first look, by deciding metric (each further look doubles them): wall time needs
#: eight blocks for its paired t to see a change of about 10% through a 5% noise floor; instruction counts repeat,
#: so two decide
FIRST_LOOK = {"time": 8, "instructions": 2}
DEFAULT_THRESHOLD = 0.05


@dataclass(frozen=True)
class BisectRequest:
    """One search. Points come from exactly one source: `package` alone (its releases on the index, or
    `java:arrow` for Arrow Java on Maven Central), `wheels` (a directory or a listing file), or `git` (with
    `package` naming the distribution it builds)."""

    benchmark: str
    good: str
    bad: str
    overrides: dict[str, list[str]] = field(default_factory=dict)
    package: str | None = None
    wheels: Path | None = None
    git: str | None = None
    with_requirements: tuple[str, ...] = ()
    #: environment variables for every point's workers (e.g. ARROW_USER_SIMD_LEVEL=AVX2 under Valgrind)
    variables: dict[str, str] = field(default_factory=dict)
    threshold: float = DEFAULT_THRESHOLD
    direction: Direction = "slower"
    pre: bool = False
    budget_s: float = 1800.0
    processes: int | None = None
    iterations: int | None = None
    warmup: int | None = None
    measure: tuple[str, ...] = ("wall",)
    timeout_s: float = 600.0
    alpha: float = 0.01
    resume: bool = False
    machine_name: str | None = None
    #: the package index to list and install `package` from (`--index URL`; None: uv's own settings)
    index: str | None = None
    #: the total deadline of each call to the package index or Maven Central (None: $COLBENCH_NET_DEADLINE_S or 60 s)
    net_deadline_s: float | None = None


class BisectObserver:
    """What the caller sees while a search runs (no-op defaults)."""

    run: RunObserver = RunObserver()

    def say(self, text: str) -> None: ...
    def listed(self, points: PointList) -> None: ...
    def step(self, step: Step) -> None: ...


@dataclass
class BisectReport:
    bisect_id: str
    request: BisectRequest
    points: PointList
    metric: str
    outcome: BisectOutcome
    resumed: bool = False
    #: what the reader must know besides the steps: points built with numpy<2, other packages that differ
    notes: list[str] = field(default_factory=list)
    #: seconds spent building environments ahead, beside the measuring (not in any step's cost)
    ahead_s: float = 0.0

    @property
    def exit_code(self) -> int:
        return 0 if self.outcome.found else 1


def _config(request: BisectRequest) -> RunConfig:
    return RunConfig(targets=[request.benchmark], overrides=dict(request.overrides), iterations=request.iterations,
                     warmup=request.warmup, timeout_s=request.timeout_s, machine_name=request.machine_name,
                     measure=request.measure)


def check_runtime(request: BisectRequest, points: PointList) -> None:
    """The points must be able to change the case: Arrow Java releases a Java case, Python packages a Python one."""
    runtime = make_plan([request.benchmark], request.overrides).cases[0].runtime
    wanted = points.points[0].runtime
    if runtime != wanted:
        hint = " (--param runtime=java)" if wanted == "java" else ""
        raise UsageError(f"{request.benchmark} runs in the {runtime} worker here, and {points.source} are "
                         f"{wanted} points: bisect a {wanted} case{hint}")


def check_case(request: BisectRequest) -> RunConfig:
    """The request names one case that this machine can measure as asked; its run config."""
    if not 0 < request.threshold < 1:
        raise UsageError(f"--threshold {request.threshold:.0%}: must be between 0% and 100%")
    config = _config(request)
    plan = make_plan(config.targets, config.overrides)
    if "instructions" in config.measure:
        restrict_plan(plan, config.measure)
        counting_toolchain(config)
    if len(plan.cases) != 1:
        if not plan.cases:
            reasons = "; ".join(reason for _, _, reason in [*plan.skipped, *plan.dropped][:1])
            raise UsageError(f"{request.benchmark}: no case to measure with these params" +
                             (f" ({reasons})" if reasons else ""))
        varying = sorted({k for c in plan.cases for k in c.params if len({str(x.params[k]) for x in plan.cases}) > 1})
        raise UsageError(f"bisect measures one case, and {request.benchmark} has {len(plan.cases)} with these params: "
                         f"give one value each with --param ({', '.join(varying)})")
    return config


def fingerprint(request: BisectRequest, points: PointList, metric: str, first: int, machine_id: str) -> str:
    """What decides a search's path: equal fingerprints take equal steps over equal measurements."""
    material = {
        "benchmark": request.benchmark, "overrides": request.overrides, "source": points.source,
        "points": [p.label for p in points.points], "with": list(request.with_requirements),
        "variables": request.variables,
        "threshold": request.threshold, "direction": request.direction, "alpha": request.alpha, "first": first,
        "iterations": request.iterations, "warmup": request.warmup, "measure": list(request.measure),
        "metric": metric, "machine": machine_id,
    }
    return hashlib.sha256(json.dumps(material, sort_keys=True).encode()).hexdigest()[:16]


def _earlier_search(store: Store, print_: str) -> str | None:
    for run in store.list_runs():
        tag = run.bisect or {}
        if tag.get("fingerprint") == print_ and tag.get("id"):
            return str(tag["id"])
    return None


def run_bisect(store: Store, request: BisectRequest, observer: BisectObserver | None = None,
               clock: Callable[[], float] = time.monotonic) -> BisectReport:
    """Search, measuring each step as a run in `store`; the report says where the search ended."""
    observer = observer or BisectObserver()
    started = clock()
    config = check_case(request)
    points = list_points(request.good, request.bad, package=request.package, wheels=request.wheels,
                         git=request.git, pre=request.pre, index=request.index, deadline_s=request.net_deadline_s)
    check_runtime(request, points)
    observer.listed(points)
    metric_name = deciding_metric(config)
    first = request.processes or FIRST_LOOK.get(metric_name, metric_named(metric_name).first_look)
    print_ = fingerprint(request, points, metric_name, first, machine_info(request.machine_name)["machine_id"])
    bisect_id = _earlier_search(store, print_) if request.resume else None
    if request.resume and bisect_id is None:
        raise UsageError("--resume: no earlier search with these settings in this store (same case, points, "
                         "threshold, direction and processes); run it without --resume")
    bisect_id = bisect_id or f"{print_[:6]}{secrets.token_hex(2)}"
    earlier = stored_steps(store, bisect_id) if request.resume else {}
    if earlier:
        observer.say(f"resuming bisect {bisect_id}: {len(earlier)} step(s) in the store")
    runs = StepRuns(request.benchmark, dict(request.overrides), config, bisect_id, print_, metric_name,
                    request.threshold, points.package)
    envs = PointEnvironments(extra=request.with_requirements, say=observer.say, variables=dict(request.variables),
                             indexes=(request.index,) if request.index else ())
    measurer = StoreMeasurer(store, runs, {p.label: p for p in points.points}, envs, observer.run, earlier)
    settings = BisectSettings(direction=request.direction, alpha=request.alpha, first_processes=first,
                              budget_s=max(0.0, request.budget_s - (clock() - started)))
    try:
        outcome = bisect([p.label for p in points.points], measurer, settings, clock=clock, on_step=observer.step)
    except BisectInputError as exc:
        raise UsageError(str(exc)) from None
    finally:
        measurer.close()
    outcome.elapsed_s = clock() - started
    return BisectReport(bisect_id, request, points, metric_name, outcome, resumed=bool(earlier),
                        notes=_notes(outcome, envs, points.package), ahead_s=envs.ahead_seconds)


def _notes(outcome: BisectOutcome, envs: PointEnvironments, package: str) -> list[str]:
    notes = [f"{label} ran with {note}" for label, note in envs.notes.items()]
    if outcome.status in ("found", "budget"):
        others = envs.differences(outcome.last_good, outcome.first_bad, package)
        if others:
            notes.append(f"besides {package}, {outcome.last_good} and {outcome.first_bad} differ in "
                         f"{', '.join(others)}: the change may come from these too")
    return notes
