"""`colbench run` as a use case: plan the cases, choose the environments, run what the store is missing (a new run,
or one continued with `resume`), and, with several environments, the verdicts of each against the first
(`until_decided`: more blocks for the undecided while the budget lasts). `estimate` is the dry run: the plan and
its time from measured costs, nothing run.

Progress goes through a `RunObserver`: the runner's events (a case starts, an execution is stored, a case is
done) and this use case's own (a case skipped, an environment built, the blocks chosen, a look at the verdicts).
The runner, the store and the statistics are imported where they are used: every `colbench` command (and shell
completion) imports this module, and a command that runs nothing should not pay for them.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from colbench.app.errors import UsageError
from colbench.app.stores import store_at
from colbench.model.env_request import EnvRequest, Versions
from colbench.model.metrics import Measure
from colbench.model.records import ResumeInfo
from colbench.model.run_config import RunConfig
from colbench.runner import observer as runner_observer

if TYPE_CHECKING:
    # what an observer hears of, named here for the observers above app/ (cli/progress.py): a case, an execution of
    # it, a look at the verdicts and the next look's plan
    from colbench.analysis.sequential import LookPlan as LookPlan
    from colbench.data.cache import PlannedFile
    from colbench.model.metrics import Metric
    from colbench.model.records import Run
    from colbench.model.run_config import EnvChoice
    from colbench.runner.estimate import Costs, Estimate
    from colbench.runner.plan import Execution as Execution
    from colbench.runner.plan import Plan
    from colbench.runner.plan import PlannedCase as PlannedCase
    from colbench.runner.session import GateSettings, SessionResult
    from colbench.runner.session import Look as Look
    from colbench.runner.sweep import Sweep
    from colbench.store.base import Store


class RunObserver(runner_observer.ExecutionHooks):
    """What a run reports while it goes; every hook does nothing unless overridden. The runner's hooks (`start`,
    `case_started`, `execution_done`, `case_done`, `finish`) come from `runner.observer.ExecutionHooks`."""

    def skipped(self, benchmark: str, params: Mapping[str, Any], reason: str) -> None:
        """A case of the plan that this machine, the measure or the environments cannot run: left out."""

    def said(self, text: str) -> None:
        """A line from making the run ready: an environment built, a worker built or pinned."""

    def expecting(self, seconds: float | None, processes: int) -> None:
        """What is about to run: `processes` worker processes, about `seconds` in all (None: no estimate)."""

    def estimated(self, planned: RunEstimate) -> None:
        """Before anything is built: the whole run's estimate, what it builds first (data, environments, the Java
        worker) included."""

    def blocks_chosen(self, envs: int, blocks: int, decider: str | None, budget_s: float | None = None,
                      per_first_look: float | None = None) -> None:
        """Several environments and no `processes`: `blocks` interleaved blocks per case; `decider` (the metric
        that decides) when these are only the first look of `until_decided`, with its time `budget_s` (or
        `per_first_look` times the first look's, where the run's cost could not be estimated)."""

    def looked(self, look: Look, next_look: LookPlan | None, budget_s: float) -> None:
        """`until_decided`: a look at the verdicts is done; `next_look` None when no more blocks follow."""


@dataclass(frozen=True)
class RunRequest:
    """Everything `colbench run` takes, parsed. `envs` are the `--env` requests (model/env_request.py);
    `store` a DuckDB file or postgresql:// URL (None: the default store); `resume` a run reference whose missing
    executions to run, with its own plan (nothing else that shapes the plan may be given with it)."""

    #: what to measure and how (its `commit` is found from `commit` / `repo` below; None: no commit)
    config: RunConfig = field(default_factory=lambda: RunConfig(targets=[]))
    #: `--threads` / `--cache`: shorthands for those parameters' overrides
    threads: tuple[str, ...] | None = None
    cache: tuple[str, ...] | None = None
    #: the commit under test: a sha given (`--commit`), or read from a git checkout (`--repo`)
    commit: str | None = None
    repo: Path | None = None
    envs: tuple[EnvRequest, ...] = ()
    #: a sweep over a package's releases (runner/sweep.py): `pyarrow==0.17.1,1.0.1` or `pyarrow>=0.17` with its
    #: `every` ("minor": the newest of each minor version of a range), and `with_requirements` beside every release
    versions: Versions | None = None
    with_requirements: tuple[str, ...] = ()
    store: str | None = None
    resume: str | None = None
    #: several environments: add blocks to undecided cases while the budget lasts (True); take one look (False) of
    #: `processes` blocks, or the deciding metric's `fixed_blocks`. None, the default: stop once decided, unless
    #: `processes` fixes the count or `resume` continues a run with its own (then one look of that many, as before)
    until_decided: bool | None = None
    #: the time budget of `until_decided` (None: the deciding metric's, sized from this machine's costs)
    budget_s: float | None = None
    max_looks: int | None = None
    threshold: float | None = None
    alpha: float = 0.01
    argv: tuple[str, ...] = field(default_factory=lambda: tuple(sys.argv))  # what the run record keeps

    @property
    def stops_once_decided(self) -> bool:
        """Whether a run of several environments adds blocks until decided (see `until_decided`)."""
        if self.until_decided is not None:
            return self.until_decided
        return self.config.processes is None and self.resume is None


@dataclass(frozen=True)
class RunOutcome:
    """A run as it ended: its record, how many of its cases had a successful result, and with several environments
    the comparisons of each against the first (`session.stopped`: decided, budget or looks)."""

    run: Run
    cases_ok: int
    cases_failed: int
    session: SessionResult | None = None

    @property
    def run_id(self) -> str:
        return self.run.run_id

    @property
    def status(self) -> str:
        return self.run.status

    @property
    def all_failed(self) -> bool:
        """Not one case of the run has a successful result (and it has cases)."""
        return self.cases_failed > 0 and self.cases_ok == 0

    @property
    def regression(self) -> bool:
        return self.session is not None and any(str(c.verdict) == "regression"
                                                for comps in self.session.comparisons.values() for c in comps)

    @property
    def stopped(self) -> str | None:
        """Why the looks ended (several environments): every comparison decided, the budget, or the most looks."""
        return self.session.stopped if self.session is not None else None


@dataclass(frozen=True)
class RunEstimate:
    """The dry run: the plan, what each case is expected to take and from what, and the data to build first."""

    plan: Plan
    estimate: Estimate
    iterations: int
    warmup: int
    processes: tuple[int, ...]  # the distinct process counts of the cases
    data_files_to_build: int
    downloads: tuple[str, ...]  # data to download: not in the estimate
    data_error: str | None  # why the data could not be planned (an estimate is advice: said, not fatal)
    counts_instructions: bool
    #: several environments: their number, and whether `processes` is only the first look of a run that goes on
    #: while cases are undecided, within `budget_s`
    envs: int = 1
    first_look: bool = False
    budget_s: float | None = None
    load_average: float | None = None
    measure: Measure = ("wall",)
    #: a run that stops once decided: the blocks per case the estimate counts (the deciding metric's expected_blocks)
    expected_blocks: int | None = None
    #: a sweep (`--versions`): the releases the index lists that it would measure, oldest first, and those of its
    #: range it would skip, with why
    releases: tuple[str, ...] = ()
    skipped: dict[str, str] = field(default_factory=dict)
    #: the `--budget` given (None: the default, which for cases never run here is `budget_per_first_look` times the
    #: first look's measured time)
    budget_given: float | None = None
    budget_per_first_look: float = 1.0


@dataclass
class _Prepared:
    config: RunConfig
    plan: Plan
    run_doc: Run | None


def mark_resumed(run_doc: Run) -> None:
    """A run continued with --resume keeps the trace of how it had stopped (reports show it as resumed)."""
    from datetime import UTC, datetime

    entry = ResumeInfo(at=datetime.now(UTC).isoformat(), status=run_doc.status)
    if run_doc.stopped:
        entry["stopped"], run_doc.stopped = run_doc.stopped, None
    run_doc.resumes.append(entry)


def _config(request: RunRequest) -> RunConfig:
    from colbench.redact import clip, printable
    from colbench.runner.execute import git_commit

    asked = request.config
    overrides: dict[str, list[str]] = dict(asked.overrides)
    if request.threads is not None:
        overrides["threads"] = list(request.threads)
    if request.cache is not None:
        overrides["cache"] = list(request.cache)
    for option, value in (("--run-name", asked.run_name), ("--machine", asked.machine_name),
                          ("--commit", request.commit)):
        if value is not None and (printable(value) != value or len(value) > 200):
            raise UsageError(f"{option} {clip(printable(value), 60)!r}: a name of at most 200 characters, without "
                             "control characters (it is shown on other people's terminals)")
    commit_info = git_commit(request.repo) if request.repo else ({"sha": request.commit} if request.commit else None)
    return replace(asked, targets=list(asked.targets), overrides=overrides, commit=commit_info)


def _prepare(request: RunRequest, observer: RunObserver, dry_run: bool) -> _Prepared:
    """The run's configuration and plan: a new one from the request, or the one of the run to resume."""
    from colbench.runner.execute import config_from_run
    from colbench.runner.plan import make_plan
    from colbench.store.base import resolve_run_id

    run_doc = None
    if request.resume:
        asked = request.config
        given = {"targets": asked.targets, "--param": asked.overrides, "--threads": request.threads,
                 "--cache": request.cache, "--env": request.envs, "--iterations": asked.iterations,
                 "--warmup": asked.warmup, "--processes": asked.processes,
                 "--memory-limit": asked.memory_limit_bytes, "--run-name": asked.run_name,
                 "--commit": request.commit, "--repo": request.repo, "--machine": asked.machine_name,
                 "--profile": asked.profile, "--profile-memory": asked.profile_memory,
                 "--versions": request.versions}
        clashing = [name for name, value in given.items() if value]
        if clashing:
            raise UsageError(f"--resume cannot be combined with {', '.join(clashing)}: a resumed run keeps its own "
                             "plan; start a new run to change it")
        db = store_at(request.store, create=False)
        run_doc = db.get_run(resolve_run_id(db, request.resume))
        config = config_from_run(run_doc)
        asked_jobs, run_jobs = request.config.jobs or 1, config.jobs or 1
        if request.config.jobs is not None and asked_jobs != run_jobs:
            raise UsageError(f"--jobs {asked_jobs}: run {run_doc.run_id} was counted {run_jobs} at a time, and counts "
                             "made otherwise would not compare with its own: resume it without --jobs")
        mark_resumed(run_doc)
    else:
        config = _config(request)
    from colbench.runner.local_jobs import local_jobs

    local_jobs(config, check=True)  # refused before anything is built: side by side with wall time, more than fit
    plan = make_plan(config.targets, config.overrides, config.scale)
    if "instructions" in config.measure or config.profile:
        from colbench.runner.execute import counting_toolchain
        from colbench.runner.instructions import restrict_plan

        if "instructions" in config.measure:
            restrict_plan(plan, config.measure)
        if not dry_run:
            counting_toolchain(config)  # fail now, in one line, when Valgrind or a compiler is missing
    if config.profile_memory and not dry_run:
        from colbench.runner.execute import memory_tracer

        memory_tracer(config)  # fail now, in one line, when heaptrack or a compiler is missing
    for bench, params, reason in plan.skipped:
        observer.skipped(bench, params, reason)
    return _Prepared(config, plan, run_doc)


