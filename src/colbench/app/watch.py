"""`colbench watch`: one pass over the new releases of the libraries a suite depends on, made for cron, a systemd
timer or a scheduled CI job.

For each package the pass asks the package index (runtimes/releases.py: uv's indexes, or `--index URL`) which
releases are newer than the last one watched for these targets, this package and this machine (the store keeps
what was watched: model/watch.py). A first pass starts from `--since VERSION`, else from the newest release
against the one before it. Each new release is measured against the last watched release that worked, in one
interleaved run on this machine (app/watch_measure.py), decided by colbench's stopping rule; a regression is
localized (a bisect when releases between could not be measured) and explained; improvements, "no change" and
releases that cannot be measured (an error row: the next one is compared with the last that worked) are recorded
too. Then the pass tells someone (app/notify.py) and publishes its runs to Conbench when asked to.

A pass with nothing new asks only the index (and reads the store). Two passes of one watch at once: the second
finds the first's claim in the store and leaves that package alone. A pass cut short (kill -9) finds its run by
its tag and goes on in it, so nothing is measured twice.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from packaging.version import InvalidVersion, Version

from colbench.app.errors import UsageError
from colbench.app.notify import Delivery, deliver, new_alert, webhook_url
from colbench.app.run import RunObserver
from colbench.model.env_request import release_request
from colbench.model.metrics import Measure
from colbench.model.packages import canonical_name
from colbench.model.watch import WatchedRelease, WatchHolder
from colbench.processes import deadline_at
from colbench.redact import redact
from colbench.render.fmt import fmt_duration
from colbench.runtimes.releases import (
    Release,
    ReleaseError,
    check_package_name,
    newer_releases,
    releases_on_indexes,
)
from colbench.words import plural

if TYPE_CHECKING:
    from colbench.analysis.bisect import Step
    from colbench.app.watch_measure import Measuring
    from colbench.model.run_config import RunConfig
    from colbench.runner.plan import Plan
    from colbench.store.base import Store

#: how long a claim on a watch lasts beyond the pass's budget (explains and bisects may overrun it); a holder on
#: this host that is gone (kill -9) is known at once, one of another host only when its claim ends
CLAIM_MARGIN_S = 3600.0


@dataclass(frozen=True)
class WatchRequest:
    """One pass. `measure` None: instruction counts where Valgrind counts them here, else wall time. The options
    shared with `bisect` (`with_requirements`, `measure`, `overrides`, `budget_s`) mean the same there."""

    targets: tuple[str, ...]
    packages: tuple[str, ...]
    overrides: dict[str, list[str]] = field(default_factory=dict)
    index: str | None = None
    pre: bool = False
    since: str | None = None
    with_requirements: tuple[str, ...] = ()
    variables: dict[str, str] = field(default_factory=dict)
    measure: Measure | None = None
    threshold: float | None = None
    alpha: float = 0.01
    budget_s: float = 3600.0
    processes: int | None = None
    iterations: int | None = None
    warmup: int | None = None
    timeout_s: float = 600.0
    machine_name: str | None = None
    notify: str | None = None
    conbench: str | None = None
    explain: bool = True
    dry_run: bool = False
    #: the total deadline of each network call of the pass: the index, the webhook, Conbench (None:
    #: $COLBENCH_NET_DEADLINE_S, else a minute)
    net_deadline_s: float | None = None


class WatchObserver:
    """What the caller sees while a pass goes (no-op defaults); `run` sees each run's processes."""

    run: RunObserver = RunObserver()

    def say(self, text: str) -> None: ...
    def planned(self, plan: PackagePlan) -> None: ...
    def measuring(self, package: str, baseline: str, version: str) -> None: ...
    def watched(self, release: WatchedRelease) -> None: ...
    def bisect_step(self, step: Step) -> None: ...


