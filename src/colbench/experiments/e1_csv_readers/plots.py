"""The plots of E1 — arrowbench CSV readers (R, 2021)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from colbench.analysis.aggregate import CaseSummary
from colbench.experiments.case_params import param_text, thread_count
from colbench.experiments.plotting import (
    CONVERT_COLOR,
    DIRECT_COLOR,
    ERROR_KW,
    READ_COLOR,
    READER_ORDER,
    SOURCE_ORDER,
    ok_rows,
)
from colbench.model.records import Run, Stats
from colbench.render.figures import (
    PlotSpec,
    error_bar,
    fixed_params_note,
    fmt_time,
    median,
    new_figure,
    ordered,
    styled,
    time_unit,
    title,
)
from colbench.render.fmt import params_label, varying_params


def _reader_key(label: str) -> tuple[int, str]:
    reader = label.split(" ", 1)[0]
    return (READER_ORDER.index(reader) if reader in READER_ORDER else len(READER_ORDER), label)


@styled
def e1_csv_read(summaries: Sequence[CaseSummary], run: Run) -> Figure | None:
    rows = ok_rows(summaries, "csv-read")
    if not rows:
        return None
    varying = varying_params(rows)["csv-read"]
    extra = [v for v in varying if v not in ("reader", "source", "compression", "output", "threads")]

    def label(s: CaseSummary) -> str:
        return param_text(s, "reader") + (f" {params_label(s, extra)}" if extra else "")

    sources = ordered([param_text(s, "source") for s in rows], SOURCE_ORDER)
    facets = sorted({(param_text(s, "compression"), thread_count(s)) for s in rows},
                    key=lambda f: (f[0] != "none", f[0], f[1]))
    most_bars = max(len({label(s) for s in rows if (s.params["compression"], s.params["threads"]) == f})
                    for f in facets)
    scale, unit = time_unit([median(s) for s in rows])
    fig, axes = new_figure(len(facets), len(sources), width=max(7.5, 4.6 * len(sources)),
                           panel_height=0.55 + 0.34 * most_bars, sharex="col")
    used: dict[str, Patch] = {}
    for r, (compression, count) in enumerate(facets):
        for c, source in enumerate(sources):
            ax = axes[r][c]
            members = [s for s in rows if s.params["source"] == source and s.params["compression"] == compression
                       and thread_count(s) == count]
            _e1_panel(ax, members, label, scale, unit, used)
            ax.set_title(f"{source} · {'gzip' if compression == 'gzip' else 'plain'} CSV · {count} thread"
                         f"{'s' if count != 1 else ''}", loc="left")
            ax.margins(x=0.3)
            if r == len(facets) - 1:
                ax.set_xlabel(f"median time per read ({unit}); bars: interquartile range")
    fig.legend(handles=list(used.values()), loc="outside lower center", ncols=len(used))
    title(fig, "E1 — CSV read: into an Arrow table, then converted to a data frame",
          fixed_params_note(rows, varying + ["output"]))
    return fig


def _e1_panel(ax: Axes, members: list[CaseSummary], label: Callable[[CaseSummary], str], scale: float, unit: str,
              used: dict[str, Patch]) -> None:
    """A bar per reader: its read into an Arrow table and the conversion to a data frame (or a direct read)."""
    labels = sorted({label(s) for s in members}, key=_reader_key)
    for y, name in enumerate(labels):
        table = next((s for s in members if label(s) == name and s.params["output"] == "arrow_table"), None)
        frame = next((s for s in members if label(s) == name and s.params["output"] == "dataframe"), None)
        _e1_bar(ax, y, table, frame, scale, unit, used)
    ax.set_yticks(range(len(labels)), labels)
    ax.set_ylim(len(labels) - 0.5, -0.5)


def _timed(s: CaseSummary | None) -> tuple[float, Stats] | None:
    """A measured case's median time and the summary of its timed iterations (None for one absent or failed)."""
    value = median(s)
    return None if s is None or value is None else (value, s.wall)


def _e1_bar(ax: Axes, y: int, table: CaseSummary | None, frame: CaseSummary | None, scale: float, unit: str,
            used: dict[str, Patch]) -> None:
    to_table, to_frame = _timed(table), _timed(frame)
    if to_table is not None and to_frame is not None:
        (read, read_wall), (total, total_wall) = to_table, to_frame
        conversion = max(total - read, 0.0)
        ax.barh(y, read / scale, height=0.6, color=READ_COLOR, xerr=[[v] for v in error_bar(read_wall, scale)],
                error_kw=ERROR_KW)
        below, above = error_bar(total_wall, scale)
        ax.barh(y, conversion / scale, left=read / scale, height=0.6, color=CONVERT_COLOR,
                xerr=[[below], [above]], error_kw=ERROR_KW)
        text = f"{fmt_time(total)} = {fmt_time(read)} + {fmt_time(conversion)}"
        ax.text(total / scale + above, y, "  " + text, va="center", fontsize=7)
        used.setdefault("read", Patch(color=READ_COLOR, label="read CSV → Arrow table"))
        used.setdefault("convert", Patch(color=CONVERT_COLOR, label="Arrow table → data frame (difference)"))
    elif (measured := to_frame or to_table) is not None:
        value, wall = measured
        direct = to_frame is not None  # straight into a data frame; else only into an Arrow table
        color = DIRECT_COLOR if direct else READ_COLOR
        below, above = error_bar(wall, scale)
        ax.barh(y, value / scale, height=0.6, color=color, xerr=[[below], [above]], error_kw=ERROR_KW)
        ax.text(value / scale + above, y, "  " + fmt_time(value), va="center", fontsize=7)
        if direct:
            used.setdefault("direct", Patch(color=DIRECT_COLOR, label="read CSV → data frame"))
        else:
            used.setdefault("read", Patch(color=READ_COLOR, label="read CSV → Arrow table"))


SPECS: tuple[PlotSpec, ...] = (
    PlotSpec("e1-csv-read", "E1 — CSV readers: read and conversion to a data frame",
             "Per source, one bar per reader. For Arrow the bar is stacked: reading into an Arrow table (blue) and "
             "the conversion of that table to a data frame (orange: the data-frame median minus the Arrow-table "
             "median). Error bars span the interquartile range of the timed iterations.",
             ("csv-read",), e1_csv_read),
)
