"""How numbers and cases read: seconds, bytes, rates, spreads, case labels."""

from __future__ import annotations

import html
import json
from collections.abc import Mapping, Sequence
from typing import Any

from colbench.analysis.aggregate import CaseSummary
from colbench.model.metrics import COMPARE_METRICS, SERIES_METRICS, metric, metric_or_none, series_of
from colbench.redact import printable


def fmt_seconds(value: float | None, ascii_only: bool = False) -> str:
    """100 s, 1.50 s, 12.34 ms, 512.0 µs (us with `ascii_only`, for Markdown that must survive every mail client),
    3.0 ns."""
    if value is None:
        return "-"
    if value >= 100:
        return f"{value:.0f} s"
    if value >= 1:
        return f"{value:.2f} s"
    if value >= 1e-3:
        return f"{value * 1e3:.2f} ms"
    if value >= 1e-6 or value == 0:
        return f"{value * 1e6:.1f} {'us' if ascii_only else 'µs'}"
    return f"{value * 1e9:.1f} ns"


def fmt_bytes(value: float | None) -> str:
    if value is None:
        return "-"
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(value) < 1024 or unit == "TiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return str(value)


def fmt_cost(value: float | None, unit: str) -> str:
    """A profile's cost in its unit: instructions (217.4 M instructions), CPU nanoseconds (12.34 ms), or counts of
    another event (1.234 G cycles)."""
    if value is None:
        return "-"
    if unit == "ns":
        return fmt_seconds(value / 1e9)
    if unit == "B":
        return fmt_bytes(value)
    return f"{fmt_instructions(value)} {unit}"


def fmt_instructions(value: float | None) -> str:
    """An instruction count: 217.4 M, 1.234 G."""
    if value is None:
        return "-"
    for unit, scale in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(value) >= scale:
            return f"{value / scale:.4g} {unit}"
    return f"{value:.0f}"


def instructions_cell(summary: CaseSummary) -> str:
    """Median instructions per iteration with their spread (CV, all iterations pooled), or '-'."""
    counted = summary.metrics.get("instructions") or {}
    if not counted.get("n"):
        return "-"
    cv = counted.get("cv")
    return fmt_instructions(counted.get("median")) + ("" if cv is None else f" ±{cv * 100:.2f}%")


def fmt_metric(value: float | None, metric_name: str = "time", ascii_only: bool = False, unit: str = "") -> str:
    """A value of a metric in its unit (model/metrics.py): seconds, bytes, an instruction count, or the number with
    `unit`, the benchmark's own for a metric without one (an asv `track_*`'s `unit` attribute)."""
    if value is None or value != value or value in (float("inf"), float("-inf")):
        return "-"
    known = metric_or_none(metric_name)
    if known is None:
        return f"{value:.4g}"
    unit = known.unit or unit
    if unit == "s":
        return fmt_seconds(value, ascii_only)
    if unit == "B":
        return fmt_bytes(value)
    if unit == "instructions":
        return f"{fmt_instructions(value)} instr"
    return f"{value:.4g} {unit}".rstrip()  # no unit: the benchmark's own (an asv track_ value)


def fmt_measured(value: float | None, metric_name: str = "time") -> str:
    """A value of a per-iteration metric: seconds for time, a count for instructions."""
    return fmt_metric(value, metric_name)


def measured_metrics(summaries: Sequence[CaseSummary]) -> list[str]:
    """The per-iteration metrics these cases recorded: time, instructions or both (time when none)."""
    found = [m for m in SERIES_METRICS
             if any((s.wall if series_of(m) == "wall_s" else s.metrics.get(series_of(m)) or {}).get("n")
                    for s in summaries)]
    return found or ["time"]


def summary_median(summary: CaseSummary, metric_name: str = "time") -> float | None:
    series = series_of(metric_name)
    return (summary.wall if series == "wall_s" else summary.metrics.get(series) or {}).get("median")


def fmt_percent(fraction: float) -> str:
    """A fraction as a percentage with the digits it has: 0.03 → 3%, 0.0025 → 0.25% (never "0%" for a small
    threshold, as `:.0%` would print)."""
    return f"{fraction * 100:.4g}%"


def threshold_defaults(names: Sequence[str] = COMPARE_METRICS) -> str:
    """The metrics' default thresholds from the registry, the common one first: '3%, 0.25% for instructions'."""
    thresholds = [metric(name).threshold for name in names]
    common = max(set(thresholds), key=thresholds.count)
    others = [f"{fmt_percent(metric(name).threshold)} for {name}" for name in names
              if metric(name).threshold != common]
    return ", ".join([fmt_percent(common), *others])


def md_text(value: Any) -> str:
    """Text for a Markdown cell or line (a pull-request comment, the report's .md): table pipes and newlines
    escaped, HTML shown as text rather than rendered (a run, machine or commit name holding `<img …>` or a link
    stays inert), control characters escaped."""
    if value is None:
        return ""
    text = printable(str(value))
    text = html.escape(text, quote=False)
    return text.replace("|", "\\|").replace("\n", " ")


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


def _not_defaults(benchmark: str, params: Mapping[str, object]) -> list[str]:
    """The params of a lone case that a plain run of its benchmark would not have had as its only value, so a
    single chosen case is labelled by what was chosen rather than "(defaults)"."""
    from colbench.benchmarks.registry import UnknownTarget, get_benchmark

    try:
        grid = get_benchmark(benchmark).full_grid()
    except UnknownTarget:  # a benchmark this colbench does not know (results from elsewhere): show every param
        return list(params)
    defaults = {p.name: p.default for p in grid.params}
    return [n for n, v in params.items() if n not in defaults or tuple(defaults[n]) != (v,)]


def params_label(summary: CaseSummary, shown: Sequence[str]) -> str:
    return " ".join(f"{n}={summary.params.get(n)}" for n in shown) or "(defaults)"


def spread(summary: CaseSummary) -> str:
    cv = summary.wall.get("cv")
    return "-" if cv is None else f"±{cv * 100:.1f}%"


def fmt_duration(seconds: float | None) -> str:
    """A wall-clock span for progress and summaries: '0.4 s', '8 s', '3 min 20 s', '1 h 05 min'."""
    if seconds is None:
        return "-"
    seconds = max(0.0, seconds)
    if seconds < 9.95:
        return f"{seconds:.1f} s"
    if seconds < 60:
        return f"{seconds:.0f} s"
    minutes, secs = divmod(round(seconds), 60)
    if minutes < 60:
        return f"{minutes} min {secs:02d} s"  # the seconds stay past 10 minutes: an elapsed time must keep moving
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


def slug(text: str) -> str:
    """A name for a file made from a label: letters, digits, '-', '_' and '.' kept, anything else '-'."""
    return "".join(c if c.isalnum() or c in "-_." else "-" for c in text).strip("-") or "x"
