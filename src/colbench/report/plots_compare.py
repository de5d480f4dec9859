"""A/B comparisons as the report and the dashboard show them: rows and a plot, from the one comparison.

Pages only ever see `CompareRow`s, made by `compare_rows` from an `analysis.comparison.Comparison`: the verdicts
`colbench compare` gives for the same two sides, never a second computation of them.
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass

from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, MaxNLocator, NullLocator

from colbench.analysis.comparison import METRIC_SUFFIX, Comparison
from colbench.analysis.verdicts import CaseComparison
from colbench.model.metrics import metric
from colbench.render.figures import LIMIT_COLOR, key_labels, new_figure, styled, title
from colbench.render.fmt import fmt_percent

VERDICT_CLASSES = {"regression": "bad", "improvement": "good", "no change": "same", "inconclusive": "warn"}
VERDICT_COLORS = {"regression": "#c0392b", "improvement": "#1e8449", "no change": "#7f8c8d",
                  "inconclusive": "#d68910"}


@dataclass(frozen=True)
class CompareRow:
    """One case compared: contender / baseline of one metric, with the comparison's interval and verdict."""

    benchmark: str
    case_id: str
    label: str
    baseline_median: float | None
    contender_median: float | None
    ratio: float | None
    ci_low: float | None
    ci_high: float | None
    verdict: str  # regression | improvement | no change | inconclusive
    reason: str = ""
    ci_level: float | None = None
    n: str = ""  # processes per side ("3/3") or pairs ("12 blocks")
    metric: str = "time"  # a metric of colbench.model.metrics
    test: str = "rank"  # "rank" or "t" (analysis/verdicts.py)

    @property
    def css(self) -> str:
        return VERDICT_CLASSES.get(self.verdict, "")

    @property
    def change(self) -> float | None:
        return None if self.ratio is None else self.ratio - 1.0


def _finite(value: float | None) -> float | None:
    return value if value is not None and math.isfinite(value) and value > 0 else None


def _row(comparison: Comparison, c: CaseComparison) -> CompareRow:
    key = str(c.key)
    case_id, benchmark = comparison.case_of.get(key, (key, key.split(" ", 1)[0]))
    n = f"{c.n_blocks} blocks" if c.paired else f"{c.n_baseline}/{c.n_contender}"
    return CompareRow(benchmark, case_id, key.removesuffix(METRIC_SUFFIX.format(c.metric)),
                      _finite(c.baseline_median), _finite(c.contender_median), _finite(c.ratio), _finite(c.ci_low),
                      _finite(c.ci_high), str(c.verdict), c.reason, c.ci_level, n, c.metric, c.test)


def compare_rows(comparison: Comparison, metric_name: str | None = None) -> list[CompareRow]:
    """The rows of a comparison (of one metric, when named), in its order."""
    return [_row(comparison, c) for c in comparison.cases if metric_name is None or c.metric == metric_name]


def verdict_counts(rows: Sequence[CompareRow]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for row in rows:
        counts[row.verdict] = counts.get(row.verdict, 0) + 1
    return counts


@styled
def compare_figure(rows: Sequence[CompareRow], heading: str, threshold: float) -> Figure | None:
    """Ratio contender / baseline per case on a log axis, its interval as a bar, coloured by verdict and labelled
    with it beside the point (no legend over the data); the band of ±threshold around 1 shaded and named as it is
    (±0.25%, never a rounded ±0%). Labels keep every word: the params all cases share go to the subtitle, the rest
    wrap."""
    shown = [(r, r.ratio) for r in rows if r.ratio is not None]
    if not shown:
        return None
    labels, shared = key_labels([r.label for r, _ in shown])
    lines = max(label.count("\n") + 1 for label in labels)
    subtitle = textwrap.wrap(shared, 88) if shared else []
    band = fmt_percent(threshold)
    fig, axes = new_figure(1, 1, width=7.5, panel_height=0.75 + (0.3 + 0.14 * (lines - 1)) * len(shown)
                           + 0.17 * max(len(subtitle) - 1, 0))
    ax = axes[0][0]
    ax.axvspan(1 / (1 + threshold), 1 + threshold, color="#e6e6e6", zorder=0)
    ax.axvline(1.0, color=LIMIT_COLOR, linewidth=1)
    for y, (row, ratio) in enumerate(shown):
        color = VERDICT_COLORS.get(row.verdict, "#333333")
        if row.ci_low is not None and row.ci_high is not None:
            ax.plot([row.ci_low, row.ci_high], [y, y], color=color, linewidth=2.2, solid_capstyle="butt")
        ax.plot([ratio], [y], marker="o", color=color, markersize=5)
        ax.annotate(f"{ratio:.3f} {row.verdict}", (ratio, y), xytext=(0, 6), textcoords="offset points",
                    ha="center", va="bottom", fontsize=7, color=color, fontweight="bold")
    ax.set_xscale("log")
    # evenly spaced ticks, as many digits as the range needs: a ±0.25% band spans 0.997–1.003, where ":.3g" would
    # print "1" five times
    ax.xaxis.set_major_locator(MaxNLocator(7, steps=[1, 2, 5, 10]))  # steps that land on 1
    ax.xaxis.set_minor_locator(NullLocator())
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: _ratio_tick(v, ax.get_xlim())))
    ax.tick_params(axis="x", which="both", length=3)
    lows = [r.ci_low or ratio for r, ratio in shown] + [1 / (1 + threshold), ratio]
    highs = [r.ci_high or ratio for r, ratio in shown] + [1 + threshold, ratio]
    low, high = min(lows), max(highs)
    pad = max(high / low, 1.002) ** 0.12  # room for the labels beside the ends, on any range
    ax.set_xlim(low / pad, high * pad)
    ax.set_yticks(range(len(shown)), labels)
    ax.set_ylim(len(shown) - 0.5, -0.85)
    ax.set_xlabel(metric(shown[0][0].metric).axis_label() + f"\nlines: confidence interval; grey band: ±{band}, "
                  "the smallest change that matters")
    title(fig, heading, "\n".join(subtitle))
    return fig


def _ratio_tick(value: float, limits: tuple[float, float]) -> str:
    """A ratio tick with the decimals the axis' range needs to tell its ticks apart."""
    span = abs(limits[1] - limits[0]) or 1.0
    decimals = min(max(2, math.ceil(-math.log10(span)) + 1), 6)
    return f"{value:.{decimals}f}".rstrip("0").rstrip(".") if "." in f"{value:.{decimals}f}" else f"{value:g}"
