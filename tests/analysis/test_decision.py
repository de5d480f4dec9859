"""The verdict rule on its own: minimum-effect testing for changes, equivalence (TOST) for "no change"."""

import math

import pytest

from colbench.analysis.verdicts import Verdict, decide


def log_ci(estimate: float, low: float, high: float) -> tuple[float, float, float]:
    return math.log(estimate), math.log(low), math.log(high)


def test_the_measured_five_percent_case_is_a_regression():
    """1.051 [1.027, 1.074]: the interval excludes 1 and the estimate is beyond 3%. The old rule (whole
    interval beyond 3%) called this measured +5% slowdown inconclusive after 84 blocks."""
    assert decide(*log_ci(1.051, 1.027, 1.074), threshold=0.03) == Verdict.REGRESSION
    # the same interval is not enough when a noise floor of 3% is demanded of its lower bound
    assert decide(*log_ci(1.051, 1.027, 1.074), threshold=0.04, floor=0.03) == Verdict.INCONCLUSIVE


def test_equivalence_is_no_change():
    assert decide(*log_ci(1.01, 0.985, 1.028), threshold=0.03) == Verdict.NO_CHANGE
    # a real but small change is still "no change": its whole interval is within the band
    assert decide(*log_ci(1.015, 1.005, 1.025), threshold=0.03) == Verdict.NO_CHANGE


def test_wide_intervals_are_inconclusive():
    assert decide(*log_ci(1.02, 0.95, 1.09), threshold=0.03) == Verdict.INCONCLUSIVE
    # significant and large, but the interval reaches 1: not a regression yet
    assert decide(*log_ci(1.06, 0.999, 1.12), threshold=0.03) == Verdict.INCONCLUSIVE
    # significant, estimate below the threshold, interval beyond it: open
    assert decide(*log_ci(1.025, 1.01, 1.04), threshold=0.03) == Verdict.INCONCLUSIVE


def test_improvements_and_direction():
    assert decide(*log_ci(0.95, 0.93, 0.975), threshold=0.03) == Verdict.IMPROVEMENT
    # throughput: higher is better, so a lower ratio is the regression
    assert decide(*log_ci(0.95, 0.93, 0.975), threshold=0.03, direction="higher_is_better") == Verdict.REGRESSION
    assert decide(*log_ci(1.051, 1.027, 1.074), threshold=0.03, direction="higher_is_better") == Verdict.IMPROVEMENT


def test_significance_from_the_adjusted_p_value_can_veto():
    # the interval alone says regression, but the multiplicity-adjusted p says not significant
    assert decide(*log_ci(1.051, 1.027, 1.074), threshold=0.03, significant=False) == Verdict.INCONCLUSIVE


@pytest.mark.parametrize(("estimate", "expected"), [
    (1.0, Verdict.NO_CHANGE), (1.03, Verdict.REGRESSION), (1.05, Verdict.REGRESSION), (0.98, Verdict.NO_CHANGE),
    (0.97, Verdict.IMPROVEMENT),  # the band is a factor: improvements start below 1/1.03 = 0.971
])
def test_a_point_interval_decides(estimate, expected):
    """Deterministic metrics (file sizes): the interval is the point."""
    assert decide(*log_ci(estimate, estimate, estimate), threshold=0.03) == expected
