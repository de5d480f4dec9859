"""One release of a watch, measured: its environment, one interleaved run against the last release that worked,
the verdict of each case, and for a regression the first bad release (a bisect over what lies between) and why
(`explain` of each regressed case).

The run is an ordinary stored run named `watch-PACKAGE-VERSION`, its two environments named after the releases,
its record tagged `Run.watch` (the watch, the package, both releases). A pass cut short finds the run by that tag
and goes on in it: `execute_run` runs only the executions the store is missing, so nothing is measured twice.
Verdicts come from `run_until_decided`, the stopping rule of `run --until-decided`: the first look at the
metric's own first-look processes (2 for instruction counts, 4 for wall time), more blocks only for the cases still
undecided, while the budget lasts; each later look spends at least a tenth of the alpha left (`least_share`), as
the pass's budget is far longer than one release's comparison.
"""

from __future__ import annotations

import dataclasses
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

from colbench.analysis.bisect import Step
from colbench.analysis.comparison import short_labels
from colbench.analysis.sequential import FIRST_LOOK_FRACTION
from colbench.analysis.verdicts import CaseComparison
from colbench.app.bisect import BisectObserver, BisectRequest, run_bisect
from colbench.app.errors import UsageError
from colbench.app.explain import ExplainRequest, explain
from colbench.app.notify import shown
from colbench.app.run import RunObserver, mark_resumed
from colbench.model.records import Result, Run, RunEnv
from colbench.model.release import Release
from colbench.model.run_config import EnvChoice, RunConfig
from colbench.model.watch import (
    INCONCLUSIVE_TRIES,
    CaseExplained,
    CaseVerdict,
    FunctionGrowth,
    WatchedRelease,
    WatchTag,
)
from colbench.redact import clip, redact
from colbench.render.fmt import fmt_duration
from colbench.runner.execute import Execution, start_run
from colbench.runner.instructions import restrict_plan
from colbench.runner.plan import Plan, PlannedCase, fit_plan_to_envs, make_plan
from colbench.runner.session import GateSettings, run_until_decided
from colbench.runtimes.points import Point, PointEnvironments, env_name, one_line
from colbench.store.base import ResultQuery, Store

#: the functions of an explain kept with a watched release (the flame graph and explain.json hold all of them)
TOP_FUNCTIONS = 5
#: regressed cases of one release that are bisected and explained (the rest are listed with their verdicts)
MOST_EXPLAINED = 3
#: a bisect or an explain of a regression is started only with this much of the budget left (each measures or
#: profiles the case again, in more environments): fewer is a note saying the command that does it
LOCALIZE_MIN_S = 60.0


class BaselineGone(Exception):
    """The release a new one is compared with cannot be built now (taken off the index, a network failure), or the
    new one cannot for a reason that is not its own (the index or uv away): the pass stops for this package and the
    next pass tries again; nothing is recorded."""


#: what uv says when the trouble is the way to the index, not the release, and a build the budget's end stopped
#: (colbench.processes): never an error row (the next pass would not try that release again)
_TRANSIENT = ("failed to fetch", "error sending request", "request failed after", "timed out", "connection",
              "dns error", "network", "uv not found", "temporary failure", "the budget's end")


def transient(cause: str) -> bool:
    lowered = cause.lower()
    return any(word in lowered for word in _TRANSIENT)


@dataclass
class Measuring:
    """What every release of one package's pass shares."""

    store: Store
    watch_id: str
    package: str
    config: RunConfig
    machine_id: str
    machine_name: str
    envs: PointEnvironments
    observer: RunObserver
    threshold: float | None = None
    alpha: float = 0.01
    index: str | None = None
    index_shown: str = ""
    with_requirements: tuple[str, ...] = ()
    variables: dict[str, str] = field(default_factory=dict)
    explain: bool = True
    say: Callable[[str], None] = lambda _: None
    bisect_observer: BisectObserver | None = None
    #: each release as the index listed it: built by its era's recipe, as the bisect this pass starts builds it
    releases: dict[str, Release] = field(default_factory=dict)
    #: the index they were listed from
    listed_from: str = ""


class BisectSays(BisectObserver):
    """A bisect inside a pass reports through the pass's own `say`, `run` observer and step hook."""

    def __init__(self, say: Callable[[str], None], run: RunObserver, on_step: Callable[[Step], None]) -> None:
        self._say, self.run, self._on_step = say, run, on_step

    def say(self, text: str) -> None:
        self._say(text)

    def step(self, step: Step) -> None:
        self._on_step(step)


