"""Conbench's BenchmarkResult create schema of the current API (`POST /api/benchmark-results/`), transcribed to JSON
Schema 2020-12 from its marshmallow schemas (conbench/conbench, https://github.com/conbench/conbench:
`conbench/entities/benchmark_result.py` — `_BenchmarkResultCreateSchema`, `BenchmarkResultStatsSchema`,
`SchemaGitHubCreate`; `conbench/entities/hardware.py` — `MachineCreate`). The tests' real server is the older
generation (the newest on PyPI), so this is what checks the documents against the newer one; `refusals()` adds
the rules a JSON schema cannot say (BenchmarkResult.create: tag value types, iterations against samples)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import jsonschema

_INT = {"anyOf": [{"type": "integer", "minimum": 0}, {"type": "string", "pattern": "^[0-9]+$"}]}
_NUMBER_OR_NULL = {"type": ["number", "null"]}

#: Two rules are not expressible here and are checked by `refusals()`: `iterations == len(data)` when there are
#: two or more values, and a timestamp that parses as ISO 8601.
BENCHMARK_RESULT_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "Conbench BenchmarkResult (POST /api/benchmark-results/, the current API)",
    "type": "object",
    "required": ["run_id", "batch_id", "timestamp", "tags", "context", "github"],
    "additionalProperties": False,
    "properties": {
        "run_id": {"type": "string", "minLength": 1},
        "run_name": {"type": "string"},
        "run_reason": {"type": "string"},
        "run_tags": {"type": "object", "propertyNames": {"minLength": 1}, "additionalProperties": {"type": "string"}},
        "batch_id": {"type": "string"},
        "timestamp": {"type": "string", "format": "date-time"},
        "tags": {
            "type": "object",
            "required": ["name"],
            "properties": {"name": {"type": "string", "minLength": 1}},
            "propertyNames": {"minLength": 1},
            "additionalProperties": {"type": ["string", "number", "boolean", "null"]},
        },
        "context": {"type": "object"},
        "info": {"type": "object"},
        "optional_benchmark_info": {"type": "object"},
        "validation": {"type": "object"},
        "change_annotations": {"type": "object"},
        "error": {"type": "object"},
        "machine_info": {
            "type": "object",
            "additionalProperties": False,
            "required": ["name", "architecture_name", "kernel_name", "os_name", "os_version", "cpu_model_name",
                         "cpu_l1d_cache_bytes", "cpu_l1i_cache_bytes", "cpu_l2_cache_bytes", "cpu_l3_cache_bytes",
                         "cpu_core_count", "cpu_thread_count", "cpu_frequency_max_hz", "memory_bytes", "gpu_count",
                         "gpu_product_names"],
            "properties": {
                **{k: {"type": "string"} for k in ("name", "architecture_name", "kernel_name", "os_name",
                                                    "os_version", "cpu_model_name")},
                **{k: _INT for k in ("cpu_l1d_cache_bytes", "cpu_l1i_cache_bytes", "cpu_l2_cache_bytes",
                                     "cpu_l3_cache_bytes", "cpu_core_count", "cpu_thread_count",
                                     "cpu_frequency_max_hz", "memory_bytes", "gpu_count")},
                "gpu_product_names": {"type": "array", "items": {"type": "string"}},
            },
        },
        "cluster_info": {
            "type": "object",
            "additionalProperties": False,
            "required": ["name", "info", "optional_info"],
            "properties": {"name": {"type": "string"}, "info": {"type": "object"},
                           "optional_info": {"type": "object"}},
        },
        "stats": {
            "type": "object",
            "additionalProperties": False,
            "required": ["data", "unit"],
            "properties": {
                "data": {"type": "array", "items": _NUMBER_OR_NULL},
                "times": {"type": "array", "items": _NUMBER_OR_NULL},
                "unit": {"enum": ["s", "ns", "B/s", "i/s", "b/s"]},
                "time_unit": {"type": "string"},
                "iterations": {"type": "integer"},
                **{k: {"type": "number"} for k in ("min", "max", "mean", "median", "stdev", "q1", "q3", "iqr")},
            },
        },
        "github": {
            "type": "object",
            "additionalProperties": False,
            "required": ["repository"],
            "properties": {
                "repository": {"type": "string", "pattern": r"^(https://github\.com|git@github\.com:)"},
                "commit": {"type": "string", "minLength": 1},
                "pr_number": {"type": ["integer", "string", "null"]},
                "branch": {"type": ["string", "null"]},
            },
        },
    },
    "allOf": [
        {"oneOf": [{"required": ["machine_info"]}, {"required": ["cluster_info"]}]},
        {"anyOf": [{"required": ["stats"]}, {"required": ["error"]}]},
    ],
}


VALIDATOR = jsonschema.Draft202012Validator(BENCHMARK_RESULT_SCHEMA)


def refusals(doc: Any) -> list[str]:
    """What the current Conbench API would answer 400 for."""
    found = [f"{'/'.join(map(str, e.path))}: {e.message}" for e in VALIDATOR.iter_errors(doc)]
    if found:
        return found
    for key, value in doc["tags"].items():
        if isinstance(value, list | dict):
            found.append(f"tags: bad value type for key `{key}`")
    data = (doc.get("stats") or {}).get("data") or []
    if len(data) >= 2 and doc["stats"].get("iterations") != len(data):
        found.append("iterations count does not match sample count")
    try:
        datetime.fromisoformat(doc["timestamp"])
    except ValueError:
        found.append("timestamp: Not a valid datetime.")
    return found
