""""No change" decided as fast as a change (issue #46): a case's calibrated spread (earlier runs' noise prior, with
CALIBRATED_DF degrees of freedom or more) takes the place of the fixed floor in the equivalence test only; regressions
keep the floor; a release whose processes vary far more than the calibration is judged on its own spread (the guard);
a watch's long budget leaves every later look some alpha. Seeded: deterministic, under a few seconds."""

from __future__ import annotations

import math

import numpy as np
import pytest

from colbench.analysis.machine_noise import MachineSpread
from colbench.analysis.sequential import FIRST_LOOK_FRACTION, SequentialCompare, plan_next_look
from colbench.analysis.t_tests import CALIBRATED_DF, NoisePrior, pooled_t
from colbench.analysis.verdicts import CaseInput, Verdict, compare_case
from colbench.model.run_parts import CaseLook, NoisePriorRecord
from colbench.runner.session import look_fraction

#: what the first look of `run --until-decided` may spend at its fixed budget fraction (Pocock-type spending)
FIRST_ALPHA = 0.01 * math.log(1 + (math.e - 1) * FIRST_LOOK_FRACTION)


def _counts(rng: np.random.Generator, n: int, sigma: float, ratio: float = 1.0) -> list[list[float]]:
    return [[float(v)] * 3 for v in ratio * 2.044e6 * np.exp(rng.normal(0.0, sigma, n))]


def _calibration(sigma: float, df: int = 14, runs: int = 2) -> NoisePrior:
    return NoisePrior(sigma ** 2, df, runs)


def test_a_calibrated_spread_decides_no_change_at_two_processes_where_the_floor_cannot():
    """The watch probe's counts vary by ~0.02% between processes: at the first look's alpha the fixed 0.1% floor
    gives an interval of +/-0.4%, wider than the 0.25% band, whatever the data; the calibration gives +/-0.08%."""
    base = [[2044660.0] * 3, [2044700.0] * 3]
    cont = [[2044650.0] * 3, [2044690.0] * 3]
    alone = compare_case(base, cont, metric="instructions", alpha=FIRST_ALPHA)
    assert alone.verdict == Verdict.INCONCLUSIVE and alone.ci_high > 1.0025
    calibrated = compare_case(base, cont, metric="instructions", alpha=FIRST_ALPHA, prior=_calibration(0.0002))
    assert calibrated.verdict == Verdict.NO_CHANGE and calibrated.calibrated
    assert 0.999 < calibrated.ci_low <= 1.0 <= calibrated.ci_high < 1.001
    assert "calibrated spread, 0.020% over 2 earlier runs" in calibrated.reason


def test_regressions_and_their_p_value_keep_the_fixed_floor():
    x, y = np.log([1.0, 1.0001]), np.log([1.003, 1.0031])
    before = pooled_t(x, y, floor=0.001, prior=NoisePrior(0.0002 ** 2, 14, 2, calibrates=False))
    now = pooled_t(x, y, floor=0.001, prior=_calibration(0.0002))
    assert (now.se, now.p_value, now.interval(0.01), now.df) == (before.se, before.p_value, before.interval(0.01),
                                                                  before.df)
    assert now.calibrated and not before.calibrated
    low, high = now.equivalence_interval(0.01)
    assert high - low < (now.interval(0.01)[1] - now.interval(0.01)[0]) / 4
    # a +0.3% change: the floored interval decides, so it is "changed, size open", never "no change"
    c = compare_case([[1.0], [1.0001]], [[1.003], [1.0031]], metric="instructions", prior=_calibration(0.0002))
    assert c.verdict != Verdict.NO_CHANGE


def test_a_prior_becomes_a_calibration_at_calibrated_df_and_is_never_wider_than_the_floor():
    x, y = np.log([1.0, 1.0002]), np.log([1.0001, 1.0]),
    assert not pooled_t(x, y, floor=0.001, prior=_calibration(0.0002, df=CALIBRATED_DF - 1)).calibrated
    assert pooled_t(x, y, floor=0.001, prior=_calibration(0.0002, df=CALIBRATED_DF)).calibrated
    noisy = pooled_t(x, y, floor=0.001, prior=_calibration(0.003))  # a case noisier than the floor: the floor's se
    assert noisy.equivalence_se is not None and noisy.equivalence_se <= noisy.se


def test_the_guard_sets_the_calibration_aside_when_the_processes_vary_far_more_and_says_so():
    base, cont = [[1.0], [1.006]], [[1.003], [0.998]]  # ~0.4% between processes against a 0.02% calibration
    c = compare_case(base, cont, metric="instructions", prior=_calibration(0.0002, df=30, runs=6))
    assert c.prior_set_aside and not c.calibrated and c.prior_df == 0 and c.df == 2
    assert "far more than the case's earlier runs (0.020% over 6 runs): judged on their own spread" in c.reason
    agreeing = compare_case([[1.0], [1.0002]], [[1.0001], [1.0]], metric="instructions",
                            prior=_calibration(0.0002, df=30))
    assert not agreeing.prior_set_aside and agreeing.prior_df == 30


