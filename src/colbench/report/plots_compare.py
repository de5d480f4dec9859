"""A/B comparisons as the report and the dashboard show them: rows, the one adapter to the statistics, a plot.

Pages only ever see `CompareRow`s. `compare_cases` is the single place that calls
`colbench.analysis.compare` (per-process medians, Hodges–Lehmann ratio, multiplicity-adjusted interval,
verdict); a case whose samples the statistics cannot use carries the plain ratio of medians and the verdict
`NOT_COMPARED`, never a made-up interval.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, MaxNLocator

from colbench.analysis.aggregate import CaseSummary
from colbench.analysis.compare import CaseInput, compare_suite
from colbench.model.result import METRIC_SERIES
from colbench.render.figures import LIMIT_COLOR, new_figure, styled, title
from colbench.render.fmt import params_label, summary_median, varying_params

NOT_COMPARED = "not compared"
VERDICT_CLASSES = {"regression": "bad", "improvement": "good", "no change": "same", "inconclusive": "warn",
                   NOT_COMPARED: "dim"}
VERDICT_COLORS = {"regression": "#c0392b", "improvement": "#1e8449", "no change": "#7f8c8d",
                  "inconclusive": "#d68910", NOT_COMPARED: "#2e86c1"}
DEFAULT_THRESHOLD = 0.03
DEFAULT_ALPHA = 0.01
METRIC_THRESHOLDS = {"instructions": 0.01}  # as colbench.analysis.compare: counts repeat to ~0.05%
AXIS_LABELS = {"time": "time ratio contender / baseline (log scale; < 1 is faster)",
               "instructions": "instruction-count ratio contender / baseline (log scale; < 1 is fewer)"}


@dataclass(frozen=True)
class CompareRow:
    """One case compared: contender / baseline of a per-iteration metric, wall time or instructions (lower is
    better)."""

    benchmark: str
    case_id: str
    label: str
    baseline_median: float | None
    contender_median: float | None
    ratio: float | None
    ci_low: float | None
    ci_high: float | None
    verdict: str  # regression | improvement | no change | inconclusive | NOT_COMPARED
    reason: str = ""
    ci_level: float | None = None
    n: str = ""  # processes per side ("3/3") or pairs ("3 blocks")
    metric: str = "time"  # a key of colbench.model.result.METRIC_SERIES

    @property
    def css(self) -> str:
        return VERDICT_CLASSES.get(self.verdict, "")

    @property
    def change(self) -> float | None:
        return None if self.ratio is None else self.ratio - 1.0


def pair_cases(baseline: Sequence[CaseSummary], contender: Sequence[CaseSummary],
               ) -> list[tuple[CaseSummary, CaseSummary]]:
    """Cases present and ok on both sides, matched by case id, in the contender's order."""
    by_case = {s.case_id: s for s in baseline if s.ok}
    return [(by_case[c.case_id], c) for c in contender if c.ok and c.case_id in by_case]


def _processes(summary: CaseSummary, series: str = "wall_s") -> tuple[list[list[float]], list[int]]:
    samples, blocks = [], []
    for result in summary.results:
        values = [v for v in (result.get("samples") or {}).get(series) or [] if v is not None]
        if result.get("status") == "ok" and values:
            samples.append(values)
            blocks.append(int(result.get("block") or 0))
    return samples, blocks


def _usable(samples: list[list[float]]) -> bool:
    return bool(samples) and all(math.isfinite(v) and v > 0 for p in samples for v in p)


def _labels(pairs: Sequence[tuple[CaseSummary, CaseSummary]]) -> dict[str, str]:
    contenders = [c for _, c in pairs]
    varying = varying_params(contenders)
    return {c.case_id: f"{c.benchmark} {params_label(c, varying.get(c.benchmark, []))}" for c in contenders}


def _finite(value: float | None) -> float | None:
    return value if value is not None and math.isfinite(value) else None


def _fallback(b: CaseSummary, c: CaseSummary, label: str, metric: str = "time") -> CompareRow:
    base, cont = summary_median(b, metric), summary_median(c, metric)
    ratio = cont / base if base and cont else None
    return CompareRow(c.benchmark, c.case_id, label, base, cont, ratio, None, None, NOT_COMPARED,
                      "samples unusable for the statistics: ratio of the pooled medians only", None,
                      f"{b.processes}/{c.processes}", metric)


def metric_threshold(metric: str, threshold: float | None = None) -> float:
    return threshold if threshold is not None else METRIC_THRESHOLDS.get(metric, DEFAULT_THRESHOLD)


