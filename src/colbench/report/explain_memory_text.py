"""`colbench explain --metric memory` as text: the lines under each case's table (the peak, what the listed
functions account for, the churn, the peak RSS the results recorded), its JSON document and its flame graph."""

from __future__ import annotations

from typing import Any, Protocol

from colbench.profiles.diff import ProfileDiff
from colbench.profiles.explanation import CaseExplanation
from colbench.profiles.memory import MemorySide
from colbench.render.flamegraph import differential_svg
from colbench.render.fmt import fmt_bytes
from colbench.report.explain_text import case_document, flame_stacks, signed_cost, symbol_notes
from colbench.report.explain_types import CaseDocument

#: the table's columns: the bytes each function allocated that were live at the peak (its "self"), on each side
MEMORY_COLUMNS = ("function", "library", "at peak A", "at peak B", "Δ at peak", "share", "Δ inclusive")
#: how far the traced peaks' change may lie from the recorded peak RSS's change before a note says so
#: (docs/explain.md, "The traced peak and the recorded peak RSS")
RSS_AGREEMENT = 0.10


class MemoryFactsLike(Protocol):
    churn: tuple[int, int]
    allocations: tuple[int, int]
    recorded_rss: tuple[float | None, float | None]
    measured: tuple[dict[str, Any], dict[str, Any]]


def _change(a: float, b: float) -> str:
    ratio = f" ({b / a - 1:+.1%})" if a else ""
    return f"{fmt_bytes(a)} → {fmt_bytes(b)}, change {signed_cost(b - a, 'B')}{ratio}"


def memory_lines(case: CaseExplanation, facts: MemoryFactsLike | None) -> list[str]:
    diff = case.diff
    if diff is None:
        return [f"error: {case.error}"]
    lines = [f"peak of the timed call (bytes it allocated and held at its high-water mark; heaptrack, Arrow's pools "
             f"included): {_change(diff.baseline.total, diff.contender.total)}"]
    lines.append(_accounted(diff))
    if facts is not None:
        lines.append(f"churn (every byte the call allocated): {_change(*facts.churn)}; "
                     f"{facts.allocations[0]:,} → {facts.allocations[1]:,} allocations")
        lines += rss_lines(diff, facts)
        lines += pool_notes(diff, facts)
    if case.verdict:
        lines.append(f"verdict: {case.verdict}")
    lines += [n for n in symbol_notes(diff) if not n.startswith("Python functions")]
    lines.append("Python functions are not named: their allocations show under the interpreter's C functions "
                 "that made them (PyList_New, PyUnicode_New, …) and the native code they called")
    for label, profile in ((diff.baseline.label, case.baseline), (diff.contender.label, case.contender)):
        lines += [f"{label}: {w}" for w in profile.warnings]
    return lines


def _accounted(diff: ProfileDiff) -> str:
    if diff.listed_share is None:
        return "the peaks are equal: no change to account for"
    listed = f"the {len(diff.changes)} functions listed account" if len(diff.changes) != 1 else \
        "the function listed accounts"
    return f"{listed} for {diff.listed_share:.1%} of the peak's change ({diff.changed_functions} functions changed)"


def outside_peak(diff: ProfileDiff, facts: MemoryFactsLike) -> tuple[float, float] | None:
    """Each side's recorded peak RSS less its traced peak: the process's memory that is not the timed call's live
    allocations (interpreter, libraries' code and data, imports, pages the allocator keeps). The same case on both
    sides should have the same; None when a side recorded no peak RSS."""
    a, b = facts.recorded_rss
    if a is None or b is None:
        return None
    return a - diff.baseline.total, b - diff.contender.total


def rss_gap(diff: ProfileDiff, facts: MemoryFactsLike) -> float | None:
    """How far the two sides' memory outside the traced peak differ, relative to the larger peak RSS."""
    outside = outside_peak(diff, facts)
    if outside is None:
        return None
    a, b = facts.recorded_rss
    return abs(outside[1] - outside[0]) / max(a or 0.0, b or 0.0, 1.0)


