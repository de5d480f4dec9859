"""The claims figure: each claim's measured ratio (with its interval) against the published one. A module of its own
so that what every `colbench run` imports to print its claims (report/claims.py) does not import matplotlib, about
half a second of CPU a command; the report draws the figure."""

from __future__ import annotations

import math
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass

from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.layout_engine import ConstrainedLayoutEngine

from colbench.analysis.claims import ClaimStatus, ClaimVerdict
from colbench.render.figures import LIMIT_COLOR, PALETTE, new_figure, plain_log, styled, title
from colbench.words import plural

STATUS_COLOR = {ClaimStatus.HOLDS: PALETTE[2], ClaimStatus.DOES_NOT_HOLD: PALETTE[5],
                ClaimStatus.INCONCLUSIVE: PALETTE[1], ClaimStatus.NOT_MEASURED: LIMIT_COLOR}


@dataclass(frozen=True)
class _Point:
    """A claim the figure can place: measured and published ratio both known."""

    verdict: ClaimVerdict
    ratio: float
    published: float

    @property
    def below(self) -> float:
        """From the ratio down to its interval's low end (0 without an interval)."""
        return self.ratio - (self.verdict.ci_low or self.ratio)

    @property
    def above(self) -> float:
        return (self.verdict.ci_high or self.ratio) - self.ratio


@styled
def claims_figure(verdicts: Sequence[ClaimVerdict]) -> Figure | None:
    """Measured ratio (with its interval) against the published one, log–log, the diagonal = same factor."""
    points = [_Point(v, v.ratio, v.published) for v in verdicts if v.ratio and v.published and v.ratio > 0]
    if not points:
        return None
    # numbered points and a key of claim texts under the axes: ids overlap and mean nothing to a reader
    key = [textwrap.shorten(p.verdict.text, 95, placeholder="…") for p in points]
    fig, axes = new_figure(1, 1, width=6.5, panel_height=5.0 + 0.17 * len(points))
    ax = axes[0][0]
    low, high = _axis_range(points)
    ax.plot([low, high], [low, high], color=LIMIT_COLOR, linestyle="--", linewidth=0.8, label="as published")
    ax.axhline(1.0, color=LIMIT_COLOR, linewidth=0.6, linestyle=":")
    for status in ClaimStatus:
        members = [p for p in points if p.verdict.status == status]
        if members:
            _draw_status(ax, status, members, points)
    ax.set_xscale("log")
    ax.set_yscale("log")
    for axis in (ax.xaxis, ax.yaxis):
        plain_log(axis)
    ax.set_xlim(low, high)
    ax.set_ylim(low, high)
    ax.set_xlabel("published ratio (slower / faster)")
    ax.set_ylabel("measured here, with its interval")
    ax.legend(loc="upper left", fontsize=7)
    finite = [p for p in points if p.verdict.ci_low and math.isfinite(p.verdict.ci_low)]
    title(fig, "claims: measured vs published factors",
          f"{plural(len(points), 'claim')} with a published figure; {len(finite)} with an interval")
    _key_under_axes(fig, key)
    return fig


def _axis_range(points: Sequence[_Point]) -> tuple[float, float]:
    """Both axes' range: every published and measured ratio and interval end, with room around them."""
    values = [p.published for p in points] + [p.ratio for p in points]
    values += [c for p in points if (c := p.verdict.ci_low)] + [c for p in points if (c := p.verdict.ci_high)]
    return min(values) / 1.5, max(values) * 1.5


def _draw_status(ax: Axes, status: ClaimStatus, members: Sequence[_Point], points: list[_Point]) -> None:
    """The claims of one verdict: their measured ratios with intervals, numbered as in the key."""
    ys = [p.ratio for p in members]
    errors = [[p.below for p in members], [p.above for p in members]]
    ax.errorbar([p.published for p in members], ys, yerr=errors, fmt="o", color=STATUS_COLOR[status],
                ecolor=STATUS_COLOR[status], elinewidth=0.8, capsize=2, markersize=4, label=str(status))
    for p in members:
        ax.annotate(str(points.index(p) + 1), (p.published, p.ratio), fontsize=7,
                    xytext=(4, 3), textcoords="offset points", color="#333333", fontweight="bold")


def _key_under_axes(fig: Figure, key: list[str]) -> None:
    """The numbered claim texts under the axes, the axes kept above them."""
    bottom = (0.17 * len(key) + 0.3) / fig.get_figheight()
    engine = fig.get_layout_engine()
    if isinstance(engine, ConstrainedLayoutEngine):  # as new_figure makes it: keep the axes above the key
        engine.set(rect=(0, bottom + 0.01, 1, 1 - bottom - 0.01))
    fig.text(0.02, bottom, "\n".join(f"{i}  {text}" for i, text in enumerate(key, 1)), fontsize=7, va="top",
             ha="left", color="#333333", linespacing=1.45)
