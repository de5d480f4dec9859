import math

import numpy as np
import pytest

from colbench.analysis.stats import (
    MAD_TO_SIGMA,
    process_locations,
    robust_log_sigma,
    summarize,
    within_process_cv,
)


def test_summarize_known_values():
    s = summarize([1.0, 2.0, 3.0, 4.0, 10.0])
    assert s.n == 5
    assert s.min == 1.0 and s.max == 10.0
    assert s.median == 3.0
    assert s.mean == pytest.approx(4.0)
    assert s.stdev == pytest.approx(np.std([1, 2, 3, 4, 10], ddof=1))
    assert (s.q1, s.q3, s.iqr) == (2.0, 4.0, 2.0)
    assert s.cv == pytest.approx(s.stdev / 4.0)
    assert s.mad == 1.0  # |x - 3| = 2,1,0,1,7 -> median 1
    assert s.to_dict()["n"] == 5


def test_single_sample_has_no_spread():
    s = summarize([0.5])
    assert s.n == 1 and s.median == 0.5
    assert math.isnan(s.stdev) and math.isnan(s.cv)


@pytest.mark.parametrize("bad", [[], [1.0, float("nan")], [float("inf")]])
def test_summarize_rejects_bad_input(bad):
    with pytest.raises(ValueError):
        summarize(bad)


def test_process_locations_are_per_process_medians_and_skip_empty():
    locs = process_locations([[1.0, 2.0, 100.0], [], [3.0]])
    assert list(locs) == [2.0, 3.0]


def test_within_process_cv_and_robust_sigma():
    rng = np.random.default_rng(0)
    procs = [list(np.exp(rng.normal(0, 0.02, 200))) for _ in range(5)]
    assert within_process_cv(procs) == pytest.approx(0.02, rel=0.2)
    values = np.exp(rng.normal(0, 0.05, 2000))
    values[:20] = 50.0  # wild processes do not inflate the robust sigma
    assert robust_log_sigma(values) == pytest.approx(0.05, rel=0.1)
    assert math.isnan(robust_log_sigma([1.0]))
    assert abs(MAD_TO_SIGMA - 1.4826) < 1e-4
