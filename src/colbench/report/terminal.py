"""Terminal tables: every number shown is a measured one, with its spread and sample count."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rich.markup import escape
from rich.table import Table
from rich.text import TextType

from colbench.analysis.aggregate import CaseSummary
from colbench.experiments.e3_ipc_bandwidth.table import gbps_verdict
from colbench.model.metrics import metric
from colbench.model.params import ParamValue
from colbench.model.run_parts import MachineBandwidth
from colbench.redact import printable
from colbench.render.fmt import (
    fmt_bytes,
    fmt_rate,
    fmt_seconds,
    instructions_cell,
    md_text,
    params_label,
    spread,
    varying_params,
)
from colbench.render.tables import plain

#: one row of `show --format json|csv|markdown`: a column per field and per param, each a plain value
FlatRow = Mapping[str, ParamValue]
#: error kinds whose message is the orchestrator's ("worker killed by SIGSEGV"): the worker's own last words on
#: stderr are the cause
OUTSIDE_KINDS = ("crash", "timeout", "oom", "no-result")


@dataclass
class ErrorView:
    """One way a case failed, the processes that failed so folded together: the report's and `show --errors`'."""

    label: str
    env: str
    kind: str
    message: str
    processes: list[int]
    traceback: str = ""
    stderr_tail: str = ""
    exit_code: int | None = None
    signal: Any = None

    @property
    def cause(self) -> str:
        """The message's first line, and for a worker that died, the last line it wrote on stderr."""
        first = next((line for line in self.message.strip().splitlines() if line.strip()), "")
        last_words = next((line.strip() for line in reversed(self.stderr_tail.splitlines()) if line.strip()), "")
        if self.kind in OUTSIDE_KINDS and last_words and last_words not in first:
            return f"{first} ({last_words})"
        return first


def error_views(summaries: Sequence[CaseSummary]) -> list[ErrorView]:
    """Errors per case, the processes that failed the same way folded together."""
    varying = varying_params(summaries)
    views: list[ErrorView] = []
    for s in summaries:
        grouped: dict[tuple[str, str], ErrorView] = {}
        for error in s.errors:
            key = (str(error.get("kind") or "error"), str(error.get("message") or ""))
            if key in grouped:
                grouped[key].processes.append(int(error.get("process_index", -1)))
                continue
            grouped[key] = ErrorView(
                label=f"{s.benchmark} {params_label(s, varying.get(s.benchmark, []))}", env=s.env_name,
                kind=key[0], message=key[1], processes=[int(error.get("process_index", -1))],
                traceback=_tail(error.get("traceback"), 40), stderr_tail=_tail(error.get("stderr_tail"), 40),
                exit_code=error.get("exit_code"), signal=error.get("signal"))
        views.extend(grouped.values())
    return views


def _tail(text: Any, lines: int) -> str:
    if not text:
        return ""
    return "\n".join(str(text).rstrip().splitlines()[-lines:])


def row_dict(summary: CaseSummary) -> dict[str, ParamValue]:
    """A flat, machine-readable row for json/csv/markdown output."""
    return {
        "benchmark": summary.benchmark, "env": summary.env_name, "case_id": summary.case_id, **summary.params,
        "status": "ok" if summary.ok else "error:" + ",".join(summary.error_kinds),
        "processes": summary.processes, "n": summary.wall.get("n"),
        "median_s": summary.wall.get("median"), "iqr_s": summary.wall.get("iqr"), "cv": summary.wall.get("cv"),
        "min_s": summary.wall.get("min"), "first_iteration_s": summary.first_iteration.get("median"),
        "mb_per_s": summary.bytes_per_s / 1e6 if summary.bytes_per_s else None,
        "decoded_mb_per_s": summary.decoded_bytes_per_s / 1e6 if summary.decoded_bytes_per_s else None,
        "memory_bytes": summary.memory_bytes,
        "peak_rss_bytes": summary.peak_rss_bytes, "file_size_bytes": summary.file_size_bytes,
        **_instructions_columns(summary),
        "error_message": "; ".join(e.get("message", "") for e in summary.errors[:1]) or None,
    }


def _instructions_columns(summary: CaseSummary) -> dict[str, ParamValue]:
    counted = summary.metrics.get("instructions")
    if not counted:
        return {}
    return {"instructions_median": counted.get("median"), "instructions_cv": counted.get("cv")}


def throughput_cell(summary: CaseSummary, bandwidth: MachineBandwidth | None) -> str:
    """What a case got through per second, saying of what: the bytes a read decoded into memory ("decoded"), else
    the benchmark's work in bytes of files ("of file") or of data in memory ("in memory"), or rows; Gbps against
    the machine's bandwidth for the benchmarks that report it."""
    if "gbps" in summary.metrics:
        gbps, note = gbps_verdict(summary, bandwidth or MachineBandwidth())
        if note == "bytes not touched":
            return "[yellow]bytes not touched[/yellow]"
        return "-" if gbps is None else f"{gbps:.2f} Gbps" + (f" ({note})" if note else "")
    if summary.decoded_bytes_per_s is not None:
        return f"{fmt_rate(summary.decoded_bytes_per_s)} decoded"
    basis = work_basis(summary.benchmark)
    if summary.bytes_per_s and basis != "rows":
        return f"{fmt_rate(summary.bytes_per_s)} {'in memory' if basis == 'memory' else 'of file'}"
    return f"{summary.rows_per_s:,.0f} rows/s" if summary.rows_per_s else "-"


