"""`colbench explain` as text: table rows (the CLI renders them with Rich), the lines under each case, the JSON
document (`--format json`, and `explain.json` beside each flame graph), and the stacks the flame graph draws."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

from colbench.paths import write_atomic
from colbench.profiles.callgrind import Frame
from colbench.profiles.diff import DiffedFiles, FunctionChange, ProfileDiff
from colbench.profiles.explanation import CaseExplanation, Explanation
from colbench.profiles.symbols import with_lines
from colbench.profiles.view import ProfileView
from colbench.redact import redact
from colbench.render.flamegraph import differential_svg
from colbench.render.fmt import fmt_cost, fmt_instructions
from colbench.render.frames import frame_label, short_function
from colbench.report.explain_types import (
    CaseDocument,
    ExplanationDocument,
    FunctionDocument,
    ProfileDocument,
)

TABLE_COLUMNS = ("function", "library", "self A", "self B", "Δ self", "share", "Δ inclusive")
SCHEMA = "colbench-explain/1"


def cost_text(value: float, unit: str) -> str:
    """A cost as the tables show it: a bare count for instructions (the heading says what), else with its unit."""
    return fmt_instructions(value) if unit == "instructions" else fmt_cost(value, unit)


def signed_cost(value: float, unit: str = "instructions") -> str:
    text = cost_text(abs(value), unit)
    return ("+" if value > 0 else "−" if value < 0 else "") + text


def too_small_text(diff: ProfileDiff, what: str) -> str:
    """Why a change is not split into shares: it is the small net of larger moves between functions."""
    return (f"the total {what} ({signed_cost(diff.total_change, diff.unit)}) is too small to split into shares: "
            f"it is the net of {cost_text(diff.moved, diff.unit)} that moved between functions, so each function's "
            "own change is shown and no share (a share would be its change over the small total)")


def share_text(value: float | None) -> str:
    return "-" if value is None else f"{value:+.1%}"


def table_rows(diff: ProfileDiff) -> list[tuple[str, ...]]:
    unit = diff.unit
    return [(shown_function(c), c.library, cost_text(c.self_a, unit), cost_text(c.self_b, unit),
             signed_cost(c.delta_self, unit) + (" ~" if c.within_noise else ""), share_text(c.share),
             signed_cost(c.delta_inclusive, unit)) for c in diff.changes]


def shown_function(change: FunctionChange) -> str:
    """A function as tables show it: short, with its first line where it is a Python function with one known."""
    return with_lines(short_function(change.function), *change.lines)


def summary_lines(case: CaseExplanation) -> list[str]:
    """What a case's table means, in lines: the totals, what the listed functions account for, the symbols."""
    diff = case.diff
    if diff is None:
        return [f"error: {case.error}"]
    a, b = diff.baseline, diff.contender
    ratio = f" ({diff.ratio - 1:+.2%})" if diff.ratio is not None else ""
    what = "instructions of the timed call" if diff.unit == "instructions" else \
        "CPU time of one timed call (perf samples of many, every thread)" if diff.unit == "ns" else \
        f"{diff.unit} of the timed call (perf samples)"
    lines = [f"{what}: {cost_text(a.total, diff.unit)} → {cost_text(b.total, diff.unit)}, "
             f"change {signed_cost(diff.total_change, diff.unit)}{ratio}"]
    if any(c.noise is not None for c in diff.changes):
        lines.append("~: a change within two standard errors of its sample counts (sampling noise: it may be "
                     "chance); callgrind's counts have none")
    if diff.total_within_noise:
        noise = cost_text(diff.total_noise or 0, diff.unit)
        lines.append(f"the totals differ by less than two standard errors of sampling (±{noise}): "
                     "no change to account for, so shares mean nothing here; the rows show where samples moved")
    elif diff.too_small_to_split:
        lines.append(too_small_text(diff, "change"))
    elif diff.listed_share is None:
        lines.append("the totals are equal: no change to account for")
    else:
        listed = f"the {len(diff.changes)} functions listed account" if len(diff.changes) != 1 else \
            "the function listed accounts"
        lines.append(f"{listed} for {diff.listed_share:.1%} of the change ({diff.changed_functions} functions "
                     "changed)")
    if case.verdict:
        lines.append(f"verdict: {case.verdict}")
    for side, stored in zip((a, b), case.stored_instructions if diff.unit == "instructions" else (None, None),
                            strict=True):
        # the profile's count against the range the stored processes counted, with 1% to spare: a multi-threaded
        # case's counts vary by a few percent, a deterministic one's by hundredths
        if stored and not stored[0] * 0.99 <= side.total <= stored[1] * 1.01:
            counted = (fmt_instructions(stored[0]) if stored[0] == stored[1] else
                       f"{fmt_instructions(stored[0])}–{fmt_instructions(stored[1])}")
            lines.append(f"note: {side.label}'s profile counted {fmt_instructions(side.total)}, its stored results "
                         f"{counted}: the case does not run as it did then (another data set, a changed "
                         "environment?)")
    lines += symbol_notes(diff)
    for label, profile in ((a.label, case.baseline), (b.label, case.contender)):
        lines += [f"{label}: {w}" for w in profile.warnings]
    return lines


