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
import math
import os
import secrets
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from colbench.analysis.bisect import BisectInputError, BisectOutcome, BisectSettings, Direction, Step, bisect
from colbench.app.bisect_measure import StepRuns, StoreMeasurer, stored_steps
from colbench.app.bisect_points import PointList, list_points
from colbench.app.errors import UsageError
from colbench.machine.facts import machine_info
from colbench.model.benchmark import int_param
from colbench.model.metrics import Measure
from colbench.model.metrics import metric as metric_named
from colbench.model.release import Release
from colbench.model.run_config import RunConfig
from colbench.processes import deadline_at
from colbench.render.fmt import fmt_duration
from colbench.runner.execute import ExecutionHooks, counting_toolchain
from colbench.runner.instructions import InstructionsUnavailable, find_toolchain, restrict_plan, unsupported_reason
from colbench.runner.plan import make_plan
from colbench.runner.session import deciding_metric
from colbench.runtimes.points import PointEnvironments
from colbench.store.base import Store

DEFAULT_THRESHOLD = 0.05
#: the default budget: this many times what the search is expected to take (one more look at every step doubles a
#: step's processes), and never less than `MIN_BUDGET_S`
BUDGET_FACTOR = 2.0
MIN_BUDGET_S = 600.0


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
    #: None: sized from this machine's cost of a process (`BUDGET_FACTOR` times the expected search)
    budget_s: float | None = None
    processes: int | None = None
    iterations: int | None = None
    warmup: int | None = None
    #: None: instruction counts where Valgrind runs and the case allows it (`default_measure`), else wall time
    measure: Measure | None = None
    timeout_s: float = 600.0
    alpha: float = 0.01
    resume: bool = False
    machine_name: str | None = None
    #: the package index to list and install `package` from (`--index URL`; None: uv's own settings)
    index: str | None = None
    #: the total deadline of each call to the package index or Maven Central (None: $COLBENCH_NET_DEADLINE_S or 60 s)
    net_deadline_s: float | None = None
    #: `package`'s releases as a watch pass just listed them (its index, in version order): not listed again, and
    #: each built as the pass built it; empty: listed from the index
    releases: tuple[Release, ...] = ()
    #: the index those releases were listed from
    listed_from: str = ""


class BisectObserver:
    """What the caller sees while a search runs (no-op defaults)."""

    run: ExecutionHooks = ExecutionHooks()

    def say(self, text: str) -> None: ...
    def listed(self, points: PointList) -> None: ...
    def planned(self, plan: SearchPlan) -> None:
        """How the search will measure, what it expects to take and its budget (before the first step)."""
    def look(self, step: int, look: int, points: Sequence[str], processes: int) -> None:
        """Step `step`'s look `look` (1, 2 …) measures `points` with `processes` processes each."""
    def step(self, step: Step) -> None: ...


@dataclass(frozen=True)
class SearchPlan:
    """What a search expects before it starts: its metric (and why), processes a point at a step's first look,
    steps after the ends, a process's cost here, environments to build, the time all that takes, and the budget."""

    metric: str
    why: str
    first: int
    steps: int
    process_s: float
    process_source: str
    envs_to_build: int
    env_s: float
    expected_s: float
    budget_s: float
    budget_given: bool
    #: the load when planned, and how much longer it makes a process than on an idle machine (runner/estimate.py)
    load_average: float | None = None
    load_factor: float = 1.0


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
    #: seconds the earlier invocations of a resumed search took (the whole search: this plus `outcome.elapsed_s`)
    earlier_s: float = 0.0
    plan: SearchPlan | None = None

    @property
    def total_s(self) -> float:
        return self.earlier_s + self.outcome.elapsed_s

    @property
    def exit_code(self) -> int:
        return 0 if self.outcome.found else 1


def _config(request: BisectRequest, measure: Measure) -> RunConfig:
    return RunConfig(targets=[request.benchmark], overrides=dict(request.overrides), iterations=request.iterations,
                     warmup=request.warmup, timeout_s=request.timeout_s, machine_name=request.machine_name,
                     measure=measure)


def default_measure(request: BisectRequest) -> tuple[Measure, str]:
    """What a search measures when not told, and why: instruction counts (deterministic, so two processes a point
    decide a step) where Valgrind runs here and the case allows it: a Python worker, one thread (counts cannot see a
    parallel speed-up), a warm cache (counts cannot see I/O); else wall time."""
    plan = make_plan([request.benchmark], request.overrides)
    if len(plan.cases) != 1:
        return ("wall",), ""
    case = plan.cases[0]
    reason = unsupported_reason(case.runtime)
    threads = int_param(case.params, "threads") if "threads" in case.params else 1
    if reason is None and threads > 1:
        reason = f"the case runs {threads} threads (counts cannot see a parallel speed-up)"
    if reason is None and case.params.get("cache") == "cold":
        reason = "the case reads with a cold page cache (counts cannot see I/O)"
    if reason is None:
        try:
            find_toolchain()
        except InstructionsUnavailable as exc:
            reason = str(exc)
    if reason is not None:
        return ("wall",), f"measuring wall time: {reason}"
    return ("instructions",), ("counting instructions (Valgrind runs here and the case is a single-threaded Python "
                               "one): two processes a point decide a step; --measure wall for times")


