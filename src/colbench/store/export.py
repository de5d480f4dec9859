"""Export results out of the store: Parquet (one row per result, raw samples as lists), CSV (one row per
timed iteration, ready for a spreadsheet or R) and JSON Lines (the whole record)."""

from __future__ import annotations

import csv
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from colbench.model.records import Result

FORMATS = ("parquet", "csv", "jsonl")


def _flat(result: Result) -> dict[str, Any]:
    error = result.error or {}
    return {
        "result_id": result.result_id, "run_id": result.run_id, "run_name": result.run_name,
        "timestamp": result.timestamp, "benchmark": result.benchmark, "case_id": result.case_id,
        "env_name": result.env_name, "process_index": result.process_index, "status": result.status,
        "params": json.dumps(result.params, sort_keys=True), "engine": result.engine,
        "machine_id": result.machine_id, "commit": result.commit_sha,
        "median_s": result.median("wall_s"), "cv": result.stat("wall_s", "cv"),
        "instructions_median": result.median("instructions"),
        "first_iteration_s": (result.first_iteration or {}).get("wall_s"),
        "peak_rss_bytes": result.memory.get("peak_rss_bytes"),
        "error_kind": error.get("kind"), "error_message": error.get("message"),
    }


def export_results(results: Sequence[Result], fmt: str, output: Path) -> int:
    """Write `results` to `output`; returns the number of rows written."""
    output.parent.mkdir(parents=True, exist_ok=True)
    if fmt == "jsonl":
        with open(output, "w") as handle:
            for result in results:
                handle.write(json.dumps(result.to_json(), default=str) + "\n")
        return len(results)
    if fmt == "csv":
        rows = []
        for result in results:
            base = _flat(result)
            samples = result.samples
            count = max((len(v) for v in samples.values()), default=0)
            if count == 0:
                rows.append({**base, "iteration": None})
            for i in range(count):
                rows.append({**base, "iteration": i, **{m: v[i] for m, v in samples.items() if i < len(v)}})
        columns = list(dict.fromkeys(k for r in rows for k in r)) or ["result_id", "run_id", "benchmark", "status"]
        with open(output, "w", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=columns)
            writer.writeheader()
            writer.writerows(rows)
        return len(rows)
    if fmt == "parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq

        rows = []
        for result in results:
            samples = result.samples
            rows.append({**_flat(result), "wall_s": samples.get("wall_s") or [],
                         "cpu_user_s": samples.get("cpu_user_s") or [], "cpu_sys_s": samples.get("cpu_sys_s") or [],
                         "instructions": samples.get("instructions") or [],
                         "doc": json.dumps(result.to_json(), default=str)})
        pq.write_table(pa.Table.from_pylist(rows), output)
        return len(rows)
    raise ValueError(f"unknown export format {fmt!r}; choose from {', '.join(FORMATS)}")