@pytest.mark.parametrize("n", [2, pytest.param(4, marks=pytest.mark.slow)])
def test_a_calibrated_a_vs_a_cries_wolf_no_more_than_alpha(n):
    """Counts at 0.05% between processes with their calibration (14 df), alpha 1%: false regressions or improvements
    in 1000 comparisons within alpha plus 2 binomial sd (scripts/counts_no_change.py runs the looks and more shapes)."""
    rng = np.random.default_rng(460 + n)
    wrong = sum(compare_case(_counts(rng, n, 0.0005), _counts(rng, n, 0.0005), metric="instructions",
                             prior=_calibration(0.0005)).verdict in (Verdict.REGRESSION, Verdict.IMPROVEMENT)
                for _ in range(1000))
    assert wrong / 1000 <= 0.01 + 2 * math.sqrt(0.01 * 0.99 / 1000)


def _until_decided(rng: np.random.Generator, sigma: float, prior: NoisePrior | None, ratio: float = 1.0,
                   budget_blocks: float = 120.0, least_share: float = FIRST_LOOK_FRACTION,
                   machine: MachineSpread | None = None) -> tuple[Verdict, int]:
    """A watch's comparison of one case: the looks of `run_until_decided` (2 processes a side, then 1, 2, 3 more)
    over a budget of `budget_blocks` blocks (an hour at 30 s a block), each later look spending `least_share`;
    `machine`: the spreads of the other cases counted on the machine (`machine_noise.py`)."""
    base, cont = _counts(rng, 2, sigma), _counts(rng, 2, sigma, ratio)
    seq: SequentialCompare[str] = SequentialCompare(alpha=0.01, max_looks=None, paired=True)

    def cases() -> dict[str, CaseInput]:
        blocks = list(range(len(base)))
        return {"c": CaseInput(base, cont, metric="instructions", prior=prior, baseline_blocks=blocks,
                               contender_blocks=blocks, machine=machine)}

    result = seq.look(cases(), fraction=FIRST_LOOK_FRACTION)["c"]
    elapsed = 2.0
    while seq.pending and not seq.exhausted:
        plan = plan_next_look(elapsed_s=elapsed, budget_s=budget_blocks, seconds_per_block=1.0,
                              blocks_so_far=len(base), growth=0.5, min_step=1)
        if plan is None:
            break
        base += _counts(rng, plan.blocks, sigma)
        cont += _counts(rng, plan.blocks, sigma, ratio)
        elapsed += plan.seconds
        result = seq.look(cases(), fraction=look_fraction(plan.fraction, seq.fraction, least_share))["c"]
    return result.verdict, len(base)


def test_an_unchanged_release_of_a_calibrated_case_is_no_change_within_four_processes_a_side():
    rng = np.random.default_rng(46)
    outcomes = [_until_decided(rng, 0.0005, _calibration(0.0005)) for _ in range(100)]
    assert all(verdict == Verdict.NO_CHANGE for verdict, _ in outcomes)
    assert sum(n <= 4 for _, n in outcomes) >= 90
    step = [_until_decided(rng, 0.0005, _calibration(0.0005), ratio=1.025) for _ in range(20)]
    assert all(verdict == Verdict.REGRESSION and n == 2 for verdict, n in step)


def test_a_long_budget_leaves_every_later_look_some_alpha():
    assert look_fraction(0.02, FIRST_LOOK_FRACTION) == FIRST_LOOK_FRACTION  # before: the dead zone
    share = look_fraction(0.02, FIRST_LOOK_FRACTION, FIRST_LOOK_FRACTION)
    assert share == pytest.approx(0.19) and look_fraction(0.5, 0.19, 0.1) == 0.5 and look_fraction(1.0, 0.9, 0.1) == 1
    rng = np.random.default_rng(47)
    dead = [_until_decided(rng, 0.0005, None, least_share=0.0)[1] for _ in range(10)]
    alive = [_until_decided(rng, 0.0005, None)[1] for _ in range(10)]
    assert min(dead) > max(alive)  # no calibration: the fixed floor, but alpha at every look


def test_the_looks_record_keeps_whether_the_prior_was_a_calibration_and_old_records_read_as_not():
    look = CaseLook(2, 0.0015, NoisePriorRecord(4e-8, 14, 2, calibrated=True))
    assert CaseLook.from_json(look.to_json()) == look and look.to_json()["prior"]["calibrated"] is True
    old = {"blocks": 8, "alpha": 0.004, "prior": {"variance": 0.001, "df": 10, "runs": 3}}
    assert CaseLook.from_json(old).prior == NoisePriorRecord(0.001, 10, 3, False)
    assert CaseLook.from_json(old).to_json() == old
