"""The Java worker (colbench/workers/java) run for real: `java <jvm.options> -jar JAR case.json result.json`.

The jar is built once per session by `colbench setup java`, as a user builds it (tests/conftest.py). Benchmark
`ipc-bandwidth` (runtime=java) runs on small data for every type x access x source with 1 and 2 threads; each result
is checked against values recomputed here from the same deterministic formulas (colbench/workers/java/README.md,
"Data and checksums"), with the bytes counted exactly as the post did. The failure paths (a missing case file, invalid
params, an exception inside the run) must end as a clean non-zero exit or an error result.

Without `java` or `mvn` on PATH the whole module is skipped.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from colbench.model.protocol import report_violation

JAVA = shutil.which("java")
MVN = shutil.which("mvn")

# a Maven build and real JVMs: the full suite, not the fast tier
pytestmark = [pytest.mark.skipif(
    JAVA is None or MVN is None,
    reason="java or mvn not found on PATH: install a JDK 17+ and Maven 3.8+ to test the Java worker",
), pytest.mark.slow]

M64 = (1 << 64) - 1
K32 = 0x9E3779B1
K64 = 0x9E3779B97F4A7C15
SEED = 42
INT_ROWS = 200_001  # not a multiple of the batch size, and odd: the last batch and int32 scan tail are exercised
INT_BATCH = 16_384
BINARY_ROWS = 20_000
BINARY_BATCH = 1_000
KIB = 1024
TYPES = ("int32", "int64", "binary")
ACCESSES = ("lazy", "offsets", "scan", "materialize")
SOURCES = ("buffer", "stream")


# ---------------------------------------------------------------------------------------------------------
# the worker


@pytest.fixture(scope="session")
def worker(java_worker_home: Path) -> list[str]:
    """The command line that runs the worker, as the orchestrator builds it: java, jvm.options, -jar JAR (the jar
    `colbench setup java` built for the session, tests/conftest.py)."""
    from colbench.runtimes.java import jvm_flags

    jars = list((java_worker_home / "workers" / "java").glob("*/colbench-worker.jar"))
    assert len(jars) == 1, jars
    return [str(JAVA), *jvm_flags(), "-jar", str(jars[0])]


def make_case(params: dict[str, Any], *, iterations: int = 2, warmup: int = 1) -> dict[str, Any]:
    full = {"runtime": "java", "allocator": "default", "cache": "warm", **params}
    return {"protocol": 1, "benchmark": "ipc-bandwidth", "case_id": "test", "params": full, "inputs": {},
            "iterations": iterations, "warmup": warmup, "threads": full.get("threads", 1),
            "allocator": full["allocator"], "cache": full["cache"], "seed": SEED, "scratch_dir": "/tmp"}


def run_worker(worker: list[str], tmp_path: Path, case: dict[str, Any] | None, *,
               env: dict[str, str] | None = None) -> tuple[subprocess.CompletedProcess[str], dict[str, Any] | None]:
    case_path, result_path = tmp_path / "case.json", tmp_path / "result.json"
    if case is not None:
        case_path.write_text(json.dumps(case))
    proc = subprocess.run([*worker, str(case_path), str(result_path)], capture_output=True, text=True,
                          timeout=120, env={**os.environ, **(env or {})})
    result = json.loads(result_path.read_text()) if result_path.exists() else None
    assert result is None or report_violation(result) is None, report_violation(result)  # the shared schema
    return proc, result


def ipc_params(kind: str, access: str, source: str, threads: int) -> dict[str, Any]:
    if kind == "binary":
        sizes = {"value_size": KIB, "rows": BINARY_ROWS, "batch_rows": BINARY_BATCH}
    else:
        sizes = {"value_size": 0, "rows": INT_ROWS, "batch_rows": INT_BATCH}
    return {"type": kind, **sizes, "threads": threads, "source": source, "access": access}


# ---------------------------------------------------------------------------------------------------------
# the expected values, recomputed from the formulas the worker documents


def thread_seed(seed: int, thread: int) -> int:
    return seed + thread


def int32_values(rows: int, s: int) -> np.ndarray:
    i = np.arange(rows, dtype=np.uint64)
    low = (i * np.uint64(K32) + np.uint64(s & M64)) & np.uint64(0xFFFFFFFF)
    return low.astype(np.uint32).view(np.int32)


def hash_top_byte(position: np.ndarray, s: int) -> np.ndarray:
    """The binary pattern: the top byte of the 32-bit hash of a byte's position in the thread's payload."""
    with np.errstate(over="ignore"):  # uint32 arithmetic wraps, as the formula says
        hashed = position.astype(np.uint32) * np.uint32(K32) + np.uint32(s & 0xFFFFFFFF)
    return (hashed >> np.uint32(24)).astype(np.uint8)


@functools.lru_cache(maxsize=8)
def binary_values(rows: int, size: int, s: int) -> np.ndarray:
    """rows x size bytes: byte j of row i is hash_top_byte(i * size + j)."""
    return hash_top_byte(np.arange(rows * size, dtype=np.uint32), s).reshape(rows, size)


def binary_first_bytes(rows: int, size: int, s: int) -> np.ndarray:
    return hash_top_byte(np.arange(rows, dtype=np.uint64) * np.uint64(size), s)


def hex64(value: int) -> str:
    """The protocol's form of a 64-bit checksum: 16 hex digits of its two's complement, as both workers write it."""
    return f"{value & M64:016x}"


def expected_checksum(params: dict[str, Any]) -> str | None:
    kind, access, rows = params["type"], params["access"], params["rows"]
    if access == "lazy":
        return None
    total = 0
    for thread in range(params["threads"]):
        s = thread_seed(SEED, thread)
        if kind == "int32":
            total += int(int32_values(rows, s).astype(np.int64).sum())
        elif kind == "int64":
            total += K64 * (rows * (rows - 1) // 2) + rows * s
        elif access == "offsets":
            total += rows * params["value_size"]
        elif access == "materialize":
            first = binary_first_bytes(rows, params["value_size"], s)
            total += rows * params["value_size"] + int(first.astype(np.int64).sum())
        else:  # scan: each batch's payload as little-endian 64-bit words, the last zero-padded, summed
            values = binary_values(rows, params["value_size"], s)
            for first in range(0, rows, params["batch_rows"]):
                payload = values[first:first + params["batch_rows"]].reshape(-1)
                payload = np.concatenate([payload, np.zeros(-len(payload) % 8, dtype=np.uint8)])
                total += int(payload.view("<u8").sum(dtype=np.uint64))
    return hex64(total)


def value_bytes(params: dict[str, Any]) -> int:
    return {"int32": 4, "int64": 8}.get(params["type"], params["value_size"])


# ---------------------------------------------------------------------------------------------------------
# ok results


def assert_ok(result: dict[str, Any] | None, proc: subprocess.CompletedProcess[str], params: dict[str, Any],
              *, iterations: int = 2, warmup: int = 1) -> None:
    assert result is not None, f"no result (exit {proc.returncode}):\n{proc.stderr}"
    assert result["status"] == "ok", result["error"]
    assert proc.returncode == 0
    samples, warm = result["samples"], result["warmup_samples"]
    for key in ("wall_s", "cpu_user_s", "cpu_sys_s", "gbps"):
        assert len(samples[key]) == iterations, key
        assert len(warm.get(key, [])) == warmup, key
    assert result["units"] == {"gbps": "Gbit/s"}
    assert result["first_iteration"]["wall_s"] == (warm["wall_s"] if warmup else samples["wall_s"])[0]

    threads = params["threads"]
    rows = params["rows"] * threads
    work_bytes = rows * value_bytes(params)
    assert result["work"] == {"bytes": work_bytes, "rows": rows}
    for wall, gbps in zip(samples["wall_s"], samples["gbps"], strict=True):
        assert wall > 0 and gbps > 0
        assert gbps == pytest.approx(work_bytes * 8 / wall / 1e9, rel=1e-6)
    assert result["output"]["rows"] == rows
    assert result["output"]["columns"] == 1
    assert result["output"]["checksum"] == expected_checksum(params)

    assert result["threads"]["requested"] == threads
    assert result["threads"]["applied"]["reader_threads"] == threads
    assert result["allocator"] == {"requested": "default", "actual": "netty"}
    assert result["runtime"]["name"] == "java"
    assert result["versions"]["java"] and result["versions"]["arrow"].count(".") == 2
    memory = result["memory"]
    assert memory["engine_memory"] == "jvm_heap_peak+arrow_allocator_peak"
    assert memory["engine_peak_bytes"] == memory["jvm_heap_peak_bytes"] + memory["arrow_allocator_peak_bytes"]
    assert memory["peak_rss_bytes"] > 0
    if params["source"] == "buffer":  # the whole file lives in the allocator
        assert memory["arrow_allocator_peak_bytes"] >= work_bytes
    assert result["warnings"] == []
    assert result["error"] is None


@pytest.mark.slow
@pytest.mark.parametrize("threads", (1, 2))
@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("access", ACCESSES)
@pytest.mark.parametrize("kind", TYPES)
def test_ipc_bandwidth(worker: list[str], tmp_path: Path, kind: str, access: str, source: str, threads: int) -> None:
    params = ipc_params(kind, access, source, threads)
    proc, result = run_worker(worker, tmp_path, make_case(params))
    assert_ok(result, proc, params)


@pytest.mark.parametrize(("access", "source"), [("scan", "buffer"), ("scan", "stream"), ("materialize", "buffer")])
def test_binary_odd_sizes(worker: list[str], tmp_path: Path, access: str, source: str) -> None:
    """Values of 1021 bytes in batches of 997 rows: batch payloads end mid-word, the last batch is short."""
    params = {"type": "binary", "value_size": 1021, "rows": 5_000, "batch_rows": 997, "threads": 1,
              "source": source, "access": access}
    proc, result = run_worker(worker, tmp_path, make_case(params, iterations=1, warmup=0))
    assert_ok(result, proc, params, iterations=1, warmup=0)
    assert result["extra"]["batches_per_thread"] == 6


def test_single_batch_and_seed(worker: list[str], tmp_path: Path) -> None:
    """One batch larger than the data; a different seed changes the data and so the checksum."""
    params = {"type": "int32", "rows": 1_001, "batch_rows": 1_000_000, "threads": 1, "source": "buffer",
              "access": "scan", "seed": 7}
    case = make_case(params)
    proc, result = run_worker(worker, tmp_path, case)
    assert result is not None and result["status"] == "ok", proc.stderr
    assert result["output"]["checksum"] == hex64(int(int32_values(1_001, 7).astype(np.int64).sum()))
    assert result["extra"]["batches_per_thread"] == 1


def test_framework_params_recorded(worker: list[str], tmp_path: Path) -> None:
    params = {**ipc_params("int64", "offsets", "buffer", 1), "rows": 10_000, "allocator": "jemalloc",
              "cache": "cold"}
    proc, result = run_worker(worker, tmp_path, make_case(params))
    assert result is not None and result["status"] == "ok", proc.stderr
    assert result["allocator"] == {"requested": "jemalloc", "actual": "netty"}
    assert result["cache"] == {"requested": "cold", "achieved": None}
    assert len(result["warnings"]) == 2


# ---------------------------------------------------------------------------------------------------------
# failures


def test_missing_case_file(worker: list[str], tmp_path: Path) -> None:
    proc, result = run_worker(worker, tmp_path, None)
    assert proc.returncode != 0
    assert result is None
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "cannot read case file" in lines[0] and "case.json" in lines[0]


def test_unreadable_case_file(worker: list[str], tmp_path: Path) -> None:
    (tmp_path / "case.json").write_text("{not json")
    proc = subprocess.run([*worker, str(tmp_path / "case.json"), str(tmp_path / "result.json")],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode != 0
    assert not (tmp_path / "result.json").exists()
    assert "cannot read case file" in proc.stderr


@pytest.mark.parametrize(("change", "message"), [
    ({"type": "float"}, "type=float"),
    ({"batch_rows": 0}, "batch_rows=0"),
    ({"compression": "zstd"}, "compression"),
])
def test_invalid_params(worker: list[str], tmp_path: Path, change: dict[str, Any], message: str) -> None:
    params = {**ipc_params("int32", "scan", "buffer", 1), **change}
    proc, result = run_worker(worker, tmp_path, make_case(params))
    assert proc.returncode == 0, proc.stderr
    assert result is not None and result["status"] == "error"
    assert result["error"]["kind"] == "invalid"
    assert message in result["error"]["message"]
    assert result["error"]["traceback"]
    assert result["samples"] == {} and result["output"] is None


def test_unknown_benchmark(worker: list[str], tmp_path: Path) -> None:
    case = {**make_case(ipc_params("int32", "scan", "buffer", 1)), "benchmark": "csv-read"}
    proc, result = run_worker(worker, tmp_path, case)
    assert result is not None and result["error"]["kind"] == "invalid", proc.stderr
    assert "csv-read" in result["error"]["message"]


def test_exception_keeps_earlier_samples(worker: list[str], tmp_path: Path) -> None:
    """An exception before the second timed iteration: an error result that keeps what was measured."""
    params = {**ipc_params("binary", "scan", "stream", 1), "rows": 2_000}
    proc, result = run_worker(worker, tmp_path, make_case(params, iterations=3, warmup=1),
                              env={"COLBENCH_FAULT": "iteration:2"})
    assert proc.returncode == 0, proc.stderr
    assert result is not None and result["status"] == "error"
    assert result["error"]["kind"] == "exception"
    assert "IllegalStateException" in result["error"]["message"]
    assert "colbench.worker" in result["error"]["traceback"]
    assert len(result["warmup_samples"]["wall_s"]) == 1
    assert len(result["samples"]["wall_s"]) == 1
    assert result["output"]["checksum"] == expected_checksum({**params, "threads": 1})


def test_exception_in_setup(worker: list[str], tmp_path: Path) -> None:
    proc, result = run_worker(worker, tmp_path, make_case(ipc_params("int32", "lazy", "buffer", 1)),
                              env={"COLBENCH_FAULT": "setup"})
    assert result is not None and result["status"] == "error", proc.stderr
    assert result["error"]["kind"] == "exception"
    assert result["samples"] == {} and result["first_iteration"] is None
