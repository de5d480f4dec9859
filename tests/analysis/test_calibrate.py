import math

import numpy as np
import pytest

from colbench.analysis.calibrate import calibrate_suite, split_aa
from colbench.analysis.power import blocks_needed
from colbench.analysis.verdicts import CaseInput, compare_suite

from .simulate import processes


def test_aa_calibration_flags_noisy_cases_with_the_blocks_they_need():
    rng = np.random.default_rng(60)
    cases = {f"quiet{i}": processes(rng, 40, between=0.005, cv=0.01) for i in range(18)}
    cases.update({f"noisy{i}": processes(rng, 40, between=0.08) for i in range(2)})
    report = calibrate_suite(cases, seconds_per_block={"noisy0": 2.0})
    assert report.false_positive_rate == 0.0 and not report.any_false_positive
    assert report.unadjusted_rejection_rate <= 0.1
    assert set(report.noisy) == {"noisy0", "noisy1"}
    noisy = {c.key: c for c in report.cases}["noisy0"]
    assert noisy.paired and noisy.n == 20 and noisy.basis == "wall"
    # spread of per-block log-ratios ~ sqrt(2) * 8% (this sample: 5.7%): dozens of blocks for 5%
    assert 0.04 < noisy.sigma_log < 0.16
    assert noisy.needed is not None and noisy.needed > 25
    assert noisy.needed_s == pytest.approx(2.0 * noisy.needed)
    assert noisy.mde_95 > 0.05
    quiet = {c.key: c for c in report.cases}["quiet0"]
    assert quiet.cv_iterations == pytest.approx(0.01, rel=0.5)
    assert quiet.needed is not None and quiet.needed <= 20 and quiet.verdict == "no change"
    assert quiet.mde_95 < 0.05 and quiet.needed_s is None
    assert report.no_change_rate >= 0.85


def test_split_aa_interleaves_into_blocks():
    procs = [[float(i + 1)] for i in range(7)]
    split = split_aa(procs)
    assert split.baseline == [[1.0], [3.0], [5.0], [7.0]]
    assert split.contender == [[2.0], [4.0], [6.0]]
    assert split.baseline_blocks == [0, 1, 2, 3]
    assert split.contender_blocks == [0, 1, 2]


def test_unpaired_calibration_input():
    rng = np.random.default_rng(61)
    report = calibrate_suite({"a": CaseInput(processes(rng, 12), processes(rng, 12))}, method="none")
    (c,) = report.cases
    assert not c.paired and c.n == 12 and c.sigma_log > 0


def test_needed_blocks_grow_with_the_square_of_the_noise():
    level = 0.01 / 10
    small = blocks_needed(0.04, 0.05, level=level, power=0.95)
    big = blocks_needed(0.16, 0.05, level=level, power=0.95)
    assert small is not None and big is not None
    assert big == pytest.approx(16 * small, rel=0.05)
    assert blocks_needed(0.08, 0.03, level=level) is None  # never: the effect is not beyond the threshold
    assert blocks_needed(math.nan, 0.05, level=level) is None


def test_blocks_needed_follow_the_test_that_would_decide():
    """At wall time's floor (5% a process, 7.1% a block) the paired t catches +35% with 95% power at 4 blocks and
    +10% at 11, where the rank test has taken over (from 10 blocks on at alpha 0.01); instruction counts at 0.05% need
    2 processes a side for 5%."""
    from colbench.analysis.calibrate import needed

    rng = np.random.default_rng(3)
    quiet = [[float(v)] * 5 for v in 0.2 * np.exp(rng.normal(0, 0.005, 6))]
    index = list(range(6))
    time_case = CaseInput(quiet, quiet[::-1], baseline_blocks=index, contender_blocks=index)
    (comp,) = compare_suite({"t": time_case})
    assert comp.test == "paired-t" and comp.sigma_log == pytest.approx(0.05 * math.sqrt(2))  # the floor binds
    assert needed(comp, time_case, 0.35, 0.01) == 4
    assert needed(comp, time_case, 0.10, 0.01) == 11
    counts = [[float(v)] * 3 for v in 263e6 * np.exp(rng.normal(0, 0.0005, 4))]
    counted = CaseInput(counts[:2], counts[2:], metric="instructions")
    (comp,) = compare_suite({"i": counted})
    assert needed(comp, counted, 0.05, 0.01) == 2
