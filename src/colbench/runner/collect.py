"""Collect: check what a worker reported, and turn it into the stored result record (docs/results.md)."""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime
from typing import Any, TypeVar

from colbench.analysis.stats import summary_stats
from colbench.model.metrics import BASE_UNITS
from colbench.model.params import ParamValue
from colbench.model.records import InputFile, MemoryUse, Result, Run, WorkDone, WorkerProcess, WorkerReport
from colbench.model.result import result_id, tags_for
from colbench.model.run_config import EnvChoice

_T = TypeVar("_T")

#: no count or size a worker reports can be larger (a pebibyte; 2^50): beyond it the number is garbage
LARGEST = float(2**50)


def _numbers(report: WorkerReport) -> Iterator[tuple[str, Any, str]]:
    """(field, value, rule) of every number a worker reports; rule: "time", "count" or "amount"."""
    for where, series in (("samples", report.samples), ("warmup_samples", report.warmup_samples)):
        yield from _sample_numbers(where, series or {})
    for name, value in (report.first_iteration or {}).items():
        yield f"first_iteration.{name}", value, "time" if name.endswith("_s") else "amount"
    blocks: tuple[tuple[str, Mapping[str, object] | None], ...] = (
        ("memory", report.memory), ("output", report.output), ("work", report.work))
    for where, doc in blocks:
        yield from _block_numbers(where, doc or {})


def _sample_numbers(where: str, series: Mapping[str, Any]) -> Iterator[tuple[str, Any, str]]:
    for name, values in series.items():
        rule = "time" if name.endswith("_s") else ("count" if name == "instructions" else "amount")
        for i, value in enumerate(values if isinstance(values, list) else [values]):
            if value is not None:
                yield f"{where}.{name}[{i}]", value, rule


def _block_numbers(where: str, doc: Mapping[str, object]) -> Iterator[tuple[str, Any, str]]:
    for name, field_value in doc.items():
        if where == "output" and not name.endswith(("_bytes", "rows", "columns", "_s")):
            continue  # what a case produced (a checksum, a hash) is not a measurement: any value is fine
        if isinstance(field_value, int | float) and not isinstance(field_value, bool):
            rule = "count" if name.endswith(("_bytes", "rows", "columns")) or name in ("bytes",) else "amount"
            yield f"{where}.{name}", field_value, rule


def invalid_number(report: WorkerReport, timeout_s: float) -> str | None:
    """Why the report cannot count (the first bad number, named), or None. Every number must be a finite number
    >= 0; times no longer than the worker was allowed to run (`timeout_s`); counts and sizes whole and below 2^50.
    A worker that reports otherwise is broken or hostile, and its result is an error, never a sample."""
    if report.status != "ok":
        return None
    for field, value, rule in _numbers(report):
        if isinstance(value, bool) or not isinstance(value, int | float):
            return f"{field} is {type(value).__name__} {str(value)[:40]!r}, not a number"
        if not math.isfinite(value) or value < 0:
            return f"{field} = {value!r}: a measurement is a finite number >= 0"
        if rule == "time" and value > timeout_s:
            return f"{field} = {value!r} s: longer than the {timeout_s:g} s the worker was allowed to run"
        if rule == "count" and (value > LARGEST or float(value) != int(value)):
            return f"{field} = {value!r}: a count or size is a whole number below 2^50"
    return None


def _throughput(work: WorkDone | None, median_wall: float | None) -> dict[str, float | None]:
    if not work or not median_wall:
        return {"bytes_per_s": None, "rows_per_s": None}
    return {
        "bytes_per_s": work_bytes / median_wall if (work_bytes := work.get("bytes")) else None,
        "rows_per_s": work_rows / median_wall if (work_rows := work.get("rows")) else None,
    }


def _typed(value: object, kind: type[_T]) -> _T | None:
    return value if isinstance(value, kind) and not isinstance(value, bool) else None


def build_result(*, run: Run, case_id: str, benchmark: str, params: dict[str, ParamValue], engine: str,
                 runtime: str, env: EnvChoice, process_index: int, block: int, iterations: int, warmup: int,
                 inputs: dict[str, InputFile], report: WorkerReport, process: WorkerProcess) -> Result:
    """One record per (case, environment, worker process): raw samples, their summary, and their context."""
    summary = {metric: summary_stats(values) for metric, values in report.samples.items()}
    started = process.get("started_at")
    timestamp = datetime.fromtimestamp(started, UTC) if started else datetime.now(UTC)
    env_name = env.name
    return Result(
        result_id=result_id(run.run_id, case_id, env_name, process_index),
        run_id=run.run_id,
        run_name=run.name,
        timestamp=timestamp.isoformat(),
        benchmark=benchmark,
        case_id=case_id,
        params=params,
        tags=tags_for(benchmark, params),
        engine=engine,
        runtime={**report.runtime, "name": runtime},
        env_name=env_name,
        env={"name": env_name, "spec": env.spec, "key": env.key},
        process_index=process_index,
        block=block,
        status=report.status if report.status in ("ok", "error") else "error",
        iterations=iterations,
        warmup=warmup,
        samples=report.samples,
        warmup_samples=report.warmup_samples,
        first_iteration=report.first_iteration,
        units={**BASE_UNITS, **report.units},
        summary=summary,
        work=report.work,
        throughput=_throughput(report.work, (summary.get("wall_s") or {}).get("median")),
        output=report.output,
        memory=MemoryUse(**report.memory),
        process=process,
        # a worker that died before it said: what was asked, from the case's params
        threads=report.threads or {"requested": _typed(params.get("threads"), int)},
        allocator=report.allocator or {"requested": _typed(params.get("allocator"), str)},
        cache=report.cache or {"requested": _typed(params.get("cache"), str)},
        inputs=inputs,
        versions={**env.resolved, **report.versions},
        machine_id=run.machine_id,
        machine=run.machine,
        environment_checks=run.checks,
        commit=run.commit,
        warnings=report.warnings,
        error=report.error.to_json() if report.error else None,
        measure=report.measure or {"metrics": ["wall"]},
    )
