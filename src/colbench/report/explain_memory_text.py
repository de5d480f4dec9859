"""`colbench explain --metric memory` as text: the lines under each case's table (the peak, what the listed
functions account for, the churn, the peak RSS the results recorded), its JSON document and its flame graph."""

from __future__ import annotations

from typing import Any, Protocol

from colbench.profiles.diff import ProfileDiff
from colbench.profiles.explanation import CaseExplanation
from colbench.profiles.memory import MemorySide
from colbench.render.flamegraph import differential_svg
from colbench.render.fmt import fmt_bytes
from colbench.report.explain_text import case_document, flame_stacks, signed_cost, symbol_notes, too_small_text
from colbench.report.explain_types import CaseDocument

#: the table's columns: the bytes each function allocated that were live at the peak (its "self"), on each side
MEMORY_COLUMNS = ("function", "library", "at peak A", "at peak B", "Δ at peak", "share", "Δ inclusive")
#: how far the traced peaks' change may lie from the recorded peak RSS's change before a note says so
#: (docs/explain.md, "The traced peak and the recorded peak RSS")
RSS_AGREEMENT = 0.10


class MemoryFactsLike(Protocol):
    @property
    def churn(self) -> tuple[int, int]: ...
    @property
    def allocations(self) -> tuple[int, int]: ...
    @property
    def recorded_rss(self) -> tuple[float | None, float | None]: ...
    @property
    def measured(self) -> tuple[dict[str, Any], dict[str, Any]]: ...


def _change(a: float, b: float) -> str:
    ratio = f" ({b / a - 1:+.1%})" if a else ""
    return f"{fmt_bytes(a)} → {fmt_bytes(b)}, change {signed_cost(b - a, 'B')}{ratio}"


def memory_lines(case: CaseExplanation, facts: MemoryFactsLike | None) -> list[str]:
    diff = case.diff
    if diff is None:
        return [f"error: {case.error}"]
    lines = [f"peak of the timed call (bytes it allocated and held at its high-water mark; heaptrack, "
             f"{traced_pools(facts.measured if facts else ({}, {}))}): "
             f"{_change(diff.baseline.total, diff.contender.total)}"]
    lines.append(_accounted(diff))
    if facts is not None:
        lines.append(f"churn (every byte the call allocated): {_change(*facts.churn)}; "
                     f"{facts.allocations[0]:,} → {facts.allocations[1]:,} allocations")
        lines += rss_lines(diff, facts)
        lines += memory_caveats(diff, facts, case.verdict)
    if case.verdict:
        lines.append(f"verdict: {case.verdict}")
    lines += [n for n in symbol_notes(diff) if not n.startswith("Python functions")]
    lines.append("Python functions are not named: their allocations show under the interpreter's C functions "
                 "that made them (PyList_New, PyUnicode_New, …) and the native code they called")
    for label, profile in ((diff.baseline.label, case.baseline), (diff.contender.label, case.contender)):
        lines += [f"{label}: {w}" for w in profile.warnings]
    return lines


def _accounted(diff: ProfileDiff) -> str:
    if diff.too_small_to_split:
        return too_small_text(diff, "change of the peak")
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
    return [f"peak RSS recorded by the runs (median, the whole worker process): {_change(a, b)}",
            f"peak RSS less the traced peak (interpreter, libraries, imports, pages the allocator keeps): "
            f"{fmt_bytes(outside[0])} → {fmt_bytes(outside[1])}, {gap:.1%} of the peak RSS apart",
            *(worker_rss(facts) if gap <= RSS_AGREEMENT else [])]  # else the note beside the verdict has them


#: the profiling worker's RSS figures (memory.json), in the order the worker passes them
WORKER_RSS = (("rss_before_first_call_bytes", "set up, before the first call"),
              ("rss_before_call_bytes", "after the warm-up calls"), ("call_peak_rss_bytes", "the timed call's peak"))


def worker_rss(facts: MemoryFactsLike) -> list[str]:
    """Where in the process the RSS grew, as the profiling workers measured it (under heaptrack, so larger than an
    untraced worker's): after setup, after the warm-ups (what they left resident), at the timed call's peak."""
    parts = [f"{what} {fmt_bytes(facts.measured[0][key])} → {fmt_bytes(facts.measured[1][key])}"
             for key, what in WORKER_RSS
             if all(isinstance(m.get(key), int | float) for m in facts.measured)]
    return [f"the profiling workers' RSS: {'; '.join(parts)}"] if parts else []


def traced_pools(measured: tuple[dict[str, Any], dict[str, Any]]) -> str:
    """Which Arrow pools the two traces saw, in a few words: "Arrow's pools included", or each side's pool where
    one side's call was traced on a pool other than its default (runner/memory_profile.py)."""
    pools = [m.get("traced_pool") or m.get("pool") for m in measured]
    if not any(m.get("traced_pool") for m in measured):
        return "Arrow's pools included"
    return f"Arrow's pools included: traced on {pools[0] or 'its pool'} → {pools[1] or 'its pool'}"


