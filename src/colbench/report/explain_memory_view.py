"""Who owns the peak, next to a memory verdict in the HTML report and the dashboard.

As report/explain_view.py does for instructions, for the memory (peak RSS) comparison of two sides: each case gets
the differential flame graph of its two peaks and its top allocating functions when there is something to show:
- `colbench explain A B --metric memory` wrote them already (`profiles/explain/<A>--<B>/<case>/memory/`);
- else both sides kept memory profiles (`run --profile-memory`): read, diffed and drawn here, in memory (a
  read-only view writes nothing). Reading a 200k-row Parquet read's pair takes well under a second.
Only cases whose memory verdict is a change are drawn from kept profiles, at most `MAX_CASES` of them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from colbench.model.metrics import metric
from colbench.model.records import Side
from colbench.profiles.diff import diff_profiles
from colbench.profiles.heaptrack import DamagedProfile
from colbench.profiles.memory import read_side
from colbench.profiles.stored import explain_folder, stored_memory_profile
from colbench.render.frames import short_function
from colbench.report.explain_memory_text import draw_memory, memory_caveats, memory_summary
from colbench.report.explain_text import share_text, signed_cost
from colbench.report.explain_view import (
    TOP_ROWS,
    CaseExplained,
    FunctionRow,
    ProfileKind,
    _inline,
    explained_of_kind,
)

SIDECAR = "memory.json"


def explained_memory_cases(store: Any, baseline: Side, contender: Side, cases: list[tuple[str, str, str]]
                           ) -> tuple[list[CaseExplained], str]:
    """(case id, label, memory verdict) → the cases whose peaks can be shown, and a note on what was left out."""
    return explained_of_kind(store, baseline, contender, cases, ProfileKind(
        "memory", _from_stored, _written_summary, "memory profiles", "colbench explain --metric memory",
        "Δ at the peak"))


def _written_summary(doc: dict[str, Any]) -> str:
    """What `explain --metric memory` wrote, summed up: the peaks, the listed share and each side's churn."""
    memory = doc.get("memory") or {}
    churn = memory.get("churn_bytes") or {}
    return memory_summary(doc["baseline"]["total"], doc["contender"]["total"], doc.get("listed_share"),
                          len(doc.get("functions", [])), (churn["baseline"], churn["contender"]) if churn else None,
                          list(memory.get("caveats") or []), bool(doc.get("too_small_to_split")))


def _from_stored(store: Any, baseline: Side, contender: Side, case_id: str, label: str) -> CaseExplained | None:
    a = stored_memory_profile(store, baseline.run_id, baseline.env_name, case_id)
    b = stored_memory_profile(store, contender.run_id, contender.env_name, case_id)
    if a is None or b is None:
        return None
    try:
        side_a = read_side(a, baseline.label, a.parent / SIDECAR)
        side_b = read_side(b, contender.label, b.parent / SIDECAR)
        diff = diff_profiles(side_a.view, side_b.view, TOP_ROWS)
        svg = _inline(draw_memory(_Labelled(label), side_a, side_b))
    except (DamagedProfile, OSError, ValueError):
        return None
    rows = [FunctionRow(short_function(c.function), c.library, signed_cost(c.delta_self, "B"), share_text(c.share))
            for c in diff.changes]
    facts = _KeptFacts((side_a.churn_bytes, side_b.churn_bytes), (side_a.allocations, side_b.allocations),
                       (_median_rss(baseline, case_id), _median_rss(contender, case_id)),
                       (side_a.measured, side_b.measured))
    summary = memory_summary(diff.baseline.total, diff.contender.total, diff.listed_share, len(diff.changes),
                             facts.churn, memory_caveats(diff, facts), diff.too_small_to_split)
    return CaseExplained(case_id, label, svg, summary, rows, "run --profile-memory", change_heading="Δ at the peak")


@dataclass(frozen=True)
class _Labelled:
    label: str


@dataclass(frozen=True)
class _KeptFacts:
    """What `explain --metric memory` says beside two kept profiles (report/explain_memory_text.MemoryFactsLike)."""

    churn: tuple[int, int]
    allocations: tuple[int, int]
    recorded_rss: tuple[float | None, float | None]
    measured: tuple[dict[str, Any], dict[str, Any]]


def _median_rss(side: Side, case_id: str) -> float | None:
    """The median peak RSS a side's results of the case recorded (None: none)."""
    values = sorted(v for r in side.results if r.case_id == case_id and r.ok for v in metric("memory").values(r) or [])
    return values[len(values) // 2] if values else None


def has_memory_profiles(store: Any, baseline: Side, contender: Side) -> bool:
    """Whether any case of the two sides has memory profiles to show: `explain --metric memory` output, or kept by
    `run --profile-memory` on both sides (the report adds a memory comparison for them)."""
    try:
        folder = explain_folder(store, f"{baseline.run_id}.{baseline.env_name}",
                                f"{contender.run_id}.{contender.env_name}")
    except ValueError:
        return False
    for case_id in {r.case_id for r in baseline.results} & {r.case_id for r in contender.results}:
        if (folder / case_id / "memory" / "explain.json").is_file():
            return True
        if stored_memory_profile(store, baseline.run_id, baseline.env_name, case_id) is not None and \
                stored_memory_profile(store, contender.run_id, contender.env_name, case_id) is not None:
            return True
    return False
