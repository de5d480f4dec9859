""""No change" for a case never counted here, on the spreads of the other cases counted on this machine (#46, point 3:
`analysis/machine_noise.py`). Seeded, no processes: deterministic, about a second."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps

from colbench.analysis.comparison import machine_spread
from colbench.analysis.machine_noise import MIN_CASES, MachineSpread
from colbench.analysis.sequential import FIRST_LOOK_FRACTION
from colbench.analysis.t_tests import NoisePrior, pooled_t
from colbench.analysis.verdicts import Verdict, compare_case
from colbench.model.run_parts import CaseLook
from tests.analysis.test_calibrated_no_change import _counts, _until_decided

#: the between-process spreads (sigma, df) of the cases counted on the 2-core VM on 28 Nov 2026 (the 10k-row CSV,
#: Parquet, Feather reads, to_pandas, the placebo, a 100k-row Parquet read, the first walk's cases: docs/metrics.md)
VM_CASES = [(0.003371, 16), (0.000846, 16), (0.002813, 16), (0.000845, 16), (0.000668, 16), (0.005359, 13),
            (0.002208, 14), (0.001459, 2), (0.000367, 14)]
FIRST_ALPHA = 0.01 * math.log(1 + (math.e - 1) * FIRST_LOOK_FRACTION)


def _machine(cases: list[tuple[float, int]] = VM_CASES) -> MachineSpread:
    machine = MachineSpread.of((sigma ** 2, df) for sigma, df in cases)
    assert machine is not None
    return machine


def test_a_quiet_case_never_counted_here_is_no_change_at_three_processes_a_side_on_the_machines_spreads():
    rng = np.random.default_rng(46)
    base, cont = _counts(rng, 3, 0.00002), _counts(rng, 3, 0.00002)  # the watch probe: 0.002% between processes
    alone = compare_case(base, cont, metric="instructions", alpha=FIRST_ALPHA)
    assert alone.verdict == Verdict.INCONCLUSIVE and alone.ci_high > 1.0025
    judged = compare_case(base, cont, metric="instructions", alpha=FIRST_ALPHA, machine=_machine())
    assert judged.verdict == Verdict.NO_CHANGE and judged.machine_calibrated and not judged.calibrated
    assert "on this machine's spreads of counts: 9 cases counted here, 0.049%-0.728%" in judged.reason
    assert judged.to_dict()["machine_calibrated"] is True


def test_each_case_counts_at_its_upper_bound_and_too_few_cases_lend_nothing():
    machine = _machine()
    # 0.0367% on 14 df: at its upper 90% bound 0.049%; 0.146% on 2 df: 0.449%
    assert min(machine.sigmas) == pytest.approx(0.000492, rel=0.01) and 0.0044 < machine.sigmas[7] < 0.0046
    assert MachineSpread.of([(1e-6, 16)] * (MIN_CASES - 1)) is None
    assert MachineSpread.of([(1e-6, 16), (1e-6, 16), (1e-6, 1), (0.0, 16)]) is None  # 1 df, zero spread: not counted


def test_regressions_and_their_p_value_are_what_they_were_without_the_machine():
    x, y = np.log([1.0, 1.0001, 1.00005]), np.log([1.003, 1.0031, 1.0030])
    before = pooled_t(x, y, floor=0.001)
    now = pooled_t(x, y, floor=0.001, machine=_machine())
    assert (now.se, now.p_value, now.interval(0.01), now.df) == (before.se, before.p_value, before.interval(0.01),
                                                                  before.df)
    low, high = now.equivalence_interval(0.01)
    assert before.interval(0.01)[0] <= low and high <= before.interval(0.01)[1]  # never wider than the floor's
    # a +0.3% change: never "no change"
    c = compare_case([[1.0], [1.0001], [1.00005]], [[1.003], [1.0031], [1.0030]], metric="instructions",
                     machine=_machine())
    assert c.verdict != Verdict.NO_CHANGE


def test_never_narrower_than_these_processes_own_spread():
    """Processes that vary by 0.3% (within the machine's range: not set aside) are judged on at least that spread."""
    x, y = np.log([1.0, 1.003, 0.998, 1.002]), np.log([1.001, 0.997, 1.003, 1.0])
    shift = pooled_t(x, y, floor=0.001, machine=_machine())
    assert shift.machine is not None and not shift.machine_set_aside
    own = math.sqrt((((x - x.mean()) ** 2).sum() + ((y - y.mean()) ** 2).sum()) / 6) * math.sqrt(0.5)
    assert min(shift.machine.ses) >= own * (1 - 1e-12)
    low, high = shift.equivalence_interval(0.002)  # and never narrower than their own t-interval (6 df, no floor)
    assert (high - low) / 2 >= float(sps.t.isf(0.001, 6)) * own * (1 - 1e-12)


def test_the_guard_sets_the_machines_spreads_aside_for_a_case_noisier_than_any_counted_here():
    quiet = _machine([(0.0002, 16), (0.0003, 16), (0.0005, 16)])
    noisy = compare_case([[1.0], [1.02], [0.99]], [[1.01], [0.985], [1.0]], metric="instructions", machine=quiet)
    assert noisy.machine_set_aside and not noisy.machine_calibrated and noisy.verdict == Verdict.INCONCLUSIVE
    assert "more than any case counted on this machine: judged on their own spread" in noisy.reason


def test_a_case_with_its_own_calibration_is_judged_on_it_not_on_the_machine():
    x, y = np.log([1.0, 1.0001]), np.log([1.00005, 1.0])
    shift = pooled_t(x, y, floor=0.001, prior=NoisePrior(0.0002 ** 2, 14, 2), machine=_machine())
    assert shift.calibrated and shift.machine is None


def test_the_machine_of_a_case_is_every_other_case_counted_here():
    priors = {f"c{i}": NoisePrior(s ** 2, df, 2) for i, (s, df) in enumerate(VM_CASES)}
    of_c0 = machine_spread(priors, "c0")
    assert of_c0 is not None and len(of_c0.sigmas) == len(VM_CASES) - 1
    assert machine_spread({"c0": priors["c0"], "c1": priors["c1"], "c2": priors["c2"]}, "c0") is None


def test_the_looks_record_keeps_the_machines_spreads_and_old_records_read_without():
    machine = _machine()
    look = CaseLook(3, 0.0015, None, tuple(zip(machine.sigmas, machine.dfs, strict=True)))
    assert CaseLook.from_json(look.to_json()) == look
    assert CaseLook.from_json({"blocks": 8, "alpha": 0.004}).machine is None


def test_an_unchanged_release_never_counted_here_is_no_change_within_four_processes_a_side():
    """The looks of a watch (an hour's budget) over the real VM's spreads: the watch probe (0.002% between processes)
    is "no change" at 3 processes a side without a calibration of its own, where the fixed floor took 8; a 0.05% case
    (to_pandas) by 5 in 90% of the tries in `run --until-decided`'s budget (the looks are 2, 3, 5, 8 a side: at 3 a
    side the data cannot yet rule out this machine's 0.1% cases at the look's alpha); a +2.5% step decided as it
    was without the machine's spreads (at 2-3 a side: the fixed floor on 2 degrees of freedom)."""
    rng = np.random.default_rng(4646)
    probe = [_until_decided(rng, 0.00002, None, machine=_machine()) for _ in range(40)]
    assert all(verdict == Verdict.NO_CHANGE and n <= 4 for verdict, n in probe)
    before = [_until_decided(rng, 0.00002, None) for _ in range(10)]
    assert all(verdict == Verdict.NO_CHANGE and n == 8 for verdict, n in before)
    quiet = [_until_decided(rng, 0.0005, None, budget_blocks=8.0, machine=_machine()) for _ in range(40)]
    assert all(verdict == Verdict.NO_CHANGE for verdict, _ in quiet) and sum(n <= 5 for _, n in quiet) >= 36
    # a +2.5% step: the regression test is the one it was (same draws, same looks, same verdicts with or without)
    step = [_until_decided(np.random.default_rng(i), 0.0005, None, ratio=1.025, machine=_machine()) for i in range(20)]
    assert step == [_until_decided(np.random.default_rng(i), 0.0005, None, ratio=1.025) for i in range(20)]
    assert all(verdict == Verdict.REGRESSION and n <= 3 for verdict, n in step)


def _counted(run: str, case: str, index: int, value: float, env: str = "default"):
    from tests.records import make_result

    return make_result(result_id=f"{run}-{case}-{env}-{index}", run_id=run, case_id=case, benchmark=case,
                       env_name=env, process_index=index, block=index, iterations=1,
                       samples={"instructions": [value]}, summary={"instructions": {"median": value, "n": 1}},
                       measure={"metrics": ["instructions"]})


def test_compare_judges_a_case_never_counted_on_the_other_cases_of_its_machine_and_replays_it():
    """Through `compare_sides`: the store's history of three other cases (0.03-0.06% between processes) lends their
    spreads to a case it never saw; the run's record of the look keeps them, so the replay gives the same verdict."""
    from colbench.analysis.comparison import CompareSettings, compare_sides
    from colbench.model.records import Side
    from colbench.model.run_parts import CASE_KEY_SEPARATOR, SequentialLooks
    from colbench.model.summary import summary_of

    rng = np.random.default_rng(43)
    history = [summary_of(_counted(f"old{case}", f"other{case}", i, 1e7 * math.exp(rng.normal(0, sd))))
               for case, sd in enumerate((0.0003, 0.0005, 0.0006)) for i in range(8)]
    a = Side("a", "r", "a", [_counted("r", "new", i, 2044670.0 + i, "a") for i in range(3)])
    b = Side("b", "r", "b", [_counted("r", "new", i, 2044668.0 + i, "b") for i in range(3)])
    settings = CompareSettings(metrics=("instructions",))
    alone = compare_sides(a, b, settings).cases[0]
    (judged,) = compare_sides(a, b, settings, history=history).cases
    assert alone.verdict == Verdict.INCONCLUSIVE and not alone.machine_calibrated
    assert judged.verdict == Verdict.NO_CHANGE and judged.machine_calibrated and "3 cases counted here" in judged.reason
    # the run's record of its look, as runner/session.py writes it: compare replays the same verdict without history
    machine = machine_spread({f"other{c}": NoisePrior(sd ** 2, 7, 1) for c, sd in enumerate((0.0003, 0.0005, 0.0006))},
                             "new")
    assert machine is not None
    look = CaseLook(3, judged.alpha, None, tuple(zip(machine.sigmas, machine.dfs, strict=True)))
    record = SequentialLooks(baseline="a", metric="instructions", alpha=0.01, threshold=None, floor=0.0,
                             family_size=1, spending="pocock", basis="auto")
    record.cases = {f"b{CASE_KEY_SEPARATOR}{str(judged.key).removesuffix(' [instructions]')}": look}
    (replayed,) = compare_sides(a, b, settings, sequential=record).cases
    assert replayed.machine_calibrated and replayed.verdict == Verdict.NO_CHANGE
