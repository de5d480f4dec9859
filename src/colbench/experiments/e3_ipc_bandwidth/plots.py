"""E3 (Arrow Java in-memory read bandwidth): Gbps of value bytes vs batch size and vs threads.

One panel per access mode (and column type), one line per runtime (python / java). The memory-copy bandwidth
this machine measured at the start of the run (`MachineBandwidth.memcpy_gbps`, dashed) and its read
bandwidth (`read_gbps`, dotted, when measured) are drawn as the physical limit: a read that touches every byte
from memory cannot go faster. A case faster than that either did not touch its bytes (lazy, offsets: a hollow
triangle pinned just above the limit, never drawn as a speed) or had its data in a CPU cache (a star); see
`gbps_verdict`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Literal

from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from colbench.analysis.aggregate import CaseSummary
from colbench.experiments.case_params import param_int, param_text, thread_count
from colbench.experiments.e3_ipc_bandwidth.table import CACHE_RESIDENT, gbps_verdict
from colbench.model.records import Run
from colbench.model.run_parts import MachineBandwidth
from colbench.render.figures import (
    LIMIT_COLOR,
    PALETTE,
    PlotSpec,
    fixed_params_note,
    new_figure,
    ordered,
    plain_log,
    quartiles,
    styled,
    title,
)

ACCESS_ORDER = ("lazy", "offsets", "scan", "materialize")
ACCESS_MEANING = {"lazy": "load batches only", "offsets": "read offsets (holder API)",
                  "scan": "read every byte", "materialize": "one object per value (get())"}
RUNTIME_COLORS = {"python": PALETTE[0], "java": PALETTE[5]}
TYPE_ORDER = ("binary", "int32", "int64")
PLOTTED = ("type", "access", "runtime", "batch_rows", "threads", "source")
NOT_TOUCHED_LIFT = 1.08  # where a "bytes not touched" point is pinned, relative to the limit
LineStyle = Literal["-", "--", ":", "-."]
LINE_STYLES: tuple[LineStyle, ...] = ("-", "--", ":", "-.")  # one per source


def _rows(summaries: Sequence[CaseSummary]) -> list[CaseSummary]:
    return [s for s in summaries if s.benchmark == "ipc-bandwidth" and s.ok and "gbps" in s.metrics]


def ceiling(bandwidth: MachineBandwidth, threads: int) -> float | None:
    """What no read touching its bytes from memory can beat: the larger of memcpy and read bandwidth."""
    return max(filter(None, (bandwidth.memcpy(threads), bandwidth.read(threads))), default=None)


def _point(s: CaseSummary, bandwidth: MachineBandwidth) -> tuple[float | None, str, float | None]:
    """(Gbps, gbps_verdict's note, the ceiling at the case's thread count)."""
    gbps, note = gbps_verdict(s, bandwidth)
    return gbps, note, ceiling(bandwidth, thread_count(s))


def _gbps_errors(s: CaseSummary) -> tuple[float, float]:
    q = quartiles(s.metrics.get("gbps"))
    return (0.0, 0.0) if q is None else (max(q[1] - q[0], 0.0), max(q[2] - q[1], 0.0))


def _series(ax: Axes, xs: Sequence[float], members: Sequence[CaseSummary], bandwidth: MachineBandwidth,
            color: str, style: LineStyle, label_below: bool = False) -> tuple[float, set[str]]:
    """A line through the points that touched their bytes (with IQR bars), a star on cache-resident ones,
    hollow triangles pinned above the limit for untouched ones. Returns the highest value drawn and the marks
    used ('cache', 'untouched')."""
    touched_x: list[float] = []
    touched_y: list[float] = []
    errors: list[list[float]] = [[], []]  # below, above
    marks: set[str] = set()
    top = 0.0
    for x, s in zip(xs, members, strict=True):
        gbps, note, limit = _point(s, bandwidth)
        if gbps is None:
            continue
        if note.endswith(CACHE_RESIDENT):
            ax.plot([x], [gbps], marker="*", markersize=11, color=color, linestyle="none", zorder=3)
            marks.add("cache")
        if note == "bytes not touched" and limit:
            ax.plot([x], [limit * NOT_TOUCHED_LIFT], marker="^", markersize=8, markerfacecolor="white",
                    markeredgecolor=color, linestyle="none")
            marks.add("untouched")
            top = max(top, limit * NOT_TOUCHED_LIFT)
            continue
        low, high = _gbps_errors(s)
        touched_x.append(x)
        touched_y.append(gbps)
        errors[0].append(low)
        errors[1].append(high)
        top = max(top, gbps + high)
    if touched_x:
        ax.errorbar(touched_x, touched_y, yerr=errors, color=color, linestyle=style, marker="o", markersize=4,
                    capsize=2, elinewidth=0.8, linewidth=1.4)
        for x, y in zip(touched_x, touched_y, strict=True):
            ax.annotate(f"{y:.1f}", (x, y), xytext=(0, -11 if label_below else 5), textcoords="offset points",
                        ha="center", fontsize=7, color=color)
    return top, marks


def _limit_lines(bandwidth: MachineBandwidth) -> tuple[tuple[str, Callable[[int], float | None], LineStyle], ...]:
    """The machine's limits drawn in every panel: (name, its figure at a thread count, line style)."""
    return ("memcpy", bandwidth.memcpy, "--"), ("read (xor scan)", bandwidth.read, ":")