def rss_lines(diff: ProfileDiff, facts: MemoryFactsLike) -> list[str]:
    """The traced peaks beside the peak RSS the stored results recorded (docs/explain.md, "The traced peak and the
    recorded peak RSS"): the RSS holds the whole process, so the sides are compared by what lies outside the traced
    peak, which should not change."""
    a, b = facts.recorded_rss
    outside, gap = outside_peak(diff, facts), rss_gap(diff, facts)
    if a is None or b is None or outside is None or gap is None:
        return ["peak RSS: not recorded on both sides (no comparison with the traced peaks)"]
    lines = [f"peak RSS recorded by the runs (median, the whole worker process): {_change(a, b)}",
             f"peak RSS less the traced peak (interpreter, libraries, imports, pages the allocator keeps): "
             f"{fmt_bytes(outside[0])} → {fmt_bytes(outside[1])}, {gap:.1%} of the peak RSS apart"]
    if gap > RSS_AGREEMENT:
        lines.append(f"note: the traced peaks do not account for the peak RSS's change ({signed_cost(b - a, 'B')} "
                     f"against {signed_cost(diff.total_change, 'B')} traced): a peak outside the timed call, "
                     "imports or threads that differ, or memory heaptrack does not see (mmap by the case itself)")
    return lines


def pool_notes(diff: ProfileDiff, facts: MemoryFactsLike) -> list[str]:
    """A side whose trace holds far less than its Arrow pool's own peak: the pool's blocks were not seen (a pyarrow
    whose libarrow does not call its pool backend through the PLT, so the shim cannot report it)."""
    notes = []
    for side, measured in zip((diff.baseline, diff.contender), facts.measured, strict=True):
        pool_peak = measured.get("pool_peak_bytes")
        if isinstance(pool_peak, int | float) and pool_peak > (1 << 20) and side.total < 0.5 * pool_peak:
            notes.append(f"note: {side.label}'s trace holds {fmt_bytes(side.total)} at its peak, its Arrow pool "
                         f"({measured.get('pool')}) peaked at {fmt_bytes(pool_peak)}: the pool's blocks were not seen "
                         "(try allocator=system, which heaptrack sees directly)")
    return notes


def memory_document(case: Any) -> CaseDocument:
    doc = case_document(case)
    diff, facts = case.diff, getattr(case, "memory", None)
    if diff is not None:
        doc["metric"] = "memory (bytes live at the timed call's peak, heaptrack with Arrow's pools; self: the " \
                        "function that allocated them)"
        doc["notes"] = [n for n in doc.get("notes", []) if not n.startswith("Python functions")]
    if facts is not None:
        doc["memory"] = {"churn_bytes": {"baseline": facts.churn[0], "contender": facts.churn[1]},
                         "allocations": {"baseline": facts.allocations[0], "contender": facts.allocations[1]},
                         "recorded_peak_rss_bytes": {"baseline": facts.recorded_rss[0],
                                                     "contender": facts.recorded_rss[1]},
                         "measured": {"baseline": facts.measured[0], "contender": facts.measured[1]}}
    return doc


def draw_memory(case: Any, a: MemorySide, b: MemorySide) -> str:
    """The differential flame graph of the two peaks, in bytes."""
    churn = f"; churn {fmt_bytes(a.churn_bytes)} → {fmt_bytes(b.churn_bytes)}"
    ratio = f" ({b.peak_bytes / a.peak_bytes - 1:+.1%})" if a.peak_bytes else ""
    subtitle = (f"{a.view.label}: {fmt_bytes(a.peak_bytes)}, {b.view.label}: {fmt_bytes(b.peak_bytes)}{ratio} live at "
                f"the timed call's peak{churn}; heaptrack, stacks end at the allocating function")
    return differential_svg(flame_stacks(a.view), flame_stacks(b.view), title=f"Where the memory went: {case.label}",
                            subtitle=subtitle, baseline_label=a.view.label, contender_label=b.view.label, unit="B")


def memory_summary(peak_a: float, peak_b: float, listed: float | None, count: int,
                   churn: tuple[int, int] | None = None) -> str:
    """The sentence under a memory flame graph in the report and the dashboard."""
    ratio = f" ({peak_b / peak_a - 1:+.1%})" if peak_a else ""
    text = (f"Peak of the timed call (live bytes it allocated, heaptrack with Arrow's pools): {fmt_bytes(peak_a)} → "
            f"{fmt_bytes(peak_b)}{ratio}.")
    if churn is not None:
        text += f" Churn (all it allocated): {fmt_bytes(churn[0])} → {fmt_bytes(churn[1])}."
    if listed is not None:
        text += f" The {count} functions listed account for {listed:.0%} of the peak's change."
    return text
