"""Per-case views of stored results: the processes of one case (and environment) pooled together."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from colbench.analysis.stats import summary_stats
from colbench.model.metrics import metric
from colbench.model.params import ParamValue
from colbench.model.records import Json, OutputSeen, Result, Stats


@dataclass
class CaseSummary:
    benchmark: str
    case_id: str
    env_name: str
    params: dict[str, ParamValue]
    engine: str
    processes: int
    errors: list[Json]                     # each failed process's error, with its process_index
    wall: Stats                            # summary of all timed iterations pooled
    process_medians: list[float]           # one location per process: the unit for comparisons
    first_iteration: Stats                 # summary over processes of each one's first run
    metrics: dict[str, Stats] = field(default_factory=dict)  # other sample series (cpu, gbps …)
    units: dict[str, str] = field(default_factory=dict)
    bytes_per_s: float | None = None
    rows_per_s: float | None = None
    peak_rss_bytes: int | None = None
    engine_peak_bytes: int | None = None
    output: OutputSeen | None = None
    file_size_bytes: int | None = None
    #: the bytes the timed call's output held in memory, decoded (a read's table or frame; Python worker)
    memory_bytes: int | None = None
    #: the size of the file the case read (its `data` input), when it read one
    input_size_bytes: int | None = None
    warnings: list[str] = field(default_factory=list)
    versions: dict[str, str] = field(default_factory=dict)
    results: list[Result] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        counted = (self.metrics.get("instructions") or {}).get("n") or 0
        return not self.errors and ((self.wall.get("n") or 0) > 0 or counted > 0)

    @property
    def decoded_bytes_per_s(self) -> float | None:
        """The decoded size of the output over the median time: a read's throughput as a reader expects it."""
        median = self.wall.get("median")
        return self.memory_bytes / median if self.memory_bytes and median else None

    @property
    def error_kinds(self) -> list[str]:
        return sorted({(e.get("kind") or "error") for e in self.errors})


def _max(values: Iterable[Any]) -> Any:
    present = [v for v in values if v is not None]
    return max(present) if present else None


def _input_size(results: Sequence[Result]) -> int | None:
    for result in results:
        values = metric("input_size").values(result)
        if values:
            return int(values[0])
    return None


def summarize_cases(results: Iterable[Result]) -> list[CaseSummary]:
    """One summary per case and environment, in the order the results first name them."""
    groups: dict[tuple[str, str], list[Result]] = defaultdict(list)
    for result in results:
        groups[(result.case_id, result.env_name)].append(result)
    summaries = []
    for (case, env_name), members in groups.items():
        members.sort(key=lambda r: r.process_index)
        summaries.append(_summarize_case(case, env_name, members))
    return summaries


def _summarize_case(case: str, env_name: str, members: list[Result]) -> CaseSummary:
    """The processes of one case in one environment (in process order), pooled."""
    ok = [r for r in members if r.ok]
    pooled = _pooled_samples(ok)
    wall = summary_stats(pooled.get("wall_s", []))
    medians = [r.median() for r in ok]
    median = wall.get("median")
    bytes_per_s, rows_per_s = _throughput(ok, median)
    output = next((r.output for r in reversed(ok) if r.output), None)
    warnings = list(dict.fromkeys(w for r in members for w in r.warnings))
    first = members[0]
    return CaseSummary(
        benchmark=first.benchmark, case_id=case, env_name=env_name, params=first.params,
        engine=first.engine or "", processes=len(members),
        errors=_errors(members),
        wall=wall, process_medians=[m for m in medians if m is not None],
        first_iteration=_first_iterations(ok),
        metrics={m: summary_stats(v) for m, v in pooled.items() if m != "wall_s"},
        units=_units(ok),
        bytes_per_s=bytes_per_s, rows_per_s=rows_per_s,
        peak_rss_bytes=_max(r.memory.get("peak_rss_bytes") for r in members),
        engine_peak_bytes=_max(r.memory.get("engine_peak_bytes") for r in members),
        output=output, file_size_bytes=(output or {}).get("file_size_bytes"),
        memory_bytes=(output or {}).get("memory_bytes"),
        input_size_bytes=_input_size(ok),
        warnings=warnings, versions=first.versions, results=members,
    )


def _errors(members: Sequence[Result]) -> list[Json]:
    """Each failed process's error, with its process index."""
    return [{**(r.error or {}), "process_index": r.process_index} for r in members if not r.ok]


def _first_iterations(ok: Sequence[Result]) -> Stats:
    """Over the processes, each one's first timed call."""
    firsts = [(r.first_iteration or {}).get("wall_s") for r in ok]
    return summary_stats([f for f in firsts if f is not None])


def _units(ok: Sequence[Result]) -> dict[str, str]:
    return {k: v for r in ok for k, v in r.units.items()}


def _pooled_samples(ok: Sequence[Result]) -> dict[str, list[float]]:
    """Every sample series of the successful processes, their values pooled (missing ones left out)."""
    pooled: dict[str, list[float]] = defaultdict(list)
    for r in ok:
        for series, values in r.samples.items():
            pooled[series].extend(v for v in values if v is not None)
    return pooled


def _throughput(ok: Sequence[Result], median: float | None) -> tuple[float | None, float | None]:
    """(bytes, rows) per second of the work the case declares, over the median time."""
    work = next((r.work for r in ok if r.work), None)
    work_bytes, work_rows = (work.get("bytes"), work.get("rows")) if work else (None, None)
    return ((work_bytes / median) if work_bytes and median else None,
            (work_rows / median) if work_rows and median else None)
