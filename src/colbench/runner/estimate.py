"""How long a plan will take, from what this machine has measured before (for `run --dry-run`)."""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from colbench.model.records import median_of
from colbench.runner.plan import Plan, PlannedCase
from colbench.runtimes import RUNTIMES
from colbench.store.base import ResultQuery, Store


@dataclass
class PastTimings:
    per_iteration_s: dict[str, float] = field(default_factory=dict)  # case_id → median iteration time
    startup_s: dict[str, float] = field(default_factory=dict)  # runtime → median process time outside iterations


def _process_overhead(result: dict[str, Any]) -> float | None:
    spawn = (result.get("process") or {}).get("spawn_to_result_s")
    if spawn is None:
        return None
    timed = sum((result.get("samples") or {}).get("wall_s") or [])
    warm = sum((result.get("warmup_samples") or {}).get("wall_s") or [])
    return max(0.0, spawn - timed - warm)


def past_timings(store: Store, plan: Plan, machine_id: str) -> PastTimings:
    """Median iteration time per case, and start-up per runtime, from this machine's successful results."""
    wanted = {c.case_id for c in plan.cases}
    medians: dict[str, list[float]] = defaultdict(list)
    overheads: dict[str, list[float]] = defaultdict(list)
    for benchmark in sorted({c.benchmark.name for c in plan.cases}):
        for r in store.results(ResultQuery(benchmark=benchmark, machine_id=machine_id, status="ok")):
            overhead = _process_overhead(r)
            if overhead is not None:
                overheads[(r.get("runtime") or {}).get("name", "python")].append(overhead)
            median = median_of(r)
            if r["case_id"] in wanted and median is not None:
                medians[r["case_id"]].append(median)
    return PastTimings({c: statistics.median(v) for c, v in medians.items()},
                   {rt: statistics.median(v) for rt, v in overheads.items()})


@dataclass
class Estimate:
    seconds: float
    unknown_cases: int
    assumed_startup: list[str]  # runtimes whose start-up is a guess, not a measurement


def estimate_plan(plan: Plan, iterations: int, warmup: int, processes: Callable[[PlannedCase], int],
                  timings: PastTimings, envs: int = 1) -> Estimate:
    total, unknown, assumed = 0.0, 0, set()
    for case in plan.cases:
        per_iteration = timings.per_iteration_s.get(case.case_id, case.benchmark.estimate_seconds(case.params))
        if per_iteration is None:
            unknown += 1
            per_iteration = 0.0
        startup = timings.startup_s.get(case.runtime)
        if startup is None:
            startup = RUNTIMES[case.runtime].assumed_startup_s if case.runtime in RUNTIMES else 1.0
            assumed.add(case.runtime)
        total += processes(case) * envs * (startup + (iterations + warmup) * per_iteration)
    return Estimate(total, unknown, sorted(assumed))