def run(request: RunRequest, observer: RunObserver | None = None) -> RunOutcome:
    """Run (or continue) the request's run, every result stored as it completes; with several environments, compare
    each against the first. Bad input is a UsageError (or the typed error of the layer that found it); a run that
    stops on a signal or a failing store raises, with every result before it stored."""
    from colbench.runner.plan import fit_plan_to_envs
    from colbench.runtimes import env_options

    observer = observer or RunObserver()
    _say_estimate(request, observer)
    prepared = _prepare(request, observer, dry_run=False)
    config, plan, run_doc = prepared.config, prepared.plan, prepared.run_doc
    envs = env_options.envs_from_run(run_doc) if run_doc else _environments(request, observer, plan.requirements)
    for bench, params, reason in fit_plan_to_envs(plan, envs, say=observer.said):
        observer.skipped(bench, params, reason)
    db = store_at(request.store)
    until = request.stops_once_decided
    if len(envs) > 1 and config.processes is None:
        decider = decider_of(config)
        config.processes = decider.first_look if until else decider.fixed_blocks
        config.counting_server = _served(config, plan)
    costs = _planned_costs(db, config, plan, len(envs))
    budget, per_first_look = request.budget_s, None
    if len(envs) > 1 and until and budget is None:
        budget = default_budget(config, costs, len(envs))
        if costs.rough:  # what the looks cost is measured by the first: the budget is sized on it
            per_first_look = decider_of(config).budget_blocks / max(1, int(config.processes or 1))
    if len(envs) > 1 and request.config.processes is None and not run_doc:
        observer.blocks_chosen(len(envs), int(config.processes or 0), decider_of(config).name if until else None,
                               budget if until else None, per_first_look)
    observer.expecting(costs.process_seconds if costs.cases and not costs.rough else None, costs.processes)
    if len(envs) > 1:
        session = compare_run_envs(db, config, plan, envs, run_doc, request, observer, budget or 0.0,
                                   per_first_look)
        return RunOutcome(session.run, *case_counts(db, session.run.run_id), session=session)
    finished = run_and_store(db, config, plan, envs, run_doc, observer=observer, argv=request.argv)
    return RunOutcome(finished, *case_counts(db, finished.run_id))


