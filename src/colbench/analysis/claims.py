"""Does a post's claim hold here? Each claim's ratio (slower / faster) measured with an interval, and a verdict.

- **Sides.** A claim's two sides are the successful results matching each side's benchmark and params. Every
  param neither side names is a condition (rows, threads, source …): the two sides must share it, and a claim is
  evaluated once per shared condition. Where several thread counts were measured, the most threads are used, as
  every post reported its biggest machine.
- **Estimate and interval: the statistics of `compare`** (colbench.analysis.verdicts): per-process values,
  Hodges–Lehmann ratio, exact rank interval, Holm-adjusted over one experiment's claims (each post is one
  family: 2–6 comparisons), at `alpha` (default 0.05: a claim verdict is a finding, not a CI gate). An exact
  unpaired rank interval at Holm's first level 1 - 0.05/m needs at least 5 processes a side for m <= 6 (3 a
  side can never go below a two-sided 0.1): the experiment suites run 6.
- **Verdict.** *holds* when the whole interval lies beyond the claim's bar (`at_least`, and below `at_most` for a
  claim of likeness); *does not hold* when the whole interval lies on the other side of the bar (or outside the
  band); *inconclusive* otherwise, or when compare gives no interval at this sample size. A side with no results
  is *not measured*, with the side named: never a guess.
- **Compound claims** ("`least` gains least") compare the log-ratios of two claims: the difference's interval
  combines the two intervals' half-widths in quadrature (normal approximation, documented as such).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum

from colbench.analysis.verdicts import CaseComparison, CaseInput, compare_suite
from colbench.engines import PYTHON_LIBRARIES
from colbench.model.claims import Claim, ClaimCase, LeastGainClaim
from colbench.model.metrics import metric
from colbench.model.params import ParamValue
from colbench.model.records import Json, Result, Run

#: the interval level's z for the quadrature of compound claims is read back from each interval's own level
DEFAULT_ALPHA = 0.05
#: the libraries whose versions a claim's sides name (beside the engine's own): the Python ones the engines drive,
#: numpy aside (every Python side loads it), and R's
LIBRARIES_NAMED = frozenset(name for name in PYTHON_LIBRARIES if name != "numpy") | {"data.table", "vroom", "readr",
                                                                                    "arrow"}


class ClaimStatus(StrEnum):
    HOLDS = "holds"
    DOES_NOT_HOLD = "does not hold"
    INCONCLUSIVE = "inconclusive"
    NOT_MEASURED = "not measured"


@dataclass
class ClaimVerdict:
    key: str
    experiment: str
    text: str
    status: ClaimStatus
    ratio: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    ci_level: float | None = None
    published: float | None = None
    at_least: float = 1.0
    at_most: float | None = None
    conditions: dict[str, str] = field(default_factory=dict)
    versions: dict[str, str] = field(default_factory=dict)
    processes: tuple[int, int] = (0, 0)
    reason: str = ""
    source: str = ""

    def to_dict(self) -> Json:
        return {"key": self.key, "experiment": self.experiment, "claim": self.text, "verdict": str(self.status),
                "ratio": self.ratio, "ci_low": self.ci_low, "ci_high": self.ci_high, "ci_level": self.ci_level,
                "published_ratio": self.published, "at_least": self.at_least, "at_most": self.at_most,
                "conditions": self.conditions, "versions": self.versions,
                "processes": list(self.processes), "reason": self.reason, "published_as": self.source}


# ------------------------------------------------------------------------------------------------ values


def _values(result: Result, name: str) -> list[float] | None:
    """One process's values of a claim metric (the registry's reading; None when the result has none)."""
    values = [v for v in metric(name).values(result) or [] if v > 0]
    return values or None


def _calibration(run: Run | None, name: str, threads: ParamValue) -> float | None:
    figures = run.calibration.figures(name) if run and run.calibration else {}
    value = figures.get(str(threads))
    return float(value) if value else None


def _condition(params: Mapping[str, ParamValue], named: set[str]) -> tuple[tuple[str, str], ...]:
    return tuple(sorted((k, str(v)) for k, v in params.items() if k not in named))


def _ok(results: Sequence[Result], case: ClaimCase) -> list[Result]:
    return [r for r in results if r.ok and case.matches(r.benchmark, r.params)]


@dataclass
class _Sides:
    claim: Claim
    condition: dict[str, str]
    faster: list[list[float]]
    slower: list[list[float]]
    versions: dict[str, str]


def _threads(condition: tuple[tuple[str, str], ...]) -> int:
    value = dict(condition).get("threads", "0")
    return int(value) if value.isascii() and value.isdigit() else 0


_Grouped = dict[tuple[tuple[str, str], ...], tuple[list[Result], list[Result]]]


def _sides(claim: Claim, results: Sequence[Result], runs: Mapping[str, Run]) -> list[_Sides] | str:
    """The measured sides of a claim, one per shared condition at the most threads; or why there are none."""
    by_condition = _by_condition(claim, results)
    if isinstance(by_condition, str):
        return by_condition
    shared = {c: sides for c, sides in by_condition.items() if sides[0] and sides[1]}
    if not shared:
        return "the two sides were measured, but never under the same conditions (rows, threads, …)"
    most = max(_threads(c) for c in shared)
    found = []
    for condition, (fast_results, slow_results) in sorted(shared.items()):
        if _threads(condition) != most:
            continue
        sides = _condition_sides(claim, condition, fast_results, slow_results, runs)
        if sides is not None:
            found.append(sides)
    return found or f"no values of {claim.faster.metric} on one side"


def _by_condition(claim: Claim, results: Sequence[Result]) -> _Grouped | str:
    """Each side's successful results by the condition they share (the params the claim does not name); a
    calibrated slower side is its faster side's results. Or why a side has none."""
    named = set(claim.faster.params) | set(claim.slower.params) | set(claim.ignore)
    faster = _ok(results, claim.faster)
    if not faster:
        return f"no successful results for the faster side ({claim.faster.benchmark} {claim.faster.params})"
    by_condition: _Grouped = defaultdict(lambda: ([], []))
    for r in faster:
        by_condition[_condition(r.params, named)][0].append(r)
    if claim.slower.calibration:
        for members, others in by_condition.values():
            others.extend(members)
    else:
        slower = _ok(results, claim.slower)
        if not slower:
            return f"no successful results for the slower side ({claim.slower.benchmark} {claim.slower.params})"
        for r in slower:
            by_condition[_condition(r.params, named)][1].append(r)
    return by_condition


