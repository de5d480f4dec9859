"""The plots of E2 — Data Science I/O baseline (2019)."""

from __future__ import annotations

from collections.abc import Sequence

from matplotlib.axes import Axes
from matplotlib.figure import Figure

from colbench.analysis.aggregate import CaseSummary
from colbench.experiments.case_params import param_text
from colbench.experiments.e2_dsib.published import E2_LABELS
from colbench.experiments.plotting import (
    ERROR_KW,
    most_threads,
    ok_rows,
)
from colbench.model.records import Run
from colbench.render.figures import (
    PALETTE,
    PlotSpec,
    error_bar,
    fixed_params_note,
    fmt_time,
    median,
    new_figure,
    pick,
    plain_log,
    styled,
    time_unit,
    title,
)


@styled
def e2_dsib(summaries: Sequence[CaseSummary], run: Run) -> Figure | None:
    rows = most_threads(ok_rows(summaries, "dsib"))
    if not rows:
        return None
    present = {(param_text(s, "operation"), param_text(s, "variant")) for s in rows}
    cases = [key for key in E2_LABELS if key in present] + sorted(present - set(E2_LABELS))
    scale, unit = time_unit([median(s) for s in rows])
    fig, axes = new_figure(1, 1, width=max(6.5, 1.15 * len(cases) + 2.5), panel_height=3.6)
    ax = axes[0][0]
    tops = _draw_formats(ax, rows, cases, scale)
    _annotate_speedups(ax, rows, cases, tops)
    ax.set_xlim(-0.5 - max(0.0, (3 - len(cases)) * 0.4), len(cases) - 0.5 + max(0.0, (3 - len(cases)) * 0.4))
    ax.set_yscale("log")
    plain_log(ax.yaxis)
    ax.set_ylim(top=max(tops.values() or [1.0]) * 2.5)
    ax.set_xticks(range(len(cases)), [f"{E2_LABELS.get(key, '')}\n{key[0].replace('_', ' ')}\n{key[1]}"
                                      for key in cases])
    ax.set_ylabel(f"median time ({unit}, log scale)")
    ax.legend(loc="upper left", ncols=2)
    title(fig, "E2 — pandas with Parquet vs CSV (bold: Parquet speedup)",
          fixed_params_note(rows, ["operation", "variant", "format"]))
    return fig


def _draw_formats(ax: Axes, rows: list[CaseSummary], cases: list[tuple[str, str]], scale: float) -> dict[int, float]:
    """Parquet's and CSV's bars side by side per case; returns each case's tallest bar."""
    width = 0.38
    tops: dict[int, float] = {}
    for i, (fmt, color, name) in enumerate((("parquet", PALETTE[0], "Parquet"), ("csv", PALETTE[1], "CSV"))):
        found = [pick(rows, operation=op, variant=variant, format=fmt) for op, variant in cases]
        xs = [c + (i - 0.5) * width for c in range(len(cases))]
        values = [(median(s) or 0.0) / scale for s in found]
        errors = list(zip(*[error_bar(s.wall if s else None, scale) for s in found], strict=True))
        bars = ax.bar(xs, values, width * 0.95, color=color, label=name, yerr=errors, error_kw=ERROR_KW)
        ax.bar_label(bars, labels=[fmt_time(median(s)) for s in found], padding=2, fontsize=7)
        for c, s in enumerate(found):
            tops[c] = max(tops.get(c, 0.0), (median(s) or 0.0) / scale)
    return tops


def _annotate_speedups(ax: Axes, rows: list[CaseSummary], cases: list[tuple[str, str]], tops: dict[int, float]
                       ) -> None:
    """Over each pair, how many times faster Parquet was."""
    for c, (op, variant) in enumerate(cases):
        parquet = median(pick(rows, operation=op, variant=variant, format="parquet"))
        csv = median(pick(rows, operation=op, variant=variant, format="csv"))
        if parquet and csv:
            ax.annotate(f"{csv / parquet:.1f}×", (c, tops[c]), xytext=(0, 16), textcoords="offset points",
                        ha="center", fontsize=9, fontweight="bold")


SPECS: tuple[PlotSpec, ...] = (
    PlotSpec("e2-dsib", "E2 — Parquet vs CSV with pandas",
             "Median time per case, Parquet beside CSV on a log axis; the number over each pair is how many times "
             "faster Parquet was. The table above has the published figures.",
             ("dsib",), e2_dsib),
)
