import numpy as np
import pytest

from colbench.analysis.compare import CaseInput, Verdict
from colbench.analysis.sequential import SequentialCompare, look_alphas

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