def work_basis(benchmark: str) -> str:
    """What the benchmark's `work` bytes count ("file", "memory" or "rows"); "file" for one this colbench lacks."""
    from colbench.benchmarks.registry import get_benchmark

    try:
        return get_benchmark(benchmark).work_basis
    except Exception:  # a benchmark this colbench no longer has (results from elsewhere)
        return "file"


def every_case_note(summaries: Sequence[CaseSummary]) -> str:
    """What the every-case table's figures are, where the table is: a reader should not have to guess that a
    Parquet read's throughput once divided the compressed file's bytes."""
    from colbench.benchmarks.registry import get_benchmark

    decoded = {s.benchmark for s in summaries if s.decoded_bytes_per_s is not None}
    meanings = []  # every benchmark with a case shown by its work (an R reader reports no decoded size)
    for name in dict.fromkeys(s.benchmark for s in summaries if s.decoded_bytes_per_s is None and s.ok):
        try:
            meanings.append(f"{name}: {get_benchmark(name).throughput_of}")
        except Exception:  # a benchmark this colbench no longer has: say nothing rather than guess
            continue
    parts = []
    if decoded:
        parts.append(f"\"decoded\" ({', '.join(sorted(decoded))}): the bytes the case's output holds in memory (an "
                     "Arrow table's buffers, a data frame's columns with their strings) ÷ median time, the file it "
                     "read under file size")
    if meanings:
        parts.append(("otherwise " if decoded else "") + "the benchmark's work ÷ median time, where the work is "
                     + "; ".join(meanings))
    return ("median and spread (CV, the coefficient of variation) over every timed iteration of every process; "
            "n: iterations (processes)" + _counted_n_note(summaries) + "; first run: the median first iteration of "
            "a fresh process; throughput: " + ("; ".join(parts) or "-") + ". peak RSS: the largest of the "
            "processes; file size: the file written, or the file read (\"read\").")


def _counted_n_note(summaries: Sequence[CaseSummary]) -> str:
    """Why two sides of one run show different n when only counts were taken: a counting process stops early."""
    if not any("instructions" in s.metrics for s in summaries):
        return ""
    within = metric("instructions").repeat_within or 0
    return (f"; a counting process stops once two counted calls in a row agree within {within:.1%}, or a cycle of "
            "up to 3 calls repeats (--iterations is the most), so n differs between cases and sides of one run")


def file_cell(summary: CaseSummary) -> str:
    """The file the case wrote, else the file it read (marked so): a read's throughput divides that size."""
    if summary.file_size_bytes:
        return fmt_bytes(summary.file_size_bytes)
    if summary.input_size_bytes:
        return f"{fmt_bytes(summary.input_size_bytes)} read"
    return "-"


def results_table(summaries: Sequence[CaseSummary], title: TextType | None = None,
                  bandwidth: MachineBandwidth | None = None) -> Table:
    varying = varying_params(summaries)
    envs = len({s.env_name for s in summaries}) > 1
    table = Table(title=title, show_lines=False, header_style="bold", caption=every_case_note(summaries),
                  caption_justify="left")
    table.add_column("benchmark")
    table.add_column("case")
    if envs:
        table.add_column("env")
    for name in ("median", "spread (CV)", "n", "first run", "throughput", "peak RSS", "file size"):
        table.add_column(name, justify="right")
    counted = any("instructions" in s.metrics for s in summaries)
    if counted:
        table.add_column("instructions (CV)", justify="right")
    for s in summaries:
        label = params_label(s, varying.get(s.benchmark, []))
        cells = [plain(s.benchmark), plain(label)] + ([plain(s.env_name)] if envs else [])
        if not s.ok:
            first = error_views([s])[0] if s.errors else ErrorView("", s.env_name, "error", "no samples", [])
            message = f"[red]{escape(printable(first.kind))}[/red]: {escape(printable(first.cause[:200]))}"
            table.add_row(*cells, message, "", "", "", "", fmt_bytes(s.peak_rss_bytes), "", *[""] * counted)
            continue
        n = s.wall.get("n") or (s.metrics.get("instructions") or {}).get("n")
        table.add_row(*cells, fmt_seconds(s.wall.get("median")), spread(s), f"{n} ({s.processes}p)",
                      fmt_seconds(s.first_iteration.get("median")), throughput_cell(s, bandwidth),
                      fmt_bytes(s.peak_rss_bytes), file_cell(s),
                      *([instructions_cell(s)] if counted else []))
    return table


def render_text(summaries: Sequence[CaseSummary], fmt: str) -> str:
    return render_rows([row_dict(s) for s in summaries], fmt)


def render_rows(rows: Sequence[FlatRow], fmt: str) -> str:
    """Flat rows as json, csv or markdown."""
    if fmt == "json":
        return json.dumps(rows, indent=2, default=str)
    columns = list(dict.fromkeys(k for r in rows for k in r))
    if fmt == "csv":
        out = io.StringIO()
        writer = csv.DictWriter(out, fieldnames=columns)
        writer.writeheader()
        writer.writerows(rows)
        return out.getvalue()
    if fmt == "markdown":
        lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
        for r in rows:
            lines.append("| " + " | ".join(_md(r.get(c)) for c in columns) + " |")
        return "\n".join(lines)
    raise ValueError(f"unknown format {fmt!r}")


def _md(value: ParamValue) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    return md_text(value)
