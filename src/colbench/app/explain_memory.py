"""`colbench explain A B --metric memory`: who owns the peak of each side's timed call, and what changed.

The sides and cases are `explain`'s (app/explain.py). Each side's memory profile is the one `run --profile-memory`
kept, or else a fresh one: the case runs again in its own environment, in a fresh worker, under heaptrack with
Arrow's pools made visible (runner/memory_profile.py). The two peaks are read (colbench/profiles/heaptrack.py),
their live bytes attributed to the functions that allocated them (colbench/profiles/memory.py) and diffed as
`explain` diffs instructions (profiles/diff.py, unit bytes); each case gets a differential flame graph of
the peak and an `explain.json` in its `memory/` folder. Beside the peak: the churn (every byte the call
allocated), and the peak RSS each side's stored results recorded, with the relation docs/explain.md explains.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from colbench.analysis.comparison import CompareSettings, ComparisonError
from colbench.app.compare import CompareRequest, compare_resolved
from colbench.app.errors import UsageError
from colbench.app.explain import (
    Say,
    _first_ok,
    explain_setup,
    replay_in_python,
    side_labels,
    write_outputs,
)
from colbench.model.records import Result, Run, Side
from colbench.profiles.diff import diff_profiles
from colbench.profiles.explanation import CaseExplanation, Explanation, SideProfile
from colbench.profiles.heaptrack import DamagedProfile
from colbench.profiles.memory import read_side
from colbench.profiles.stored import stored_memory_profile
from colbench.store.base import Store, StoreError

if TYPE_CHECKING:
    from colbench.app.explain import ExplainRequest
    from colbench.runner.memory_profile import Tracer

SIDECAR = "memory.json"


@dataclass
class MemoryFacts:
    """What a memory explanation says beside the table: each side's churn and the peak RSS its results recorded."""

    churn: tuple[int, int]
    allocations: tuple[int, int]
    #: the median peak RSS (bytes) of each side's stored results of the case (None: none recorded)
    recorded_rss: tuple[float | None, float | None]
    #: the worker's own figures of each profile (memory.json)
    measured: tuple[dict[str, Any], dict[str, Any]] = ({}, {})


@dataclass
class MemoryCaseExplanation(CaseExplanation):
    memory: MemoryFacts | None = None


def explain_memory(store: Store, request: ExplainRequest, say: Say) -> Explanation:
    started = time.monotonic()
    if request.profiler != "callgrind":
        raise UsageError(f"--metric memory traces allocations with heaptrack: --profiler {request.profiler} "
                         "does not apply (leave it out)")
    sides_of = explain_setup(store, request)
    baseline, contender, folder, runs = sides_of.baseline, sides_of.contender, sides_of.folder, sides_of.runs
    verdicts, notes = memory_verdicts(store, request, baseline, contender)
    tracer: Tracer | None = None
    explained: list[CaseExplanation] = []
    for case_id, label in sides_of.chosen:
        case_dir = folder / case_id / "memory"
        sides = []
        for name, side in (("a", baseline), ("b", contender)):
            stored = None if request.rerun else stored_memory_profile(store, side.run_id, side.env_name, case_id)
            if stored is not None:
                sides.append(SideProfile("stored", stored))
                continue
            if tracer is None:
                tracer = find_memory_tracer()
            say(f"tracing {label} on {side.label} under heaptrack (a fresh worker)")
            sides.append(trace_again(runs[side.run_id], _first_ok(side, case_id), case_dir / name, tracer))
        case = MemoryCaseExplanation(case_id, label, sides[0], sides[1], verdict=verdicts.get(case_id))
        diff_memory(case, request.top, case_dir, side_labels(baseline, contender),
                    (recorded_rss(baseline, case_id), recorded_rss(contender, case_id)))
        explained.append(case)
    return Explanation(baseline.label, contender.label, explained, folder, time.monotonic() - started, notes)


def find_memory_tracer() -> Tracer:
    from colbench.runner.memory_profile import TracerUnavailable, find_tracer

    try:
        return find_tracer()
    except TracerUnavailable as exc:
        raise UsageError(str(exc)) from None


def trace_again(run: Run, result: Result, folder: Path, tracer: Tracer) -> SideProfile:
    from colbench.runner.memory_profile import memory_profile_case

    again, refused = replay_in_python(run, result, "memory profiles")
    if refused is not None:
        return refused
    done = memory_profile_case(again.spec, again.launch, tracer, folder)
    return SideProfile("re-run", done.path, None, done.seconds, done.error, [*again.warnings, *done.warnings])


def recorded_rss(side: Side, case_id: str) -> float | None:
    from colbench.model.metrics import metric

    values = sorted(v for r in side.results if r.case_id == case_id and r.ok
                    for v in metric("memory").values(r) or [])
    return values[len(values) // 2] if values else None


def diff_memory(case: MemoryCaseExplanation, top: int, case_dir: Path, labels: tuple[str, str],
                rss: tuple[float | None, float | None]) -> None:
    from colbench.report.explain_memory_text import draw_memory, memory_document

    failed = [f"{label}: {side.error}" for label, side in zip(labels, (case.baseline, case.contender), strict=True)
              if side.error]
    if failed:
        case.error = "; ".join(failed)
        return
    assert case.baseline.path is not None and case.contender.path is not None
    try:
        a = read_side(case.baseline.path, labels[0], case.baseline.path.parent / SIDECAR)
        b = read_side(case.contender.path, labels[1], case.contender.path.parent / SIDECAR)
    except (DamagedProfile, OSError) as exc:
        case.error = f"cannot read a memory profile: {exc} (profile again with --rerun)"
        return
    case.diff = diff_profiles(a.view, b.view, top)
    case.memory = MemoryFacts((a.churn_bytes, b.churn_bytes), (a.allocations, b.allocations), rss,
                              (a.measured, b.measured))
    case.flamegraph, case.report = write_outputs(case_dir, draw_memory(case, a, b), memory_document(case))


def memory_verdicts(store: Store, request: ExplainRequest, baseline: Side, contender: Side,
                    ) -> tuple[dict[str, str], list[str]]:
    """case id → the verdict `compare` gives the resolved sides on peak RSS (the memory metric)."""
    try:
        comparison = compare_resolved(store, CompareRequest(request.baseline, request.contender,
                                                            CompareSettings(metrics=("memory",))),
                                      baseline, contender)
    except (ComparisonError, StoreError, UsageError) as exc:
        return {}, [f"no verdicts beside the profiles: {exc}"]
    verdicts: dict[str, str] = {}
    for case in comparison.cases:
        case_id = comparison.case_of.get(str(case.key), ("", ""))[0]
        if case_id and case.metric == "memory":
            verdicts[case_id] = f"{case.verdict} (peak RSS {case.ratio:.4f}× [{case.ci_low:.4f}, {case.ci_high:.4f}])"
    return verdicts, []