def _condition_sides(claim: Claim, condition: tuple[tuple[str, str], ...], fast_results: list[Result],
                     slow_results: list[Result], runs: Mapping[str, Run]) -> _Sides | None:
    """The two sides' values under one condition (the slower one a machine constant when calibrated), or None
    when a side has none."""
    fast = [v for r in fast_results if (v := _values(r, claim.faster.metric))]
    if claim.slower.calibration:
        threads = dict(condition).get("threads", claim.faster.params.get("threads"))
        constant = _calibration(runs.get(fast_results[0].run_id), claim.slower.calibration, threads)
        slow = [[constant]] * max(2, len(fast)) if constant else []
    else:
        slow = [v for r in slow_results if (v := _values(r, claim.slower.metric))]
    versions = _versions(fast_results + ([] if claim.slower.calibration else slow_results))
    if fast and slow:
        return _Sides(claim, dict(condition), fast, slow, versions)
    return None


def _versions(results: list[Result]) -> dict[str, str]:
    """The versions of the libraries a claim is about, as these results loaded them."""
    versions: dict[str, str] = {}
    for r in results:
        engine = r.engine or ""
        for name, version in r.versions.items():
            if name == engine or name in LIBRARIES_NAMED:
                versions[name] = version
    return versions


# ------------------------------------------------------------------------------------------------ verdicts


def _finite(value: float) -> float | None:
    """A bound or ratio that exists: finite, and above 0 (exp(-inf) is how "no lower bound" comes back)."""
    return value if math.isfinite(value) and value > 0 else None


def _status(claim: Claim, c: CaseComparison) -> tuple[ClaimStatus, str]:
    low, high = c.ci_low, c.ci_high
    if not (math.isfinite(low) and math.isfinite(high)) or low <= 0:
        return ClaimStatus.INCONCLUSIVE, c.reason or "no interval at this sample size"
    top = claim.at_most if claim.at_most is not None else math.inf
    if claim.at_least < low and high < top:
        return ClaimStatus.HOLDS, "the whole interval clears the claim's bar"
    if high < claim.at_least or low > top:
        return ClaimStatus.DOES_NOT_HOLD, "the whole interval lies on the other side of the claim's bar"
    return ClaimStatus.INCONCLUSIVE, "the interval straddles the claim's bar: more processes would decide"


def _case_input(sides: _Sides) -> CaseInput:
    higher = metric(sides.claim.faster.metric).higher_is_better
    # ratio = contender / baseline = slower / faster, in "how much the faster side wins" terms
    baseline, contender = (sides.slower, sides.faster) if higher else (sides.faster, sides.slower)
    return CaseInput(baseline=baseline, contender=contender, direction="lower_is_better",
                     metric=sides.claim.faster.metric)


