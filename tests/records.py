"""Records for tests: a `Result` or a `Run` from only the fields a test cares about (the rest take plain values)."""

from __future__ import annotations

from typing import Any

from colbench.model.records import Result, Run

#: what every result names; a test overrides what it is about
RESULT_BASE: dict[str, Any] = {
    "result_id": "result", "run_id": "run", "timestamp": "2026-01-01T00:00:00+00:00", "benchmark": "placebo",
    "case_id": "case", "params": {}, "engine": "python", "runtime": {"name": "python", "version": "3.11"},
    "env_name": "default", "process_index": 0, "status": "ok", "iterations": 3, "warmup": 0, "machine_id": "m1",
    "machine": {"name": "box-m1"},
}

RUN_BASE: dict[str, Any] = {
    "run_id": "run", "started_at": "2026-01-01T00:00:00+00:00", "machine_id": "m1", "machine": {"name": "box-m1"},
    "config": {"targets": ["placebo"]},
}


def make_result(**fields: Any) -> Result:
    """A result read as a store reads one (`Result.from_json`), from `fields` over RESULT_BASE."""
    return Result.from_json({**RESULT_BASE, **fields})


def make_run(**fields: Any) -> Run:
    """A run record read as a store reads one (`Run.from_json`), from `fields` over RUN_BASE."""
    return Run.from_json({**RUN_BASE, **fields})
