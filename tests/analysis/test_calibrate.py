import numpy as np
import pytest

from colbench.analysis.calibrate import calibrate_suite, sample_size, split_aa
from colbench.analysis.compare import CaseInput
from colbench.analysis.rank_tests import pairs_needed, processes_needed

from .simulate import processes


def test_aa_calibration_flags_noisy_cases_with_the_processes_they_need():
    rng = np.random.default_rng(60)
    cases = {f"quiet{i}": processes(rng, 40, between=0.005, cv=0.01) for i in range(18)}
    cases.update({f"noisy{i}": processes(rng, 40, between=0.08) for i in range(2)})
    report = calibrate_suite(cases)
    assert report.false_positive_rate == 0.0 and not report.any_false_positive
    assert report.unadjusted_rejection_rate <= 0.1
    assert set(report.noisy) == {"noisy0", "noisy1"}
    noisy = {c.key: c for c in report.cases}["noisy0"]
    assert noisy.paired and noisy.n == 20
    assert noisy.needed > 60
    assert noisy.cv_processes > 0.05
    quiet = {c.key: c for c in report.cases}["quiet0"]
    assert quiet.cv_iterations == pytest.approx(0.01, rel=0.5)
    assert quiet.needed <= 20 and quiet.verdict == "no change"
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


def test_sample_size_formula():
    level = 0.01 / 20
    small = sample_size(0.01, threshold=0.03, level=level)
    big = sample_size(0.04, threshold=0.03, level=level)
    assert small == processes_needed(level)  # quiet: the exact-test floor binds
    assert big > small
    # quadrupling sigma needs ~16x the processes (unpaired: factor 2 * pi/3 * z^2 / delta^2)
    assert sample_size(0.16, threshold=0.03, level=level) == pytest.approx(16 * big, rel=0.05)
    assert sample_size(0.04, threshold=0.03, level=level, paired=True) == pytest.approx(big / 2, abs=1)
    assert sample_size(float("nan"), threshold=0.03, level=level, paired=True) == pairs_needed(level)
