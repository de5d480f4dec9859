"""Synthetic result records and ways to run the store CLI before it is mounted under `colbench`."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from colbench.model.records import Result, Run
from colbench.model.result import SCHEMA_VERSION, case_id, result_id


def synthetic_result(run_id: str, index: int, *, benchmark: str = "placebo", machine_id: str = "m1",
                     minutes: int = 0) -> Result:
    """A small but complete-enough record: what the stores index, and samples to carry."""
    return Result.from_json(synthetic_result_doc(run_id, index, benchmark=benchmark, machine_id=machine_id,
                                                 minutes=minutes))


def synthetic_result_doc(run_id: str, index: int, *, benchmark: str = "placebo", machine_id: str = "m1",
                         minutes: int = 0) -> dict[str, Any]:
    """The JSON document of `synthetic_result`, as an older colbench may have stored it (optional parts left out)."""
    params = {"duration": 0.001 * (index % 5 + 1), "threads": 1}
    case = case_id(benchmark, params)
    wall = [0.001 * (index % 5 + 1) + i * 1e-6 for i in range(3)]
    return {
        "schema_version": SCHEMA_VERSION, "result_id": result_id(run_id, case, "default", index),
        "run_id": run_id, "run_name": None,
        "timestamp": (datetime(2026, 1, 1, tzinfo=UTC) + timedelta(minutes=minutes, seconds=index)).isoformat(),
        "benchmark": benchmark, "case_id": case, "params": params, "tags": {"name": benchmark, **params},
        "engine": "python", "runtime": {"name": "python", "version": "3.11"}, "env_name": "default",
        "env": {"name": "default", "spec": None, "key": None}, "process_index": index, "block": index,
        "status": "ok", "iterations": 3, "warmup": 0, "samples": {"wall_s": wall}, "units": {"wall_s": "s"},
        "summary": {"wall_s": {"n": 3, "median": wall[1]}}, "machine_id": machine_id,
        "machine": {"name": f"box-{machine_id}", "cpu_model": "Test CPU", "cpu_cores": 2, "cpu_threads": 4,
                    "memory_bytes": 8 << 30, "architecture": "x86_64", "os": "Linux", "kernel": "6.1",
                    "os_release": "Debian GNU/Linux 12 (bookworm)", "cpu_caches": {"L1d": "48K", "L2": "2048K"}},
        "commit": {"sha": hashlib.sha1(run_id.encode()).hexdigest()}, "versions": {"python": "3.11"},
        "warnings": [], "error": None,
    }


def synthetic_run(run_id: str, machine_id: str = "m1", status: str = "finished") -> Run:
    return Run.from_json(synthetic_run_doc(run_id, machine_id, status))


def synthetic_run_doc(run_id: str, machine_id: str = "m1", status: str = "finished") -> dict[str, Any]:
    return {"schema_version": SCHEMA_VERSION, "run_id": run_id, "name": None,
            "started_at": "2026-01-01T00:00:00+00:00", "finished_at": None, "status": status,
            "machine_id": machine_id, "machine": {"name": f"box-{machine_id}"}, "commit": None,
            "config": {"targets": ["placebo"]}}


def store_cli(*args: str, home: Path, env: dict[str, str] | None = None,
              timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """`colbench store ARGS` through the real Typer app, in a subprocess, as the user would run it."""
    return _run_app("from colbench.cli.store_cmd import store_app as app", args, home, env, timeout)


def publish_cli(*args: str, home: Path, env: dict[str, str] | None = None,
                timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """`colbench publish ARGS`, wired the way main.py mounts it."""
    setup = ("import typer; from colbench.cli.store_cmd import publish_command; app = typer.Typer(); "
             "app.command('publish')(publish_command); app.command('noop', hidden=True)(lambda: None)")
    return _run_app(setup, ("publish", *args), home, env, timeout)


def _run_app(setup: str, args: tuple[str, ...], home: Path, env: dict[str, str] | None,
             timeout: float) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, "COLBENCH_HOME": str(home), **(env or {})}
    if "COLBENCH_STORE" not in (env or {}):
        environment.pop("COLBENCH_STORE", None)
    code = f"{setup}; app(prog_name='colbench')"
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, env=environment,
                          timeout=timeout)
