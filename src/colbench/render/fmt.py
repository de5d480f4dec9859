"""How numbers and cases read: seconds, bytes, rates, spreads, case labels."""

from __future__ import annotations

import json
from collections.abc import Sequence

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
        varying[bench] = [n for n in names if len({json.dumps(m.params.get(n)) for m in members}) > 1]
    return varying


def case_label(summary: CaseSummary, shown: Sequence[str]) -> str:
    return " ".join(f"{n}={summary.params.get(n)}" for n in shown) or "(defaults)"


def spread(summary: CaseSummary) -> str:
    cv = summary.wall.get("cv")
    return "-" if cv is None else f"±{cv * 100:.1f}%"
