"""The plots of E5 — Feather V2 vs Parquet (2020)."""

from __future__ import annotations

from collections.abc import Sequence

from matplotlib.axes import Axes
from matplotlib.figure import Figure

from colbench.analysis.aggregate import CaseSummary
from colbench.experiments.case_params import param_text, thread_count
from colbench.experiments.plotting import (
    CODEC_ORDER,
    ERROR_KW,
    FORMAT_ORDER,
    SOURCE_ORDER,
    most_threads,
    ok_rows,
)
from colbench.model.records import Run
from colbench.render.figures import (
    PALETTE,
    PlotSpec,
    byte_unit,
    error_bar,
    fixed_params_note,
    fmt_time,
    median,
    new_figure,
    ordered,
    pick,
    styled,
    time_unit,
    title,
)
from colbench.render.fmt import fmt_bytes


def _format_key(key: tuple[str, str]) -> tuple[int, int, str]:
    fmt, codec = key
    return (FORMAT_ORDER.index(fmt) if fmt in FORMAT_ORDER else 99,
            CODEC_ORDER.index(codec) if codec in CODEC_ORDER else 99, codec)


def _file_size(key: tuple[str, str], source: str, writes: Sequence[CaseSummary],
               reads: Sequence[CaseSummary]) -> int | None:
    fmt, codec = key
    for s in writes:
        if (s.params["source"], s.params["format"], s.params["codec"]) == (source, fmt, codec) and s.file_size_bytes:
            return int(s.file_size_bytes)
    for s in reads:
        if (s.params["source"], s.params["format"], s.params["codec"]) == (source, fmt, codec):
            size = s.input_size_bytes
            if size:
                return size
    return None


def _grouped(ax: Axes, keys: Sequence[tuple[str, str]], series: Sequence[tuple[str, str, list[CaseSummary | None]]],
             scale: float, unit: str) -> None:
    """Horizontal grouped bars: one group per (format, codec), one bar per series (label, colour, summaries)."""
    height = 0.8 / len(series)
    for i, (name, color, found) in enumerate(series):
        ys = [y + (i - (len(series) - 1) / 2) * height for y in range(len(keys))]
        widths = [(median(s) or 0.0) / scale for s in found]
        errors = list(zip(*[error_bar(s.wall if s else None, scale) for s in found], strict=True))
        bars = ax.barh(ys, widths, height * 0.92, color=color, label=name, xerr=errors, error_kw=ERROR_KW)
        ax.bar_label(bars, labels=[fmt_time(median(s)) for s in found], padding=3, fontsize=7)
    ax.set_yticks(range(len(keys)), [f"{fmt} {codec}" for fmt, codec in keys])
    ax.set_ylim(len(keys) - 0.5, -0.5)
    ax.margins(x=0.3)


@styled
def e5_formats(summaries: Sequence[CaseSummary], run: Run) -> Figure | None:
    reads, writes = _pyarrow_cases(summaries)
    if not reads and not writes:
        return None
    sources = ordered([param_text(s, "source") for s in reads + writes], SOURCE_ORDER)
    keys = sorted({(param_text(s, "format"), param_text(s, "codec")) for s in reads + writes}, key=_format_key)
    panels = (["read"] if reads else []) + (["write"] if writes else []) + ["size"]
    scale, unit = time_unit([median(s) for s in reads + writes])
    fig, axes = new_figure(len(sources), len(panels), width=3.6 * len(panels) + 1.2,
                           panel_height=0.6 + 0.5 * len(keys), sharey="row")
    threads_note: set[int] = set()
    for r, source in enumerate(sources):
        src_reads = most_threads([s for s in reads if s.params["source"] == source])
        src_writes = most_threads([s for s in writes if s.params["source"] == source])
        threads_note |= {thread_count(s) for s in src_reads + src_writes}
        for c, panel in enumerate(panels):
            _panel(axes[r][c], panel, keys, source, src_reads, src_writes, scale, unit)
    _legend(fig, axes[0])
    threads = ", ".join(map(str, sorted(threads_note)))
    threads_word = "thread" if threads_note == {1} else "threads"
    title(fig, "E5 — Feather V2 vs Parquet with pyarrow: read, write, file size",
          f"{threads} {threads_word}; " + fixed_params_note(reads + writes, [
              "source", "format", "codec", "output", "input", "threads", "engine", "memory_map"]))
    return fig


