"""The identity of cases and results, and the version of the result schema.

The result record itself is `colbench.model.records.Result`; its JSON layout is fixed by `result.schema.json`
(documented in docs/results.md), and `SCHEMA_VERSION` changes whenever that layout changes.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

SCHEMA_VERSION = 1
SCHEMA_PATH = Path(__file__).with_name("result.schema.json")

ERROR_KINDS = ("exception", "check", "oom", "invalid", "crash", "timeout", "no-result", "skipped")


def canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)


def case_id(benchmark: str, params: dict[str, Any]) -> str:
    """Stable id of a case: the same benchmark and params give the same id on every machine and run."""
    return hashlib.sha256(canonical_json({"benchmark": benchmark, "params": params}).encode()).hexdigest()[:16]


def result_id(run_id: str, case: str, env_name: str, process_index: int) -> str:
    """Deterministic, so writing the same execution twice (a retry, a resume, a store copy) never duplicates it."""
    key = f"{run_id}/{case}/{env_name}/{process_index}"
    return hashlib.sha256(key.encode()).hexdigest()[:24]


def tags_for(benchmark: str, params: dict[str, Any]) -> dict[str, Any]:
    """Conbench-style tags: the name plus every param, which together identify a case."""
    return {"name": benchmark, **params}
