import math

import numpy as np
import pytest
from scipy import stats

from colbench.analysis.rank_tests import (
    min_p_paired,
    min_p_unpaired,
    paired_shift,
    pairs_needed,
    processes_needed,
    rank_sum_cdf,
    signed_rank_cdf,
    unpaired_shift,
)


def test_exact_null_distributions_match_scipy():
    rng = np.random.default_rng(1)
    for n in (3, 6, 11, 20):
        d = rng.normal(0.4, 1.0, n)
        assert paired_shift(d).p_value == pytest.approx(stats.wilcoxon(d, method="exact").pvalue, rel=1e-9)
    for n1, n2 in ((2, 3), (5, 8), (12, 12), (9, 17)):
        x, y = rng.normal(0, 1, n1), rng.normal(0.7, 1, n2)
        expected = stats.mannwhitneyu(y, x, method="exact").pvalue
        assert unpaired_shift(x, y).p_value == pytest.approx(expected, rel=1e-9)
    assert signed_rank_cdf(10)[-1] == pytest.approx(1.0)
    assert rank_sum_cdf(7, 4)[-1] == pytest.approx(1.0)
    assert np.allclose(rank_sum_cdf(7, 4), rank_sum_cdf(4, 7))


def test_minimum_attainable_p_and_needed_sizes():
    assert min_p_paired(8) == pytest.approx(2 / 256)
    assert min_p_unpaired(5, 5) == pytest.approx(2 / 252)
    assert pairs_needed(0.01) == 8  # 2/2^7 = 0.0156 > 0.01 >= 2/2^8
    assert processes_needed(0.01) == 5
    assert pairs_needed(0.01 / 20) == 12
    assert processes_needed(0.01 / 50) == 8


@pytest.mark.parametrize("kind", ["paired", "unpaired"])
def test_intervals_cover_and_agree_with_the_test(kind):
    rng = np.random.default_rng(2)
    shift, a, covered, sims = 0.3, 0.1, 0, 400
    for _ in range(sims):
        if kind == "paired":
            analysis = paired_shift(rng.standard_t(3, 12) + shift)
        else:
            analysis = unpaired_shift(rng.lognormal(0, 0.5, 9), rng.lognormal(0, 0.5, 11) + shift)
        lo, hi = analysis.interval(a)
        covered += lo <= shift <= hi
        # test/interval duality: 0 outside the (1 - a) interval exactly when p <= a
        assert (lo > 0 or hi < 0) == (analysis.p_value <= a)
        assert lo <= analysis.estimate <= hi
    assert covered / sims >= 1 - a - 0.03


def test_unattainable_level_gives_unbounded_interval():
    analysis = unpaired_shift(np.array([0.0, 0.1, 0.2]), np.array([1.0, 1.1, 1.2]))
    assert analysis.p_value == pytest.approx(0.1)  # the best 3 vs 3 can do
    assert analysis.interval(0.01) == (-math.inf, math.inf)
    assert math.isfinite(analysis.interval(0.2)[0])


def test_large_samples_use_the_normal_approximation():
    rng = np.random.default_rng(3)
    x, y = rng.normal(0, 1, 80), rng.normal(0.5, 1, 90)
    analysis = unpaired_shift(x, y)
    assert not analysis.exact
    lo, hi = analysis.interval(0.01)
    assert lo < 0.5 < hi
    assert analysis.p_value == pytest.approx(stats.mannwhitneyu(y, x, method="asymptotic").pvalue)


def test_ties_and_deterministic_values():
    tied = unpaired_shift(np.log([100.0, 100.0, 101.0, 100.0]), np.log([104.0, 104.0, 105.0, 104.0]))
    assert not tied.exact and not tied.deterministic
    same = unpaired_shift(np.log([1000.0] * 3), np.log([1050.0] * 3))
    assert same.deterministic and same.p_value == 0.0
    assert same.interval(1e-6) == (pytest.approx(math.log(1.05)),) * 2
    zero = paired_shift(np.zeros(4))
    assert zero.deterministic and zero.p_value == 1.0 and zero.interval(0.01) == (0.0, 0.0)
