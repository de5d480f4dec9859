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
from dataclasses import dataclass
from typing import Generic, Literal, TypeVar

from colbench.analysis.scipy_stats import stats as sps
from colbench.analysis.verdicts import CaseComparison, CaseInput, CaseTuple, Method, Verdict, compare_suite

Spending = Literal["uniform", "pocock", "obrien-fleming"]

#: Budget fraction the first look may spend on: fixed in advance, as its length is not known yet.
FIRST_LOOK_FRACTION = 0.1


def _spent(alpha: float, t: float, spending: Spending) -> float:
    if t >= 1.0:
        return alpha
    if t <= 0.0:
        return 0.0
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


@dataclass(frozen=True)
class LookPlan:
    """The next look: how many blocks to add to each pending case, and its budget fraction."""

    blocks: int
    fraction: float
    final: bool
    seconds: float


def plan_next_look(
    *,
    elapsed_s: float,
    budget_s: float,
    seconds_per_block: float,
    blocks_so_far: int,
    growth: float = 0.5,
    min_step: int = 4,
) -> LookPlan | None:
    """Size the next look from the time left; None when not even `min_step` more blocks fit.

    `seconds_per_block`: what one more block of every pending case together is expected to take (from
    the looks so far). The step grows with the blocks already run (`growth` 0.5: 12, 18, 27, 40, ...),
    so the number of looks, and with it the alpha lost to them, grows only logarithmically. When what
    would be left after this look could not pay for a full next step, this look takes it all and is the
    last (fraction 1).
    """
    if budget_s <= 0 or seconds_per_block <= 0:
        return None
    remaining = budget_s - elapsed_s
    affordable = int(remaining // seconds_per_block)
    if affordable < min_step:
        return None
    step = min(max(min_step, math.ceil(growth * blocks_so_far)), affordable)
    next_step = max(min_step, math.ceil(growth * (blocks_so_far + step)))
    final = affordable - step < next_step
    if final:
        step = affordable
    seconds = step * seconds_per_block
    fraction = 1.0 if final else min(1.0, (elapsed_s + seconds) / budget_s)
    return LookPlan(blocks=step, fraction=fraction, final=final, seconds=seconds)


K = TypeVar("K", bound=Hashable)


class SequentialCompare(Generic[K]):
    """Drives the looks of the adaptive mode.

    Two ways to split alpha over the looks:

    - a fixed number of looks (`max_looks`): look k gets `look_alphas(alpha, max_looks)[k]`;
    - a time budget: each look is given the fraction t of the budget it will have used when its data
      are in (`look(cases, fraction=t)`), and may spend spent(t) - spent(t_previous); the look given
      t = 1 is the last and spends what is left. The runner must fix t *before* it runs that look's
      blocks (from the time the earlier looks took), so the split never depends on the data it judges.

    Usage by the runner::

        seq = SequentialCompare(alpha=0.01, threshold=None)
        results = seq.look(cases, fraction=0.2)     # look 1, fixes the family
        while seq.pending and not seq.exhausted:
            plan the next look, t = its share of the budget (1.0 when no further look would fit)
            run more blocks for seq.pending, rebuild their CaseInputs with all samples so far
            results = seq.look(cases, fraction=t)   # only pending keys are re-tested

    `results` always holds one comparison per key: final verdicts from earlier looks, the latest
    comparison for the rest.
    """

    def __init__(
        self,
        *,
        alpha: float = 0.01,
        threshold: float | None = None,
        max_looks: int | None = 4,
        method: Method = "holm",
        spending: Spending = "pocock",
        paired: bool | None = None,
        floor: float = 0.0,
    ) -> None:
        if not 0 < alpha < 1:
            raise ValueError(f"alpha must be in (0, 1), got {alpha}")
        self.alpha = alpha
        self.threshold = threshold
        self.floor = floor
        self.max_looks = max_looks
        self.method: Method = method
        self.paired = paired
        self.spending: Spending = spending
        self.alphas = look_alphas(alpha, max_looks, spending) if max_looks else []
        self.spent_alphas: list[float] = []
        self.fraction = 0.0
        self.looks_done = 0
        self.family_size: int | None = None
        self.results: dict[K, CaseComparison] = {}

    @property
    def pending(self) -> list[K]:
        """Keys still inconclusive (more processes may decide them)."""
        return [k for k, c in self.results.items() if c.verdict == Verdict.INCONCLUSIVE]

    @property
    def exhausted(self) -> bool:
        if self.fraction >= 1.0:
            return True
        return self.max_looks is not None and self.looks_done >= self.max_looks

    @property
    def alpha_spent(self) -> float:
        return sum(self.spent_alphas)

    def _next_alpha(self, fraction: float | None) -> float:
        if fraction is None:
            if not self.max_looks:
                raise ValueError("without max_looks every look needs its budget fraction")
            alpha_k = self.alphas[self.looks_done]
            self.fraction = (self.looks_done + 1) / self.max_looks
            return alpha_k
        if not self.fraction <= fraction <= 1.0:
            raise ValueError(f"budget fraction must grow within [{self.fraction:g}, 1], got {fraction}")
        if self.max_looks is not None and self.looks_done + 1 >= self.max_looks:
            fraction = 1.0  # the last look allowed spends what is left
        alpha_k = _spent(self.alpha, fraction, self.spending) - _spent(self.alpha, self.fraction, self.spending)
        self.fraction = fraction
        return max(0.0, alpha_k)

    def look(self, cases: Mapping[K, CaseInput | CaseTuple], fraction: float | None = None) -> dict[K, CaseComparison]:
        """Take the next look; on the first one `cases` defines the family, later only pending keys count.

        `fraction`: the share of the time budget used once this look's data are in, fixed before they
        were collected (1.0 = the last look). Without it, the fixed schedule of `max_looks` looks.
        """
        if self.exhausted:
            raise RuntimeError("all looks are used up")
        if self.family_size is None:
            todo = dict(cases)
            self.family_size = len(todo)
        else:
            unknown = set(cases) - set(self.results)
            if unknown:
                raise ValueError(f"cases not in the family of the first look: {sorted(map(str, unknown))}")
            pending = set(self.pending)
            todo = {k: v for k, v in cases.items() if k in pending}
        alpha_k = self._next_alpha(fraction)
        self.spent_alphas.append(alpha_k)
        self.looks_done += 1
        if todo:
            compared = compare_suite(
                todo,
                threshold=self.threshold,
                alpha=min(max(alpha_k, 1e-12), 0.5),
                method=self.method,
                paired=self.paired,
                family_size=self.family_size,
                floor=self.floor,
            )
            for key, c in zip(todo, compared, strict=True):  # compare_suite keeps the order of its input
                self.results[key] = c
        return dict(self.results)