def symbol_notes(diff: ProfileDiff) -> list[str]:
    """Python functions and stripped libraries, said plainly."""
    notes = []
    named = [side.label for side in (diff.baseline, diff.contender) if side.python_named]
    unnamed = [side.label for side in (diff.baseline, diff.contender) if not side.python_named]
    if named:
        notes.append(f"Python functions ({', '.join(named)}) are named through CPython's perf trampolines and the "
                     "perf map their worker kept, with their first lines from their code objects"
                     + ("; a sampled stack ends at its innermost Python function (perf cannot unwind through the "
                        "trampolines)" if diff.unit != "instructions" else ""))
    if unnamed and diff.unit != "instructions":
        notes.append(f"Python functions are not named on {', '.join(unnamed)}: before Python 3.12 perf sees the "
                     "interpreter's C functions (_PyEval_EvalFrameDefault and what it calls); 3.12+ workers name "
                     "them through CPython's perf trampolines")
    elif unnamed:
        notes.append(f"Python functions are not named on {', '.join(unnamed)}: before Python 3.12 their cost is the "
                     "interpreter's own C functions (callgrind charges the bytecode loop to the interpreter frame "
                     "where counting began, e.g. _PyObject_MakeTpCall); 3.12+ workers name them through CPython's "
                     "perf trampolines")
    stripped: dict[str, tuple[float, str]] = defaultdict(lambda: (0.0, ""))
    for side in (diff.baseline, diff.contender):
        for lib in side.stripped:
            cost, _ = stripped[lib.library]
            stripped[lib.library] = (max(cost, lib.cost / max(side.total, 1)), lib.symbols)
    for library, (share, symbols) in sorted(stripped.items(), key=lambda kv: -kv[1][0]):
        if share < 0.001:
            continue
        why = ("is stripped: only its exported functions have names" if symbols == "exported only" else
               "has code without symbols (generated at run time, or an address no symbol covers)")
        notes.append(f"{library} {why}; {share:.1%} of the instructions are known only by address (install its "
                     "debug symbols, e.g. Debian's -dbgsym package, to name them)")
    return notes


def change_document(change: FunctionChange) -> FunctionDocument:
    document: FunctionDocument = {
        "function": change.function, "short": shown_function(change), "library": change.library,
        "self": {"baseline": round(change.self_a), "contender": round(change.self_b),
                 "change": round(change.delta_self)},
        "inclusive": {"baseline": round(change.inclusive_a), "contender": round(change.inclusive_b),
                      "change": round(change.delta_inclusive)},
        "share": change.share, "noise": None if change.noise is None else round(change.noise),
        "within_noise": change.within_noise}
    if any(change.lines):
        document["lines"] = {"baseline": list(change.lines[0]), "contender": list(change.lines[1])}
    return document


