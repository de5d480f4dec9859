"""The pooled t: its arithmetic, its interval's coverage at 2-4 processes a side, and its false-alarm rate under the
noise shapes it does not assume (two-point noise, the VM's two CPU speeds, heavy tails). Seeded: deterministic."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps

from colbench.analysis.t_tests import NoisePrior, pooled_prior, pooled_t
from colbench.analysis.verdicts import CaseInput, Verdict, compare_case, compare_suite, uses_t


def test_pooled_t_is_the_textbook_two_sample_t():
    x, y = np.log([1.00, 1.02, 0.99]), np.log([1.10, 1.12, 1.07])
    shift = pooled_t(x, y)
    expected = sps.ttest_ind(y, x, equal_var=True)
    assert shift.df == 4 and shift.p_value == pytest.approx(expected.pvalue)
    assert shift.estimate == pytest.approx(y.mean() - x.mean())
    low, high = shift.interval(0.05)
    half = sps.t.isf(0.025, 4) * shift.se
    assert (low, high) == pytest.approx((shift.estimate - half, shift.estimate + half))


def test_a_prior_adds_its_degrees_of_freedom_and_its_squares():
    x, y = np.log([1.0, 1.01]), np.log([1.05, 1.06])
    alone = pooled_t(x, y)
    lent = pooled_t(x, y, prior=NoisePrior(variance=alone.sigma ** 2, df=40, runs=10))
    assert lent.df == alone.df + 40 and lent.prior_df == 40
    assert lent.sigma == pytest.approx(alone.sigma)  # the same variance: the same spread, many more df
    # t(2) at 0.995 is 9.92, t(42) 2.70: the interval narrows by that factor
    narrowed = (alone.interval(0.01)[1] - alone.interval(0.01)[0]) / (lent.interval(0.01)[1] - lent.interval(0.01)[0])
    assert narrowed == pytest.approx(sps.t.isf(0.005, 2) / sps.t.isf(0.005, 42))


def test_the_noise_floor_keeps_two_constant_sides_from_an_infinite_t():
    x, y = np.log([100.0, 100.0]), np.log([100.2, 100.2])
    floored = pooled_t(x, y, floor=0.001)
    assert floored.floored and floored.sigma == 0.001 and math.isfinite(floored.interval(0.01)[1])
    exact = pooled_t(x, y, floor=0.0)  # a deterministic metric: the point itself
    assert exact.deterministic and exact.interval(0.01)[0] == exact.interval(0.01)[1] == exact.estimate


def test_pooled_prior_groups_runs_and_ignores_lonely_processes():
    prior = pooled_prior([np.array([0.0, 0.02]), np.array([1.0, 1.02, 1.04]), np.array([5.0])])
    assert prior is not None and prior.df == 3 and prior.runs == 2
    assert prior.variance == pytest.approx((0.0002 + 0.0008) / 3)
    assert pooled_prior([np.array([1.0])]) is None


def test_which_test_decides_depends_on_the_counts_only():
    two = CaseInput([[1.0]] * 2, [[1.0]] * 2, baseline_blocks=[0, 1], contender_blocks=[0, 1])
    many = CaseInput([[1.0]] * 30, [[1.0]] * 30, baseline_blocks=list(range(30)), contender_blocks=list(range(30)))
    assert uses_t(two, 0.01) and not uses_t(many, 0.01)
    assert uses_t(many, 1e-9)  # a family so large that 30 blocks are barely enough for the rank test
    assert not uses_t(CaseInput([[1.0]] * 2, [[1.0]] * 2), 0.01)  # wall time of two runs: the rank tests
    counted = CaseInput([[1.0]] * 30, [[1.0]] * 30, metric="instructions")
    assert uses_t(counted, 0.01)  # instruction counts: always the t
    assert not uses_t(CaseInput([[1.0]] * 2, [[1.0]] * 2, test="rank"), 0.01)


@pytest.mark.parametrize("n", [2, 3, 4])
def test_the_interval_covers_the_true_ratio_at_its_level(n):
    """Normal per-process noise: the 99% interval of 4000 comparisons covers the true ratio 1.05 in 99% of them
    (binomial sd 0.16%: the bound leaves 3 sd)."""
    rng = np.random.default_rng(100 + n)
    covered = 0
    for _ in range(4000):
        base = [[float(v)] for v in np.exp(rng.normal(0, 0.03, n))]
        cont = [[float(v)] for v in 1.05 * np.exp(rng.normal(0, 0.03, n))]
        c = compare_case(base, cont)
        covered += c.ci_low <= 1.05 <= c.ci_high
    assert covered / 4000 >= 0.985


def _two_speed(rng: np.random.Generator, n: int) -> list[list[float]]:
    """Processes of a 200 ms case on the VM: iterations 4%, processes 3%, and the slow CPU state (x1.5) for a whole
    process with probability 0.3 or from half-way with probability 0.1."""
    procs = []
    for _ in range(n):
        proc = 0.2 * np.exp(rng.normal(0, 0.03) + rng.normal(0, 0.04, 5))
        state = rng.random()
        if state < 0.3:
            proc *= 1.5
        elif state < 0.4:
            proc[2:] *= 1.5
        procs.append([float(v) for v in proc])
    return procs


@pytest.mark.parametrize("n", [2, 3, pytest.param(4, marks=pytest.mark.slow), pytest.param(6, marks=pytest.mark.slow),
                               pytest.param(9, marks=pytest.mark.slow)])
def test_a_vs_a_on_the_two_speed_cpu_cries_wolf_no_more_than_alpha(n):
    """Speed states drawn independently for every process, the harsher case (a block's two processes, run back to
    back, often share one): the paired t with wall time's floor, up to the rank test's reach (9 blocks here). The
    rate over 4000 trials must be consistent with alpha = 1%: at most 2 binomial sd above it (0.8-0.9% measured
    over 8000 trials at n = 3-9)."""
    rng = np.random.default_rng(200 + n)
    wrong = 0
    trials = 4000
    for _ in range(trials):
        c = compare_case(_two_speed(rng, n), _two_speed(rng, n), baseline_blocks=list(range(n)),
                         contender_blocks=list(range(n)))
        assert c.test == "paired-t"
        wrong += c.verdict in (Verdict.REGRESSION, Verdict.IMPROVEMENT)
    assert wrong / trials <= 0.01 + 2 * math.sqrt(0.01 * 0.99 / trials)


@pytest.mark.parametrize("n", [2, 3, 4])
def test_two_point_instruction_counts_cry_wolf_no_more_than_alpha(n):
    """Each process counts one of two totals 0.3% apart (a layout luck): the worst case for a t with 1-6 df. The
    noise floor (0.1%) keeps false regressions away at the 0.25% threshold."""
    rng = np.random.default_rng(300 + n)
    wrong = 0
    for _ in range(2000):
        base = [[263e6 * (1.003 if rng.random() < 0.5 else 1.0)] * 3 for _ in range(n)]
        cont = [[263e6 * (1.003 if rng.random() < 0.5 else 1.0)] * 3 for _ in range(n)]
        wrong += compare_case(base, cont, metric="instructions").verdict in (Verdict.REGRESSION, Verdict.IMPROVEMENT)
    assert wrong / 2000 <= 0.01


def test_two_percent_more_instructions_is_decided_with_two_processes_a_side():
    rng = np.random.default_rng(5)
    decided = 0
    for _ in range(500):
        base = [[float(v)] * 3 for v in 263e6 * np.exp(rng.normal(0, 0.0005, 2))]
        cont = [[float(v)] * 3 for v in 1.02 * 263e6 * np.exp(rng.normal(0, 0.0005, 2))]
        decided += compare_case(base, cont, metric="instructions").verdict == Verdict.REGRESSION
    assert decided / 500 >= 0.95


def test_thirty_percent_slower_is_decided_with_four_processes_a_side_at_this_vms_calm_noise():
    """Per-process spread 4% and iterations 4% (this VM outside its slow phases: 3.3% measured, docs/gating.md):
    +30% with 4 processes a side, nine times in ten (the floor of 5% a process holds the rest back)."""
    rng = np.random.default_rng(6)
    decided = 0
    for _ in range(500):
        base = [[float(v)] * 5 for v in 0.2 * np.exp(rng.normal(0, 0.04, 4))]
        cont = [[float(v)] * 5 for v in 0.26 * np.exp(rng.normal(0, 0.04, 4))]
        case = CaseInput(base, cont, baseline_blocks=[0, 1, 2, 3], contender_blocks=[0, 1, 2, 3])
        decided += compare_suite({"c": case})[0].verdict == Verdict.REGRESSION
    assert decided / 500 >= 0.9