def compare_cases(pairs: Sequence[tuple[CaseSummary, CaseSummary]], *, paired: bool = False,
                  threshold: float | None = None, alpha: float = DEFAULT_ALPHA,
                  metric: str = "time") -> list[CompareRow]:
    """THE adapter from case pairs to `CompareRow`s, through `colbench.analysis.compare.compare_suite`.

    `paired=True` when both sides come from one run (environments interleaved in blocks): the comparison is
    then paired by block. The family for the multiplicity adjustment is every pair given. `metric` is "time"
    (wall seconds) or "instructions"; pairs where either side lacks it are left out.
    """
    series = METRIC_SERIES[metric]
    pairs = [(b, c) for b, c in pairs if summary_median(b, metric) and summary_median(c, metric)]
    threshold = metric_threshold(metric, threshold)
    labels = _labels(pairs)
    cases: dict[str, Any] = {}
    for b, c in pairs:
        (b_samples, b_blocks), (c_samples, c_blocks) = _processes(b, series), _processes(c, series)
        if _usable(b_samples) and _usable(c_samples):
            cases[c.case_id] = CaseInput(b_samples, c_samples, metric=metric,
                                         baseline_blocks=b_blocks if paired else None,
                                         contender_blocks=c_blocks if paired else None)
    try:
        found = {str(x.key): x for x in compare_suite(cases, threshold=threshold, alpha=alpha)}
    except ValueError:
        found = {}
    rows = []
    for b, c in pairs:
        x = found.get(c.case_id)
        if x is None:
            rows.append(_fallback(b, c, labels[c.case_id], metric))
            continue
        n = f"{x.n_blocks} blocks" if x.paired else f"{x.n_baseline}/{x.n_contender}"
        rows.append(CompareRow(c.benchmark, c.case_id, labels[c.case_id], _finite(x.baseline_median),
                               _finite(x.contender_median), _finite(x.ratio), _finite(x.ci_low), _finite(x.ci_high),
                               str(x.verdict), x.reason, x.ci_level, n, metric))
    return rows


def verdict_counts(rows: Sequence[CompareRow]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for row in rows:
        counts[row.verdict] = counts.get(row.verdict, 0) + 1
    return counts


@styled
def compare_figure(rows: Sequence[CompareRow], heading: str, threshold: float = DEFAULT_THRESHOLD) -> Figure | None:
    """Ratio contender / baseline per case on a log axis, its interval as a bar, coloured by verdict; the band
    of ±threshold around 1 shaded."""
    shown = [r for r in rows if r.ratio is not None]
    if not shown:
        return None
    fig, axes = new_figure(1, 1, width=7.5, panel_height=0.5 + 0.28 * len(shown))
    ax = axes[0][0]
    ax.axvspan(1 / (1 + threshold), 1 + threshold, color="#eeeeee", zorder=0, label=f"±{threshold:.0%} band")
    ax.axvline(1.0, color=LIMIT_COLOR, linewidth=1)
    seen: set[str] = set()
    for y, row in enumerate(shown):
        color = VERDICT_COLORS.get(row.verdict, "#333333")
        if row.ci_low is not None and row.ci_high is not None:
            ax.plot([row.ci_low, row.ci_high], [y, y], color=color, linewidth=2.2, solid_capstyle="butt")
        ax.plot([row.ratio], [y], marker="o", color=color, markersize=5,
                label=row.verdict if row.verdict not in seen else None)
        seen.add(row.verdict)
        ax.annotate(f"{row.ratio:.3f}", (row.ratio, y), xytext=(0, 5), textcoords="offset points", ha="center",
                    fontsize=7, color=color)
    ax.set_xscale("log")
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:.3g}"))
    ax.xaxis.set_minor_formatter(FuncFormatter(lambda v, _: f"{v:.3g}"))
    ax.xaxis.set_minor_locator(MaxNLocator(8))
    ax.tick_params(axis="x", which="both", length=3)
    lows = [r.ci_low or r.ratio for r in shown] + [1 / (1 + threshold)]
    highs = [r.ci_high or r.ratio for r in shown] + [1 + threshold]
    ax.set_xlim(min(lows) / 1.05, max(highs) * 1.05)
    ax.set_yticks(range(len(shown)), [r.label for r in shown])
    ax.set_ylim(len(shown) - 0.5, -0.7)
    ax.set_xlabel(AXIS_LABELS.get(shown[0].metric, AXIS_LABELS["time"]) + "; lines: confidence interval")
    fig.legend(loc="outside lower center", ncols=len(seen) + 1)
    title(fig, heading)
    return fig
