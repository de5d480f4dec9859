"""How a bisect reads: the steps table, the answer in a few lines, and the JSON document tools read."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any, TypedDict

from colbench.analysis.bisect import BisectOutcome, Step
from colbench.analysis.verdicts import CaseComparison
from colbench.redact import clip
from colbench.render.fmt import fmt_metric, fmt_seconds
from colbench.report.compare_text import format_ci, format_ratio

#: how much of a skipped point's cause the table shows (the lines under it show it whole)
CAUSE_CELL = 90
STEP_COLUMNS = ("step", "point", "verdict", "vs last good", "vs first bad", "processes", "cost", "run")


def ratio_cell(comparison: CaseComparison | None) -> str:
    """'1.212 [1.15, 1.28] regression', or '-' when there is no comparison."""
    if comparison is None:
        return "-"
    return f"{format_ratio(comparison)} {format_ci(comparison)} {comparison.verdict}"


def cost_cell(step: Step) -> str:
    """'7.08 s + 4.55 s build', 'stored' (a resumed search read it), '0.31 s build' (nothing was measured), '-'
    (nothing was done: the budget ended first)."""
    if step.reused and not step.measure_s:
        return "stored"
    parts = [fmt_seconds(step.measure_s, ascii_only=True)] if step.measure_s else []
    if step.build_s >= 0.05:
        parts.append(f"{fmt_seconds(step.build_s, ascii_only=True)} build")
    return " + ".join(parts) or "-"


def step_rows(outcome: BisectOutcome) -> list[tuple[str, ...]]:
    """One row per step, in `STEP_COLUMNS` order; step 0 compares the ends (bad against good)."""
    rows: list[tuple[str, ...]] = []
    for step in outcome.steps:
        verdict = step.verdict + (f": {clip(step.cause, CAUSE_CELL)}" if step.cause else "")
        if step.number == 0:
            point, against_good, against_bad = f"{step.good} → {step.bad}", ratio_cell(step.vs_good), "-"
        else:
            point, against_good, against_bad = step.point, ratio_cell(step.vs_good), ratio_cell(step.vs_bad)
        rows.append((str(step.number), point, verdict, against_good, against_bad,
                     str(step.processes) if step.processes else "-", cost_cell(step), step.run_id or "-"))
    return rows


def answer_lines(outcome: BisectOutcome, metric: str, excluded: Mapping[str, str], ahead_s: float = 0.0,
                 earlier_s: float = 0.0) -> list[str]:
    """The answer: the step found (or why none was), the change's size, what was skipped and what it cost
    (`earlier_s`: what the earlier invocations of a resumed search took)."""
    lines = [outcome.message]
    if outcome.step is not None:
        c = outcome.step
        lines.append(f"{outcome.last_good} → {outcome.first_bad}: ratio {format_ratio(c)} {format_ci(c)} "
                     f"({c.ci_level:.1%} interval; {fmt_metric(c.baseline_median, metric, ascii_only=True)} → "
                     f"{fmt_metric(c.contender_median, metric, ascii_only=True)} a call, {c.verdict})")
    for point, cause in outcome.skipped.items():
        lines.append(f"skipped {point}: {cause}")
    for point, cause in excluded.items():
        lines.append(f"not tested {point}: {cause}")
    if outcome.untested:
        lines.append(f"left untested when the budget ended: {', '.join(outcome.untested)}")
    measured = [s for s in outcome.steps if s.processes]
    build = sum(s.build_s for s in outcome.steps)
    measure = sum(s.measure_s for s in outcome.steps)
    ahead = "" if ahead_s < 0.05 else f"; {fmt_seconds(ahead_s, ascii_only=True)} more built ahead beside the measuring"
    total = outcome.elapsed_s + earlier_s
    resumed = (f", {fmt_seconds(outcome.elapsed_s, ascii_only=True)} of it in this session" if earlier_s >= 0.05
               else "")
    lines.append(f"{len(measured)} measured step(s) (step 0 the ends) over {len(outcome.points)} points in "
                 f"{fmt_seconds(total, ascii_only=True)}{resumed} (measuring {fmt_seconds(measure, ascii_only=True)}"
                 f", waiting for environments {fmt_seconds(build, ascii_only=True)}{ahead})")
    return lines


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None


class StepDocument(TypedDict):
    """One step in `bisect --format json` (the fields of `Step`; each comparison as `CaseComparison.to_dict`)."""

    step: int
    point: str
    good: str
    bad: str
    verdict: str
    cause: str
    processes: int
    looks: int
    run_id: str | None
    build_s: float
    measure_s: float
    reused: int
    vs_good: dict[str, object] | None
    vs_bad: dict[str, object] | None


def step_doc(step: Step) -> StepDocument:
    return {"step": step.number, "point": step.point, "good": step.good, "bad": step.bad, "verdict": step.verdict,
            "cause": step.cause, "processes": step.processes, "looks": step.looks, "run_id": step.run_id or None,
            "build_s": round(step.build_s, 3), "measure_s": round(step.measure_s, 3), "reused": step.reused,
            "vs_good": step.vs_good.to_dict() if step.vs_good else None,
            "vs_bad": step.vs_bad.to_dict() if step.vs_bad else None}


def json_document(outcome: BisectOutcome, **meta: Any) -> str:
    """The whole search as JSON: `meta` (id, request, source …), the answer, every step."""
    step = outcome.step
    doc = {
        **meta,
        "status": outcome.status,
        "found": outcome.found,
        "message": outcome.message,
        "last_good": outcome.last_good,
        "first_bad": outcome.first_bad,
        "ratio": None if step is None else {"estimate": _finite(step.ratio), "ci_low": _finite(step.ci_low),
                                            "ci_high": _finite(step.ci_high), "ci_level": step.ci_level,
                                            "verdict": str(step.verdict)},
        "skipped": outcome.skipped,
        "skipped_between": outcome.skipped_between,
        "untested": outcome.untested,
        "points": outcome.points,
        "elapsed_s": round(outcome.elapsed_s, 3),
        "steps": [step_doc(s) for s in outcome.steps],
    }
    return json.dumps(doc, indent=2, default=str)