def _say_estimate(request: RunRequest, observer: RunObserver) -> None:
    """The whole run's estimate before its builds (the Java worker's Maven build, data, uv environments), so the
    time it says is the time the command takes, not what is left after them. Advice: a failing estimate is quiet
    (the run itself says what is wrong)."""
    if request.resume:
        return
    try:
        planned = estimate(request, resolve_pins=False)
    except Exception:  # noqa: BLE001 - bad input is the run's to refuse, in its own words
        return
    observer.estimated(planned)


def _check_sweep(request: RunRequest) -> Versions | None:
    """`--versions` (None without it), checked against the options it cannot go with."""
    if request.versions is None:
        if request.with_requirements:
            raise UsageError("--every and --with go with --versions (a sweep over a package's releases)")
        return None
    if request.envs:
        raise UsageError("--versions and --env both name the environments: give one of them")
    return request.versions


def _environments(request: RunRequest, observer: RunObserver, needs: tuple[str, ...]) -> list[EnvChoice]:
    """The --env environments, or a sweep's, one per release (runner/sweep.py), built and ready, each with what the
    plan's benchmarks `needs` to be imported."""
    from colbench.runtimes import env_options

    versions = _check_sweep(request)
    if versions is None:
        return env_options.build_envs([r.for_benchmarks(needs) for r in request.envs], say=observer.said)
    from colbench.runner.sweep import build_sweep, plan_sweep

    sweep = plan_sweep(versions)
    observer.said(f"sweep over {len(sweep.points)} {sweep.source}: {', '.join(p.label for p in sweep.points)}")
    return build_sweep(sweep, request.with_requirements, say=observer.said, needs=needs)


