"""Cells of result tables: a case's median with its spread, the published figure beside it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.text import Text

from colbench.analysis.aggregate import CaseSummary
from colbench.redact import printable
from colbench.render.fmt import fmt_seconds, spread


def plain(value: Any) -> Text:
    """A cell or title shown as the text it is: no Rich markup read in it, control characters escaped. For every
    string that comes from a store or a user (run, machine and environment names, labels, messages): in a shared
    store, one user's run name must not act on another user's terminal."""
    return Text(printable("" if value is None else str(value)))


def median_s(s: CaseSummary | None) -> float | None:
    return s.wall.get("median") if s is not None and s.ok else None


def cell(s: CaseSummary | None) -> str:
    if s is None:
        return "-"
    if not s.ok:
        return f"[red]{','.join(s.error_kinds)}[/red]"
    median = median_s(s)
    if median is None:  # counted, not timed (--measure instructions): one dash, not a time and a spread of nothing
        return "-"
    shown = spread(s)
    return fmt_seconds(median) + (f" {shown}" if shown != "-" else "")


def row_for(summaries: Sequence[CaseSummary], **params: Any) -> CaseSummary | None:
    found = [s for s in summaries if all(s.params.get(k) == v for k, v in params.items())]
    if not found:
        return None
    return max(found, key=lambda s: _threads(s.params.get("threads")))  # the most threads, as the posts reported


def _threads(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def published_cell(value: float | None) -> str:
    return "" if value is None else fmt_seconds(value)
