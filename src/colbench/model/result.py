"""The result record: one per (case, worker process), with raw per-iteration samples.

The record is a plain JSON-able dict whose layout is fixed by `result.schema.json` (documented in
docs/results.md); `SCHEMA_VERSION` changes whenever that layout changes.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

SCHEMA_VERSION = 1
SCHEMA_PATH = Path(__file__).with_name("result.schema.json")

ERROR_KINDS = ("exception", "check", "oom", "invalid", "crash", "timeout", "no-result", "skipped")

UNITS = {"wall_s": "s", "cpu_user_s": "s", "cpu_sys_s": "s"}

#: metrics that are per-iteration sample series (compare, history, reports), and the series holding each:
#: "time" is wall seconds, "instructions" the count under Valgrind (`run --measure instructions`)
METRIC_SERIES = {"time": "wall_s", "instructions": "instructions"}


def canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)


def case_id(benchmark: str, params: dict[str, Any]) -> str:
    """Stable id of a case: the same benchmark and params give the same id on every machine and run."""
    return hashlib.sha256(canonical_json({"benchmark": benchmark, "params": params}).encode()).hexdigest()[:16]


def result_id(run_id: str, case: str, env_name: str, process_index: int) -> str:
    """Deterministic, so writing the same execution twice (a retry, a resume, a store copy) never duplicates it."""
    key = f"{run_id}/{case}/{env_name}/{process_index}"
    return hashlib.sha256(key.encode()).hexdigest()[:24]


def summary_stats(values: Sequence[float]) -> dict[str, float | int | None]:
    """The stored summary of a sample (see the schema); JSON has no NaN, so undefined spread is null."""
    from colbench.analysis.stats import summarize

    clean = [v for v in values if v is not None and math.isfinite(v)]
    if not clean:
        return {"n": 0, "min": None, "median": None, "mean": None, "stdev": None, "iqr": None, "cv": None}
    summary = summarize(clean).to_dict()
    return {k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in summary.items()}


def tags_for(benchmark: str, params: dict[str, Any]) -> dict[str, Any]:
    """Conbench-style tags: the name plus every param, which together identify a case."""
    return {"name": benchmark, **params}