def evaluate_claims(claims: Sequence[Claim], results: Sequence[Result], runs: Mapping[str, Run] | None = None,
                    *, alpha: float = DEFAULT_ALPHA, compound: Sequence[LeastGainClaim] = ()) -> list[ClaimVerdict]:
    """Every claim over these results (one family for the multiplicity adjustment), in the order given."""
    runs = runs or {}
    measured: dict[tuple[str, int], _Sides] = {}
    verdicts: dict[str, list[ClaimVerdict]] = {}
    for claim in claims:
        found = _sides(claim, results, runs)
        if isinstance(found, str):
            verdicts[claim.key] = [ClaimVerdict(claim.key, claim.experiment, claim.text, ClaimStatus.NOT_MEASURED,
                                                published=claim.published, at_least=claim.at_least,
                                                at_most=claim.at_most, reason=found, source=claim.source)]
            continue
        for index, sides in enumerate(found):
            measured[(claim.key, index)] = sides
    # One family per experiment: a reader asks whether *this post* holds up, so Holm adjusts over the post's
    # claims (5-6 of them), not over every claim of every post evaluated together.
    families: dict[str, list[tuple[str, int]]] = defaultdict(list)
    for measured_key, sides in measured.items():
        families[sides.claim.experiment].append(measured_key)
    comparison_of: dict[tuple[str, int], CaseComparison] = {}
    for keys in families.values():
        # a claim's verdict reads the interval against the claim's own bar; the threshold only names the band of
        # the comparison's own verdict, which claims do not show: each metric's default
        family = compare_suite({k: _case_input(measured[k]) for k in keys}, alpha=alpha)
        comparison_of.update(zip(keys, family, strict=True))
    for (key, index), sides in measured.items():
        comparison = comparison_of[(key, index)]
        claim = sides.claim
        status, reason = _status(claim, comparison)
        verdicts.setdefault(key, []).append(ClaimVerdict(
            key, claim.experiment, claim.text, status, _finite(comparison.ratio), _finite(comparison.ci_low),
            _finite(comparison.ci_high), comparison.ci_level, claim.published, claim.at_least, claim.at_most,
            sides.condition, sides.versions, (comparison.n_baseline, comparison.n_contender), reason,
            claim.source))
    out = [v for claim in claims for v in verdicts.get(claim.key, [])]
    by_key = {v.key: v for v in out}
    out.extend(_least_gain(c, by_key, claims) for c in compound)
    return out


def _half_width(v: ClaimVerdict) -> float | None:
    """The interval's half-width on the log scale, in units of its own standard error (normal approximation)."""
    if v.ci_low is None or v.ci_high is None or v.ci_level is None or v.ci_low <= 0:
        return None
    from scipy.stats import norm

    z = float(norm.ppf(0.5 + v.ci_level / 2))
    return (math.log(v.ci_high) - math.log(v.ci_low)) / 2 / z


def _least_gain(claim: LeastGainClaim, by_key: Mapping[str, ClaimVerdict], claims: Sequence[Claim]) -> ClaimVerdict:
    published = {c.key: c.published for c in claims}
    least = by_key.get(claim.least)
    others = [by_key.get(k) for k in claim.others]
    least_pub, others_pub = published.get(claim.least), [published.get(k) for k in claim.others]
    pub_ratio = None
    if least_pub and all(others_pub):
        pub_ratio = min(p for p in others_pub if p) / least_pub
    base = ClaimVerdict(claim.key, claim.experiment, claim.text, ClaimStatus.NOT_MEASURED, published=pub_ratio,
                        source=claim.source)
    if least is None or least.ratio is None or any(o is None or o.ratio is None for o in others):
        base.reason = "needs the measured ratios of " + ", ".join((claim.least, *claim.others))
        return base
    from scipy.stats import norm

    lows, highs, ratios = [], [], []
    for other in others:
        assert other is not None and other.ratio is not None
        se_a, se_b = _half_width(least), _half_width(other)
        if se_a is None or se_b is None:
            base.status, base.reason = ClaimStatus.INCONCLUSIVE, "a ratio without an interval"
            return base
        diff = math.log(other.ratio) - math.log(least.ratio)
        z = float(norm.ppf(1 - DEFAULT_ALPHA / (2 * len(others))))
        spread = z * math.hypot(se_a, se_b)
        ratios.append(math.exp(diff))
        lows.append(math.exp(diff - spread))
        highs.append(math.exp(diff + spread))
    i = min(range(len(ratios)), key=lambda k: ratios[k])
    base.ratio, base.ci_low, base.ci_high, base.ci_level = ratios[i], lows[i], highs[i], 1 - DEFAULT_ALPHA
    base.conditions = dict(least.conditions)
    if min(lows) > 1:
        base.status, base.reason = ClaimStatus.HOLDS, "every other gain is above it, beyond the intervals"
    elif any(h < 1 for h in highs):
        base.status, base.reason = ClaimStatus.DOES_NOT_HOLD, "another variant gains less, beyond the intervals"
    else:
        base.status, base.reason = ClaimStatus.INCONCLUSIVE, "the intervals overlap"
    return base