def memory_caveats(diff: ProfileDiff, facts: MemoryFactsLike, verdict: str | None = None) -> list[str]:
    """What a reader of the traced peaks must know beside the verdict, for the terminal, the report and the
    dashboard alike: a side traced on another pool than its default, a pool whose blocks were not seen, traced
    peaks that do not account for the peak RSS's change (or move the other way)."""
    notes = []
    for side, measured in zip((diff.baseline, diff.contender), facts.measured, strict=True):
        notes += _pool_note(side.label, side.total, measured)
    a, b = facts.recorded_rss
    gap = rss_gap(diff, facts)
    if a and b and gap is not None and gap > RSS_AGREEMENT:
        traced = diff.ratio - 1 if diff.ratio is not None else 0.0
        against = ("hardly changed against" if abs(traced) < RSS_AGREEMENT / 3 else
                   "moves the other way from" if (b - a) * diff.total_change < 0 else "does not account for")
        notes.append(f"note: the traced peak ({signed_cost(diff.total_change, 'B')}, {traced:+.1%}) {against} the "
                     f"peak RSS's change ({signed_cost(b - a, 'B')}, {b / a - 1:+.1%}){_about(verdict)}: the "
                     "change lies outside the timed call's live allocations (imports and libraries, pages the "
                     f"allocator keeps from the warm-ups{_phases(facts)}), or in memory heaptrack does not see "
                     "(mmap by the case itself); the flame graph shows the traced peaks only")
    return notes


def _phases(facts: MemoryFactsLike) -> str:
    lines = worker_rss(facts)
    return f"; {lines[0]}" if lines else ""


def _about(verdict: str | None) -> str:
    return f", on which the verdict ({verdict.split(' (')[0]}) rests" if verdict else ""


def _pool_note(label: str, total: float, measured: dict[str, Any]) -> list[str]:
    traced, pool = measured.get("traced_pool"), measured.get("pool") or "unnamed"
    if traced:
        return [f"note: {label}'s default Arrow pool ({pool}) is invisible to heaptrack in its pyarrow (libarrow "
                f"calls it directly, where colbench's shim cannot report its blocks), so its timed call was traced "
                f"on Arrow's {traced} pool, which heaptrack sees: the bytes a call holds at its peak do not depend "
                f"on the pool (docs/explain.md); the peak RSS and its verdict are the default pool's"]
    pool_peak = measured.get("pool_peak_bytes")
    if isinstance(pool_peak, int | float) and pool_peak > (1 << 20) and total < 0.5 * pool_peak:
        return [f"note: {label}'s trace holds {fmt_bytes(total)} at its peak, its Arrow pool ({pool}) peaked at "
                f"{fmt_bytes(pool_peak)}: the pool's blocks were not seen, so its peak is too low (profile it "
                "again with --rerun, or use allocator=system, which heaptrack sees directly)"]
    return []


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
                         "measured": {"baseline": facts.measured[0], "contender": facts.measured[1]},
                         "caveats": memory_caveats(diff, facts, case.verdict) if diff is not None else []}
    return doc


def draw_memory(case: Any, a: MemorySide, b: MemorySide) -> str:
    """The differential flame graph of the two peaks, in bytes."""
    churn = f"; churn {fmt_bytes(a.churn_bytes)} → {fmt_bytes(b.churn_bytes)}"
    ratio = f" ({b.peak_bytes / a.peak_bytes - 1:+.1%})" if a.peak_bytes else ""
    swapped = "".join(f"; {side.view.label} traced on Arrow's {side.measured['traced_pool']} pool (its default "
                      f"{side.measured.get('pool') or 'pool'} is invisible to heaptrack)"
                      for side in (a, b) if side.measured.get("traced_pool"))
    subtitle = (f"{a.view.label}: {fmt_bytes(a.peak_bytes)}, {b.view.label}: {fmt_bytes(b.peak_bytes)}{ratio} live at "
                f"the timed call's peak{churn}; heaptrack, stacks end at the allocating function{swapped}")
    return differential_svg(flame_stacks(a.view), flame_stacks(b.view), title=f"Where the memory went: {case.label}",
                            subtitle=subtitle, baseline_label=a.view.label, contender_label=b.view.label, unit="B")


def memory_summary(peak_a: float, peak_b: float, listed: float | None, count: int,
                   churn: tuple[int, int] | None = None, caveats: list[str] | None = None,
                   too_small: bool = False) -> str:
    """The sentences under a memory flame graph in the report and the dashboard, with the caveats the terminal
    printed (`memory_caveats`)."""
    ratio = f" ({peak_b / peak_a - 1:+.1%})" if peak_a else ""
    text = (f"Peak of the timed call (live bytes it allocated, heaptrack with Arrow's pools): {fmt_bytes(peak_a)} → "
            f"{fmt_bytes(peak_b)}{ratio}.")
    if churn is not None:
        text += f" Churn (all it allocated): {fmt_bytes(churn[0])} → {fmt_bytes(churn[1])}."
    if too_small:
        text += " The change is too small beside what moved between functions to split into shares."
    elif listed is not None:
        text += f" The {count} functions listed account for {listed:.0%} of the peak's change."
    for caveat in caveats or []:
        text += f" {_sentence(caveat)}"
    return text


def _sentence(note: str) -> str:
    """A note as a sentence of the caption (its first word may be a side's label: its case is kept)."""
    body = note.removeprefix("note: ")
    return "Note: " + body + ("" if body.endswith(".") else ".")
