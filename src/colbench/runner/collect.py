"""Collect: turn what a worker reported into the stored result record (docs/results.md)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from colbench.model.result import SCHEMA_VERSION, UNITS, result_id, summary_stats, tags_for


def _throughput(work: dict[str, Any] | None, median_wall: float | None) -> dict[str, float | None]:
    if not work or not median_wall:
        return {"bytes_per_s": None, "rows_per_s": None}
    return {
        "bytes_per_s": work["bytes"] / median_wall if work.get("bytes") else None,
        "rows_per_s": work["rows"] / median_wall if work.get("rows") else None,
    }


def build_result(*, run: dict[str, Any], case_id: str, benchmark: str, params: dict[str, Any], engine: str,
                 runtime: str, env: dict[str, Any], process_index: int, block: int, iterations: int, warmup: int,
                 inputs: dict[str, Any], document: dict[str, Any], process: dict[str, Any]) -> dict[str, Any]:
    """One record per (case, environment, worker process): raw samples, their summary, and their context."""
    samples = document.get("samples") or {}
    summary = {metric: summary_stats(values) for metric, values in samples.items()}
    median_wall = (summary.get("wall_s") or {}).get("median")
    started = process.get("started_at")
    timestamp = datetime.fromtimestamp(started, UTC) if started else datetime.now(UTC)
    env_name = env["name"]
    memory = dict(document.get("memory") or {})
    versions = {**(env.get("resolved") or {}), **(document.get("versions") or {})}
    return {
        "schema_version": SCHEMA_VERSION,
        "result_id": result_id(run["run_id"], case_id, env_name, process_index),
        "run_id": run["run_id"],
        "run_name": run.get("name"),
        "timestamp": timestamp.isoformat(),
        "benchmark": benchmark,
        "case_id": case_id,
        "params": params,
        "tags": tags_for(benchmark, params),
        "engine": engine,
        "runtime": {**(document.get("runtime") or {}), "name": runtime},
        "env_name": env_name,
        "env": {"name": env_name, "spec": env.get("spec"), "key": env.get("key")},
        "process_index": process_index,
        "block": block,
        "status": document.get("status", "error"),
        "iterations": iterations,
        "warmup": warmup,
        "samples": samples,
        "warmup_samples": document.get("warmup_samples") or {},
        "first_iteration": document.get("first_iteration"),
        "units": {**UNITS, **(document.get("units") or {})},
        "summary": summary,
        "work": document.get("work"),
        "throughput": _throughput(document.get("work"), median_wall),
        "output": document.get("output"),
        "memory": memory,
        "process": process,
        "threads": document.get("threads") or {"requested": params.get("threads")},
        "allocator": document.get("allocator") or {"requested": params.get("allocator")},
        "cache": document.get("cache") or {"requested": params.get("cache")},
        "inputs": inputs,
        "versions": versions,
        "machine_id": run["machine_id"],
        "machine": run["machine"],
        "environment_checks": run.get("checks") or [],
        "commit": run.get("commit"),
        "warnings": document.get("warnings") or [],
        "error": document.get("error"),
        "measure": document.get("measure") or {"metrics": ["wall"]},
    }
