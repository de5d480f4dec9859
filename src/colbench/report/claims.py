"""The posts' claims as a reader sees them: a table of verdicts, and measured vs published ratios in one plot."""

from __future__ import annotations

import json
import math
import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TypedDict

from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.layout_engine import ConstrainedLayoutEngine
from rich.console import JustifyMethod
from rich.markup import escape
from rich.table import Table

from colbench.analysis.claims import ClaimStatus, ClaimVerdict, evaluate_claims
from colbench.experiments.registry import EXPERIMENTS, experiment_of_suite
from colbench.model.claims import Untestable
from colbench.model.records import Result, Run
from colbench.render.figures import LIMIT_COLOR, PALETTE, new_figure, plain_log, styled, title
from colbench.words import plural

STATUS_STYLE = {ClaimStatus.HOLDS: "green", ClaimStatus.DOES_NOT_HOLD: "red", ClaimStatus.INCONCLUSIVE: "yellow",
                ClaimStatus.NOT_MEASURED: "dim"}
STATUS_COLOR = {ClaimStatus.HOLDS: PALETTE[2], ClaimStatus.DOES_NOT_HOLD: PALETTE[5],
                ClaimStatus.INCONCLUSIVE: PALETTE[1], ClaimStatus.NOT_MEASURED: LIMIT_COLOR}
#: conditions worth a column of their own; the rest of a claim's shared params are left out of the table
SHOWN_CONDITIONS = ("rows", "threads", "source", "compression", "batch_rows", "runtime", "variant")


def _factor(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:.3g}×" if value < 100 else f"{value:,.0f}×"


def _bar(v: ClaimVerdict) -> str:
    if v.at_most is not None:
        return f"{_factor(v.at_least)}–{_factor(v.at_most)}"
    return f"> {_factor(v.at_least)}"


def measured_cell(v: ClaimVerdict) -> str:
    if v.ratio is None:
        return "-"
    if v.ci_low is None or v.ci_high is None:
        return _factor(v.ratio)
    return f"{_factor(v.ratio)} [{v.ci_low:.3g}, {v.ci_high:.3g}]"


def conditions_cell(v: ClaimVerdict) -> str:
    shown = [f"{k}={v.conditions[k]}" for k in SHOWN_CONDITIONS if k in v.conditions]
    return " ".join(shown)


def claims_table(verdicts: Sequence[ClaimVerdict], untestable: Sequence[Untestable] = (), *,
                 cores: int | None = None) -> Table:
    """One row per claim (and condition): verdict, measured ratio [interval], bar, published ratio."""
    levels: dict[str, float] = {}
    for v in verdicts:
        if v.ci_level:  # compound claims come after their family's claims and keep their own level
            levels.setdefault(v.experiment, v.ci_level)
    if len(set(levels.values())) == 1:
        shown = f"{next(iter(levels.values())):.1%} intervals (Holm within each post)"
    elif levels:
        shown = "intervals at each post's Holm level (" + ", ".join(
            f"{e.upper()} {level:.1%}" for e, level in sorted(levels.items())) + ")"
    else:
        shown = "intervals"
    heading = "claims of the posts: slower / faster, " + shown
    table = Table(title=heading + (f"; {cores} cores here" if cores else ""), header_style="bold")
    columns: tuple[tuple[str, JustifyMethod], ...] = (
        ("claim", "left"), ("verdict", "left"), ("measured", "right"), ("bar", "right"), ("published", "right"),
        ("conditions", "left"), ("versions", "left"))
    for name, justify in columns:
        table.add_column(name, justify=justify)
    for v in verdicts:
        status = f"[{STATUS_STYLE[v.status]}]{v.status}[/]"
        versions = "\n".join(f"{k} {val}" for k, val in sorted(v.versions.items()))  # one library a line
        table.add_row(escape(v.text), status, measured_cell(v), _bar(v), _factor(v.published),
                      escape(conditions_cell(v) or v.reason if v.status == ClaimStatus.NOT_MEASURED else
                             conditions_cell(v)), escape(versions))
    for u in untestable:
        table.add_row(escape(u.text), "[dim]not testable here[/dim]", "", "", "", escape(u.why), "")
    return table


class UntestableDocument(TypedDict):
    experiment: str
    claim: str
    why: str


class ClaimsDocument(TypedDict):
    """`claims --format json`: each verdict (`ClaimVerdict.to_dict`), the claims no run here can test, and how many
    claims have each status."""

    claims: list[dict[str, object]]
    untestable: list[UntestableDocument]
    counts: dict[str, int]


def claims_json(verdicts: Sequence[ClaimVerdict], untestable: Sequence[Untestable] = ()) -> str:
    doc: ClaimsDocument = {
        "claims": [v.to_dict() for v in verdicts],
        "untestable": [{"experiment": u.experiment, "claim": u.text, "why": u.why} for u in untestable],
        "counts": {str(s): sum(v.status == s for v in verdicts) for s in ClaimStatus},
    }
    return json.dumps(doc, indent=2, default=str)


def counts_line(verdicts: Sequence[ClaimVerdict]) -> str:
    counts = {s: sum(v.status == s for v in verdicts) for s in ClaimStatus}
    return ", ".join(f"{n} {s}" for s, n in counts.items() if n)


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


def evaluate_results(results: Sequence[Result], runs: Mapping[str, Run], experiments: Sequence[str] = ()
                     ) -> tuple[list[ClaimVerdict], list[Untestable]]:
    """The claims of these experiments (all when none named) over these results of these runs, as one family (the
    caller reads them from the store: app/claims.py `evaluate_runs`)."""
    chosen = [e for e in EXPERIMENTS if not experiments or e.key in experiments]
    claims = [c for e in chosen for c in e.claims()]
    compound = [c for e in chosen for c in e.compound_claims()]
    verdicts = evaluate_claims(claims, results, runs, compound=compound)
    return verdicts, [u for e in chosen for u in e.untestable()]


def experiments_of_run(run: Run) -> list[str]:
    """The experiments a run's targets name (a suite of an experiment, e.g. e1 or allocator → e1)."""
    keys = []
    for target in run.targets:
        experiment = experiment_of_suite(target)
        if experiment is not None and experiment.key not in keys:
            keys.append(experiment.key)
    return keys
