import numpy as np
import pytest

from colbench.analysis.changepoint import detect_change_points


def _noisy(rng, n, level=1.0, cv=0.03):
    return level * rng.lognormal(0.0, cv, n)


def test_finds_a_ten_percent_step_where_it_happens():
    rng = np.random.default_rng(50)
    series = np.r_[_noisy(rng, 30), _noisy(rng, 30, 1.10)]
    (cp,) = detect_change_points(series)
    assert abs(cp.index - 30) <= 1
    assert cp.magnitude == pytest.approx(0.10, abs=0.03)
    assert cp.after_mean > cp.before_mean and cp.p_value <= 0.01
    assert cp.to_dict()["index"] == cp.index


def test_flat_series_have_no_change_points():
    rng = np.random.default_rng(51)
    found = sum(len(detect_change_points(_noisy(rng, 60), seed=s)) for s in range(10))
    assert found == 0


def test_two_steps_min_size_and_magnitude_filter():
    rng = np.random.default_rng(52)
    series = np.r_[_noisy(rng, 25), _noisy(rng, 25, 0.85), _noisy(rng, 25, 1.0)]
    cps = detect_change_points(series)
    assert [abs(c.index - t) <= 1 for c, t in zip(cps, (25, 50), strict=True)] == [True, True]
    assert cps[0].magnitude < 0 < cps[1].magnitude
    # A change too close to the start cannot be reported closer than min_size.
    early = np.r_[_noisy(rng, 3, 1.5), _noisy(rng, 40)]
    assert all(c.index >= 8 for c in detect_change_points(early, min_size=8))
    # min_magnitude only filters the report
    assert detect_change_points(series, min_magnitude=0.5) == []


def test_deterministic_and_validated():
    rng = np.random.default_rng(53)
    series = np.r_[_noisy(rng, 20), _noisy(rng, 20, 1.2)]
    assert detect_change_points(series, seed=7) == detect_change_points(series, seed=7)
    assert detect_change_points(series[:5]) == []
    with pytest.raises(ValueError):
        detect_change_points([1.0, float("nan")])
    with pytest.raises(ValueError):
        detect_change_points(series, min_size=1)
    with pytest.raises(ValueError):
        detect_change_points(series, permutations=20, max_pvalue=0.01)