def decider_of(config: RunConfig) -> Metric:
    """The metric a run of several environments decides on: instruction counts when it counts them, else time."""
    from colbench.model.metrics import deciding_metric
    from colbench.model.metrics import metric as metric_named

    return metric_named(deciding_metric(config.measure))


def _planned_costs(db: Store | None, config: RunConfig, plan: Plan, envs: int) -> Estimate:
    """The processes about to run, at this machine's measured costs (for the progress view and the budget)."""
    from colbench.machine.facts import machine_info
    from colbench.runner.estimate import Costs, estimate_plan, history_costs, load_factor
    from colbench.runner.local_jobs import local_jobs
    from colbench.store.base import StoreError

    iterations, warmup, processes = config.resolved(plan)
    try:
        history = history_costs(db, plan, machine_info()["machine_id"]) if db is not None else Costs()
    except StoreError:
        history = Costs()
    return estimate_plan(plan, iterations, warmup, lambda case: config.processes_of(case, processes), history,
                         envs=envs, measure=config.measure, load_factor=load_factor(),
                         served=_served(config, plan), jobs=local_jobs(config))


def _served(config: RunConfig, plan: Plan) -> bool:
    """Whether the run's counting processes are forked from counting servers (runner/count_server.py): as asked,
    else where they cost less (a suite of several cases)."""
    if config.counting_server is not None or "instructions" not in config.measure:
        return bool(config.counting_server)
    from colbench.runner.count_server import servers_pay

    return servers_pay(len(plan.cases))


