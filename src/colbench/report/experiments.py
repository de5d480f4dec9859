"""The tables of the reference experiments: what this machine measured, beside what the posts published.

Each builder takes the case summaries of one benchmark and returns a Rich table (or None when the results
hold nothing for it). The numbers are medians over every timed iteration of every process, with CV.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from rich.table import Table

from colbench.analysis.aggregate import CaseSummary
from colbench.report import published as pub
from colbench.report.terminal import fmt_bytes, fmt_seconds, spread


def _median(s: CaseSummary | None) -> float | None:
    return s.wall.get("median") if s is not None and s.ok else None


def _cell(s: CaseSummary | None) -> str:
    if s is None:
        return "-"
    if not s.ok:
        return f"[red]{','.join(s.error_kinds)}[/red]"
    return f"{fmt_seconds(_median(s))} {spread(s)}"


def _pick(summaries: Sequence[CaseSummary], **params: Any) -> CaseSummary | None:
    found = [s for s in summaries if all(s.params.get(k) == v for k, v in params.items())]
    if not found:
        return None
    return max(found, key=lambda s: s.params.get("threads", 0))  # the most threads, as the posts reported


def _published(value: float | None) -> str:
    return "" if value is None else fmt_seconds(value)


def _figure(calibration: dict[str, Any] | None, name: str, threads: int) -> float | None:
    figures = (calibration or {}).get(name) or {}
    return figures.get(str(threads)) or (max(figures.values()) if figures else None)


def memcpy_for(calibration: dict[str, Any] | None, threads: int) -> float | None:
    """This machine's memcpy bandwidth at `threads`, as measured once for the run (Gbit/s)."""
    return _figure(calibration, "memcpy_gbps", threads)


def gbps_verdict(summary: CaseSummary, calibration: dict[str, Any] | None) -> tuple[float | None, str]:
    """Median Gbps and a note on it against the machine's measured bandwidth.

    Access modes that do not read the value bytes (lazy, offsets) over the zero-copy buffer count bytes
    nothing touched: their figure is 'bytes not touched', never a speed, whatever its size. Through the
    copying stream every byte is copied on its way in (as in the post, whose holder figures are such
    reads), so there it is a speed. Faster than memory can be read means the data sat in a CPU cache."""
    gbps = (summary.metrics.get("gbps") or {}).get("median")
    if summary.params.get("access") in ("lazy", "offsets") and summary.params.get("source", "buffer") == "buffer":
        return gbps, "bytes not touched"
    threads = int(summary.params.get("threads", 1))
    memcpy = _figure(calibration, "memcpy_gbps", threads)
    ceiling = max(filter(None, (memcpy, _figure(calibration, "read_gbps", threads))), default=None)
    if gbps is None or ceiling is None:
        return gbps, ""
    if gbps > ceiling:
        return gbps, "above memory bandwidth: cache-resident"
    return gbps, f"{gbps / memcpy:.0%} of memcpy" if memcpy else ""


def e1_table(summaries: Sequence[CaseSummary], run: dict[str, Any]) -> Table | None:
    rows = [s for s in summaries if s.benchmark == "csv-read"]
    if not rows:
        return None
    sources = sorted({s.params["source"] for s in rows})
    comps = sorted({s.params["compression"] for s in rows})
    table = Table(title="E1 — CSV read (median, most threads); published: 8 cores, full files, to data.frame")
    table.add_column("reader → output")
    for source in sources:
        for comp in comps:
            table.add_column(f"{source} {comp}", justify="right")
        table.add_column(f"{source} published", justify="right", style="dim")
    for reader, output in sorted({(s.params["reader"], s.params["output"]) for s in rows}):
        cells = [f"{reader} → {output}"]
        for source in sources:
            for comp in comps:
                cells.append(_cell(_pick(rows, reader=reader, output=output, source=source, compression=comp)))
            key = (source, "pyarrow" if reader == "pyarrow" else reader)
            cells.append(_published(pub.E1_SECONDS.get(key)) if output == "dataframe" else "")
        table.add_row(*cells)
    return table


def e2_table(summaries: Sequence[CaseSummary], run: dict[str, Any]) -> Table | None:
    rows = [s for s in summaries if s.benchmark == "dsib"]
    if not rows:
        return None
    table = Table(title="E2 — Data Science I/O baseline (pandas): Parquet vs CSV")
    for column in ("case", "Parquet", "CSV", "Parquet speedup", "published P / CSV", "published speedup"):
        table.add_column(column, justify="right" if column != "case" else "left")
    for (operation, variant), label in pub.E2_LABELS.items():
        parquet = _pick(rows, operation=operation, variant=variant, format="parquet")
        csv = _pick(rows, operation=operation, variant=variant, format="csv")
        if parquet is None and csv is None:
            continue
        p, c = _median(parquet), _median(csv)
        speedup = f"{c / p:.1f}×" if p and c else "-"
        published = pub.E2_SECONDS[(operation, variant)]
        table.add_row(f"{label} {operation} {variant}", _cell(parquet), _cell(csv), speedup,
                      f"{published[0]:g} / {published[1]:g} s", f"{published[1] / published[0]:.0f}×")
    return table