def check_runtime(request: BisectRequest, points: PointList) -> None:
    """The points must be able to change the case: Arrow Java releases a Java case, Python packages a Python one."""
    runtime = make_plan([request.benchmark], request.overrides).cases[0].runtime
    wanted = points.points[0].runtime
    if runtime != wanted:
        hint = " (--param runtime=java)" if wanted == "java" else ""
        raise UsageError(f"{request.benchmark} runs in the {runtime} worker here, and {points.source} are "
                         f"{wanted} points: bisect a {wanted} case{hint}")


def check_case(request: BisectRequest, measure: Measure | None = None) -> RunConfig:
    """The request names one case that this machine can measure as asked; its run config."""
    if not 0 < request.threshold < 1:
        raise UsageError(f"--threshold {request.threshold:.0%}: must be between 0% and 100%")
    config = _config(request, measure or request.measure or ("wall",))
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


def fingerprint(request: BisectRequest, points: PointList, metric: str, first: int, machine_id: str,
                measure: Measure | None = None) -> str:
    """What decides a search's path: equal fingerprints take equal steps over equal measurements."""
    material = {
        "benchmark": request.benchmark, "overrides": request.overrides, "source": points.source,
        "points": [p.label for p in points.points], "with": list(request.with_requirements),
        "variables": request.variables,
        "threshold": request.threshold, "direction": request.direction, "alpha": request.alpha, "first": first,
        "iterations": request.iterations, "warmup": request.warmup,
        "measure": list(measure or request.measure or ("wall",)), "metric": metric, "machine": machine_id,
    }
    return hashlib.sha256(json.dumps(material, sort_keys=True).encode()).hexdigest()[:16]


def _earlier_search(store: Store, print_: str) -> str | None:
    for run in store.list_runs():
        if run.bisect is not None and run.bisect.fingerprint == print_ and run.bisect.id:
            return run.bisect.id
    return None


def run_bisect(store: Store, request: BisectRequest, observer: BisectObserver | None = None,
               clock: Callable[[], float] = time.monotonic) -> BisectReport:
    """Search, measuring each step as a run in `store`; the report says where the search ended."""
    observer = observer or BisectObserver()
    started = clock()
    config, points, metric_name, first, machine_id, why, measure = _search(request, observer)
    print_ = fingerprint(request, points, metric_name, first, machine_id, measure)
    bisect_id = _earlier_search(store, print_) if request.resume else None
    if request.resume and bisect_id is None:
        raise UsageError("--resume: no earlier search with these settings in this store (same case, points, "
                         "threshold, direction and processes); run it without --resume")
    bisect_id = bisect_id or f"{print_[:6]}{secrets.token_hex(2)}"
    earlier = stored_steps(store, bisect_id) if request.resume else {}
    earlier_s = max(((run.bisect.elapsed_s if run.bisect else None) or 0.0 for run in earlier.values()), default=0.0)
    if earlier:
        observer.say(f"resuming bisect {bisect_id}: {len(earlier)} step(s) in the store, "
                     f"{fmt_duration(earlier_s)} spent before")
    plan = search_plan(store, request, config, points, metric_name, first, machine_id, why)
    observer.planned(plan)
    runs = StepRuns(request.benchmark, dict(request.overrides), config, bisect_id, print_, metric_name,
                    request.threshold, points.package)
    envs = point_environments(request, observer.say, make_plan(config.targets, config.overrides).requirements)
    measurer = StoreMeasurer(store, runs, {p.label: p for p in points.points}, envs, observer.run, earlier,
                             on_look=observer.look, elapsed=lambda: earlier_s + clock() - started)
    settings = BisectSettings(direction=request.direction, alpha=request.alpha, first_processes=first,
                              budget_s=max(0.0, plan.budget_s - (clock() - started)))
    try:
        # the environments built for the steps (uv, their import checks) end by the budget's end too
        with deadline_at(time.monotonic() + settings.budget_s):
            outcome = bisect([p.label for p in points.points], measurer, settings, clock=clock,
                             on_step=observer.step)
    except BisectInputError as exc:
        raise UsageError(str(exc)) from None
    finally:
        measurer.close()
    outcome.elapsed_s = clock() - started
    return BisectReport(bisect_id, request, points, metric_name, outcome, resumed=bool(earlier),
                        notes=_notes(outcome, envs, points.package), ahead_s=envs.ahead_seconds, earlier_s=earlier_s,
                        plan=plan)


def _search(request: BisectRequest, observer: BisectObserver,
            ) -> tuple[RunConfig, PointList, str, int, str, str, Measure]:
    """What a search needs before it plans: the case checked, the points listed (said to `observer`), the deciding
    metric, processes a point at a step's first look, this machine, why this metric, and the measure."""
    measure, why = (request.measure, "") if request.measure else default_measure(request)
    config = check_case(request, measure)
    points = points_of(request)
    check_runtime(request, points)
    observer.listed(points)
    metric_name = deciding_metric(config)
    first = request.processes or metric_named(metric_name).bisect_first_look
    return config, points, metric_name, first, machine_info(request.machine_name)["machine_id"], why, measure