def default_budget(config: RunConfig, costs: Estimate, envs: int) -> float:
    """The time budget of a run that stops once decided, when none is given: what the deciding metric's
    `budget_blocks` blocks of every case cost on this machine, and at least its `min_budget_s`."""
    decider = decider_of(config)
    per_block = sum(envs * c.execution_s(config.measure) for c in costs.cases)
    return max(decider.min_budget_s, decider.budget_blocks * per_block * costs.load_factor)


def run_and_store(db: Store, config: RunConfig, plan: Plan, envs: list[EnvChoice],
                  run_doc: Run | None = None, only_cases: Any = None, *,
                  observer: runner_observer.ExecutionHooks | None = None, argv: tuple[str, ...] = ()) -> Run:
    """Start (or continue) a run and execute what it is missing."""
    from colbench.runner.execute import execute_run, start_run

    if run_doc is None:
        run_doc = start_run(db, config, plan, envs, list(argv or sys.argv), observer)
    return execute_run(db, run_doc, plan, envs, config, observer, only_cases=only_cases)


def gate_settings(request: RunRequest, budget_s: float) -> GateSettings:
    """How a run of several environments decides: the request's threshold, alpha and looks within `budget_s`; each
    look after the first spends at least a tenth of the alpha left (`GateSettings.least_share`, as a watch pass does),
    so a long `--budget` does not leave the later looks with nothing to spend."""
    from colbench.runner.session import GateSettings

    return GateSettings(threshold=request.threshold, alpha=request.alpha, budget_s=budget_s,
                        max_looks=request.max_looks, until_decided=request.stops_once_decided)


def compare_run_envs(db: Store, config: RunConfig, plan: Plan, envs: list[EnvChoice],
                     run_doc: Run | None, request: RunRequest, observer: RunObserver,
                     budget_s: float, per_first_look: float | None = None) -> SessionResult:
    """Run several environments and compare each against the first, paired by block. Unless `until_decided` is
    False, inconclusive cases get more blocks while the time budget lasts (runner/session.py); `per_first_look`:
    the budget is that many times the first look's time (a run whose cost could not be estimated)."""
    from colbench.runner.session import run_until_decided

    settings = replace(gate_settings(request, budget_s), budget_per_first_look=per_first_look)

    def on_look(look: Look, next_look: LookPlan | None) -> None:
        observer.looked(look, next_look, look.budget_s or budget_s)

    return run_until_decided(db, config, plan, envs, settings, observer=observer, run=run_doc, on_look=on_look)