class Counting(RunObserver):
    """Passes every event of a run on, and counts the executions this pass ran (a resumed run's stored ones are
    not among them)."""

    def __init__(self, inner: RunObserver) -> None:
        self.inner, self.executions = inner, 0

    def at_once(self, slots: int) -> None:
        self.inner.at_once(slots)

    def start(self, run: Run, cases: int, executions: int) -> None:
        self.inner.start(run, cases, executions)

    def case_started(self, case: PlannedCase) -> None:
        self.inner.case_started(case)

    def execution_started(self, execution: Execution) -> None:
        self.inner.execution_started(execution)

    def execution_done(self, execution: Execution, result: Result) -> None:
        self.executions += 1
        self.inner.execution_done(execution, result)

    def case_done(self, case: PlannedCase, results: list[Result]) -> None:
        self.inner.case_done(case, results)

    def finish(self, run: Run) -> None:
        self.inner.finish(run)


def release_point(m: Measuring, version: str) -> Point:
    """A release of the pass as a point: built with its era's companions on its own Python, the same environment
    (the same lock) as the bisect this pass starts builds for it (tests/app/test_watch_envs.py)."""
    return Point(version, f"{m.package}=={version}", release=m.releases.get(version) or Release(version),
                 package=m.package)


def _now() -> str:
    return datetime.now(UTC).isoformat()


def release_record(m: Measuring, version: str, verdict: str, baseline: str | None = None,
                   run_id: str | None = None) -> WatchedRelease:
    """A release's record as this pass watched it (the rest of its fields are filled by `dataclasses.replace`)."""
    return WatchedRelease(watch_id=m.watch_id, package=m.package, version=version, machine_id=m.machine_id,
                          verdict=verdict, watched_at=_now(), machine_name=m.machine_name,
                          targets=tuple(m.config.targets), index=m.index_shown, baseline=baseline, run_id=run_id)


def run_argv(argv: Sequence[str]) -> list[str]:
    """The command line a run record keeps, the webhook's URL cut to its host (a Slack webhook's path is its
    secret, and `redact` cannot know that)."""
    kept, masked = [], False
    for arg in argv:
        if masked:
            kept.append(shown(arg))
        elif arg.startswith("--notify="):
            kept.append("--notify=" + shown(arg.partition("=")[2]))
        else:
            kept.append(arg)
        masked = arg == "--notify"
    return kept


def earlier_run(store: Store, watch_id: str, baseline: str, version: str, after: str | None = None) -> Run | None:
    """The run an earlier pass started for this pair (cut short, or finished before its release was recorded);
    `after`: only a run started after that moment (a release measured again leaves its inconclusive runs alone)."""
    since = datetime.fromisoformat(after) if after else None
    for run in store.list_runs():
        tag = run.watch
        if tag and (tag.get("id"), tag.get("baseline"), tag.get("version")) == (watch_id, baseline, version) \
                and (since is None or datetime.fromisoformat(run.started_at) > since):
            return run
    return None


def _environments(m: Measuring, baseline: str, version: str) -> tuple[EnvChoice, EnvChoice] | str:
    """Both releases' environments, or the one-line cause why the new one cannot be built."""
    base = m.envs.get(release_point(m, baseline))
    if base is None:
        raise BaselineGone(f"{baseline}, the release {version} is compared with, {m.envs.failed[baseline]}")
    new = m.envs.get(release_point(m, version))
    if new is None and transient(m.envs.failed[version]):
        raise BaselineGone(f"{version} cannot be built now: {m.envs.failed[version]}")
    return (base, new) if new is not None else m.envs.failed[version]


def _run_of(m: Measuring, baseline: str, version: str, envs: list[EnvChoice],
            earlier: WatchedRelease | None) -> tuple[Run, RunConfig, Plan]:
    config = dataclasses.replace(m.config, run_name=f"watch-{m.package}-{version}")
    plan = make_plan(config.targets, config.overrides, config.scale)
    if "instructions" in config.measure:
        restrict_plan(plan, config.measure)
    fit_plan_to_envs(plan, envs, say=m.say)
    run = earlier_run(m.store, m.watch_id, baseline, version, earlier.watched_at if earlier else None)
    if run is None:
        run = start_run(m.store, config, plan, envs, run_argv(sys.argv))
        run.watch = WatchTag(id=m.watch_id, package=m.package, baseline=baseline, version=version)
        m.store.update_run(run)
    else:
        m.say(f"going on with run {run.run_id} ({baseline} → {version}), which an earlier pass started")
        if run.status != "finished":
            mark_resumed(run)
    return run, config, plan


