import numpy as np
import pytest

from colbench.analysis.sequential import SequentialCompare, look_alphas, plan_next_look
from colbench.analysis.simulation import NoiseModel, SimulatedCase, simulate_until_decided
from colbench.analysis.verdicts import CaseInput, Verdict

from .simulate import processes


@pytest.mark.parametrize("spending", ["uniform", "pocock", "obrien-fleming"])
def test_look_alphas_sum_to_alpha(spending):
    alphas = look_alphas(0.01, 4, spending)
    assert len(alphas) == 4 and all(a >= 0 for a in alphas)
    assert sum(alphas) == pytest.approx(0.01)


def test_spending_shapes():
    assert look_alphas(0.01, 4, "uniform") == pytest.approx([0.0025] * 4)
    pocock = look_alphas(0.01, 4, "pocock")
    assert pocock == sorted(pocock, reverse=True)  # front-loaded
    obf = look_alphas(0.01, 4, "obrien-fleming")
    assert obf == sorted(obf) and obf[0] < 1e-5  # saved for the end
    assert look_alphas(0.05, 1) == [0.05]
    with pytest.raises(ValueError):
        look_alphas(0.01, 0)
    with pytest.raises(ValueError):
        look_alphas(0.01, 3, "linear")  # type: ignore[arg-type]


def test_looks_decide_pending_cases_and_keep_final_verdicts():
    rng = np.random.default_rng(30)
    pools = {
        "clear": (processes(rng, 40), processes(rng, 40, ratio=1.2)),
        "same": (processes(rng, 40), processes(rng, 40)),
        "slower": (processes(rng, 40), processes(rng, 40, ratio=1.07)),
    }

    def take(n_by_key):
        return {k: CaseInput(b[:n], c[:n]) for k, (b, c) in pools.items() if (n := n_by_key.get(k))}

    seq = SequentialCompare(alpha=0.01, threshold=0.03, max_looks=3)
    first = seq.look(take({"clear": 8, "same": 4, "slower": 4}))
    assert first["clear"].verdict == Verdict.REGRESSION
    assert set(seq.pending) == {"same", "slower"}
    assert seq.family_size == 3
    decided = first["clear"]
    # Data for an already decided case is ignored: its verdict is final.
    second = seq.look(take({"clear": 40, "same": 30, "slower": 30}))
    assert second["clear"] is decided
    assert second["same"].verdict == Verdict.NO_CHANGE
    assert second["slower"].verdict == Verdict.REGRESSION
    assert second["same"].alpha == pytest.approx(seq.alphas[1])
    assert not seq.pending and not seq.exhausted
    with pytest.raises(ValueError, match="not in the family"):
        seq.look({"new": CaseInput(*pools["same"])})
    seq.look({})
    assert seq.exhausted
    with pytest.raises(RuntimeError):
        seq.look({})


def test_adaptive_looks_keep_the_error_rate_at_the_boundary():
    """Cases changed by exactly the threshold, 4 looks adding 4 processes each: a no-change (or improvement)
    verdict is wrong; the family-wise rate over all looks stays near alpha."""
    rng = np.random.default_rng(31)
    suites, wrong = 40, 0
    for _ in range(suites):
        pools = {i: (processes(rng, 20), processes(rng, 20, ratio=1.03)) for i in range(10)}
        seq = SequentialCompare(max_looks=4)
        n = 8
        while True:
            results = seq.look({k: CaseInput(b[:n], c[:n]) for k, (b, c) in pools.items()})
            if not seq.pending or seq.exhausted:
                break
            n += 4
        wrong += any(r.verdict in (Verdict.IMPROVEMENT, Verdict.NO_CHANGE) for r in results.values())
    assert wrong / suites <= 0.05


def test_budget_fractions_spend_alpha_once():
    seq = SequentialCompare(alpha=0.01, max_looks=None)
    rng = np.random.default_rng(32)
    cases = {"a": CaseInput(processes(rng, 12, between=0.2), processes(rng, 12, between=0.2))}
    seq.look(cases, fraction=0.1)
    seq.look(cases, fraction=0.4)
    assert seq.pending and not seq.exhausted
    with pytest.raises(ValueError, match="must grow"):
        seq.look(cases, fraction=0.3)
    seq.look(cases, fraction=1.0)
    assert seq.exhausted and seq.alpha_spent == pytest.approx(0.01)
    assert seq.spent_alphas[0] == pytest.approx(0.01 * np.log(1 + (np.e - 1) * 0.1))  # Pocock-type
    with pytest.raises(RuntimeError):
        seq.look(cases, fraction=1.0)
    with pytest.raises(ValueError, match="budget fraction"):
        SequentialCompare(max_looks=None).look(cases)
    # a cap on looks makes the last allowed look spend what is left, whatever fraction it was given
    capped = SequentialCompare(alpha=0.01, max_looks=2)
    capped.look(cases, fraction=0.1)
    capped.look(cases, fraction=0.2)
    assert capped.exhausted and capped.alpha_spent == pytest.approx(0.01)


def test_next_look_grows_and_the_last_one_takes_what_is_left():
    plan = plan_next_look(elapsed_s=60, budget_s=600, seconds_per_block=4.0, blocks_so_far=12)
    assert plan is not None and plan.blocks == 6 and not plan.final
    assert plan.fraction == pytest.approx((60 + 24) / 600)
    # 100 s left, 4 s a block: 25 blocks affordable; a step of 20 would leave 5, less than the next step
    last = plan_next_look(elapsed_s=500, budget_s=600, seconds_per_block=4.0, blocks_so_far=40)
    assert last is not None and last.final and last.blocks == 25 and last.fraction == 1.0
    assert plan_next_look(elapsed_s=590, budget_s=600, seconds_per_block=4.0, blocks_so_far=40) is None
    assert plan_next_look(elapsed_s=0, budget_s=600, seconds_per_block=0.0, blocks_so_far=12) is None


def test_until_decided_keeps_false_positives_rare_and_catches_five_percent():
    """The whole procedure (budgeted looks, alpha spending, the verdict rule) on seeded simulated noise like
    this VM's (between-process 4.5%, iterations 3%, outliers and odd processes): A/A suites of 3 cases
    make no false claim, and a true +5% is caught within a 10-minute budget. scripts/simulate_verdicts.py
    runs the same with thousands of trials."""
    rng = np.random.default_rng(33)
    model = NoiseModel(between=0.045, within=0.03)
    false_claims = 0
    for _ in range(12):
        out = simulate_until_decided(rng, [SimulatedCase(model, 1.0, 3.6)] * 3, budget_s=1800)
        false_claims += sum(c.verdict in (Verdict.REGRESSION, Verdict.IMPROVEMENT) for c in out.comparisons)
        assert out.seconds <= 1800
    assert false_claims == 0
    caught = 0
    for _ in range(12):
        out = simulate_until_decided(rng, [SimulatedCase(model, 1.05, 3.6)], budget_s=600)
        caught += out.comparisons[0].verdict == Verdict.REGRESSION
        assert out.seconds <= 600
    assert caught >= 11
