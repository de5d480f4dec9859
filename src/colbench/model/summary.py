"""What history and compare need of a stored result, without its samples: the summary a store keeps in columns."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import UTC, datetime

from colbench.model.params import ParamValue
from colbench.model.records import Result


@dataclass(frozen=True)
class ResultSummary:
    """One result as a store's summary columns hold it (`store.summaries()`), never its whole record."""

    result_id: str
    run_id: str
    case_id: str
    benchmark: str
    env_name: str
    process_index: int
    block: int | None
    status: str
    machine_id: str | None
    machine_name: str | None
    timestamp: str                      # ISO 8601, UTC
    commit_sha: str | None
    engine: str | None
    params: dict[str, ParamValue] = field(default_factory=dict)
    versions: dict[str, str] = field(default_factory=dict)
    medians: dict[str, float | None] = field(default_factory=dict)  # metric → median of its timed iterations

    @property
    def wall_median(self) -> float | None:
        return self.medians.get("wall_s")


def iso_utc(value: str | datetime) -> str:
    stamp = value if isinstance(value, datetime) else datetime.fromisoformat(str(value))
    stamp = stamp.replace(tzinfo=UTC) if stamp.tzinfo is None else stamp.astimezone(UTC)
    return stamp.isoformat()


def summary_values(result: Result) -> tuple[str | None, str | None, str, str, str]:
    """The summary columns of a result: machine name, engine, and params / versions / medians as JSON."""
    medians = {metric: stats.get("median") for metric, stats in result.summary.items() if isinstance(stats, dict)}
    return (result.machine_name, result.engine, json.dumps(result.params, default=str),
            json.dumps(result.versions, default=str), json.dumps(medians, default=str))


def summary_of(result: Result) -> ResultSummary:
    """The summary of a whole result: what the columns hold (and what a store without them answers)."""
    name, engine, params, versions, medians = summary_values(result)
    return ResultSummary(
        result_id=result.result_id, run_id=result.run_id, case_id=result.case_id, benchmark=result.benchmark,
        env_name=result.env_name, process_index=result.process_index, block=result.block, status=result.status,
        machine_id=result.machine_id, machine_name=name, timestamp=iso_utc(result.timestamp),
        commit_sha=result.commit_sha, engine=engine, params=json.loads(params), versions=json.loads(versions),
        medians=json.loads(medians))