def _limits(ax: Axes, bandwidth: MachineBandwidth, threads: Sequence[int]) -> float:
    """memcpy (dashed) and read (dotted) bandwidth, a line over thread counts or a level for one; returns the top."""
    top = 0.0
    for _, figure, style in _limit_lines(bandwidth):
        values = [(t, v) for t in threads if (v := figure(t)) is not None]
        if not values:
            continue
        if len(values) == 1:
            ax.axhline(values[0][1], color=LIMIT_COLOR, linestyle=style, linewidth=1)
        else:
            ax.plot([t for t, _ in values], [v for _, v in values], color=LIMIT_COLOR, linestyle=style,
                    marker="s", markersize=3, linewidth=1)
        top = max(top, *(v for _, v in values))
    return top


def _limit_labels(bandwidth: MachineBandwidth, threads: Sequence[int]) -> list[tuple[LineStyle, str]]:
    labels: list[tuple[LineStyle, str]] = []
    for name, figure, style in _limit_lines(bandwidth):
        values = [(t, figure(t)) for t in threads]
        shown = ", ".join(f"{t} thr {v:.1f}" for t, v in values if v is not None)
        if shown:
            labels.append((style, f"{name} bandwidth, physical limit: {shown} Gbps"))
    return labels


def _legend(fig: Figure, runtimes: Sequence[str], sources: Sequence[str], marks: set[str],
            limits: Sequence[tuple[LineStyle, str]]) -> None:
    handles = [Line2D([], [], color=RUNTIME_COLORS.get(r, PALETTE[2]), marker="o", label=r) for r in runtimes]
    if len(sources) > 1:
        handles += [Line2D([], [], color="#333333", linestyle=_style(src, sources), label=f"source={src}")
                    for src in sources]
    handles += [Line2D([], [], color=LIMIT_COLOR, linestyle=style, label=label) for style, label in limits]
    if "untouched" in marks:
        handles.append(Line2D([], [], color="#333333", marker="^", markerfacecolor="white", linestyle="none",
                              label="bytes not touched (lazy / offsets: not a read speed)"))
    if "cache" in marks:
        handles.append(Line2D([], [], color="#333333", marker="*", markersize=9, linestyle="none",
                              label="above the bandwidth of its kind: data in a CPU cache"))
    columns = max(1, min(len(handles), int(fig.get_figwidth() // 4.2)))  # long labels: never wider than the figure
    fig.legend(handles=handles, loc="outside lower center", ncols=columns)


def _style(source: str, sources: Sequence[str]) -> LineStyle:
    return LINE_STYLES[sources.index(source) % len(LINE_STYLES)]


def _panel_title(kind: str, access: str, kinds: Sequence[str]) -> str:
    prefix = f"{kind} · " if len(kinds) > 1 else ""
    return f"{prefix}{access}\n{ACCESS_MEANING.get(access, access)}"


def _draw_lines(ax: Axes, rows: Sequence[CaseSummary], kind: str, access: str, x_param: str,
                runtimes: Sequence[str], sources: Sequence[str], bandwidth: MachineBandwidth,
                ) -> tuple[float, set[str]]:
    """Every (runtime, source) line of one panel; returns the highest value drawn and the marks used."""
    top, marks = 0.0, set()
    for index, runtime in enumerate(runtimes):
        for source in sources:
            members = sorted((s for s in rows if (s.params["type"], s.params["access"], s.params["runtime"],
                                                  s.params.get("source", "buffer")) == (kind, access, runtime, source)),
                             key=lambda s: param_int(s, x_param))
            if not members:
                continue
            drawn, found = _series(ax, [param_int(s, x_param) for s in members], members, bandwidth,
                                    RUNTIME_COLORS.get(runtime, PALETTE[2]), _style(source, sources),
                                    label_below=index % 2 == 1)
            top = max(top, drawn)
            marks |= found
    return top, marks


def _faceted(rows: Sequence[CaseSummary], bandwidth: MachineBandwidth, x_param: str,
             limit_threads: list[int], style_x: Callable[[Axes], object], xlabel: str) -> Figure:
    """One panel per type × access, one line per runtime and source, the machine's limits drawn in each."""
    kinds = ordered([param_text(s, "type") for s in rows], TYPE_ORDER)
    accesses = ordered([param_text(s, "access") for s in rows], ACCESS_ORDER)
    runtimes = ordered([param_text(s, "runtime") for s in rows], ("python", "java"))
    sources = ordered([param_text(s, "source", "buffer") for s in rows], ("buffer", "stream"))
    fig, axes = new_figure(len(kinds), len(accesses), width=max(7.5, 3.3 * len(accesses)), panel_height=2.9,
                           sharex=True)
    marks: set[str] = set()
    for r, kind in enumerate(kinds):
        for c, access in enumerate(accesses):
            ax = axes[r][c]
            top, found = _draw_lines(ax, rows, kind, access, x_param, runtimes, sources, bandwidth)
            marks |= found
            top = max(top, _limits(ax, bandwidth, limit_threads))
            style_x(ax)
            ax.margins(x=0.08)
            ax.set_ylim(0, max(top, 1e-9) * 1.2)
            ax.set_title(_panel_title(kind, access, kinds), loc="left")
            if c == 0:
                ax.set_ylabel("Gbps of value bytes")
            if r == len(kinds) - 1:
                ax.set_xlabel(xlabel)
    _legend(fig, runtimes, sources, marks, _limit_labels(bandwidth, limit_threads))
    return fig


@styled
def e3_bandwidth_vs_batch(summaries: Sequence[CaseSummary], run: Run) -> Figure | None:
    rows = _rows(summaries)
    if not rows or len({s.params["batch_rows"] for s in rows}) < 2:
        return None
    fewest = min(thread_count(s) for s in rows)
    rows = [s for s in rows if thread_count(s) == fewest]

    def log_x(ax: Axes) -> None:
        ax.set_xscale("log")
        plain_log(ax.xaxis)

    fig = _faceted(rows, MachineBandwidth.of(run), "batch_rows", [fewest], log_x,
                   "batch size (rows per record batch, log scale)")
    title(fig, f"E3 — Arrow IPC read bandwidth vs batch size ({fewest} thread{'s' if fewest != 1 else ''})",
          fixed_params_note(rows, PLOTTED))
    return fig


@styled
def e3_bandwidth_vs_threads(summaries: Sequence[CaseSummary], run: Run) -> Figure | None:
    rows = _rows(summaries)
    thread_counts = sorted({thread_count(s) for s in rows})
    if len(thread_counts) < 2:
        return None
    batches = sorted({param_int(s, "batch_rows") for s in rows})
    batch = 10_000 if 10_000 in batches else batches[len(batches) // 2]  # the post's core scaling used 10k rows
    rows = [s for s in rows if s.params["batch_rows"] == batch]
    fig = _faceted(rows, MachineBandwidth.of(run), "threads", thread_counts,
                   lambda ax: ax.set_xticks(thread_counts, [str(t) for t in thread_counts]),
                   "threads (each its own reader)")
    title(fig, f"E3 — Arrow IPC read bandwidth vs threads (batches of {batch:,} rows)",
          fixed_params_note(rows, PLOTTED))
    return fig


SPECS: tuple[PlotSpec, ...] = (
    PlotSpec("e3-bandwidth-batch", "E3 — read bandwidth vs batch size",
             "Gbps of value bytes (payload only, as the post counted) per access mode, one line per runtime; "
             "error bars span the interquartile range. Dashed: this machine's memcpy bandwidth, dotted: its read "
             "bandwidth, both measured at the start of the run: the physical limit of a read that touches every "
             "byte. Hollow triangles are cases faster than that which did not touch their bytes (not a speed); "
             "stars, cases that did but had their data in a CPU cache.",
             ("ipc-bandwidth",), e3_bandwidth_vs_batch),
    PlotSpec("e3-bandwidth-threads", "E3 — read bandwidth vs threads",
             "Gbps of value bytes as threads are added (each thread its own reader and data); the dashed and "
             "dotted lines are memcpy and read bandwidth at each thread count.",
             ("ipc-bandwidth",), e3_bandwidth_vs_threads),
)
