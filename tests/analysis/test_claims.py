"""Claim verdicts from result documents: holds, does not hold, inconclusive, not measured, and their conditions."""

from __future__ import annotations

import numpy as np
import pytest

from colbench.analysis.claims import ClaimStatus, evaluate_claims
from colbench.model.claims import Claim, ClaimCase, LeastGainClaim
from colbench.model.records import Result
from colbench.model.run_parts import MachineBandwidth
from tests.records import make_result, make_run


def result(reader: str, median: float, *, process: int, threads: int = 2, rows: int = 1000, cv: float = 0.02,
           run_id: str = "run", seed: int = 0, file_size: int | None = None, status: str = "ok") -> Result:
    rng = np.random.default_rng(seed * 1000 + process)
    samples = list(median * np.exp(rng.normal(0, cv, size=5)))
    return make_result(status=status, benchmark="csv-read", run_id=run_id, engine=reader,
                       params={"reader": reader, "rows": rows, "threads": threads},
                       samples={"wall_s": samples}, first_iteration={"wall_s": samples[0] * 2},
                       output={"file_size_bytes": file_size}, versions={reader: "1.0", "python": "3.11"})


def side(reader: str) -> ClaimCase:
    return ClaimCase("csv-read", {"reader": reader})


CLAIM = Claim("fast-beats-slow", "e1", "fast beats slow", side("fast"), side("slow"), published=3.0)


def measured(fast: float, slow: float, processes: int = 8, **kw) -> list[Result]:
    return [result("fast", fast, process=p, **kw) for p in range(processes)] + \
        [result("slow", slow, process=p, **kw) for p in range(processes)]


def test_a_clear_advantage_holds_and_its_swap_does_not():
    results = measured(1.0, 3.0)
    held, swapped = evaluate_claims([CLAIM, CLAIM.swapped()], results)
    assert held.status == ClaimStatus.HOLDS
    assert held.ratio == pytest.approx(3.0, rel=0.05)
    assert held.ci_low > 1.0 and held.ci_high < 4.0
    assert held.published == 3.0 and held.conditions == {"rows": "1000", "threads": "2"}
    assert held.versions == {"fast": "1.0", "slow": "1.0"}
    assert swapped.status == ClaimStatus.DOES_NOT_HOLD
    assert swapped.ratio == pytest.approx(1 / 3.0, rel=0.05)
    assert swapped.published == pytest.approx(1 / 3.0)


def test_a_tie_is_inconclusive_for_a_claim_of_advantage():
    (tie,) = evaluate_claims([CLAIM], measured(1.0, 1.0, cv=0.05))
    assert tie.status == ClaimStatus.INCONCLUSIVE
    assert tie.ci_low < 1.0 < tie.ci_high


def test_a_bar_above_one_needs_the_whole_interval_beyond_it():
    much = Claim("much", "e1", "fast ≫ slow", side("fast"), side("slow"), at_least=10.0)
    (v,) = evaluate_claims([much], measured(1.0, 3.0))
    assert v.status == ClaimStatus.DOES_NOT_HOLD  # 3× is real, but not ≫ 10×
    (v,) = evaluate_claims([much], measured(1.0, 30.0))
    assert v.status == ClaimStatus.HOLDS


def test_a_band_claim_holds_inside_and_fails_outside():
    like = Claim("like", "e4", "comparable", side("fast"), side("slow"), at_least=0.5, at_most=2.0)
    assert evaluate_claims([like], measured(1.0, 1.2))[0].status == ClaimStatus.HOLDS
    assert evaluate_claims([like], measured(1.0, 5.0))[0].status == ClaimStatus.DOES_NOT_HOLD


def test_a_missing_side_is_named_not_guessed():
    results = [result("fast", 1.0, process=p) for p in range(4)]
    (v,) = evaluate_claims([CLAIM], results)
    assert v.status == ClaimStatus.NOT_MEASURED
    assert v.ratio is None and "slower side" in v.reason and "slow" in v.reason
    errors = [result("fast", 1.0, process=p, status="error") for p in range(4)] + results[:0]
    (v,) = evaluate_claims([CLAIM], errors + [result("slow", 2.0, process=p) for p in range(4)])
    assert v.status == ClaimStatus.NOT_MEASURED and "faster side" in v.reason