@dataclass(frozen=True)
class PackagePlan:
    """What a pass would measure of one package: the releases after `baseline`, oldest first, and the new ones it
    cannot test here with why (`not_testable`)."""

    package: str
    watch_id: str
    index: str
    baseline: str | None
    candidates: tuple[str, ...]
    not_testable: dict[str, str] = field(default_factory=dict)
    first_pass: bool = False
    #: the releases watched so far (every pass), newest last
    watched: tuple[WatchedRelease, ...] = ()
    #: every release the index lists that a watch may see (not yanked; pre-releases with --pre), oldest first
    listed: tuple[str, ...] = ()
    #: what the index listing said (entries of its page skipped, and why)
    notes: tuple[str, ...] = ()
    #: each release as the index listed it (its Python, its upload, its wheels): built by its era's recipe, by this
    #: pass and by the bisect it starts alike (runtimes/builders.py)
    releases: Mapping[str, Release] = field(default_factory=dict, compare=False, repr=False)
    #: the index they were listed from (`index` is it redacted, for showing)
    listed_from: str = field(default="", compare=False, repr=False)
    #: the dry run's estimate (None: not estimated)
    estimate: PassEstimate | None = None

    @property
    def estimate_s(self) -> float | None:
        return self.estimate.seconds if self.estimate is not None else None


@dataclass(frozen=True)
class PassEstimate:
    """What measuring a package's new releases should take, from measured costs (runner/estimate.py): each release
    against the one before it at the metric's first look, the environments built first (each once), every process
    stretched by the load of the moment (`load_factor`; `idle_s` what an idle machine would take). A regression's
    bisect and explain come on top."""

    seconds: float
    idle_s: float
    processes: int
    counting: bool
    envs_fresh: int
    env_s: float
    load_average: float | None
    load_factor: float
    releases: int


@dataclass
class PackagePass:
    plan: PackagePlan
    releases: list[WatchedRelease] = field(default_factory=list)
    #: another pass of this watch holds it: who
    busy: WatchHolder | None = None
    #: why the pass stopped before its last release (the budget, a baseline that cannot be built), if it did
    stopped: str | None = None


@dataclass
class WatchOutcome:
    passes: list[PackagePass]
    measure: Measure
    elapsed_s: float = 0.0
    dry_run: bool = False
    markdown: str = ""
    delivery: Delivery = field(default_factory=Delivery)
    notes: list[str] = field(default_factory=list)

    @property
    def releases(self) -> list[WatchedRelease]:
        return [r for p in self.passes for r in p.releases]

    @property
    def regressions(self) -> list[WatchedRelease]:
        return [r for r in self.releases if r.verdict == "regression"]

    @property
    def exit_code(self) -> int:
        """1 when the pass watched a regression, else 0 (bad input raises before: exit code 2)."""
        return 1 if self.regressions else 0


# ------------------------------------------------------------------------------------------------ the request


def check(request: WatchRequest) -> None:
    """What can be refused before the index or the store is asked."""
    if not request.targets:
        raise UsageError("name what to watch: a suite or benchmark (colbench list shows them)")
    if not request.packages:
        raise UsageError("name the libraries to watch: --package NAME (repeatable), e.g. --package pyarrow")
    for package in request.packages:
        if package.startswith(("java:", "r:")):
            raise UsageError(f"--package {package}: watch follows Python packages on a package index")
        try:
            check_package_name(package)
        except ReleaseError as exc:
            raise UsageError(str(exc)) from None
    if request.since is not None:
        try:
            Version(request.since)
        except InvalidVersion:
            raise UsageError(f"--since {request.since!r} is not a version (e.g. 14.0.2)") from None
    if request.threshold is not None and not 0 < request.threshold < 1:
        raise UsageError(f"--threshold {request.threshold:.0%}: must be between 0% and 100%")
    webhook_url(request.notify)


def resolve_measure(request: WatchRequest) -> Measure:
    """The metric a pass measures: the one asked for, else instruction counts where Valgrind counts them here
    (deterministic: two processes decide a few tenths of a percent), else wall time."""
    if request.measure is not None:
        return request.measure
    from colbench.runner.instructions import InstructionsUnavailable, find_toolchain

    try:
        find_toolchain()
    except InstructionsUnavailable:
        return ("wall",)
    return ("instructions",)


def run_config(request: WatchRequest, measure: Measure) -> RunConfig:
    """The run every release is measured with; the targets must plan at least one case this machine can run."""
    return run_plan(request, measure)[0]


