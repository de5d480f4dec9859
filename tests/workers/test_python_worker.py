"""The Python worker speaks the protocol's schema (model/protocol.schema.json), as the R and Java workers do, and the
orchestrator holds every worker's report to it: a report that breaks it is an error naming the field."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from colbench.model.protocol import case_violation, report_violation
from colbench.model.records import PROTOCOL, WorkerReport
from colbench.runner.execute import case_spec
from colbench.runner.isolate import WorkerLaunch, run_worker
from colbench.runner.plan import make_plan
from colbench.workers.python.worker import run_case

WORKER = [sys.executable, "-m", "colbench.worker"]


def placebo_case(**params: str) -> dict:
    case = make_plan(["placebo"], {k: [v] for k, v in params.items()}).cases[0]
    return case_spec(case, {}, iterations=2, warmup=1, seed=1).to_json()


def test_the_orchestrators_case_and_the_workers_report_follow_the_schema(tmp_path: Path) -> None:
    case = {**placebo_case(duration="0"), "scratch_dir": str(tmp_path)}
    assert case_violation(case) is None
    report = run_case(case)
    assert report["status"] == "ok", report["error"]
    assert report_violation(report) is None
    assert len(report["samples"]["wall_s"]) == 2 and len(report["warmup_samples"]["wall_s"]) == 1
    assert report["protocol"] == PROTOCOL and report["runtime"]["name"] == "python"


@pytest.mark.parametrize("case, kind, said", [
    ({"protocol": 2}, "invalid", "this worker speaks 1"),
    ({"benchmark": None}, "invalid", "benchmark"),  # a spec without its benchmark: dropped below
    ({"params": {"no_such_param": 1}}, "invalid", "no_such_param"),
    ({"params": {"error": "exception"}}, "exception", ""),
    ({"params": {"duration": "soon"}}, "invalid", "param duration='soon' is not a number"),
])
def test_a_failing_case_still_gives_a_report_that_follows_the_schema(tmp_path: Path, case: dict, kind: str,
                                                                     said: str) -> None:
    base = placebo_case(duration="0")
    document = {**base, "scratch_dir": str(tmp_path), **case, "params": {**base["params"], **case.get("params", {})}}
    if document.get("benchmark") is None:
        del document["benchmark"]
    report = run_case(document)
    assert report["status"] == "error" and report["error"]["kind"] == kind
    assert said in report["error"]["message"]
    assert report_violation(report) is None


BROKEN_WORKER = """
import json, sys
report = {"protocol": 1, "status": "ok", "samples": {"wall_s": [0.01]}, "warmup_samples": {},
          "output": {"rows": 3, "columns": 1, "checksum": 12345, "file_size_bytes": None}}
report.update(json.loads(sys.argv[1]))  # argv: the change, then case.json and result.json as every worker gets
json.dump(report, open(sys.argv[3], "w"))
"""


@pytest.mark.parametrize("change, field", [
    ({}, "output.checksum"),  # a number where the protocol has text (the Java worker wrote this once)
    ({"output": None, "status": "fine"}, "status"),
    ({"output": None, "memory": {"peak_rss_bytes": -5}}, "memory.peak_rss_bytes"),
    ({"output": None, "samples": {"wall_s": "fast"}}, "samples.wall_s"),
])
def test_a_report_that_breaks_the_schema_is_an_invalid_result_naming_the_field(tmp_path: Path, change: dict,
                                                                              field: str) -> None:
    script = tmp_path / "broken_worker.py"
    script.write_text(BROKEN_WORKER)
    spec = make_plan(["placebo"], {"duration": ["0"]}).cases[0]
    launch = WorkerLaunch(command=[sys.executable, str(script), json.dumps(change)], env=dict(os.environ),
                          timeout_s=60)
    done = run_worker(case_spec(spec, {}, iterations=1, warmup=0, seed=1), launch)
    report = done.report
    assert report.status == "error" and report.error is not None and report.error.kind == "invalid"
    assert report.error.message.startswith(f"worker's result file does not follow the protocol: {field}:")
    assert report.samples == {}  # nothing of a broken report counts


def test_the_same_worker_counts_once_its_report_follows_the_schema(tmp_path: Path) -> None:
    """The check above refuses what breaks the schema, not the script: fixed, the same worker's report counts."""
    script = tmp_path / "broken_worker.py"
    script.write_text(BROKEN_WORKER.replace('"checksum": 12345', '"checksum": "3039"'))
    spec = make_plan(["placebo"], {"duration": ["0"]}).cases[0]
    launch = WorkerLaunch(command=[sys.executable, str(script), "{}"], env=dict(os.environ), timeout_s=60)
    done = run_worker(case_spec(spec, {}, iterations=1, warmup=0, seed=1), launch)
    assert done.report.status == "ok", done.report.error
    assert done.report.output == {"rows": 3, "columns": 1, "checksum": "3039", "file_size_bytes": None}
    assert isinstance(done.report, WorkerReport)


def test_the_worker_imports_only_what_it_runs_with() -> None:
    """Every worker process pays for what `colbench.worker` imports (docs/protocol.md, "what colbench adds"): not the
    stored records, the suites, redaction's patterns, hashing or fuzzy matching, which only the orchestrator uses."""
    code = ("import sys, colbench.worker, colbench.workers.python.worker as w\n"
            "from colbench.benchmarks.registry import get_benchmark\n"
            "get_benchmark('placebo')\n"
            "print(' '.join(sorted(sys.modules)))")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    loaded = set(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                                env=env).stdout.split())
    assert "colbench.workers.python.worker" in loaded  # the check ran
    unwanted = {"colbench.model.records", "colbench.model.suite", "colbench.model.result", "colbench.redact",
                "hashlib", "difflib", "urllib.request", "importlib.metadata", "numpy"}
    assert not unwanted & loaded, sorted(unwanted & loaded)