def test_sides_must_share_their_conditions():
    results = [result("fast", 1.0, process=p, rows=1000) for p in range(4)] + \
        [result("slow", 3.0, process=p, rows=2000) for p in range(4)]
    (v,) = evaluate_claims([CLAIM], results)
    assert v.status == ClaimStatus.NOT_MEASURED and "same conditions" in v.reason


def test_the_most_threads_are_evaluated_like_the_posts():
    results = measured(1.0, 3.0, threads=1) + measured(1.0, 0.5, threads=2)
    (v,) = evaluate_claims([CLAIM], results)
    assert v.conditions["threads"] == "2"
    assert v.status == ClaimStatus.DOES_NOT_HOLD


def test_too_few_processes_give_no_interval_and_say_so():
    """A claim compares two different cases, never interleaved in blocks: the rank test decides (docs/claims.md),
    and 2 processes a side can never reach its level."""
    (v,) = evaluate_claims([CLAIM], measured(1.0, 3.0, processes=2))
    assert v.status == ClaimStatus.INCONCLUSIVE
    assert v.ci_low is None and "too few samples" in v.reason


def test_deterministic_sizes_decide_with_few_processes():
    size = Claim("size", "e5", "small is smaller", ClaimCase("csv-read", {"reader": "fast"}, metric="file_size"),
                 ClaimCase("csv-read", {"reader": "slow"}, metric="file_size"))
    results = [result("fast", 1.0, process=p, file_size=100) for p in range(2)] + \
        [result("slow", 1.0, process=p, file_size=300) for p in range(2)]
    held, swapped = evaluate_claims([size, size.swapped()], results)
    assert held.status == ClaimStatus.HOLDS and held.ratio == pytest.approx(3.0)
    assert swapped.status == ClaimStatus.DOES_NOT_HOLD


def test_a_calibration_side_compares_with_the_runs_own_figure():
    scan = Claim("scan", "e3", "scan ≥ 80% of memcpy",
                 ClaimCase("ipc-bandwidth", {"access": "scan"}, metric="gbps"),
                 ClaimCase("ipc-bandwidth", {}, metric="gbps", calibration="memcpy_gbps"), at_least=0.8)
    rng = np.random.default_rng(1)
    results = [make_result(status="ok", benchmark="ipc-bandwidth", run_id="run", engine="pyarrow",
                           params={"access": "scan", "threads": 1}, versions={},
                           samples={"gbps": list(45 * np.exp(rng.normal(0, 0.02, 5)))}) for _ in range(6)]
    runs = {"run": make_run(calibration={"memcpy_gbps": {"1": 50.0}})}
    (v,) = evaluate_claims([scan], results, runs)
    assert v.ratio == pytest.approx(0.9, rel=0.03)
    assert v.status == ClaimStatus.HOLDS
    runs["run"].calibration = MachineBandwidth(memcpy_gbps={"1": 100.0})
    assert evaluate_claims([scan], results, runs)[0].status == ClaimStatus.DOES_NOT_HOLD


def test_least_gain_compares_the_ratios_of_other_claims():
    def claim(key: str, slow: str) -> Claim:
        return Claim(key, "e2", key, side("fast"), side(slow), published=2.0)

    claims = [claim("a", "slow_a"), claim("b", "slow_b"), claim("least", "slow_least")]
    results = [result("fast", 1.0, process=p) for p in range(8)]
    for reader, median in (("slow_a", 10.0), ("slow_b", 8.0), ("slow_least", 3.0)):
        results += [result(reader, median, process=p, seed=len(reader)) for p in range(8)]
    compound = LeastGainClaim("gains-least", "e2", "least gains least", "least", ("a", "b"))
    verdicts = evaluate_claims(claims, results, compound=[compound])
    least = verdicts[-1]
    assert least.key == "gains-least" and least.status == ClaimStatus.HOLDS
    assert least.ratio == pytest.approx(8.0 / 3.0, rel=0.1)
    wrong = LeastGainClaim("a-gains-least", "e2", "a gains least", "a", ("b", "least"))
    assert evaluate_claims(claims, results, compound=[wrong])[-1].status == ClaimStatus.DOES_NOT_HOLD