def busy_cpu_starts(db: Store, run_id: str) -> tuple[int, int, float]:
    """(wall-time processes that started with no quiet CPU, those whose CPU was chosen, the busiest start's share of
    other work) of a run: runner/isolate.py pins each to the quietest CPU and records how quiet it was."""
    from colbench.store.base import ResultQuery

    chosen = [r.process for r in db.results(ResultQuery(run_ids=(run_id,))) if "quiet_cpu" in r.process]
    busy = [float(p.get("cpu_busy") or 0.0) for p in chosen if not p.get("quiet_cpu")]
    return len(busy), len(chosen), max(busy, default=0.0)


def case_counts(db: Store, run_id: str) -> tuple[int, int]:
    """(cases with a successful result, cases without one) of a run."""
    from colbench.store.base import ResultQuery

    ok_by_case: dict[str, bool] = {}
    for result in db.results(ResultQuery(run_ids=(run_id,))):
        ok_by_case[result.case_id] = ok_by_case.get(result.case_id, False) or result.ok
    ok = sum(ok_by_case.values())
    return ok, len(ok_by_case) - ok


def estimate(request: RunRequest, observer: RunObserver | None = None, *, resolve_pins: bool = True) -> RunEstimate:
    """The dry run: the plan and its time from measured costs (this case's history, else a model of this
    machine's similar cases, else the reference model), with everything the run makes first (data, uv
    environments, the Java worker) and every process of every environment, stretched by the machine's load; nothing
    runs, nothing is written. The `envs` are checked as far as they can be without building them, and
    (`resolve_pins`) every pin they name is resolved, as the real run would, without installing: one that cannot
    exist is an EnvError."""
    from colbench.paths import data_dir
    from colbench.runner.estimate import build_rates, current_load_factor, estimate_plan, local_manifests
    from colbench.runner.local_jobs import local_jobs
    from colbench.runtimes import env_options

    prepared = _prepare(request, observer or RunObserver(), dry_run=True)
    config, plan = prepared.config, prepared.plan
    env_options.check_envs([r.for_benchmarks(plan.requirements) for r in request.envs], resolve=resolve_pins)
    sweep = _planned_sweep(request)
    sides = max(1, len(request.envs), len(sweep.points) if sweep else 0)
    until = request.stops_once_decided
    first_look = sides > 1 and until  # the first of several looks: the run stops once decided
    if sides > 1 and config.processes is None:
        config.processes = decider_of(config).first_look if until else decider_of(config).fixed_blocks
        config.counting_server = _served(config, plan)
    iterations, warmup, processes = config.resolved(plan)
    history = _measured_costs(request, plan)

    def processes_of(case: PlannedCase) -> int:  # suite entries may ask more for some cases (those a claim decides on)
        return config.processes_of(case, processes)

    # a run that stops once decided usually takes more than its first look: the estimate is for the blocks a real
    # change typically needs here (the metric's expected_blocks), the first look and the budget said beside it
    expected = max(processes, decider_of(config).expected_blocks) if first_look else None

    def expected_of(case: PlannedCase) -> int:
        return expected if expected is not None and request.config.processes is None else processes_of(case)

    missing, data_error = _missing_data_files(plan)
    downloads = [f for f in missing if f.format == "download"]
    env_builds, worker_builds = _builds(request, sweep, plan)
    load = _load_average()
    est = estimate_plan(plan, iterations, warmup, expected_of, history, envs=sides,
                        new_data=[(f.format, f.size_bytes) for f in missing if f.format != "download"],
                        build_rates_here=build_rates(local_manifests(data_dir())), measure=config.measure,
                        env_builds=env_builds, worker_builds=worker_builds,
                        load_factor=current_load_factor(load), served=_served(config, plan),
                        jobs=local_jobs(config))
    budget = request.budget_s
    if first_look and budget is None:
        budget = default_budget(config, est, sides)
    return RunEstimate(plan=plan, estimate=est, iterations=iterations, warmup=warmup,
                       processes=tuple(sorted({processes_of(c) for c in plan.cases})),
                       data_files_to_build=len(missing) - len(downloads), downloads=tuple(f.label for f in downloads),
                       data_error=data_error, counts_instructions="instructions" in config.measure, envs=sides,
                       first_look=first_look, budget_s=budget if first_look else None,
                       load_average=load, measure=tuple(config.measure),
                       expected_blocks=expected if request.config.processes is None else None,
                       releases=tuple(p.label for p in sweep.points) if sweep else (),
                       skipped=dict(sweep.skipped) if sweep else {}, budget_given=request.budget_s,
                       budget_per_first_look=decider_of(config).budget_blocks / max(1, processes))


