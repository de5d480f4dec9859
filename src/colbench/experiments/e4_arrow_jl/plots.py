"""The plots of E4 — Arrow.jl vs CSV.jl (2020)."""

from __future__ import annotations

from collections.abc import Sequence

from matplotlib.axes import Axes
from matplotlib.figure import Figure

from colbench.analysis.aggregate import CaseSummary
from colbench.experiments.case_params import param_text
from colbench.experiments.e4_arrow_jl.published import E4_SECONDS
from colbench.experiments.plotting import (
    ERROR_KW,
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
    ordered,
    plain_log,
    styled,
    time_unit,
    title,
    wide_range,
)


@styled
def e4_first_vs_warm(summaries: Sequence[CaseSummary], run: Run) -> Figure | None:
    rows = ok_rows(summaries, "mmap-read")
    if not rows:
        return None
    sizes = ordered([s.params.get("rows") for s in rows])
    operations = ordered([param_text(s, "operation") for s in rows], list(E4_SECONDS))
    values = [median(s) for s in rows] + [s.first_iteration.get("median") for s in rows]
    scale, unit = time_unit(values)
    log = wide_range(values, 20)
    fig, axes = new_figure(len(sizes), 1, panel_height=0.5 + 0.42 * len(operations))
    for r, size in enumerate(sizes):
        ax = axes[r][0]
        members = [next((s for s in rows if s.params["operation"] == op and s.params.get("rows") == size), None)
                   for op in operations]
        _draw_first_and_warm(ax, members, scale, legend=r == 0)
        ax.set_yticks(range(len(operations)), [op.replace("_", " ") for op in operations])
        ax.set_ylim(len(operations) - 0.5, -0.5)
        if log:
            ax.set_xscale("log")
            plain_log(ax.xaxis)
        ax.margins(x=0.25)
        ax.set_xlabel(f"median time ({unit}{', log scale' if log else ''}); bars: interquartile range")
        if len(sizes) > 1:
            ax.set_title(f"{size:,} rows", loc="left")
    fig.legend(loc="outside lower center", ncols=2)
    title(fig, "E4 — 10 × Int64 frame: Arrow IPC vs CSV, first run vs warm",
          fixed_params_note(rows, ["operation"] + (["rows"] if len(sizes) > 1 else [])))
    return fig


def _draw_first_and_warm(ax: Axes, members: list[CaseSummary | None], scale: float, legend: bool) -> None:
    """Per operation, its warm time beside its first run in a fresh process."""
    height = 0.38
    for i, (name, color, stats_of) in enumerate((
            ("warm (steady state)", PALETTE[0], lambda s: s.wall),
            ("first run in a fresh process", PALETTE[5], lambda s: s.first_iteration))):
        ys = [y + (i - 0.5) * height for y in range(len(members))]
        widths = [((stats_of(s).get("median") or 0.0) / scale) if s else 0.0 for s in members]
        errors = list(zip(*[error_bar(stats_of(s) if s else None, scale) for s in members], strict=True))
        bars = ax.barh(ys, widths, height * 0.92, color=color, label=name if legend else None, xerr=errors,
                       error_kw=ERROR_KW)
        ax.bar_label(bars, labels=[fmt_time(stats_of(s).get("median")) if s else ""
                                   for s in members], padding=3, fontsize=7)


SPECS: tuple[PlotSpec, ...] = (
    PlotSpec("e4-first-vs-warm", "E4 — first run vs warm",
             "Warm: the median over every timed iteration. First run: the median over processes of each fresh "
             "process's first execution, which includes imports and first-call costs.",
             ("mmap-read",), e4_first_vs_warm),
)
