"""Terminal tables: every number shown is a measured one, with its spread and sample count."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from typing import Any

from rich.markup import escape
from rich.table import Table

from colbench.analysis.aggregate import CaseSummary


def fmt_seconds(value: float | None) -> str:
    if value is None:
        return "-"
    if value >= 100:
        return f"{value:.0f} s"
    if value >= 1:
        return f"{value:.2f} s"
    if value >= 1e-3:
        return f"{value * 1e3:.2f} ms"
    return f"{value * 1e6:.1f} µs"


def fmt_bytes(value: float | None) -> str:
    if value is None:
        return "-"
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(value) < 1024 or unit == "TiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return str(value)


def fmt_rate(bytes_per_s: float | None) -> str:
    return "-" if bytes_per_s is None else f"{bytes_per_s / 1e6:,.1f} MB/s"


def varying_params(summaries: Sequence[CaseSummary]) -> dict[str, list[str]]:
    """Per benchmark, the params whose values differ between its cases (the others go in a caption)."""
    by_bench: dict[str, list[CaseSummary]] = {}
    for s in summaries:
        by_bench.setdefault(s.benchmark, []).append(s)
    varying: dict[str, list[str]] = {}
    for bench, members in by_bench.items():
        names = list(members[0].params)
        varying[bench] = [n for n in names if len({json.dumps(m.params.get(n)) for m in members}) > 1] \
            or _not_defaults(bench, members[0].params)
    return varying


def _not_defaults(benchmark: str, params: dict[str, Any]) -> list[str]:
    """The params of a lone case that a plain run of its benchmark would not have had as its only value, so a
    single chosen case is labelled by what was chosen rather than "(defaults)"."""
    from colbench.suites.registry import UnknownTarget, get_benchmark

    try:
        grid = get_benchmark(benchmark).full_grid()
    except UnknownTarget:  # a benchmark this colbench does not know (results from elsewhere): show every param
        return list(params)
    defaults = {p.name: p.default for p in grid.params}
    return [n for n, v in params.items() if n not in defaults or tuple(defaults[n]) != (v,)]


def case_label(summary: CaseSummary, shown: Sequence[str]) -> str:
    return " ".join(f"{n}={summary.params.get(n)}" for n in shown) or "(defaults)"


def spread(summary: CaseSummary) -> str:
    cv = summary.wall.get("cv")
    return "-" if cv is None else f"±{cv * 100:.1f}%"


def row_dict(summary: CaseSummary) -> dict[str, Any]:
    """A flat, machine-readable row for json/csv/markdown output."""
    return {
        "benchmark": summary.benchmark, "env": summary.env_name, "case_id": summary.case_id, **summary.params,
        "status": "ok" if summary.ok else "error:" + ",".join(summary.error_kinds),
        "processes": summary.processes, "n": summary.wall.get("n"),
        "median_s": summary.wall.get("median"), "iqr_s": summary.wall.get("iqr"), "cv": summary.wall.get("cv"),
        "min_s": summary.wall.get("min"), "first_iteration_s": summary.first_iteration.get("median"),
        "mb_per_s": summary.bytes_per_s / 1e6 if summary.bytes_per_s else None,
        "peak_rss_bytes": summary.peak_rss_bytes, "file_size_bytes": summary.file_size_bytes,
        "error_message": "; ".join(e.get("message", "") for e in summary.errors[:1]) or None,
    }


def throughput_cell(summary: CaseSummary, calibration: dict[str, Any] | None) -> str:
    """MB/s of input processed, or Gbps against memcpy for benchmarks that report it."""
    if "gbps" in summary.metrics:
        from colbench.report.experiments import gbps_verdict

        gbps, note = gbps_verdict(summary, calibration)
        if note == "bytes not touched":
            return "[yellow]bytes not touched[/yellow]"
        return "-" if gbps is None else f"{gbps:.2f} Gbps" + (f" ({note})" if note else "")
    return fmt_rate(summary.bytes_per_s)


def results_table(summaries: Sequence[CaseSummary], title: str | None = None,
                  calibration: dict[str, Any] | None = None) -> Table:
    varying = varying_params(summaries)
    envs = len({s.env_name for s in summaries}) > 1
    table = Table(title=title, show_lines=False, header_style="bold")
    table.add_column("benchmark")
    table.add_column("case")
    if envs:
        table.add_column("env")
    for name, justify in (("median", "right"), ("spread (CV)", "right"), ("n", "right"), ("first run", "right"),
                          ("throughput", "right"), ("peak RSS", "right"), ("file size", "right")):
        table.add_column(name, justify=justify)
    for s in summaries:
        label = case_label(s, varying.get(s.benchmark, []))
        cells = [s.benchmark, label] + ([s.env_name] if envs else [])
        if not s.ok:
            first = s.errors[0] if s.errors else {}
            message = f"[red]{escape(first.get('kind', 'error'))}[/red]: {escape(first.get('message', '')[:140])}"
            table.add_row(*cells, message, "", "", "", "", fmt_bytes(s.peak_rss_bytes), "")
            continue
        table.add_row(*cells, fmt_seconds(s.wall.get("median")), spread(s),
                      f"{s.wall.get('n')} ({s.processes}p)",
                      fmt_seconds(s.first_iteration.get("median")), throughput_cell(s, calibration),
                      fmt_bytes(s.peak_rss_bytes), fmt_bytes(s.file_size_bytes))
    return table


def render_text(summaries: Sequence[CaseSummary], fmt: str) -> str:
    return render_rows([row_dict(s) for s in summaries], fmt)


def render_rows(rows: Sequence[dict[str, Any]], fmt: str) -> str:
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


def _md(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value).replace("|", "\\|")
