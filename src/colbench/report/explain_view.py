"""Why a compared case changed, next to its verdict in the HTML report and the dashboard.

For two sides of a comparison, each case gets its differential flame graph and its top functions when there is
something to show:
- `colbench explain A B` wrote them already (the store's `profiles/explain/<A>--<B>/<case>/`): read as written;
- else both sides kept profiles (`run --profile`): diffed here, in memory (a read-only view writes nothing).
Only cases whose verdict is a change are drawn from profiles (the 200k-row Parquet read of docs/explain.md:
6.4 s to read, diff and draw its pair), at most `MAX_CASES` of them; the note under the comparison says how to
get the others.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from colbench.model.records import Side
from colbench.profiles.callgrind import ProfileError
from colbench.profiles.diff import diff_files
from colbench.profiles.stored import explain_folder, stored_profile
from colbench.render.fmt import fmt_instructions
from colbench.render.frames import short_function
from colbench.report.explain_text import draw, share_text, signed_cost
from colbench.words import plural

MAX_CASES = 6
TOP_ROWS = 8
CHANGES = ("regression", "improvement")


@dataclass(frozen=True)
class FunctionRow:
    function: str
    library: str
    change: str
    share: str


@dataclass
class CaseExplained:
    case_id: str
    label: str
    #: the SVG markup (no XML declaration), ready to sit inline in HTML
    svg: str
    summary: str
    rows: list[FunctionRow] = field(default_factory=list)
    source: str = ""
    #: the rows' change column: a function's self cost, or for memory the bytes it held at the peak
    change_heading: str = "Δ self"


def explained_cases(store: Any, baseline: Side, contender: Side, cases: list[tuple[str, str, str]]
                    ) -> tuple[list[CaseExplained], str]:
    """(case id, label, verdict) → the cases that can be explained, and a note on what was left out."""
    return explained_of_kind(store, baseline, contender, cases, ProfileKind("", _from_stored, _written_summary,
                                                                             "profiles", "colbench explain"))


@dataclass(frozen=True)
class ProfileKind:
    """What a view explains: the sub-folder `colbench explain` writes it to (under the case's), how to draw a case
    from the profiles both sides kept, how to sum up the explain.json written there, what they are called, the
    command that draws them all and the heading of the rows' change column."""

    subfolder: str
    from_stored: Callable[[Any, Side, Side, str, str], CaseExplained | None]
    summarize: Callable[[dict[str, Any]], str]
    called: str
    command: str
    change_heading: str = "Δ self"


def explained_of_kind(store: Any, baseline: Side, contender: Side, cases: list[tuple[str, str, str]],
                      kind: ProfileKind) -> tuple[list[CaseExplained], str]:
    """Each case as `colbench explain` wrote it, else (a changed case, up to MAX_CASES) drawn from kept profiles."""
    shown: list[CaseExplained] = []
    left = 0
    try:
        folder = explain_folder(store, f"{baseline.run_id}.{baseline.env_name}",
                                f"{contender.run_id}.{contender.env_name}")
    except ValueError:  # a name that cannot be a folder: nothing was ever written for it
        return [], ""
    for case_id, label, verdict in cases:
        written = _written(folder / case_id / kind.subfolder, case_id, label, kind)
        if written is None and verdict in CHANGES:
            if len(shown) >= MAX_CASES:
                left += 1
                continue
            written = kind.from_stored(store, baseline, contender, case_id, label)
        if written is not None:
            shown.append(written)
    note = (f"{plural(left, 'more changed case')} {'has' if left == 1 else 'have'} {kind.called}: `{kind.command}` "
            "draws them all." if left else "")
    return shown, note


def _written(case_dir: Path, case_id: str, label: str, kind: ProfileKind) -> CaseExplained | None:
    svg, report = case_dir / "flamegraph.svg", case_dir / "explain.json"
    if not (svg.is_file() and report.is_file()):
        return None
    try:
        doc = json.loads(report.read_text())
        rows = [FunctionRow(f["short"], f["library"], signed_cost(f["self"]["change"], doc.get("unit") or
                                                                  "instructions"), share_text(f["share"]))
                for f in doc.get("functions", [])[:TOP_ROWS]]
        return CaseExplained(case_id, label, _inline(svg.read_text()), kind.summarize(doc), rows, kind.command,
                             kind.change_heading)
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _from_stored(store: Any, baseline: Side, contender: Side, case_id: str, label: str) -> CaseExplained | None:
    a = stored_profile(store, baseline.run_id, baseline.env_name, case_id)
    b = stored_profile(store, contender.run_id, contender.env_name, case_id)
    if a is None or b is None:
        return None
    try:
        diffed = diff_files(a.path, b.path, (baseline.label, contender.label), perf_maps=(a.perf_map, b.perf_map),
                            top=TOP_ROWS)
        svg = _inline(draw(diffed, label))
    except (ProfileError, OSError, ValueError):
        return None
    diff = diffed.diff
    rows = [FunctionRow(short_function(c.function), c.library, signed_cost(c.delta_self, diff.unit),
                        share_text(c.share)) for c in diff.changes]
    return CaseExplained(case_id, label, svg, _summary(diff.baseline.total, diff.contender.total, diff.listed_share,
                                                       len(diff.changes), diff.too_small_to_split), rows,
                         "run --profile")


def _written_summary(doc: dict[str, Any]) -> str:
    return _summary(doc["baseline"]["total"], doc["contender"]["total"], doc.get("listed_share"),
                    len(doc.get("functions", [])), bool(doc.get("too_small_to_split")))


def _summary(total_a: float, total_b: float, listed: float | None, count: int, too_small: bool = False) -> str:
    ratio = f" ({total_b / total_a - 1:+.2%})" if total_a else ""
    text = (f"Instructions of the timed call (callgrind): {fmt_instructions(total_a)} → "
            f"{fmt_instructions(total_b)}{ratio}.")
    if too_small:
        text += " The change is too small beside what moved between functions to split into shares."
    elif listed is not None:
        text += f" The {count} functions listed account for {listed:.0%} of the change."
    return text


def _inline(svg: str) -> str:
    """The SVG element alone (an XML declaration is not allowed inside HTML). colbench's own flame graphs have no
    script; a file that does (put in the profiles folder by hand) is not shown inline in a report others open."""
    lowered = svg.lower()
    if "<script" in lowered or "javascript:" in lowered or "<foreignobject" in lowered:
        raise ValueError("not colbench's flame graph")
    start = svg.find("<svg")
    return svg[start:] if start >= 0 else ""
