"""What `explain --metric memory` says beside its traced peaks (report/explain_memory_text.py), the same in the
terminal, the JSON document and the report's caption: a side traced on another pool than its default, and traced
peaks that do not follow the peak RSS the verdict rests on, are said, never left to look like a contradiction."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from colbench.profiles.callgrind import Frame
from colbench.profiles.diff import diff_profiles
from colbench.profiles.explanation import SideProfile
from colbench.profiles.view import ProfileView
from colbench.report.explain_memory_text import memory_caveats, memory_document, memory_lines, memory_summary

MIB = 1 << 20
MAIN, READ = Frame("main", "python"), Frame("arrow::ReadBufferAt", "libarrow.so")


def view(label: str, bytes_: int) -> ProfileView:
    return ProfileView(label, bytes_, {(MAIN, READ): float(bytes_)}, 0, False, unit="B")


@dataclass
class Facts:
    churn: tuple[int, int]
    allocations: tuple[int, int]
    recorded_rss: tuple[float | None, float | None]
    measured: tuple[dict[str, Any], dict[str, Any]]


@dataclass
class Case:
    case_id: str
    label: str
    baseline: SideProfile
    contender: SideProfile
    diff: Any
    verdict: str | None
    memory: Facts
    flamegraph: Any = None
    report: Any = None
    error: str | None = None


# pyarrow 17 (jemalloc, seen) against 21 (mimalloc, hidden: traced on the system pool), as issue 47 measured them
P17 = {"pool": "jemalloc", "traced_pool": None, "pool_peak_bytes": 22 * MIB}
P21 = {"pool": "mimalloc", "traced_pool": "system", "pool_peak_bytes": 21 * MIB, "rss_before_call_bytes": 184 * MIB}


def test_a_pool_swapped_for_tracing_and_an_rss_change_outside_the_call_are_said_everywhere():
    diff = diff_profiles(view("p17", int(21.6 * MIB)), view("p21", int(21.2 * MIB)))
    facts = Facts((72 * MIB, 68 * MIB), (11494, 12497), (151 * MIB, 205 * MIB), (P17, P21))
    verdict = "regression (peak RSS 1.3310× [1.20, 1.45])"
    caveats = memory_caveats(diff, facts, verdict)
    assert len(caveats) == 2
    assert "p21's default Arrow pool (mimalloc) is invisible to heaptrack" in caveats[0]
    assert "traced on Arrow's system pool" in caveats[0]
    assert "hardly changed against the peak RSS's change (+54.0 MiB, +35.8%)" in caveats[1]
    assert "on which the verdict (regression) rests" in caveats[1]
    case = Case("c", "read", SideProfile("stored"), SideProfile("stored"), diff, verdict, facts)
    terminal = memory_lines(case, facts)  # type: ignore[arg-type]
    assert "traced on jemalloc → system" in terminal[0]
    assert all(c in terminal for c in caveats)
    doc = memory_document(case)
    assert doc["memory"]["caveats"] == caveats
    caption = memory_summary(22 * MIB, 21 * MIB, doc.get("listed_share"), 1, None, doc["memory"]["caveats"])
    assert "invisible to heaptrack" in caption and "hardly changed against the peak RSS" in caption


def test_traced_peaks_that_follow_the_peak_rss_need_no_caveat():
    diff = diff_profiles(view("a", 44 * MIB), view("b", 84 * MIB))
    seen = {"pool": "mimalloc", "traced_pool": None, "pool_peak_bytes": 44 * MIB}
    facts = Facts((110 * MIB, 150 * MIB), (1, 1), (225 * MIB, 262 * MIB), (seen, seen | {"pool_peak_bytes": 84 * MIB}))
    assert memory_caveats(diff, facts, "regression") == []


def test_a_pool_whose_blocks_were_not_seen_is_said():
    diff = diff_profiles(view("a", 44 * MIB), view("b", 1 * MIB))
    unseen = {"pool": "mimalloc", "traced_pool": None, "pool_peak_bytes": 44 * MIB}
    facts = Facts((1, 1), (1, 1), (None, None), ({"pool": "jemalloc", "pool_peak_bytes": 44 * MIB}, unseen))
    (note,) = memory_caveats(diff, facts)
    assert "b's trace holds 1.0 MiB" in note and "the pool's blocks were not seen" in note