def _pyarrow_cases(summaries: Sequence[CaseSummary]) -> tuple[list[CaseSummary], list[CaseSummary]]:
    """The measured reads (not memory-mapped) and writes of pyarrow."""
    reads = [s for s in ok_rows(summaries, "file-read") if s.params.get("engine") == "pyarrow"
             and not s.params.get("memory_map")]
    writes = [s for s in ok_rows(summaries, "file-write") if s.params.get("engine") == "pyarrow"]
    return reads, writes


def _panel(ax: Axes, panel: str, keys: list[tuple[str, str]], source: str, src_reads: list[CaseSummary],
           src_writes: list[CaseSummary], scale: float, unit: str) -> None:
    if panel == "read":
        _read_panel(ax, keys, src_reads, scale, unit)
    elif panel == "write":
        _write_panel(ax, keys, src_writes, scale, unit)
    else:
        _size_panel(ax, keys, source, src_writes, src_reads)
    ax.set_title(f"{source}: {panel if panel != 'size' else 'file size'}", loc="left")


def _read_panel(ax: Axes, keys: list[tuple[str, str]], src_reads: list[CaseSummary], scale: float,
                unit: str) -> None:
    """Read time per format and codec, into an Arrow table and into a data frame."""
    series = [(f"read → {name}", color, [pick(src_reads, format=f, codec=k, output=output) for f, k in keys])
              for output, name, color in (("arrow_table", "Arrow table", PALETTE[0]),
                                          ("dataframe", "data frame", PALETTE[1]))]
    series = [item for item in series if any(item[2])]  # no legend entry for what was not measured
    _grouped(ax, keys, series, scale, unit)
    ax.set_xlabel(f"median read time ({unit}); whiskers: interquartile range")


def _write_panel(ax: Axes, keys: list[tuple[str, str]], src_writes: list[CaseSummary], scale: float,
                 unit: str) -> None:
    """Write time per format and codec, from an Arrow table and from a data frame."""
    series = [(f"write from {name}", color, [pick(src_writes, format=f, codec=k, input=source_kind)
                                             for f, k in keys])
              for source_kind, name, color in (("arrow_table", "Arrow table", PALETTE[2]),
                                               ("dataframe", "data frame", PALETTE[3]))]
    series = [item for item in series if any(item[2])]
    _grouped(ax, keys, series, scale, unit)
    ax.set_xlabel(f"median write time ({unit}); whiskers: interquartile range")


def _size_panel(ax: Axes, keys: list[tuple[str, str]], source: str, src_writes: list[CaseSummary],
                src_reads: list[CaseSummary]) -> None:
    """The file size of each format and codec."""
    sizes = [_file_size(key, source, src_writes, src_reads) for key in keys]
    size_scale, size_unit = byte_unit(sizes)
    bars = ax.barh(range(len(keys)), [(v or 0) / size_scale for v in sizes], 0.6, color=PALETTE[4],
                   label="file size")
    ax.bar_label(bars, labels=[fmt_bytes(v) if v else "" for v in sizes], padding=3, fontsize=7)
    ax.set_yticks(range(len(keys)), [f"{fmt} {codec}" for fmt, codec in keys])
    ax.set_ylim(len(keys) - 0.5, -0.5)
    ax.margins(x=0.3)
    ax.set_xlabel(f"file size ({size_unit})")


def _legend(fig: Figure, top_row: Sequence[Axes]) -> None:
    """One legend under the figure: each series of the top row's panels once."""
    handles, labels = [], []
    for ax in top_row:
        for handle, label in zip(*ax.get_legend_handles_labels(), strict=True):
            if label not in labels:
                handles.append(handle)
                labels.append(label)
    fig.legend(handles, labels, loc="outside lower center", ncols=min(len(labels), 5))


SPECS: tuple[PlotSpec, ...] = (
    PlotSpec("e5-formats", "E5 — Feather V2 vs Parquet: time and size",
             "Per source, pyarrow read time into an Arrow table and into a data frame, write time, and the file "
             "size of each format and codec (most threads measured). Bars: the median of every timed iteration of "
             "every process; whiskers: their interquartile range (25th to 75th percentile).",
             ("file-read", "file-write"), e5_formats),
)