def case_document(case: CaseExplanation) -> CaseDocument:
    profiles: dict[str, ProfileDocument] = {}
    doc: CaseDocument = {"case_id": case.case_id, "label": case.label, "verdict": case.verdict,
                         "error": case.error, "profiles": profiles, "flamegraph": str(case.flamegraph or "") or None}
    for name, side in (("baseline", case.baseline), ("contender", case.contender)):
        profiles[name] = {"source": side.source, "path": str(side.path) if side.path else None,
                          "python_names": str(side.perf_map) if side.perf_map else None,
                          "seconds": round(side.seconds, 2), "error": side.error, "warnings": side.warnings}
    diff = case.diff
    if diff is not None:
        doc.update({
            "metric": "instructions (callgrind Ir: the timed call, every thread)" if diff.unit == "instructions"
            else f"{diff.unit} (perf record, sampled: the timed call, every thread)",
            "unit": diff.unit,
            "baseline": {"label": diff.baseline.label, "total": diff.baseline.total,
                         "python_named": diff.baseline.python_named, "caller_depth": diff.baseline.caller_depth},
            "contender": {"label": diff.contender.label, "total": diff.contender.total,
                          "python_named": diff.contender.python_named, "caller_depth": diff.contender.caller_depth},
            "total_change": diff.total_change, "ratio": diff.ratio,
            "total_noise": None if diff.total_noise is None else round(diff.total_noise),
            "changed_functions": diff.changed_functions,
            "listed_share": diff.listed_share, "moved": diff.moved, "too_small_to_split": diff.too_small_to_split,
            "functions": [change_document(c) for c in diff.changes],
            "notes": symbol_notes(diff),
        })
    return doc


def explanation_document(explanation: Explanation) -> ExplanationDocument:
    return {"schema": SCHEMA, "baseline": explanation.baseline, "contender": explanation.contender,
            "folder": str(explanation.folder), "seconds": round(explanation.seconds, 1),
            "notes": explanation.notes, "cases": [case_document(c) for c in explanation.cases]}


def to_json(document: CaseDocument | ExplanationDocument) -> str:
    """JSON with every string redacted (a path or a message may quote a URL with a password)."""
    return redact(json.dumps(document, indent=2, ensure_ascii=False))


def write_json(path: Path, document: CaseDocument) -> None:
    write_atomic(path, to_json(document).encode())


def flame_stacks(view: ProfileView) -> dict[tuple[str, ...], float]:
    """The view's stacks with each frame's label (short name and library) as the flame graph shows it. Each
    distinct frame is labelled once: a 200k-row Parquet read has 24k stacks of up to 91 frames over a few thousand
    functions, and shortening C++ names per occurrence took 20 s a side."""
    labels: dict[Frame, str] = {}
    out: dict[tuple[str, ...], float] = defaultdict(float)
    for stack, cost in view.folded.items():
        key = []
        for frame in stack:
            label = labels.get(frame)
            if label is None:
                label = labels[frame] = frame_label(frame.name, frame.object)
            key.append(label)
        out[tuple(key)] += cost
    return dict(out)


def draw(diffed: DiffedFiles, case_label: str) -> str:
    """The differential flame graph (SVG text) of a case's two profiles."""
    a, b, diff = diffed.baseline, diffed.contender, diffed.diff
    what = "instructions" if a.unit == "instructions" else "time"
    how = "callgrind" if a.unit == "instructions" else "perf samples of CPU time"
    ratio = f" ({diff.ratio - 1:+.2%})" if diff.ratio is not None else ""
    subtitle = (f"{a.label}: {fmt_cost(a.total, a.unit)}, {b.label}: {fmt_cost(b.total, b.unit)}{ratio}; "
                f"{how}, the timed call only, every thread")
    return differential_svg(flame_stacks(a), flame_stacks(b), title=f"Where the {what} went: {case_label}",
                            subtitle=subtitle, baseline_label=a.label, contender_label=b.label, unit=a.unit)
