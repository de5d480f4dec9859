"""The compile pass (runner/compile_pass.py): a case's modules compiled natively, once, before its first counting
process, into the bytecode cache the counting workers read."""

from __future__ import annotations

import dataclasses
import os
import sys
from pathlib import Path

from colbench.model.records import CaseSpec
from colbench.runner.compile_pass import compile_before_counting
from colbench.runner.isolate import WorkerLaunch

VALGRIND = ["/usr/bin/valgrind", "--tool=callgrind"]


def _spec(case_id: str) -> CaseSpec:
    return CaseSpec(benchmark="placebo", case_id=case_id, params={"duration": 0, "work": 10}, inputs={},
                    iterations=3, warmup=2, threads=1, allocator="default", cache="warm", seed=1,
                    measure="instructions")


def test_the_case_and_the_counting_modules_are_compiled_once_natively(tmp_path: Path):
    prefix = tmp_path / "pycache"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    launch = WorkerLaunch([*VALGRIND, sys.executable, "-m", "colbench.worker"], {**env, "PYTHONPYCACHEPREFIX":
                                                                                str(prefix)}, timeout_s=120)
    assert compile_before_counting(_spec("c1"), launch, VALGRIND)
    compiled = {p.name.split(".")[0] for p in prefix.rglob("*.pyc")}
    # what only a counting worker imports (its probe, the server's modules), the benchmark, and the worker itself
    assert {"callgrind_probe", "count_server", "placebo", "worker"} <= compiled
    # once per case and worker: another process of it (another seed) does not compile again; another case does
    again = dataclasses.replace(_spec("c1"), seed=2)
    assert not compile_before_counting(again, launch, VALGRIND)
    assert compile_before_counting(_spec("c2"), launch, VALGRIND)


def test_a_worker_that_is_not_python_s_is_left_alone(tmp_path: Path):
    launch = WorkerLaunch([*VALGRIND, "Rscript", "worker.R"], {"PYTHONPYCACHEPREFIX": str(tmp_path)})
    assert not compile_before_counting(_spec("r1"), launch, VALGRIND)
    assert not list(tmp_path.iterdir())