def run_plan(request: WatchRequest, measure: Measure) -> tuple[RunConfig, Plan]:
    """`run_config`, and the plan it checked (what every environment needs for its benchmarks comes with it)."""
    from colbench.model.metrics import deciding_metric
    from colbench.model.metrics import metric as metric_named
    from colbench.model.run_config import RunConfig
    from colbench.runner.execute import counting_toolchain
    from colbench.runner.instructions import restrict_plan
    from colbench.runner.plan import make_plan

    config = RunConfig(targets=list(request.targets), overrides=dict(request.overrides),
                       iterations=request.iterations, warmup=request.warmup, timeout_s=request.timeout_s,
                       machine_name=request.machine_name, measure=measure)
    plan = make_plan(config.targets, config.overrides)
    if "instructions" in measure:
        restrict_plan(plan, measure)
        if not request.dry_run:
            counting_toolchain(config)
    if not plan.cases:
        reasons = "; ".join(reason for _, _, reason in [*plan.skipped, *plan.dropped][:2])
        raise UsageError(f"{', '.join(request.targets)}: no case to measure" + (f" ({reasons})" if reasons else ""))
    config.processes = request.processes or metric_named(deciding_metric(measure)).first_look
    return config, plan


def watch_id(request: WatchRequest, package: str, measure: Measure, machine_id: str, *,
             legacy: bool = False) -> str:
    """What decides a watch's verdicts: equal ids continue one timeline. The package counts by its PEP 503 name
    (`Py_Arrow` and `py-arrow` are one watch); `legacy`: the id versions before that gave it (the name in lower
    case), under which a watch started then keeps its state (`known_watch_id`)."""
    name = package.lower() if legacy else canonical_name(package)
    material = {"targets": list(request.targets), "overrides": request.overrides, "package": name,
                "with": list(request.with_requirements), "variables": request.variables, "measure": list(measure),
                "machine": machine_id}
    return hashlib.sha256(json.dumps(material, sort_keys=True).encode()).hexdigest()[:16]


def known_watch_id(store: Store, request: WatchRequest, package: str, measure: Measure, machine_id: str) -> str:
    """The watch's id: the one an existing watch of this package was recorded under when an earlier version named it
    otherwise (a name with `_` or `.`), else today's."""
    from colbench.store.queries import WatchQuery

    key = watch_id(request, package, measure, machine_id)
    legacy = watch_id(request, package, measure, machine_id, legacy=True)
    if legacy != key and not store.watched(WatchQuery(watch_id=key)) and store.watched(WatchQuery(watch_id=legacy)):
        return legacy
    return key


# ------------------------------------------------------------------------------------------------------ plans


def _by_version(releases: Sequence[WatchedRelease]) -> list[WatchedRelease]:
    return sorted(releases, key=lambda r: Version(r.version))


def _first_start(request: WatchRequest, eligible: list[Release], releases: list[Release], package: str,
                 ) -> tuple[str | None, list[Release]]:
    """A first pass: from `--since` (a release the index lists), else the newest against the one before it."""
    if request.since is None:
        return (eligible[-2].version if len(eligible) > 1 else None), eligible[-1:]
    since = Version(request.since)
    if not any(Version(r.version) == since for r in releases):
        near = ", ".join(r.version for r in releases[-3:])
        raise UsageError(f"--since {request.since}: {package} has no such release (newest: {near})")
    baseline = next(r.version for r in releases if Version(r.version) == since)
    return baseline, [r for r in eligible if Version(r.version) > since]


def plan_package(store: Store | None, request: WatchRequest, package: str, measure: Measure,
                 machine_id: str) -> PackagePlan:
    """Ask the index (the only network call of a pass with nothing new) and the store what is new; `package` is
    one `check` has checked."""
    notes: list[str] = []
    try:
        # the name was checked with the request (`check`): once a pass
        index, releases = releases_on_indexes(package, request.index, deadline_s=request.net_deadline_s,
                                              notes=notes)
    except ReleaseError as exc:
        raise UsageError(f"{exc}; the next pass asks again") from None
    from colbench.store.queries import WatchQuery

    key = known_watch_id(store, request, package, measure, machine_id) if store is not None \
        else watch_id(request, package, measure, machine_id)
    watched = _by_version(store.watched(WatchQuery(watch_id=key))) if store is not None else []
    worked = [r.version for r in watched if r.worked and not r.pending]  # a pending release is no baseline yet
    done = {Version(r.version) for r in watched if not r.pending}  # and is measured again
    fresh = [r for r in newer_releases(releases, worked[-1] if worked else None, pre=request.pre)
             if Version(r.version) not in done]
    if not worked and not fresh:
        raise UsageError(f"--package {package}: {redact(index)} lists no release to watch"
                         + _why_none(releases, request.pre))
    baseline = worked[-1] if worked else None
    if not worked:
        baseline, fresh = _first_start(request, [r for r in fresh if not r.skip], releases, package)
    return PackagePlan(package, key, redact(index), baseline, tuple(r.version for r in fresh if not r.skip),
                       {r.version: r.skip for r in fresh if r.skip}, first_pass=not worked, watched=tuple(watched),
                       listed=tuple(r.version for r in newer_releases(releases, None, pre=request.pre)),
                       notes=tuple(f"{package}: {redact(note)}" for note in notes),
                       releases={r.version: r for r in releases}, listed_from=index)


