"""Plan: turn targets (benchmarks or suites) and CLI overrides into the list of cases to run."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from colbench.benchmarks import sources
from colbench.benchmarks.registry import UnknownTarget, get_benchmark, unknown_message
from colbench.experiments.registry import all_suites
from colbench.model.benchmark import Benchmark, DataRequest, Params
from colbench.model.params import ParamError, ParamValue, did_you_mean
from colbench.model.result import canonical_json, case_id
from colbench.model.run_config import EnvChoice
from colbench.model.suite import Suite
from colbench.redact import clip
from colbench.runtimes import Runtime, RuntimeUnavailable, get_runtime


class PlanError(ValueError):
    """Targets or params that cannot make a plan."""


@dataclass
class PlannedCase:
    benchmark: Benchmark
    params: Params
    case_id: str
    inputs: dict[str, DataRequest]
    runtime: str
    engine: str
    #: processes per case asked for by its suite entry (None: the run's default)
    processes: int | None = None


@dataclass
class Plan:
    cases: list[PlannedCase]
    dropped: list[tuple[str, Params, str]] = field(default_factory=list)
    skipped: list[tuple[str, Params, str]] = field(default_factory=list)
    suite: Suite | None = None
    #: what every environment built for the plan installs so its benchmarks import (asv's runner, pytest; an
    #: `EnvRequest.for_benchmarks`)
    requirements: tuple[str, ...] = ()


@dataclass(frozen=True)
class Target:
    benchmark: Benchmark
    params: dict[str, list[ParamValue]]
    suite: Suite | None = None
    processes: int | None = None


def resolve_targets(names: Sequence[str]) -> list[Target]:
    if not names:
        raise PlanError("name at least one benchmark or suite; `colbench list` shows them")
    targets: list[Target] = []
    suites = all_suites()
    for name in names:
        if name in suites:
            suite = suites[name]
            for entry in suite.entries:
                targets.append(Target(get_benchmark(entry.benchmark), dict(entry.params), suite, entry.processes))
            continue
        try:
            targets.append(Target(get_benchmark(name), {}))
        except UnknownTarget:
            source = _source_targets(name)
            if source is None:
                raise PlanError(unknown_message(name, "benchmark or suite", also=suites)) from None
            targets += source
    return targets


def _source_targets(name: str) -> list[Target] | None:
    """An asv suite's or a pytest file's benchmarks (benchmarks/sources.py), each with the processes it asks for
    (asv's `rounds`); None when `name` names no source."""
    try:
        target = sources.parse_target(name)
        if target is None:
            return None
        found = sources.benchmarks_of(target)
    except sources.SourceError as exc:
        raise PlanError(str(exc)) from None
    return [Target(bench, {}, None, getattr(bench, "processes_asked", lambda: None)()) for bench in found]


def make_plan(names: Sequence[str], overrides: Mapping[str, Sequence[Any]] | None = None, scale: float = 1.0) -> Plan:
    """Expand every target's grid with suite params, then CLI overrides (which win), and drop invalid cases.

    `scale` multiplies every `rows` value, to move a suite made for this machine toward the original sizes."""
    overrides = dict(overrides or {})
    targets = resolve_targets(names)
    known = {n for t in targets for n in t.benchmark.full_grid().names}
    unknown = sorted(set(overrides) - known)
    if unknown:
        raise PlanError(f"unknown param {', '.join(clip(repr(u)) for u in unknown)} for {', '.join(names)}; "
                        f"params here: {', '.join(sorted(known))}{did_you_mean(unknown[0], known)}")
    plan = Plan(cases=[], suite=next((t.suite for t in targets if t.suite), None),
                requirements=sources.requirements([t.benchmark for t in targets]))
    seen: set[str] = set()
    for target in targets:
        _add_cases(plan, target, overrides, scale, seen)
    if not plan.cases:
        detail = "; ".join(f"{b} {p}: {r}" for b, p, r in (plan.skipped + plan.dropped)[:3])
        raise PlanError("no valid case in this plan" + (f" (dropped: {detail})" if detail else ""))
    return plan


def _add_cases(plan: Plan, target: Target, overrides: Mapping[str, Sequence[Any]], scale: float,
               seen: set[str]) -> None:
    """The target's grid with its params, then the overrides it knows, into the plan: its valid cases not planned
    yet, its invalid ones dropped, those its machine cannot run skipped."""
    grid = target.benchmark.full_grid()
    chosen_text = {**target.params, **{k: v for k, v in overrides.items() if k in grid.names}}
    try:
        chosen = grid.choose(chosen_text)
    except ParamError as exc:
        raise PlanError(f"{target.benchmark.name}: {exc}") from None
    if scale != 1.0 and "rows" in chosen:
        chosen["rows"] = list(dict.fromkeys(max(1, round(int(str(v)) * scale)) for v in chosen["rows"]))
    for params in grid.expand(chosen):
        reason = target.benchmark.valid(params)
        if reason:
            plan.dropped.append((target.benchmark.name, params, reason))
            continue
        cid = case_id(target.benchmark.name, params)
        if cid in seen:
            continue
        missing = target.benchmark.unavailable(params)
        if missing:
            plan.skipped.append((target.benchmark.name, params, missing))
            continue
        seen.add(cid)
        plan.cases.append(PlannedCase(
            benchmark=target.benchmark, params=params, case_id=cid,
            inputs=target.benchmark.inputs(params), runtime=target.benchmark.runtime(params),
            engine=target.benchmark.engine_for(params), processes=target.processes,
        ))


def data_requests_for(targets: Sequence[str], overrides: Mapping[str, Sequence[Any]] | None = None,
                      scale: float = 1.0) -> list[DataRequest]:
    """Every distinct input the planned cases will ask the data cache for."""
    requests: dict[str, DataRequest] = {}
    for case in make_plan(targets, overrides, scale).cases:
        for request in case.inputs.values():
            requests.setdefault(canonical_json(request.to_json()), request)
    return list(requests.values())


@dataclass
class Execution:
    case: PlannedCase
    env: EnvChoice
    process_index: int
    block: int


def fit_plan_to_envs(plan: Plan, envs: Sequence[EnvChoice],
                     say: Callable[[str], None] = lambda _: None) -> list[tuple[str, Any, str]]:
    """Keep the cases the environments can run, and make their workers ready (e.g. build a missing jar).

    Environments pinned for one runtime run only the cases of that runtime (the others are returned as skipped);
    the environments of one run must be of one runtime. Elsewhere each planned runtime's default worker is made
    ready; if that fails, its cases are skipped with the reason. Returns what was skipped: (benchmark, params,
    reason).
    """
    runtimes = {env.runtime for env in envs}
    if len(runtimes) > 1:
        kinds = ", ".join(f"{env.name} ({get_runtime(env.runtime).display})" for env in envs)
        raise PlanError(f"--env: environments of different runtimes cannot be compared: {kinds}")
    pinned = get_runtime(next(iter(runtimes)))
    skipped: list[tuple[str, Any, str]] = []
    if pinned.pin is not None:
        _fit_to_pinned(plan, envs, pinned, say, skipped)
    else:
        _ready_default_workers(plan, say, skipped)
        _discover_in(plan, envs[0])
        _check_imports(plan, envs)
    return skipped


def _discover_in(plan: Plan, env: EnvChoice) -> None:
    """The modules of an asv suite and the pytest files that did not import where the plan was made, discovered again
    in the run's first environment (where the library under test is installed): their benchmarks' cases take their
    place in the plan."""
    placeholders = [c for c in plan.cases if sources.is_placeholder(c.benchmark)]
    if not placeholders or env.runtime != "python" or env.broken:
        return
    kept = [c for c in plan.cases if c not in placeholders]
    seen = {c.case_id for c in kept}
    scratch = Plan(cases=kept, dropped=plan.dropped, skipped=plan.skipped, requirements=plan.requirements)
    for case in placeholders:
        found = sources.rediscover(case.benchmark, env.python, env.variables)
        if found is None:
            scratch.cases.append(case)
            continue
        for bench in found:
            _add_cases(scratch, Target(bench, {}, None, getattr(bench, "processes_asked", lambda: None)()), {}, 1.0,
                       seen)
    plan.cases[:] = scratch.cases


def _check_imports(plan: Plan, envs: Sequence[EnvChoice]) -> None:
    """Every environment imports what the plan's benchmarks need (a plugin, asv's runner, pytest), or the run stops
    before it starts, with one line per environment that cannot (runtimes/benchmark_code.py)."""
    from colbench.runtimes.benchmark_code import missing_in

    probe = sources.import_probe(list({id(c.benchmark): c.benchmark for c in plan.cases}.values()))
    lines = []
    for env in envs:
        if env.runtime != "python" or env.broken or not probe:
            continue
        for key, why in missing_in(env.python, probe, env.variables).items():
            lines.append(f"environment {env.name} cannot import {probe[key]}: {why}")
    if lines:
        raise PlanError("; ".join(lines) + " (colbench puts asv's runner, pytest and the benchmark plugins installed "
                        "beside it into every environment it builds: see docs/asv.md)")


def _drop(plan: Plan, skipped: list[tuple[str, Any, str]], keep: Callable[[Any], bool], reason: str) -> None:
    """Leave out of the plan the cases `keep` refuses, noting each as skipped for `reason`."""
    kept = []
    for case in plan.cases:
        if keep(case):
            kept.append(case)
        else:
            skipped.append((case.benchmark.name, case.params, reason))
    plan.cases[:] = kept


def _fit_to_pinned(plan: Plan, envs: Sequence[EnvChoice], pinned: Runtime, say: Callable[[str], None],
                   skipped: list[tuple[str, Any, str]]) -> None:
    """Environments pinned for one runtime: only its cases, and each environment's worker ready."""
    names = ", ".join(env.name for env in envs)
    _drop(plan, skipped, lambda case: case.runtime == pinned.name,
          f"not a {pinned.display} case, and {names} are {pinned.display} environments")
    if not plan.cases:
        raise PlanError(f"no case of this plan runs in {pinned.display} environments "
                        f"(`colbench list` shows each benchmark's runtime param)")
    for env in envs:  # a resumed run's workers may have been cleaned since (a no-op when they are there)
        try:
            pinned.make_ready(env.resolved, say)
        except RuntimeUnavailable as exc:
            raise PlanError(f"--env {env.name}: {exc}") from None


def _ready_default_workers(plan: Plan, say: Callable[[str], None], skipped: list[tuple[str, Any, str]]) -> None:
    """Each planned runtime's default worker made ready; a runtime that cannot be has its cases skipped."""
    for name in dict.fromkeys(case.runtime for case in plan.cases):
        try:
            get_runtime(name).make_ready({}, say)
        except RuntimeUnavailable as exc:
            def other_runtime(case: Any, failed: str = name) -> bool:
                return bool(case.runtime != failed)

            _drop(plan, skipped, other_runtime, f"{exc} (`colbench setup {name}` retries)")
            if not plan.cases:
                raise PlanError(str(exc)) from None