def measure_release(m: Measuring, baseline: str, version: str, between: Sequence[str],
                    budget_s: float, earlier: WatchedRelease | None = None) -> WatchedRelease:
    """`version` against `baseline` (see the module docstring); an error row when it cannot be measured.
    `earlier`: its record from a pass that found it inconclusive; it is measured afresh, in a new run."""
    ends = time.monotonic() + budget_s
    built = _environments(m, baseline, version)
    if isinstance(built, str):
        return dataclasses.replace(release_record(m, version, "error", baseline), cause=built,
                                   between=tuple(between))
    envs = list(built)
    run, config, plan = _run_of(m, baseline, version, envs, earlier)
    before = len(m.store.completed(run.run_id))
    settings = GateSettings(threshold=m.threshold, alpha=m.alpha, budget_s=max(budget_s, 1.0),
                            least_share=FIRST_LOOK_FRACTION)
    counting = Counting(m.observer)
    session = run_until_decided(m.store, config, plan, envs, settings, observer=counting, run=run)
    results = m.store.results(ResultQuery(run_ids=(run.run_id,)))
    cases = case_verdicts(results, session.comparisons.get(envs[1].name, []), envs[0].name, envs[1].name)
    release = dataclasses.replace(release_record(m, version, release_verdict(cases), baseline, run.run_id),
                                  cases=tuple(cases), between=tuple(between), measured=counting.executions,
                                  reused=before, notes=tuple(session.notes), cause=_first_error(cases),
                                  tries=earlier.tries + 1 if earlier else 1)
    release = dataclasses.replace(release, notes=(*_tries_notes(release, earlier), *release.notes))
    if release.verdict == "regression":
        release = localize(m, release, ends - time.monotonic())
    return release


def _tries_notes(release: WatchedRelease, earlier: WatchedRelease | None) -> list[str]:
    """What a pass says of a release measured again, or one that stays pending (inconclusive)."""
    notes = []
    if earlier is not None:
        notes.append(f"measured again (pass {release.tries} of {INCONCLUSIVE_TRIES}): the pass of "
                     f"{earlier.watched_at[:16].replace('T', ' ')} UTC found it inconclusive against {earlier.baseline}"
                     + (f" (run {earlier.run_id})" if earlier.run_id else ""))
    if release.pending:
        notes.append(f"inconclusive: pending, not a baseline; the next pass measures it again (pass "
                     f"{release.tries + 1} of {INCONCLUSIVE_TRIES}), and a newer release is compared with "
                     f"{release.baseline}")
    elif release.verdict == "inconclusive":
        notes.append(f"inconclusive in {release.tries} passes: it stands as the baseline of the next release")
    return notes


def case_verdicts(results: list[Result], comparisons: list[CaseComparison], baseline_env: str,
                  contender_env: str) -> list[CaseVerdict]:
    """Each case's verdict (of the deciding metric), and the cases that failed on the new release."""
    labels = short_labels(results)
    ids = {label: case_id for case_id, label in labels.items()}
    verdicts = [CaseVerdict(case_id=ids.get(str(c.key), ""), label=str(c.key), metric=c.metric,
                            verdict=str(c.verdict), ratio=c.ratio, ci_low=c.ci_low, ci_high=c.ci_high,
                            baseline_median=c.baseline_median, contender_median=c.contender_median)
                for c in comparisons]
    compared = {v.case_id for v in verdicts}
    for case_id, cause in failed_cases(results, baseline_env, contender_env).items():
        if case_id not in compared:
            verdicts.append(CaseVerdict(case_id=case_id, label=labels.get(case_id, case_id), metric="",
                                        verdict="error", error=cause))
    return verdicts


def failed_cases(results: list[Result], baseline_env: str, contender_env: str) -> dict[str, str]:
    """case id → the one-line cause, for the cases that worked on the baseline and fail on the new release."""
    ok_before = {r.case_id for r in results if r.env_name == baseline_env and r.ok}
    failed: dict[str, str] = {}
    for result in results:
        if result.env_name == contender_env and not result.ok and result.case_id in ok_before:
            error = result.error or {}
            message = (error.get("message") or "no valid sample").strip().splitlines()
            failed.setdefault(result.case_id, f"the case fails: {error.get('kind', 'error')}: "
                                              f"{one_line(message[0] if message else '')}")
    return failed


def release_verdict(cases: Sequence[CaseVerdict]) -> str:
    """error when a case fails on the release (or none could be compared); else its worst case's verdict."""
    verdicts = {c.verdict for c in cases}
    if "error" in verdicts or not cases:
        return "error"
    for verdict in ("regression", "improvement", "inconclusive"):
        if verdict in verdicts:
            return verdict
    return "no change"


def _first_error(cases: Sequence[CaseVerdict]) -> str:
    if not cases:
        return "no case could be compared (the cases fail on both releases)"
    return next((f"{c.label}: {c.error}" for c in cases if c.error), "")


# ------------------------------------------------------------------------------------ localize and explain