def _why_none(releases: Sequence[Release], pre: bool) -> str:
    """Why an index that lists a package has no release of it to watch."""
    if releases and all(r.skip == "yanked" for r in releases):
        return f" (every one of its {plural(len(releases), 'release')} is yanked)"
    return "" if pre else " (pre-releases need --pre)"


def estimate_plan(request: WatchRequest, plan: PackagePlan, measure: Measure) -> PackagePlan:
    """The dry run's time: each release's run (two environments, the first look; counting processes at their
    measured cost under Valgrind), from measured costs, with the environments it builds first."""
    from colbench.app.run import RunRequest, estimate
    from colbench.model.run_config import RunConfig

    if not plan.candidates or plan.baseline is None:
        return plan
    from colbench.runtimes.points import env_name

    indexes = (request.index,) if request.index else ()
    seconds = idle = env_s = 0.0
    processes = fresh = 0
    one = None
    for number, (older, newer) in enumerate(zip((plan.baseline, *plan.candidates), plan.candidates, strict=False)):
        envs = tuple(release_request(env_name(version), plan.package, plan.releases.get(version) or Release(version),
                                     extra=request.with_requirements, variables=request.variables, indexes=indexes)
                     for version in (older, newer))
        config = RunConfig(targets=list(request.targets), overrides=dict(request.overrides),
                           iterations=request.iterations, warmup=request.warmup, processes=request.processes,
                           measure=measure)
        one = estimate(RunRequest(config=config, envs=envs), resolve_pins=False)  # the index just listed them
        est = one.estimate
        # the older release's environment was built for the pair before (the baseline's alone is counted)
        builds = est.env_seconds if number == 0 else est.env_seconds * (0.5 if est.envs_fresh or est.envs_cached else 0)
        seconds += est.seconds - est.env_seconds + builds
        idle += est.seconds - est.env_seconds + builds - est.process_seconds * (1 - 1 / est.load_factor)
        env_s += builds
        processes += est.processes
        fresh += est.envs_fresh if number == 0 else min(est.envs_fresh, 1)
    assert one is not None
    return replace(plan, estimate=PassEstimate(
        seconds=seconds, idle_s=idle, processes=processes, counting="instructions" in measure, envs_fresh=fresh,
        env_s=env_s, load_average=one.load_average, load_factor=one.estimate.load_factor,
        releases=len(plan.candidates)))


# ------------------------------------------------------------------------------------------------------ a pass


def _measuring(store: Store, request: WatchRequest, plan: PackagePlan, config: RunConfig, machine: dict[str, str],
               observer: WatchObserver, needs: tuple[str, ...] = ()) -> Measuring:
    """What measuring the package's releases needs: each built as the bisect it may start builds it, with what the
    benchmarks `needs` to be imported (the run plan's requirements)."""
    from colbench.app.watch_measure import BisectSays, Measuring
    from colbench.runtimes.points import PointEnvironments

    envs = PointEnvironments(extra=request.with_requirements, say=observer.say, variables=dict(request.variables),
                             indexes=(request.index,) if request.index else (), needs=needs)
    bisect_observer = BisectSays(observer.say, observer.run, observer.bisect_step)
    return Measuring(store, plan.watch_id, plan.package, config, machine["id"], machine["name"], envs,
                     observer.run, request.threshold, request.alpha, request.index, plan.index,
                     request.with_requirements, dict(request.variables), request.explain, observer.say,
                     bisect_observer, releases=dict(plan.releases), listed_from=plan.listed_from)