def e3_table(summaries: Sequence[CaseSummary], run: dict[str, Any]) -> Table | None:
    rows = [s for s in summaries if s.benchmark == "ipc-bandwidth"]
    if not rows:
        return None
    calibration = run.get("calibration")
    memcpy = (calibration or {}).get("memcpy_gbps") or {}
    table = Table(title="E3 — Arrow in-memory read bandwidth (value bytes only); memcpy here: "
                  + ", ".join(f"{t} thr {g:g} Gbps" for t, g in memcpy.items()))
    for column in ("runtime", "type", "access", "source", "batch rows", "threads", "Gbps", "vs memcpy",
                   "published (Java, 1 KiB)"):
        table.add_column(column, justify="left" if column in ("runtime", "type", "access", "source") else "right")
    key = lambda s: (s.params["runtime"], s.params["type"], s.params["access"], s.params["source"],  # noqa: E731
                     s.params["batch_rows"], s.params["threads"])
    for s in sorted(rows, key=key):
        p = s.params
        if not s.ok:
            table.add_row(*map(str, key(s)), f"[red]{','.join(s.error_kinds)}[/red]", "", "")
            continue
        gbps, note = gbps_verdict(s, calibration)
        shown = f"[yellow]{note}[/yellow]" if note.startswith(("bytes", "above")) else note
        speed = "—" if note == "bytes not touched" else (f"{gbps:.2f}" if gbps is not None else "-")
        as_in_post = p["type"] == "binary" and p["value_size"] == 1024 and p["source"] == "stream"
        published = pub.E3_GBPS.get((p["access"], p["batch_rows"])) if as_in_post and p["threads"] == 1 else None
        if published is None and as_in_post and p["access"] == "offsets" and p["batch_rows"] == 10_000:
            published = pub.E3_CORE_SCALING_GBPS.get(int(p["threads"]))
        table.add_row(*map(str, key(s)), speed, shown, f"{published:g}" if published else "")
    return table


def e4_table(summaries: Sequence[CaseSummary], run: dict[str, Any]) -> Table | None:
    rows = [s for s in summaries if s.benchmark == "mmap-read"]
    if not rows:
        return None
    table = Table(title="E4 — 10 × Int64 frame: Arrow IPC vs CSV; first run in a fresh process vs warm")
    for column in ("operation", "rows", "warm median", "first run", "published warm", "published first"):
        table.add_column(column, justify="left" if column == "operation" else "right")
    for s in sorted(rows, key=lambda s: list(pub.E4_SECONDS).index(s.params["operation"])):
        op = s.params["operation"]
        table.add_row(op, f"{s.params['rows']:,}", _cell(s), fmt_seconds(s.first_iteration.get("median")),
                      _published(pub.E4_SECONDS.get(op)), _published(pub.E4_FIRST_RUN_SECONDS.get(op)))
    return table


def e5_table(summaries: Sequence[CaseSummary], run: dict[str, Any]) -> Table | None:
    reads = [s for s in summaries if s.benchmark == "file-read"]
    writes = [s for s in summaries if s.benchmark == "file-write"]
    if not reads and not writes:
        return None
    table = Table(title="E5 — Feather V2 vs Parquet (pyarrow; most threads); published: 4 threads, full files")
    for column in ("source", "format", "codec", "read → table", "read → data frame", "write", "file size",
                   "published → table / → df", "published size"):
        table.add_column(column, justify="left" if column in ("source", "format", "codec") else "right")
    keys = sorted({(s.params["source"], s.params["format"], s.params["codec"]) for s in reads + writes})
    for source, fmt, codec in keys:
        to_table = _pick(reads, source=source, format=fmt, codec=codec, engine="pyarrow", output="arrow_table")
        to_df = _pick(reads, source=source, format=fmt, codec=codec, engine="pyarrow", output="dataframe")
        write = _pick(writes, source=source, format=fmt, codec=codec, engine="pyarrow", input="arrow_table")
        size = write.file_size_bytes if write else None
        if size is None:
            size = next((_input_size(s) for s in (to_table, to_df) if s is not None), None)
        pt = pub.E5_READ_SECONDS.get((source, fmt, codec, "arrow_table"))
        pd_ = pub.E5_READ_SECONDS.get((source, fmt, codec, "dataframe"))
        psize = pub.E5_SIZE_MIB.get((source, fmt, codec))
        table.add_row(source, fmt, codec, _cell(to_table), _cell(to_df), _cell(write), fmt_bytes(size),
                      f"{_published(pt) or '-'} / {_published(pd_) or '-'}" if pt or pd_ else "",
                      f"{psize} MiB" if psize else "")
    return table


def _input_size(summary: CaseSummary) -> int | None:
    for result in summary.results:
        data = (result.get("inputs") or {}).get("data") or {}
        if data.get("size_bytes"):
            return int(data["size_bytes"])
    return None


BUILDERS: tuple[Callable[[Sequence[CaseSummary], dict[str, Any]], Table | None], ...] = (
    e1_table, e2_table, e3_table, e4_table, e5_table,
)


def experiment_tables(summaries: Sequence[CaseSummary], run: dict[str, Any]) -> list[Table]:
    return [t for t in (builder(summaries, run) for builder in BUILDERS) if t is not None]
