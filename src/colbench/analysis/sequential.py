"""Repeated looks for `colbench run --until-decided` without losing control of the error rate.

Looking at the data after every new batch of processes and stopping as soon as a verdict appears is
the classic way to manufacture false positives: each look is another chance to be fooled. The fix
used here is the simplest one that is valid whatever the dependence between looks:

- Split alpha over at most K looks, alpha_1 + ... + alpha_K = alpha (`look_alphas`). By the union bound,
  the chance that *any* look produces a wrong verdict is at most the sum, alpha. The shape of the split
  only decides where the power goes: ``uniform`` (alpha/K each, Bonferroni over looks); ``pocock``
  (Lan–DeMets Pocock-type spending alpha*ln(1 + (e-1)t): front-loaded, so clear cases are decided at the
  first look); ``obrien-fleming`` (Lan–DeMets O'Brien–Fleming-type spending: almost all alpha saved for
  the last look, best when early stopping is rare).
- Inside look k the whole suite stays the family: intervals are at level alpha_k / m with m the number
  of comparisons at the *first* look, even though only the undecided cases are re-tested
  (`compare_suite(..., family_size=m)`). Verdicts reached at an earlier look are final.

Together: P(any wrong verdict in the suite over all looks) <= sum_k m * alpha_k / m = alpha (with Holm
or Bonferroni; with BH the same split bounds the per-look FDR, a weaker statement).
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping
from typing import Literal

from scipy import stats as sps

from colbench.analysis.compare import CaseComparison, CaseInput, Method, Verdict, compare_suite

Spending = Literal["uniform", "pocock", "obrien-fleming"]


def _spent(alpha: float, t: float, spending: Spending) -> float:
    if t >= 1.0:
        return alpha
    if spending == "uniform":
        return alpha * t
    if spending == "pocock":
        return alpha * math.log(1.0 + (math.e - 1.0) * t)
    if spending == "obrien-fleming":
        z = float(sps.norm.isf(alpha / 2))
        return float(2.0 * sps.norm.sf(z / math.sqrt(t)))
    raise ValueError(f"unknown spending {spending!r} (uniform, pocock, obrien-fleming)")


def look_alphas(alpha: float, max_looks: int, spending: Spending = "pocock") -> list[float]:
    """The alpha each of `max_looks` looks may use; they sum to `alpha` (looks at fractions k/K)."""
    if max_looks < 1:
        raise ValueError("max_looks must be >= 1")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    cumulative = [_spent(alpha, k / max_looks, spending) for k in range(1, max_looks + 1)]
    out = [cumulative[0]] + [b - a for a, b in zip(cumulative, cumulative[1:], strict=False)]
    return [max(0.0, a) for a in out]


class SequentialCompare:
    """Drives the looks of the adaptive mode.

    Usage by the runner::

        seq = SequentialCompare(alpha=0.01, threshold=0.03, max_looks=4)
        results = seq.look(cases)                  # look 1, fixes the family
        while seq.pending and not seq.exhausted:
            run more blocks for seq.pending, rebuild their CaseInputs with all samples so far
            results = seq.look(cases)              # only pending keys are re-tested

    `results` always holds one comparison per key: final verdicts from earlier looks, the latest
    comparison for the rest.
    """

    def __init__(
        self,
        *,
        alpha: float = 0.01,
        threshold: float = 0.03,
        max_looks: int = 4,
        method: Method = "holm",
        spending: Spending = "pocock",
        paired: bool | None = None,
    ) -> None:
        self.alpha = alpha
        self.threshold = threshold
        self.max_looks = max_looks
        self.method: Method = method
        self.paired = paired
        self.alphas = look_alphas(alpha, max_looks, spending)
        self.looks_done = 0
        self.family_size: int | None = None
        self.results: dict[Hashable, CaseComparison] = {}

    @property
    def pending(self) -> list[Hashable]:
        """Keys still inconclusive (more processes may decide them)."""
        return [k for k, c in self.results.items() if c.verdict == Verdict.INCONCLUSIVE]

    @property
    def exhausted(self) -> bool:
        return self.looks_done >= self.max_looks

    def look(self, cases: Mapping[Hashable, CaseInput | tuple]) -> dict[Hashable, CaseComparison]:
        """Take the next look; on the first one `cases` defines the family, later only pending keys count."""
        if self.exhausted:
            raise RuntimeError(f"all {self.max_looks} looks are used up")
        if self.family_size is None:
            todo = dict(cases)
            self.family_size = len(todo)
        else:
            unknown = set(cases) - set(self.results)
            if unknown:
                raise ValueError(f"cases not in the family of the first look: {sorted(map(str, unknown))}")
            pending = set(self.pending)
            todo = {k: v for k, v in cases.items() if k in pending}
        alpha_k = self.alphas[self.looks_done]
        self.looks_done += 1
        if todo:
            compared = compare_suite(
                todo,
                threshold=self.threshold,
                alpha=alpha_k,
                method=self.method,
                paired=self.paired,
                family_size=self.family_size,
            )
            for c in compared:
                self.results[c.key] = c
        return dict(self.results)