def _watch_package(m: Measuring, plan: PackagePlan, observer: WatchObserver, deadline: float,
                   clock: Callable[[], float], claim: Callable[[], object]) -> PackagePass:
    """Each new release against the last one that worked, oldest first, while the budget lasts."""
    from colbench.app.watch_measure import BaselineGone, measure_release, release_record

    done = PackagePass(plan)
    baseline = plan.baseline
    pending = {r.version: r for r in plan.watched if r.pending}
    cost: float | None = None  # what measuring one release took in this pass: the next is started only if it fits
    for version in plan.candidates:
        if baseline is None:  # the only release there is: the start of the timeline, nothing to compare with
            release = release_record(m, version, "baseline")
        elif (unaffordable := _budget_stop(version, deadline - clock(), cost)) is not None:
            done.stopped = unaffordable
            break
        else:
            observer.measuring(plan.package, baseline, version)
            began = clock()
            try:
                # every process the release starts (uv, the import check, git) ends by the budget's end too
                with deadline_at(time.monotonic() + deadline - began):
                    release = measure_release(m, baseline, version, _between(plan, baseline, version),
                                              deadline - began, pending.get(version))
            except BaselineGone as exc:
                done.stopped = f"{exc}; the next pass tries again"
                break
            if release.run_id is not None:
                cost = max(cost or 0.0, clock() - began)
            if plan.first_pass and not done.releases:  # the start of the timeline, whatever the first release was
                _record(m.store, release_record(m, baseline, "baseline", run_id=release.run_id), done, observer)
        _record(m.store, release, done, observer)
        baseline = version if release.worked and not release.pending else baseline
        claim()
    return done


def _budget_stop(version: str, left_s: float, cost_s: float | None) -> str | None:
    """Why `version` is not started (a budget is a promise: no release begun that its measured cost says cannot
    end in time), or None to start it."""
    if left_s <= 0:
        return f"the budget ended before {version}: the next pass goes on from there"
    if cost_s is not None and cost_s > left_s:
        return (f"the budget's {fmt_duration(left_s)} left cannot pay for {version} (a release took "
                f"{fmt_duration(cost_s)} in this pass): the next pass goes on from there")
    return None


def _between(plan: PackagePlan, baseline: str, version: str) -> list[str]:
    """The releases between two compared ones: those that could not be measured (errors, or not testable here,
    in this pass or an earlier one); a change between the two may be in any of them."""
    low, high = Version(baseline), Version(version)
    return [v for v in plan.listed if low < Version(v) < high]


def _record(store: Store, release: WatchedRelease, done: PackagePass, observer: WatchObserver) -> None:
    store.record_watch(release)
    done.releases.append(release)
    observer.watched(release)


def pass_package(store: Store, request: WatchRequest, plan: PackagePlan, config: RunConfig,
                 machine: dict[str, str], observer: WatchObserver, deadline: float,
                 clock: Callable[[], float], needs: tuple[str, ...] = ()) -> PackagePass:
    """Claim the watch, measure what is new, let go of it (also when the pass is cut short by an exception)."""
    from colbench.store.run_owner import holder_stamp

    holder = holder_stamp()
    lease = request.budget_s + CLAIM_MARGIN_S
    busy = store.claim_watch(plan.watch_id, holder, lease)
    if busy is not None:
        return PackagePass(plan, busy=busy)
    try:
        from colbench.store.queries import WatchQuery

        known = {(r.version, r.watched_at) for r in plan.watched}
        taken = {Version(r.version) for r in store.watched(WatchQuery(watch_id=plan.watch_id))
                 if not r.pending or (r.version, r.watched_at) not in known}  # another pass measured it since
        plan = replace(plan, candidates=tuple(v for v in plan.candidates if Version(v) not in taken))
        m = _measuring(store, request, plan, config, machine, observer, needs)
        return _watch_package(m, plan, observer, deadline, clock,
                              lambda: store.claim_watch(plan.watch_id, holder, lease))
    finally:
        store.release_watch(plan.watch_id, holder)


