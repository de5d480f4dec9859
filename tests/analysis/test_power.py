"""Minimum detectable effect and blocks needed (power.py), and the Qn spread they rest on."""

import math

import numpy as np
import pytest

from colbench.analysis.power import blocks_needed, mde_from_se, minimum_detectable_effect
from colbench.analysis.rank_tests import pairs_needed
from colbench.analysis.simulation import NoiseModel, blocks
from colbench.analysis.stats import qn_sigma as robust_sigma
from colbench.analysis.verdicts import compare_case


def test_mde_shrinks_with_more_blocks_and_never_goes_below_the_threshold():
    level = 0.01 / 9
    mdes = [minimum_detectable_effect(0.07, n, level=level, power=0.95) for n in (12, 20, 40, 80, 160, 10_000)]
    assert all(a > b for a, b in zip(mdes, mdes[1:], strict=False))
    assert mdes[-1] >= 0.03 and mdes[-1] < 0.035
    # more power asks for a bigger effect; a noisier case too
    assert minimum_detectable_effect(0.07, 40, level=level, power=0.8) < mdes[2]
    assert minimum_detectable_effect(0.14, 40, level=level, power=0.95) > mdes[2]
    # fewer blocks than the exact test needs to reach the level: blind
    assert math.isinf(minimum_detectable_effect(0.07, pairs_needed(level) - 1, level=level))


def test_mde_formula_and_blocks_needed_agree():
    se = 0.02
    # floor 0: ln(1 + MDE) = (z_{1-a/2} + z_power) * se when that exceeds ln(1.03) + z_power * se
    z = 2.5758293035489 + 1.6448536269514722
    assert mde_from_se(se, level=0.01, power=0.95) == pytest.approx(math.expm1(z * se))
    assert mde_from_se(0.001, level=0.01, power=0.95) == pytest.approx(math.expm1(math.log(1.03) + 1.645 * 0.001),
                                                                      rel=1e-3)
    n = blocks_needed(0.07, 0.05, level=0.001, power=0.95)
    assert n is not None
    assert minimum_detectable_effect(0.07, n, level=0.001, power=0.95) <= 0.05
    assert minimum_detectable_effect(0.07, n - 1, level=0.001, power=0.95) > 0.05


def test_reported_mde_matches_the_power_actually_achieved():
    """Simulate a case at its own reported MDE (80%): it is called a regression about 80% of the time."""
    rng = np.random.default_rng(5)
    model = NoiseModel(between=0.03, within=0.02, odd_process_rate=0.0, outlier_rate=0.0, drift=0.0)
    b, c, i = blocks(rng, model, 40)
    mde = compare_case(b, c, baseline_blocks=i, contender_blocks=i).mde_80
    assert 0.03 < mde < 0.08
    hits = 0
    for _ in range(150):
        b, c, i = blocks(rng, model, 40, ratio=1 + mde)
        hits += compare_case(b, c, baseline_blocks=i, contender_blocks=i).verdict == "regression"
    assert 0.6 <= hits / 150 <= 0.95


def test_qn_spread_is_unbiased_and_ignores_wild_values():
    rng = np.random.default_rng(6)
    assert np.mean([robust_sigma(rng.normal(0, 2.0, 20)) for _ in range(2000)]) == pytest.approx(2.0, rel=0.03)
    clean = list(rng.normal(0, 1.0, 40))
    wild = clean + [50.0, -60.0, 80.0]
    assert np.std(wild) > 15
    assert robust_sigma(clean) < robust_sigma(wild) < 1.5 * robust_sigma(clean)
    assert math.isnan(robust_sigma([1.0]))
    assert robust_sigma([1.0, 1.0, 1.0, 2.0]) > 0  # more than half tied: falls back to the stdev
