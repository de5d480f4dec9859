"""Find where a case changed between a good and a bad version: the search, with the measuring behind a protocol.

`bisect(points, measurer, settings)` walks an ordered list of points (releases, wheels, commits; `points[0]` is
the known good one, `points[-1]` the known bad one) the way `git bisect` does, but decides each step with the
statistics of `colbench compare` rather than with a person's judgement:

- **The ends first.** Good and bad are measured together (one run, interleaved in blocks) and compared. When bad
  is not the asked change from good (a regression for `slower`, an improvement for `faster`, beyond the
  threshold), there is nothing to find: the outcome says so ("no difference"). When a side cannot be measured at
  all, `BisectInputError`.
- **Each step** measures the point in the middle of the untested ones *together with* the current last good and
  first bad (three environments in one run, paired by block), and compares it with both:
  `vs_good` = good → point, `vs_bad` = point → bad. The point is *bad* when it already shows the change against
  good (and does not show it again against bad), *good* when bad still shows the change against it; "no change"
  on one side puts it on that side when the other is not yet decided (`classify`). When both sides show the change
  (the change came in more than one step), the larger one is followed, as asv's `find` does, and the step says so.
- **Undecided is never a coin toss.** An undecided point gets more processes (the look doubles them), up to
  `max_looks` looks; alpha is split over the looks (`sequential.look_alphas`, Pocock-type) and halved for the two
  comparisons of a look, so a step's chance of a wrong call stays at most `alpha`. A point still undecided after
  the last look is skipped like one that fails, with the reason.
- **Skips.** A point that cannot be measured (it does not install, or the case fails in it) is skipped with its
  one-line cause, as `git bisect skip` does; the next candidate is the untested point nearest the middle. When
  only skipped points lie between the last good and the first bad, the answer names them: the step is in that
  range.
- **Budget.** Before every look the time it will take is estimated from the executions so far; a look that would
  end past the budget is not started, and the outcome says how far the search got (the bracket, what is left).

Nothing here measures, stores or prints: the `Measurer` does the first two (app/bisect.py runs real colbench runs;
the tests use a fake one), `on_step` lets the caller show progress.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol

from colbench.analysis.sequential import look_alphas
from colbench.analysis.verdicts import CaseComparison, Verdict

Direction = Literal["slower", "faster"]
Classification = Literal["good", "bad", "undecided"]
Status = Literal["found", "no difference", "undecided", "budget"]
#: how a search ends when good and bad do not differ: the comparison of the ends says why (`Ends.verdict`)
_END_STATUS: dict[str, Status] = {"no difference": "no difference", "undecided": "undecided", "budget": "budget"}

#: the verdict that is "the change" for each direction (verdicts are already oriented by the metric's direction)
CHANGE = {"slower": Verdict.REGRESSION, "faster": Verdict.IMPROVEMENT}


class BisectInputError(ValueError):
    """The search cannot start: the good or the bad point cannot be measured (the message says why)."""


@dataclass(frozen=True)
class Trial:
    """One look at some points measured together: which of them failed (point → one-line cause), a way to compare
    two of the others at a given alpha (None when that pair cannot be compared), and what the look cost."""

    points: tuple[str, ...]
    processes: int
    failed: Mapping[str, str]
    compare: Callable[[str, str, float], CaseComparison | None]
    #: seconds spent building or finding environments, and measuring (0 for what was already in the store)
    build_s: float = 0.0
    measure_s: float = 0.0
    #: seconds one execution of the case takes here (for the budget); 0 when unknown
    execution_s: float = 0.0
    run_id: str = ""
    #: processes per point that were already stored and not measured again (a resumed search)
    reused: int = 0


class Measurer(Protocol):
    """Measures points together: step `step`, each point with `processes` processes (a later look of the same step
    asks for more, and only the missing ones are measured)."""

    def measure(self, step: int, points: Sequence[str], processes: int) -> Trial: ...

    def stored(self, step: int, points: Sequence[str], processes: int) -> bool:
        """Whether this look is already measured (a resumed search): it then costs nothing against the budget."""
        ...

    def prepare(self, step: int, points: Sequence[str]) -> None:
        """The points step `step` may measure, told before the step before it starts: a measurer may get them ready
        meanwhile (build their environments beside the measuring)."""
        ...


@dataclass(frozen=True)
class BisectSettings:
    direction: Direction = "slower"
    #: the error rate of one step (split over its looks and its two comparisons)
    alpha: float = 0.01
    #: processes per point at a step's first look; each further look doubles them (8 blocks: the paired t at a look's
    #: share of alpha sees a change of about 10% in wall time through its 5% noise floor)
    first_processes: int = 8
    max_looks: int = 4
    budget_s: float = 1800.0


@dataclass
class Step:
    """One step of the search: `point` tested against (`good`, `bad`), what it was found to be, and the evidence."""

    number: int
    point: str
    good: str
    bad: str
    #: "good", "bad", "skipped", "undecided" (skipped for want of a decision), "budget" (not measured: no time
    #: left); for step 0 (the ends): "differs", "no difference", "undecided", "budget"
    verdict: str
    cause: str = ""
    processes: int = 0
    looks: int = 0
    build_s: float = 0.0
    measure_s: float = 0.0
    run_id: str = ""
    reused: int = 0
    vs_good: CaseComparison | None = None
    vs_bad: CaseComparison | None = None

    @property
    def seconds(self) -> float:
        return self.build_s + self.measure_s


@dataclass
class BisectOutcome:
    """Where the search ended. `last_good`/`first_bad` bracket the change; `skipped_between` are the points between
    them that could not be decided or measured (the change may be at any of them); `untested` the points between
    them nobody looked at (the budget ended first). `step` compares last good → first bad (the size of the change
    found), from the run that measured both."""

    status: Status
    message: str
    points: list[str]
    last_good: str
    first_bad: str
    steps: list[Step] = field(default_factory=list)
    skipped_between: list[str] = field(default_factory=list)
    untested: list[str] = field(default_factory=list)
    step: CaseComparison | None = None
    elapsed_s: float = 0.0

    @property
    def found(self) -> bool:
        return self.status == "found"

    @property
    def skipped(self) -> dict[str, str]:
        """Every point skipped, with its cause (a step's point: the ends are never skipped, an undecided step 0 is
        the search's answer, not a skip)."""
        return {s.point: s.cause for s in self.steps if s.number > 0 and s.verdict in ("skipped", "undecided")}


# ------------------------------------------------------------------------------------------------ classify


def _side(comparison: CaseComparison | None, direction: Direction) -> str:
    """'change' (the asked one), 'none' (no change, or a change the other way) or 'unknown' (inconclusive, or no
    comparison at all)."""
    if comparison is None or comparison.verdict == Verdict.INCONCLUSIVE:
        return "unknown"
    return "change" if comparison.verdict == CHANGE[direction] else "none"


def _log_ratio(comparison: CaseComparison) -> float:
    return abs(math.log(comparison.ratio)) if comparison.ratio > 0 else 0.0


def classify(vs_good: CaseComparison | None, vs_bad: CaseComparison | None,
             direction: Direction) -> tuple[Classification, str]:
    """A point from its two comparisons: `vs_good` (last good → point) and `vs_bad` (point → first bad). Returns
    the classification and, for an undecided point or a multi-step change, why."""
    a, b = _side(vs_good, direction), _side(vs_bad, direction)
    if a == "change" and b == "change":
        assert vs_good is not None and vs_bad is not None
        larger: Classification = "bad" if _log_ratio(vs_good) >= _log_ratio(vs_bad) else "good"
        return larger, ("the change came in more than one step (this point differs from both sides); following "
                        f"the larger part, {'before' if larger == 'bad' else 'after'} it")
    if a == "change":
        return "bad", ""
    if b == "change":
        return "good", ""
    if a == "none" and b == "unknown":
        return "good", ""
    if a == "unknown" and b == "none":
        return "bad", ""
    if a == "none" and b == "none":
        return "undecided", "it differs from neither side by the threshold (a gradual change, no single step)"
    reasons = [f"{name}: {c.reason}" if c is not None else f"{name}: not compared"
               for name, c in (("against good", vs_good), ("against bad", vs_bad))]
    return "undecided", "; ".join(reasons)


def classify_ends(comparison: CaseComparison | None, direction: Direction) -> tuple[str, str]:
    """Step 0: does bad show the asked change against good? 'differs', 'no difference' or 'undecided'."""
    side = _side(comparison, direction)
    if side == "change":
        return "differs", ""
    if comparison is None:
        return "undecided", "good and bad could not be compared"
    if side == "none":
        return "no difference", comparison.reason
    return "undecided", comparison.reason


# ------------------------------------------------------------------------------------------------- search


def _middle(lo: int, hi: int, skipped: set[int]) -> int | None:
    """The untested point nearest the middle of (lo, hi), the lower one on a tie; None when none is left."""
    candidates = [i for i in range(lo + 1, hi) if i not in skipped]
    if not candidates:
        return None
    middle = (lo + hi) / 2
    return min(candidates, key=lambda i: (abs(i - middle), i))


class _Search:
    def __init__(self, points: Sequence[str], measurer: Measurer, settings: BisectSettings,
                 clock: Callable[[], float], on_step: Callable[[Step], None] | None) -> None:
        self.points = list(points)
        self.measurer, self.settings, self.clock = measurer, settings, clock
        self.on_step = on_step or (lambda step: None)
        self.started = clock()
        self.execution_s = 0.0
        self.steps: list[Step] = []
        self.alphas = look_alphas(settings.alpha, settings.max_looks, "pocock")

    def elapsed(self) -> float:
        return self.clock() - self.started

    def fits(self, step: int, points: Sequence[str], processes: int, before: int) -> bool:
        """Whether a look of `processes` per point (after `before` already measured) ends inside the budget."""
        if self.measurer.stored(step, points, processes):
            return True
        cost = self.execution_s * len(points) * (processes - before)
        return self.elapsed() + cost <= self.settings.budget_s

    def looks(self, number: int, points: Sequence[str],
              decide: Callable[[Trial, float], tuple[str, str]]) -> tuple[Step, Trial | None]:
        """Measure `points` together, look by look, until `decide` is sure or the looks or the budget end."""
        step = Step(number, points[1] if len(points) == 3 else points[-1], points[0], points[-1], "budget",
                    "the time budget ended before this step")
        processes, before, trial = self.settings.first_processes, 0, None
        for look in range(self.settings.max_looks):
            if not self.fits(number, points, processes, before):
                if trial is None:
                    return step, None
                step.cause = f"{step.cause}; the time budget ended before more processes"
                break
            trial = self.measurer.measure(number, points, processes)
            if trial.execution_s > 0:
                self.execution_s = trial.execution_s
            step.looks, step.run_id = look + 1, trial.run_id or step.run_id
            if trial.run_id or not trial.failed:  # a point that could not be built measured nothing
                step.processes = processes
            step.build_s += trial.build_s
            step.measure_s += trial.measure_s
            step.reused = max(step.reused, trial.reused)
            step.verdict, step.cause = decide(trial, self.alphas[look])
            if step.verdict != "undecided" or trial.failed:
                break
            before, processes = processes, processes * 2
        if step.verdict == "undecided":
            step.cause = f"undecided after {step.processes} processes: {step.cause}"
        return step, trial

    def ends(self) -> tuple[Step, Trial | None]:
        good, bad = self.points[0], self.points[-1]
        seen: dict[str, CaseComparison | None] = {}

        def decide(trial: Trial, alpha: float) -> tuple[str, str]:
            failed = {p: trial.failed[p] for p in (good, bad) if p in trial.failed}
            if failed:
                raise BisectInputError("; ".join(f"{'good' if p == good else 'bad'} {p} cannot be measured: {cause}"
                                                 for p, cause in failed.items()))
            seen["step"] = trial.compare(good, bad, alpha)
            return classify_ends(seen["step"], self.settings.direction)

        step, trial = self.looks(0, (good, bad), decide)
        step.vs_good = seen.get("step")
        return step, trial

    def middle(self, number: int, good: str, point: str, bad: str) -> tuple[Step, Trial | None]:
        comparisons: dict[str, CaseComparison | None] = {}

        def decide(trial: Trial, alpha: float) -> tuple[str, str]:
            if point in trial.failed:
                return "skipped", trial.failed[point]
            # two comparisons per look: each at half its alpha, so the look's chance of a wrong call stays alpha
            comparisons["good"] = trial.compare(good, point, alpha / 2) if good not in trial.failed else None
            comparisons["bad"] = trial.compare(point, bad, alpha / 2) if bad not in trial.failed else None
            return classify(comparisons["good"], comparisons["bad"], self.settings.direction)

        step, trial = self.looks(number, (good, point, bad), decide)
        step.vs_good, step.vs_bad = comparisons.get("good"), comparisons.get("bad")
        return step, trial

    def run(self) -> BisectOutcome:
        points, settings = self.points, self.settings
        first = _middle(0, len(points) - 1, set())
        self.measurer.prepare(1, [points[first]] if first is not None else [])
        ends, trial = self.ends()
        self.record(ends)
        good, bad = points[0], points[-1]
        if ends.verdict != "differs":
            status = _END_STATUS[ends.verdict]
            word = settings.direction
            messages = {
                "no difference": f"{bad} is not {word} than {good} beyond the threshold ({ends.cause}): "
                                 "nothing to bisect",
                "undecided": f"could not tell whether {bad} is {word} than {good} ({ends.cause}); more processes "
                             "(--processes) or a larger --threshold may decide",
                "budget": "the time budget ended before good and bad were compared",
            }
            return self.outcome(status, messages[ends.verdict], 0, len(points) - 1, set(), ends.vs_good)
        lo, hi = 0, len(points) - 1
        skipped: set[int] = set()
        bracket = trial
        number = 0
        while True:
            mid = _middle(lo, hi, skipped)
            if mid is None:
                break
            number += 1
            after = (_middle(lo, mid, skipped), _middle(mid, hi, skipped))  # if mid is bad, if it is good
            self.measurer.prepare(number + 1, [points[i] for i in after if i is not None])
            step, step_trial = self.middle(number, points[lo], points[mid], points[hi])
            self.record(step)
            if step.verdict == "budget":
                return self.outcome("budget", f"the time budget ended before step {number} was decided: the change "
                                    f"is between {points[lo]} and {points[hi]}", lo, hi, skipped,
                                    self.bracket_step(bracket, lo, hi))
            if step.verdict == "good":
                lo, bracket = mid, step_trial
            elif step.verdict == "bad":
                hi, bracket = mid, step_trial
            else:
                skipped.add(mid)
        between = [points[i] for i in range(lo + 1, hi)]
        change = self.bracket_step(bracket, lo, hi)
        if between:
            message = (f"first bad: {points[hi]}, or {' or '.join(between)} before it, which could not be measured or "
                       f"decided (last good: {points[lo]})")
        else:
            message = f"first bad: {points[hi]} (last good: {points[lo]})"
        return self.outcome("found", message, lo, hi, skipped, change)

    def bracket_step(self, trial: Trial | None, lo: int, hi: int) -> CaseComparison | None:
        """last good → first bad, at the full alpha, from the run that measured both (the latest one that did)."""
        if trial is None:
            return None
        good, bad = self.points[lo], self.points[hi]
        if good not in trial.points or bad not in trial.points or good in trial.failed or bad in trial.failed:
            return None
        return trial.compare(good, bad, self.settings.alpha)

    def record(self, step: Step) -> None:
        self.steps.append(step)
        self.on_step(step)

    def outcome(self, status: Status, message: str, lo: int, hi: int, skipped: set[int],
                change: CaseComparison | None) -> BisectOutcome:
        points = self.points
        inside = range(lo + 1, hi)
        return BisectOutcome(
            status=status, message=message, points=points, last_good=points[lo], first_bad=points[hi],
            steps=self.steps, skipped_between=[points[i] for i in inside if i in skipped],
            untested=[points[i] for i in inside if i not in skipped] if status == "budget" else [],
            step=change, elapsed_s=self.elapsed())


def bisect(points: Sequence[str], measurer: Measurer, settings: BisectSettings = BisectSettings(), *,
           clock: Callable[[], float] = time.monotonic,
           on_step: Callable[[Step], None] | None = None) -> BisectOutcome:
    """Search `points` (oldest first: `points[0]` good, `points[-1]` bad) for the step where the case changed."""
    if len(points) < 2:
        raise ValueError("a bisect needs a good and a bad point")
    if len(set(points)) != len(points):
        raise ValueError("points must differ")
    if settings.first_processes < 2:
        raise ValueError("a comparison needs at least two processes a side")
    return _Search(points, measurer, settings, clock, on_step).run()
