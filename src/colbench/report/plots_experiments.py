"""The plots of the reference posts E1, E2, E4 and E5 (E3's bandwidth curves are in `plots_bandwidth.py`).

- E1 (arrowbench): per source, horizontal bars per CSV reader; for Arrow, reading into an Arrow table and the
  table → data frame conversion stacked (conversion = data-frame median − Arrow-table median).
- E2 (DSIB): Parquet vs CSV grouped bars per case on a log axis, the speedup written over each pair.
- E4 (Arrow.jl): first run in a fresh process vs warm, per operation.
- E5 (Feather V2): read time per format/codec (→ Arrow table, → data frame), write time, and file size beside.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from colbench.analysis.aggregate import CaseSummary
from colbench.report import published as pub
from colbench.report.experiments import _input_size
from colbench.report.plots import (
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
    plain_log,
    styled,
    time_unit,
    title,
    wide_range,
)
from colbench.report.terminal import case_label, fmt_bytes, varying_params

READER_ORDER = ("pyarrow", "pandas-pyarrow", "polars", "duckdb", "pandas", "data.table", "readr", "vroom")
SOURCE_ORDER = ("nyctaxi_2010-01", "fanniemae_2016Q4")
FORMAT_ORDER = ("parquet", "feather", "feather_v1", "ipc_stream")
CODEC_ORDER = ("uncompressed", "snappy", "lz4", "zstd", "gzip", "brotli")
ERROR_KW = {"elinewidth": 0.8, "capsize": 2, "ecolor": "#333333"}
READ_COLOR, CONVERT_COLOR, DIRECT_COLOR = PALETTE[0], PALETTE[1], PALETTE[2]


def _ok(summaries: Sequence[CaseSummary], benchmark: str) -> list[CaseSummary]:
    return [s for s in summaries if s.benchmark == benchmark and s.ok]


def _most_threads(summaries: Sequence[CaseSummary]) -> list[CaseSummary]:
    """Only the cases at the largest thread count (the posts reported the most cores)."""
    if not summaries:
        return []
    most = max(int(s.params.get("threads", 1)) for s in summaries)
    return [s for s in summaries if int(s.params.get("threads", 1)) == most]


# ----------------------------------------------------------------------------------------------------- E1


def _reader_key(label: str) -> tuple[int, str]:
    reader = label.split(" ", 1)[0]
    return (READER_ORDER.index(reader) if reader in READER_ORDER else len(READER_ORDER), label)


@styled
def e1_csv_read(summaries: Sequence[CaseSummary], run: dict[str, Any]) -> Figure | None:
    rows = _ok(summaries, "csv-read")
    if not rows:
        return None
    varying = varying_params(rows)["csv-read"]
    extra = [v for v in varying if v not in ("reader", "source", "compression", "output", "threads")]

    def label(s: CaseSummary) -> str:
        return s.params["reader"] + (f" {case_label(s, extra)}" if extra else "")

    sources = ordered([s.params["source"] for s in rows], SOURCE_ORDER)
    facets = sorted({(s.params["compression"], int(s.params["threads"])) for s in rows},
                    key=lambda f: (f[0] != "none", f[0], f[1]))
    most_bars = max(len({label(s) for s in rows if (s.params["compression"], s.params["threads"]) == f})
                    for f in facets)
    scale, unit = time_unit([median(s) for s in rows])
    fig, axes = new_figure(len(facets), len(sources), width=max(7.5, 4.6 * len(sources)),
                           panel_height=0.55 + 0.34 * most_bars, sharex="col")
    used: dict[str, Patch] = {}
    for r, (compression, threads) in enumerate(facets):
        for c, source in enumerate(sources):
            ax = axes[r][c]
            members = [s for s in rows if s.params["source"] == source and s.params["compression"] == compression
                       and int(s.params["threads"]) == threads]
            labels = sorted({label(s) for s in members}, key=_reader_key)
            for y, name in enumerate(labels):
                table = next((s for s in members if label(s) == name and s.params["output"] == "arrow_table"), None)
                frame = next((s for s in members if label(s) == name and s.params["output"] == "dataframe"), None)
                _e1_bar(ax, y, table, frame, scale, unit, used)
            ax.set_yticks(range(len(labels)), labels)
            ax.set_ylim(len(labels) - 0.5, -0.5)
            ax.set_title(f"{source} · {'gzip' if compression == 'gzip' else 'plain'} CSV · {threads} thread"
                         f"{'s' if threads != 1 else ''}", loc="left")
            ax.margins(x=0.3)
            if r == len(facets) - 1:
                ax.set_xlabel(f"median time per read ({unit}); bars: interquartile range")
    fig.legend(handles=list(used.values()), loc="outside lower center", ncols=len(used))
    title(fig, "E1 — CSV read: into an Arrow table, then converted to a data frame",
          fixed_params_note(rows, varying + ["output"]))
    return fig


def _e1_bar(ax: Axes, y: int, table: CaseSummary | None, frame: CaseSummary | None, scale: float, unit: str,
            used: dict[str, Patch]) -> None:
    read, total = median(table), median(frame)
    if read is not None and total is not None:
        conversion = max(total - read, 0.0)
        ax.barh(y, read / scale, height=0.6, color=READ_COLOR, xerr=[[v] for v in error_bar(table.wall, scale)],
                error_kw=ERROR_KW)
        below, above = error_bar(frame.wall, scale)
        ax.barh(y, conversion / scale, left=read / scale, height=0.6, color=CONVERT_COLOR,
                xerr=[[below], [above]], error_kw=ERROR_KW)
        text = f"{fmt_time(total)} = {fmt_time(read)} + {fmt_time(conversion)}"
        ax.text(total / scale + above, y, "  " + text, va="center", fontsize=7)
        used.setdefault("read", Patch(color=READ_COLOR, label="read CSV → Arrow table"))
        used.setdefault("convert", Patch(color=CONVERT_COLOR, label="Arrow table → data frame (difference)"))
    elif total is not None or read is not None:
        value, summary = (total, frame) if total is not None else (read, table)
        color = DIRECT_COLOR if total is not None else READ_COLOR
        below, above = error_bar(summary.wall, scale)
        ax.barh(y, value / scale, height=0.6, color=color, xerr=[[below], [above]], error_kw=ERROR_KW)
        ax.text(value / scale + above, y, "  " + fmt_time(value), va="center", fontsize=7)
        if total is not None:
            used.setdefault("direct", Patch(color=DIRECT_COLOR, label="read CSV → data frame"))
        else:
            used.setdefault("read", Patch(color=READ_COLOR, label="read CSV → Arrow table"))


# ----------------------------------------------------------------------------------------------------- E2


@styled
def e2_dsib(summaries: Sequence[CaseSummary], run: dict[str, Any]) -> Figure | None:
    rows = _most_threads(_ok(summaries, "dsib"))
    if not rows:
        return None
    present = {(s.params["operation"], s.params["variant"]) for s in rows}
    cases = [key for key in pub.E2_LABELS if key in present] + sorted(present - set(pub.E2_LABELS))
    scale, unit = time_unit([median(s) for s in rows])
    fig, axes = new_figure(1, 1, width=max(6.5, 1.15 * len(cases) + 2.5), panel_height=3.6)
    ax = axes[0][0]
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
    for c, (op, variant) in enumerate(cases):
        parquet = median(pick(rows, operation=op, variant=variant, format="parquet"))
        csv = median(pick(rows, operation=op, variant=variant, format="csv"))
        if parquet and csv:
            ax.annotate(f"{csv / parquet:.1f}×", (c, tops[c]), xytext=(0, 16), textcoords="offset points",
                        ha="center", fontsize=9, fontweight="bold")
    ax.set_xlim(-0.5 - max(0.0, (3 - len(cases)) * 0.4), len(cases) - 0.5 + max(0.0, (3 - len(cases)) * 0.4))
    ax.set_yscale("log")
    plain_log(ax.yaxis)
    ax.set_ylim(top=max(tops.values() or [1.0]) * 2.5)
    ax.set_xticks(range(len(cases)), [f"{pub.E2_LABELS.get(key, '')}\n{key[0].replace('_', ' ')}\n{key[1]}"
                                      for key in cases])
    ax.set_ylabel(f"median time ({unit}, log scale)")
    ax.legend(loc="upper left", ncols=2)
    title(fig, "E2 — pandas with Parquet vs CSV (bold: Parquet speedup)",
          fixed_params_note(rows, ["operation", "variant", "format"]))
    return fig


# ----------------------------------------------------------------------------------------------------- E4


@styled
def e4_first_vs_warm(summaries: Sequence[CaseSummary], run: dict[str, Any]) -> Figure | None:
    rows = _ok(summaries, "mmap-read")
    if not rows:
        return None
    sizes = ordered([s.params.get("rows") for s in rows])
    operations = ordered([s.params["operation"] for s in rows], list(pub.E4_SECONDS))
    values = [median(s) for s in rows] + [s.first_iteration.get("median") for s in rows]
    scale, unit = time_unit(values)
    log = wide_range(values, 20)
    fig, axes = new_figure(len(sizes), 1, panel_height=0.5 + 0.42 * len(operations))
    height = 0.38
    for r, size in enumerate(sizes):
        ax = axes[r][0]
        members = [next((s for s in rows if s.params["operation"] == op and s.params.get("rows") == size), None)
                   for op in operations]
        for i, (name, color, stats_of) in enumerate((
                ("warm (steady state)", PALETTE[0], lambda s: s.wall),
                ("first run in a fresh process", PALETTE[5], lambda s: s.first_iteration))):
            ys = [y + (i - 0.5) * height for y in range(len(operations))]
            widths = [((stats_of(s).get("median") or 0.0) / scale) if s else 0.0 for s in members]
            errors = list(zip(*[error_bar(stats_of(s) if s else None, scale) for s in members], strict=True))
            bars = ax.barh(ys, widths, height * 0.92, color=color, label=name if r == 0 else None, xerr=errors,
                           error_kw=ERROR_KW)
            ax.bar_label(bars, labels=[fmt_time(stats_of(s).get("median")) if s else ""
                                       for s in members], padding=3, fontsize=7)
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


# ----------------------------------------------------------------------------------------------------- E5


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
            size = _input_size(s)
            if size:
                return size
    return None


def _grouped(ax: Axes, keys: Sequence[tuple[str, str]], series: Sequence[tuple[str, str, list[Any]]],
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
def e5_formats(summaries: Sequence[CaseSummary], run: dict[str, Any]) -> Figure | None:
    reads = [s for s in _ok(summaries, "file-read") if s.params.get("engine") == "pyarrow"
             and not s.params.get("memory_map")]
    writes = [s for s in _ok(summaries, "file-write") if s.params.get("engine") == "pyarrow"]
    if not reads and not writes:
        return None
    sources = ordered([s.params["source"] for s in reads + writes], SOURCE_ORDER)
    keys_all = sorted({(s.params["format"], s.params["codec"]) for s in reads + writes}, key=_format_key)
    panels = (["read"] if reads else []) + (["write"] if writes else []) + ["size"]
    scale, unit = time_unit([median(s) for s in reads + writes])
    fig, axes = new_figure(len(sources), len(panels), width=3.6 * len(panels) + 1.2,
                           panel_height=0.6 + 0.5 * len(keys_all), sharey="row")
    threads_note = set()
    for r, source in enumerate(sources):
        src_reads = _most_threads([s for s in reads if s.params["source"] == source])
        src_writes = _most_threads([s for s in writes if s.params["source"] == source])
        threads_note |= {int(s.params.get("threads", 1)) for s in src_reads + src_writes}
        keys = keys_all
        for c, panel in enumerate(panels):
            ax = axes[r][c]
            if panel == "read":
                series = [(f"read → {name}", color, [pick(src_reads, format=f, codec=k, output=output)
                                                      for f, k in keys])
                          for output, name, color in (("arrow_table", "Arrow table", PALETTE[0]),
                                                      ("dataframe", "data frame", PALETTE[1]))]
                _grouped(ax, keys, series, scale, unit)
                ax.set_xlabel(f"median read time ({unit})")
            elif panel == "write":
                series = [(f"write from {name}", color, [pick(src_writes, format=f, codec=k, input=source_kind)
                                                         for f, k in keys])
                          for source_kind, name, color in (("arrow_table", "Arrow table", PALETTE[2]),
                                                           ("dataframe", "data frame", PALETTE[3]))]
                series = [item for item in series if any(item[2])]
                _grouped(ax, keys, series, scale, unit)
                ax.set_xlabel(f"median write time ({unit})")
            else:
                sizes = [_file_size(key, source, src_writes, src_reads) for key in keys]
                size_scale, size_unit = byte_unit(sizes)
                bars = ax.barh(range(len(keys)), [(v or 0) / size_scale for v in sizes], 0.6, color=PALETTE[4],
                               label="file size")
                ax.bar_label(bars, labels=[fmt_bytes(v) if v else "" for v in sizes], padding=3, fontsize=7)
                ax.set_yticks(range(len(keys)), [f"{fmt} {codec}" for fmt, codec in keys])
                ax.set_ylim(len(keys) - 0.5, -0.5)
                ax.margins(x=0.3)
                ax.set_xlabel(f"file size ({size_unit})")
            ax.set_title(f"{source}: {panel if panel != 'size' else 'file size'}", loc="left")
    handles, labels = [], []
    for ax in axes[0]:
        for handle, label in zip(*ax.get_legend_handles_labels(), strict=True):
            if label not in labels:
                handles.append(handle)
                labels.append(label)
    fig.legend(handles, labels, loc="outside lower center", ncols=min(len(labels), 5))
    threads = ", ".join(map(str, sorted(threads_note)))
    title(fig, "E5 — Feather V2 vs Parquet with pyarrow: read, write, file size",
          f"{threads} thread(s); " + fixed_params_note(reads + writes, ["source", "format", "codec", "output", "input",
                                                                         "threads", "engine", "memory_map"]))
    return fig


SPECS: tuple[PlotSpec, ...] = (
    PlotSpec("e1-csv-read", "E1 — CSV readers: read and conversion to a data frame",
             "Per source, one bar per reader. For Arrow the bar is stacked: reading into an Arrow table (blue) and "
             "the conversion of that table to a data frame (orange: the data-frame median minus the Arrow-table "
             "median). Error bars span the interquartile range of the timed iterations.",
             ("csv-read",), e1_csv_read),
    PlotSpec("e2-dsib", "E2 — Parquet vs CSV with pandas",
             "Median time per case, Parquet beside CSV on a log axis; the number over each pair is how many times "
             "faster Parquet was. The table above has the published figures.",
             ("dsib",), e2_dsib),
    PlotSpec("e4-first-vs-warm", "E4 — first run vs warm",
             "Warm: the median over every timed iteration. First run: the median over processes of each fresh "
             "process's first execution, which includes imports and first-call costs.",
             ("mmap-read",), e4_first_vs_warm),
    PlotSpec("e5-formats", "E5 — Feather V2 vs Parquet: time and size",
             "Per source, pyarrow read time into an Arrow table and into a data frame, write time, and the file "
             "size of each format and codec (most threads measured).",
             ("file-read", "file-write"), e5_formats),
)