def _planned_sweep(request: RunRequest) -> Sweep | None:
    """A dry run's sweep (`--versions`) as the run would make it: its releases listed from the index (a range too),
    so the plan counts and checks every environment; None without --versions."""
    versions = _check_sweep(request)
    if versions is None:
        return None
    from colbench.runner.sweep import plan_sweep

    return plan_sweep(versions)


#: how long the start line's estimate waits for a store another process holds before it goes without its history
ESTIMATE_STORE_WAIT_S = 0.5


def _measured_costs(request: RunRequest, plan: Plan) -> Costs:
    """What the plan's cases (or this machine's similar ones) cost when they ran here; without a store, only the
    builds this machine made."""
    from colbench.machine.facts import machine_info
    from colbench.runner.estimate import Costs, builds_here, history_costs
    from colbench.store.base import StoreError

    try:  # an estimate does not wait for a store another process holds (the run itself waits, in the spool), but
        # for a write of a few milliseconds another run makes
        return history_costs(store_at(request.store, create=False, wait_s=ESTIMATE_STORE_WAIT_S), plan,
                             machine_info()["machine_id"])
    except StoreError:
        history = Costs()
        history.env_build_s, history.java_build_s = builds_here()
        return history


def _missing_data_files(plan: Plan) -> tuple[list[PlannedFile], str | None]:
    """The files the plan's inputs need that are not there yet (to make or download), or why they cannot be
    planned."""
    import json

    requests = list({json.dumps(r.to_json(), sort_keys=True): r for c in plan.cases for r in c.inputs.values()}
                    .values())
    if not requests:  # nothing to read: no need of the data cache, whose import (pyarrow) is a third of a second
        return [], None
    from colbench.data.cache import plan_prepare

    try:
        files = plan_prepare(requests).files
    except Exception as exc:  # an estimate is advice: a data set that cannot be planned is said, not fatal
        return [], str(exc)
    return [f for f in files if not f.present], None


def _builds(request: RunRequest, sweep: Sweep | None, plan: Plan) -> tuple[list[bool], list[bool]]:
    """What the run builds first: per uv environment (its --env ones, or a sweep's releases) whether it must be
    built (True) or is in the cache; per Java worker to build whether Maven must download Arrow Java (True) or its
    repository holds it."""
    from colbench.runtimes import env_options, java

    env_builds, jars = env_options.planned_builds([r.for_benchmarks(plan.requirements) for r in request.envs])
    if sweep is not None:
        from colbench.runner.sweep import planned_builds as sweep_builds

        env_builds = sweep_builds(sweep, request.with_requirements)
    return env_builds, [not java.maven_has(version) for version in jars or _default_java_build(plan)]


def _load_average() -> float | None:
    try:
        return os.getloadavg()[0]
    except OSError:
        return None


def _default_java_build(plan: Plan) -> list[str]:
    """The default Java worker's version when the plan has Java cases and it is not built yet (the run builds it
    first)."""
    if not any(case.runtime == "java" for case in plan.cases):
        return []
    from colbench.runtimes import java

    version = java.default_arrow_version()
    return [version] if java.ready_jar(version) is None and not java.missing_tools() else []