def plan_bisect(store_url: str | None, request: BisectRequest, observer: BisectObserver | None = None) -> SearchPlan:
    """`bisect --dry-run`: the points and the plan a search would start from (its metric, steps, processes, the
    environments to build, the expected time and the budget), said to `observer`; nothing is built, measured or
    written (the store is read when there is one: this machine's costs)."""
    from colbench.app.stores import store_at
    from colbench.store.base import StoreError

    observer = observer or BisectObserver()
    config, points, metric_name, first, machine_id, why, _ = _search(request, observer)
    try:
        store: Store | None = store_at(store_url, create=False)
    except StoreError:
        store = None  # no store yet: the reference model's costs
    plan = search_plan(store, request, config, points, metric_name, first, machine_id, why)
    observer.planned(plan)
    return plan


def points_of(request: BisectRequest) -> PointList:
    """The request's points, from its one source (a watch's listing when it hands one over)."""
    return list_points(request.good, request.bad, package=request.package, wheels=request.wheels, git=request.git,
                       pre=request.pre, index=request.index, deadline_s=request.net_deadline_s,
                       listed=(request.listed_from, request.releases) if request.releases else None)


def point_environments(request: BisectRequest, say: Callable[[str], None] = lambda _: None,
                       needs: tuple[str, ...] = ()) -> PointEnvironments:
    """What builds the points' environments: every point with the request's extra requirements, variables and index
    and what its benchmark `needs` to be imported (its plan's requirements), a release by its era's recipe
    (runtimes/builders.py), as a watch pass builds the releases it measures."""
    return PointEnvironments(extra=request.with_requirements, say=say, variables=dict(request.variables),
                             indexes=(request.index,) if request.index else (), needs=needs)


def expected_steps(points: int) -> int:
    """Steps after the ends of a binary search over `points` (ends included): ceil(log2(interior points + 1))."""
    interior = max(0, points - 2)
    return math.ceil(math.log2(interior + 1)) if interior else 0


def search_plan(store: Store | None, request: BisectRequest, config: RunConfig, points: PointList, metric_name: str,
                first: int, machine_id: str, why: str) -> SearchPlan:
    """What the search expects to take on this machine, and its budget: the ends (two points) and each expected
    step (three points), `first` processes a point at this machine's cost of one (runner/estimate.py), plus the
    points' environments (those not cached at this machine's build time)."""
    from colbench.runner.estimate import (
        Costs,
        builds_here,
        current_load_factor,
        estimate_plan,
        history_costs,
        reference_costs,
    )
    from colbench.runtimes.builders import builder_for
    from colbench.store.base import StoreError

    plan = make_plan(config.targets, config.overrides)
    iterations, warmup, _ = config.resolved(plan)
    try:
        if store is None:
            raise StoreError("no store")
        history = history_costs(store, plan, machine_id)
    except StoreError:
        history = Costs()
        history.env_build_s, history.java_build_s = builds_here()
    reference = reference_costs()
    try:
        load: float | None = os.getloadavg()[0]
    except OSError:
        load = None
    stretch = current_load_factor(load)
    estimate = estimate_plan(plan, iterations, warmup, lambda case: 1, history, reference, measure=config.measure,
                             load_factor=stretch)
    case = estimate.cases[0]
    process_s = estimate.process_seconds
    source = case.counting_source if "instructions" in config.measure else case.source
    steps = expected_steps(len(points.points))
    measured = 2 + steps  # the ends, then one new point a step
    processes = first * (2 + 3 * steps)
    labels = [p for p in points.points]
    # which points' environments are cached cannot be told before the search picks them: the ends, and the share
    # of the others that is cached
    asked = point_environments(request)
    cached_share = sum(1 for p in labels if p.runtime == "python" and builder_for(asked.request(p)).planned(
        asked.request(p)).uv_build is False) / max(1, len(labels))
    to_build = round(measured * (1 - cached_share))
    build_s = history.first("env_build_s", reference) if labels[0].runtime == "python" else \
        history.first("java_build_s", reference)
    env_s = to_build * build_s + (measured - to_build) * history.first("env_cached_s", reference)
    expected = processes * process_s + env_s + (1 + measured) * reference.run_s / 2
    budget = request.budget_s if request.budget_s is not None else max(MIN_BUDGET_S, BUDGET_FACTOR * expected)
    return SearchPlan(metric_name, why, first, steps, process_s, source, to_build, env_s, expected, budget,
                      request.budget_s is not None, load, stretch)


def _notes(outcome: BisectOutcome, envs: PointEnvironments, package: str) -> list[str]:
    notes = [f"{label} ran with {note}" for label, note in envs.notes.items()]
    if outcome.status in ("found", "budget"):
        others = envs.differences(outcome.last_good, outcome.first_bad, package)
        if others:
            notes.append(f"besides {package}, {outcome.last_good} and {outcome.first_bad} differ in "
                         f"{', '.join(others)}: the change may come from these too")
    return notes
