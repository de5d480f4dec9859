"""The bisect search with a fake measurer: simulated processes of known speed per point, judged by the real
statistics of `compare` (paired by block, as the real measurer's runs are)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

from colbench.analysis.bisect import (
    BisectInputError,
    BisectSettings,
    Trial,
    bisect,
    classify,
)
from colbench.analysis.verdicts import CaseComparison, CaseInput, Verdict, compare_suite

VERSIONS = [f"1.{i}.0" for i in range(16)]


class FakeMeasurer:
    """Each point has a true time (seconds a call); each process draws `iterations` calls with noise of `noise`
    (log sd) plus a per-process offset. Failing points fail; `stored_steps` pretend to be in the store."""

    def __init__(self, times: dict[str, float], *, fail: dict[str, str] | None = None, noise: float = 0.02,
                 seed: int = 1, execution_s: float = 1.0, stored_steps: set[int] | None = None) -> None:
        self.times, self.fail, self.noise = times, fail or {}, noise
        self.rng = np.random.default_rng(seed)
        self.execution_s = execution_s
        self.stored_steps = stored_steps or set()
        self.calls: list[tuple[int, tuple[str, ...], int]] = []
        self.prepared: list[tuple[int, list[str]]] = []
        self.samples: dict[tuple[int, str], list[list[float]]] = {}
        self.clock = 0.0

    def _draw(self, point: str) -> list[float]:
        offset = self.rng.normal(0, self.noise)
        return list(self.times[point] * np.exp(offset + self.rng.normal(0, self.noise / 2, 5)))

    def stored(self, step: int, points: Sequence[str], processes: int) -> bool:
        return step in self.stored_steps

    def prepare(self, step: int, points: Sequence[str]) -> None:
        self.prepared.append((step, list(points)))

    def measure(self, step: int, points: Sequence[str], processes: int) -> Trial:
        self.calls.append((step, tuple(points), processes))
        added = 0
        for point in points:
            if point in self.fail:
                continue
            have = self.samples.setdefault((step, point), [])
            while len(have) < processes:
                have.append(self._draw(point))
                added += 1
        if step not in self.stored_steps:
            self.clock += added * self.execution_s

        def compare(a: str, b: str, alpha: float) -> CaseComparison | None:
            if a in self.fail or b in self.fail:
                return None
            base, cont = self.samples[(step, a)][:processes], self.samples[(step, b)][:processes]
            case = CaseInput(base, cont, baseline_blocks=list(range(processes)),
                             contender_blocks=list(range(processes)))
            return compare_suite({f"{a}->{b}": case}, threshold=0.05, alpha=alpha)[0]

        return Trial(tuple(points), processes, {p: self.fail[p] for p in points if p in self.fail}, compare,
                     measure_s=added * self.execution_s, execution_s=self.execution_s, run_id=f"run-{step}")


def step_at(index: int, factor: float = 1.3, versions: list[str] = VERSIONS) -> dict[str, float]:
    return {v: 0.1 * (factor if i >= index else 1.0) for i, v in enumerate(versions)}


@pytest.mark.parametrize("index", [1, 5, 8, 15])
def test_a_single_step_is_found(index):
    measurer = FakeMeasurer(step_at(index))
    outcome = bisect(VERSIONS, measurer, BisectSettings(), clock=lambda: measurer.clock)
    assert outcome.status == "found", outcome.message
    assert outcome.first_bad == VERSIONS[index] and outcome.last_good == VERSIONS[index - 1]
    assert outcome.skipped_between == []
    assert outcome.step is not None and outcome.step.verdict == Verdict.REGRESSION
    assert outcome.step.ci_low > 1.0 and 1.2 < outcome.step.ratio < 1.4
    # binary search: the ends, then about log2(14) steps
    assert len(outcome.steps) <= 1 + 5
    # before each measurement, the points that may come next (to build their environments meanwhile)
    assert measurer.prepared[0] == (1, [VERSIONS[7]])
    assert measurer.prepared[1] == (2, [VERSIONS[3], VERSIONS[11]])
    told = dict(measurer.prepared)
    assert all(step.point in told[step.number] for step in outcome.steps[1:])
    assert all(s.verdict in ("differs", "good", "bad") for s in outcome.steps)


def test_a_speed_up_is_found_with_direction_faster_and_not_with_slower():
    times = step_at(6, factor=0.7)
    found = bisect(VERSIONS, FakeMeasurer(times), BisectSettings(direction="faster"))
    assert found.status == "found" and found.first_bad == VERSIONS[6]
    assert found.step is not None and found.step.verdict == Verdict.IMPROVEMENT
    nothing = bisect(VERSIONS, FakeMeasurer(times), BisectSettings(direction="slower"))
    assert nothing.status == "no difference" and "not slower" in nothing.message
    assert len(nothing.steps) == 1


def test_good_and_bad_alike_stops_after_the_ends():
    measurer = FakeMeasurer({v: 0.1 for v in VERSIONS}, noise=0.005)
    outcome = bisect(VERSIONS, measurer, BisectSettings())
    assert outcome.status == "no difference"
    assert [c[0] for c in measurer.calls] and {c[0] for c in measurer.calls} == {0}


def test_a_failing_point_is_skipped_with_its_cause_and_the_next_nearest_is_tested():
    times = step_at(9)
    middle = VERSIONS[7]  # the first point the search would test: (0 + 15) / 2 → 7
    measurer = FakeMeasurer(times, fail={middle: "does not install: no wheel"})
    outcome = bisect(VERSIONS, measurer, BisectSettings())
    assert outcome.found and outcome.first_bad == VERSIONS[9]
    assert outcome.skipped == {middle: "does not install: no wheel"}
    assert outcome.steps[1].point == middle and outcome.steps[1].verdict == "skipped"
    assert outcome.steps[2].point == VERSIONS[8]  # nearest the middle after the skip


def test_a_skipped_point_next_to_the_step_leaves_a_range():
    times = step_at(9)
    measurer = FakeMeasurer(times, fail={VERSIONS[9]: "error result: RuntimeError: boom"})
    outcome = bisect(VERSIONS, measurer, BisectSettings())
    assert outcome.status == "found"
    assert (outcome.last_good, outcome.first_bad) == (VERSIONS[8], VERSIONS[10])
    assert outcome.skipped_between == [VERSIONS[9]]
    assert outcome.message == "first bad: 1.10.0, or 1.9.0 before it, which could not be measured or decided " \
        "(last good: 1.8.0)"


def test_an_end_that_cannot_be_measured_is_bad_input():
    measurer = FakeMeasurer(step_at(3), fail={VERSIONS[0]: "does not install"})
    with pytest.raises(BisectInputError, match="good 1.0.0 cannot be measured: does not install"):
        bisect(VERSIONS, measurer, BisectSettings())


def test_an_undecided_point_gets_more_processes_never_a_coin_toss():
    """A point half-way between (a gradual change): each side is only 7% away, which four processes cannot decide;
    the look doubles the processes until a decision (or the last look), and never guesses."""
    versions = ["a", "b", "c"]
    measurer = FakeMeasurer({"a": 0.100, "b": 0.107, "c": 0.1145}, noise=0.03, seed=5)
    outcome = bisect(versions, measurer, BisectSettings(first_processes=4, max_looks=4))
    middle = [s for s in outcome.steps if s.point == "b"]
    assert middle, outcome.message
    step = middle[0]
    asked = [c[2] for c in measurer.calls if c[0] == step.number]
    assert asked == [4, 8, 16, 32][:len(asked)] and asked[-1] == step.processes
    if step.verdict in ("good", "bad"):
        comparisons = [step.vs_good, step.vs_bad]
        assert any(c is not None and c.verdict != Verdict.INCONCLUSIVE for c in comparisons)
    else:
        assert step.verdict == "undecided" and step.processes == 32 and "undecided after 32" in step.cause


def test_the_budget_bounds_the_search_and_says_how_far_it_got():
    measurer = FakeMeasurer(step_at(11), execution_s=1.0)
    # the ends cost 2 points × 8 processes = 16 s; each step 3 × 8 = 24 s: 45 s allow the ends and one step
    outcome = bisect(VERSIONS, measurer, BisectSettings(budget_s=45), clock=lambda: measurer.clock)
    assert outcome.status == "budget"
    assert [s.verdict for s in outcome.steps][:2] == ["differs", "good"]
    assert outcome.steps[-1].verdict == "budget"
    assert (outcome.last_good, outcome.first_bad) == (VERSIONS[7], VERSIONS[15])
    assert outcome.untested == VERSIONS[8:15]
    assert measurer.clock <= 45
    assert "between 1.7.0 and 1.15.0" in outcome.message
    # the message counts steps as the table does (step 0 the ends): steps 0 and 1 measured, step 2 never decided
    measured = [s for s in outcome.steps if s.processes]
    assert [s.number for s in measured] == [0, 1]
    assert "ended before step 2 was decided" in outcome.message
    from colbench.report.bisect_text import answer_lines, step_rows

    assert step_rows(outcome)[-1][6] == "-"  # the unrun step cost nothing: no "0.0 us build"
    assert "2 measured step(s)" in answer_lines(outcome, "time", {})[-1]


def test_an_undecided_pair_of_ends_is_the_answer_not_a_skipped_point():
    """Step 0 compares good and bad: when it cannot decide, the search says so, and the bad end is not listed as a
    skipped point (it is an end, not a point the search left out)."""
    measurer = FakeMeasurer({v: 0.1 * (1.04 if i >= 8 else 1.0) for i, v in enumerate(VERSIONS)}, noise=0.08, seed=2)
    outcome = bisect(VERSIONS, measurer, BisectSettings(first_processes=2, max_looks=1))
    assert outcome.status == "undecided" and outcome.steps[0].verdict == "undecided"
    assert outcome.skipped == {}


def test_stored_looks_cost_nothing_against_the_budget():
    """A resumed search: the steps already in the store are read back, whatever the budget left."""
    first = FakeMeasurer(step_at(11), seed=3)
    done = bisect(VERSIONS, first, BisectSettings(), clock=lambda: first.clock)
    again = FakeMeasurer(step_at(11), seed=3, stored_steps={s.number for s in done.steps})
    resumed = bisect(VERSIONS, again, BisectSettings(budget_s=1), clock=lambda: again.clock)
    assert resumed.status == "found" and resumed.first_bad == done.first_bad
    assert [s.point for s in resumed.steps] == [s.point for s in done.steps]


def test_two_steps_follow_the_larger():
    times = {v: 0.1 * (1.1 if i >= 4 else 1.0) * (1.5 if i >= 10 else 1.0) for i, v in enumerate(VERSIONS)}
    outcome = bisect(VERSIONS, FakeMeasurer(times, noise=0.01), BisectSettings())
    assert outcome.found and outcome.first_bad == VERSIONS[10]


def _comparison(verdict: Verdict, ratio: float = 1.0) -> CaseComparison:
    return CaseComparison(key="k", metric="time", direction="lower_is_better", verdict=verdict, reason="why",
                          ratio=ratio, ci_low=ratio, ci_high=ratio, ci_level=0.99, p_value=0.5, p_adjusted=0.5,
                          paired=True, n_baseline=4, n_contender=4, n_blocks=4, baseline_median=1,
                          contender_median=ratio, baseline_cv=0, contender_cv=0, threshold=0.05, alpha=0.01,
                          method="holm")


@pytest.mark.parametrize(("vs_good", "vs_bad", "expected"), [
    (Verdict.REGRESSION, Verdict.NO_CHANGE, "bad"),
    (Verdict.REGRESSION, Verdict.INCONCLUSIVE, "bad"),
    (Verdict.INCONCLUSIVE, Verdict.NO_CHANGE, "bad"),
    (Verdict.NO_CHANGE, Verdict.REGRESSION, "good"),
    (Verdict.INCONCLUSIVE, Verdict.REGRESSION, "good"),
    (Verdict.NO_CHANGE, Verdict.INCONCLUSIVE, "good"),
    (Verdict.IMPROVEMENT, Verdict.REGRESSION, "good"),
    (Verdict.INCONCLUSIVE, Verdict.INCONCLUSIVE, "undecided"),
    (Verdict.NO_CHANGE, Verdict.NO_CHANGE, "undecided"),
])
def test_classify(vs_good, vs_bad, expected):
    assert classify(_comparison(vs_good), _comparison(vs_bad), "slower")[0] == expected


def test_classify_without_a_comparison_is_undecided_unless_the_other_side_decides():
    assert classify(None, None, "slower")[0] == "undecided"
    assert classify(None, _comparison(Verdict.REGRESSION), "slower")[0] == "good"
    assert classify(_comparison(Verdict.IMPROVEMENT), None, "faster")[0] == "bad"