def run_watch(store: Store | None, request: WatchRequest, observer: WatchObserver | None = None,
              clock: Callable[[], float] = time.monotonic) -> WatchOutcome:
    """One pass (see the module docstring). Bad input and an index that cannot be read are a UsageError before
    anything is measured; a release that cannot be measured is an error row and the pass goes on. A dry run
    (`request.dry_run`) only reads `store` (None: no store yet) and writes nothing."""
    from colbench.machine.facts import machine_info
    from colbench.report.watch_text import markdown_summary

    observer = observer or WatchObserver()
    started = clock()
    check(request)
    measure = resolve_measure(request)
    config, run_planned = run_plan(request, measure)
    facts = machine_info(request.machine_name)
    machine = {"id": facts["machine_id"], "name": facts["name"]}
    plans = [plan_package(store, request, package, measure, machine["id"]) for package in request.packages]
    if request.dry_run:
        plans = [estimate_plan(request, plan, measure) for plan in plans]
    for plan in plans:
        observer.planned(plan)
    if request.dry_run:
        return WatchOutcome([PackagePass(p) for p in plans], measure, clock() - started, dry_run=True,
                            notes=[n for p in plans for n in p.notes])
    if store is None:
        raise UsageError("a pass that measures needs a store to write to")
    deadline = started + request.budget_s
    passes = [pass_package(store, request, plan, config, machine, observer, deadline, clock, run_planned.requirements)
              if plan.candidates
              else PackagePass(plan) for plan in plans]
    outcome = WatchOutcome(passes, measure, notes=[n for p in plans for n in p.notes])
    outcome.markdown = markdown_summary(outcome.releases, unchanged=[_quiet_line(p) for p in passes
                                                                     if not p.releases])
    outcome.notes += _publish(store, request, outcome)
    outcome.delivery = deliver(store, webhook_url(request.notify), [p.plan.watch_id for p in passes],
                               new_alert(outcome.releases, [p.plan.watch_id for p in passes], outcome.markdown),
                               deadline_s=request.net_deadline_s)
    outcome.elapsed_s = clock() - started
    return outcome


def _quiet_line(done: PackagePass) -> str:
    plan = done.plan
    if done.busy is not None:
        return (f"{plan.package}: another pass of this watch is going on (process {done.busy.get('pid')} on "
                f"{done.busy.get('host')}); this one left it alone")
    if done.stopped:
        return f"{plan.package}: stopped: {done.stopped}"
    last = plan.watched[-1].version if plan.watched else plan.baseline
    return f"{plan.package}: nothing new on {plan.index} since {last}"


def _publish(store: Store, request: WatchRequest, outcome: WatchOutcome) -> list[str]:
    """The pass's runs to Conbench, when asked to (`--conbench`); a failure is a note, the pass stands."""
    runs = list(dict.fromkeys(r.run_id for r in outcome.releases if r.run_id))
    if not request.conbench or not runs:
        return []
    from colbench.app.publish import PublishRequest, publish, read_runs

    try:
        reports = publish(PublishRequest(request.conbench, tuple(runs), run_reason="watch",
                                         deadline_s=request.net_deadline_s), read_runs(store, runs))
    except Exception as exc:  # noqa: BLE001 - Conbench away or refusing: said, the watch's records stand
        return [f"not published to Conbench: {redact(str(exc))}"]
    return [f"published {plural(len(reports), 'run')} to Conbench"]


def outcome_document(outcome: WatchOutcome) -> dict[str, object]:
    """The pass for tools (`--format json`): per package its plan and the releases it watched."""
    return {
        "measure": list(outcome.measure), "dry_run": outcome.dry_run, "elapsed_s": round(outcome.elapsed_s, 3),
        "exit_code": outcome.exit_code, "notes": outcome.notes,
        "alerts": {"sent": outcome.delivery.sent, "kept": outcome.delivery.kept,
                   "destination": outcome.delivery.destination},
        "packages": [{
            "package": p.plan.package, "watch_id": p.plan.watch_id, "index": p.plan.index,
            "baseline": p.plan.baseline, "candidates": list(p.plan.candidates), "not_testable": p.plan.not_testable,
            "estimate_s": p.plan.estimate_s, "busy": p.busy, "stopped": p.stopped,
            "releases": [r.to_json() for r in p.releases]} for p in outcome.passes],
    }