def localize(m: Measuring, release: WatchedRelease, budget_s: float) -> WatchedRelease:
    """A regression: the first bad release (bisected when releases between could not be measured), and why."""
    assert release.baseline is not None and release.run_id is not None
    last_good, first_bad, bisect_id, notes = release.baseline, release.version, None, list(release.notes)
    regressed = release.regressed[:MOST_EXPLAINED]
    ends = time.monotonic() + budget_s
    if release.between and budget_s < LOCALIZE_MIN_S:
        notes.append(f"not bisected: the budget had {fmt_duration(max(budget_s, 0.0))} left (`colbench bisect "
                     f"--good {release.baseline} --bad {release.version}` finds the first bad release)")
    elif release.between:
        last_good, first_bad, bisect_id, said = _bisect(m, release, regressed[0], budget_s)
        notes += said
    cases = {c.case_id: c for c in release.cases}
    for case in regressed if m.explain else []:
        if ends - time.monotonic() < LOCALIZE_MIN_S:
            notes.append(f"not explained: {case.label}: the budget ended first (`colbench explain` of the run's "
                         "two environments explains it)")
            continue
        cases[case.case_id] = dataclasses.replace(case, explained=explain_case(m, release, case))
    return dataclasses.replace(release, last_good=last_good, first_bad=first_bad, bisect_id=bisect_id,
                               cases=tuple(cases.values()), notes=tuple(notes))


def _case_overrides(m: Measuring, run_id: str, case_id: str) -> tuple[str, dict[str, list[str]]]:
    result = next(r for r in m.store.results(ResultQuery(run_ids=(run_id,), case_id=case_id)))
    return result.benchmark, {name: [str(value)] for name, value in result.params.items()}


def bisect_request(m: Measuring, benchmark: str, overrides: dict[str, list[str]], good: str, bad: str,
                   budget_s: float) -> BisectRequest:
    """The bisect a pass starts between two releases: over the releases the pass listed, each built as the pass
    built it (the same Release, so the same era recipe and lock)."""
    return BisectRequest(benchmark=benchmark, good=good, bad=bad, overrides=overrides, package=m.package,
                         with_requirements=m.with_requirements, variables=dict(m.variables),
                         threshold=m.threshold if m.threshold is not None else 0.05, budget_s=budget_s,
                         measure=m.config.measure, iterations=m.config.iterations, warmup=m.config.warmup,
                         timeout_s=m.config.timeout_s, machine_name=m.config.machine_name, index=m.index, pre=True,
                         releases=tuple(m.releases.values()), listed_from=m.listed_from)


def _bisect(m: Measuring, release: WatchedRelease, case: CaseVerdict,
            budget_s: float) -> tuple[str, str, str | None, list[str]]:
    """Where between the baseline and the release the case changed, by `colbench bisect` over the releases."""
    assert release.baseline is not None and release.run_id is not None
    benchmark, overrides = _case_overrides(m, release.run_id, case.case_id)
    request = bisect_request(m, benchmark, overrides, release.baseline, release.version, budget_s)
    try:
        report = run_bisect(m.store, request, m.bisect_observer)
    except UsageError as exc:
        return release.baseline, release.version, None, [f"bisect of {case.label}: {exc}"]
    outcome = report.outcome
    if not outcome.found:
        return release.baseline, release.version, report.bisect_id, [f"bisect of {case.label}: {outcome.message}"]
    return outcome.last_good, outcome.first_bad, report.bisect_id, [f"bisect of {case.label}: {outcome.message}"]


def explain_case(m: Measuring, release: WatchedRelease, case: CaseVerdict) -> CaseExplained:
    """`colbench explain` of one regressed case between the two environments of the release's run."""
    assert release.run_id is not None and release.baseline is not None
    sides = (RunEnv(release.run_id, env_name(release.baseline)), RunEnv(release.run_id, env_name(release.version)))
    try:
        found = explain(m.store, ExplainRequest(*sides, cases=(case.case_id,), top=TOP_FUNCTIONS * 4), say=m.say)
    except Exception as exc:  # noqa: BLE001 - an explain that cannot run is said beside the verdict, never fatal
        return CaseExplained(error=clip(redact(one_line(str(exc) or type(exc).__name__)), 300))
    explained = found.cases[0]
    if explained.diff is None:
        return CaseExplained(error=explained.error or "no profile difference")
    diff = explained.diff
    grown = sorted(diff.changes, key=lambda c: c.self_b - c.self_a, reverse=True)[:TOP_FUNCTIONS]
    return CaseExplained(
        functions=tuple(FunctionGrowth(c.function, c.library, c.self_a, c.self_b, c.share) for c in grown),
        flamegraph=str(explained.flamegraph) if explained.flamegraph else None,
        report=str(explained.report) if explained.report else None,
        total_before=float(diff.baseline.total), total_after=float(diff.contender.total), unit=diff.unit)
