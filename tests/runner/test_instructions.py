"""`--measure instructions`: real workers under real Valgrind, counting only the timed call.

The placebo's `work` param runs a deterministic loop inside the timed call and `setup_work` the same loop in
setup, so what is counted (and what is not) can be told apart. Valgrind runs are slow: few, tiny processes.
"""

from __future__ import annotations

import json
import shutil
import statistics
from pathlib import Path

import jsonschema
import pytest

from colbench.model.metrics import metric, parse_measure
from colbench.model.records import WorkerReport
from colbench.model.result import SCHEMA_PATH
from colbench.runner.instructions import merge, unsupported_reason
from colbench.runner.isolate import WorkerOutcome
from colbench.store import open_store
from colbench.store.base import ResultQuery
from tests.conftest import colbench
from tests.runner.conftest import VALGRIND_PLACEBO, ab_run

SCHEMA = json.loads(SCHEMA_PATH.read_text())
needs_valgrind = pytest.mark.skipif(shutil.which("valgrind") is None or shutil.which("cc") is None,
                                    reason="Valgrind and a C compiler are needed to count instructions")


def results_of(home: Path, run_name: str) -> list[dict]:
    """The run's results as stored: their JSON documents (what the schema checks)."""
    store = open_store(str(home / "results.duckdb"), create=False)
    run_id = next(r.run_id for r in store.list_runs() if r.name == run_name)
    return [r.to_json() for r in store.results(ResultQuery(run_ids=(run_id,)))]


def by_params(results: list[dict], **params: int) -> list[dict]:
    return [r for r in results if all(r["params"][k] == v for k, v in params.items())]


def median_count(results: list[dict]) -> float:
    return statistics.median(v for r in results for v in r["samples"]["instructions"])


@pytest.fixture
def counted_home(instructions_home: Path) -> Path:
    """Runs "counted" and "ab" of the placebo under real Valgrind (tests/runner/conftest.py)."""
    return instructions_home


@pytest.mark.slow
@needs_valgrind
@VALGRIND_PLACEBO
def test_every_iteration_records_instructions_beside_wall_time(counted_home):
    results = results_of(counted_home, "counted")
    assert len(results) == 4
    for r in results:
        jsonschema.validate(r, SCHEMA)
        assert r["status"] == "ok", r["error"]
        assert len(r["samples"]["instructions"]) == 2 and len(r["samples"]["wall_s"]) == 2
        assert all(v > 0 for v in r["samples"]["instructions"])
        # warm-ups run uncounted, at Valgrind's faster pace; the first call after instrumentation starts is counted
        # as a warm-up (it counts a little less than every call after it)
        assert len(r["warmup_samples"]["instructions"]) == 1 and "wall_s" in r["warmup_samples"]
        assert r["units"]["instructions"] == "instructions"
        measure = r["measure"]
        assert measure["metrics"] == ["wall", "instructions"]
        assert measure["instructions"]["separate_process"] is True
        assert measure["instructions"]["tool"] == "callgrind"
        # Valgrind's memory never stands in for the case's own
        assert r["memory"]["peak_rss_bytes"] < measure["instructions"]["memory"]["peak_rss_bytes"]
        # the counting worker is not pinned (a count does not depend on the CPU); where its CPU time went is kept
        assert measure["instructions"]["process"]["cpus"] is None and r["process"]["cpus"]
        assert set(measure["instructions"]["phases"]) == {"start", "setup", "warmup", "counting"}


@pytest.mark.slow
@needs_valgrind
@VALGRIND_PLACEBO
def test_setup_is_not_counted_and_the_timed_work_is(counted_home):
    results = results_of(counted_home, "counted")
    light = median_count(by_params(results, work=2000, setup_work=0))
    heavy_setup = median_count(by_params(results, work=2000, setup_work=300000))
    # setup does 150x the timed work: counted, it would dwarf the timed call
    assert abs(heavy_setup / light - 1) < 0.01, (light, heavy_setup)
    # the loop costs a few hundred instructions per unit in CPython: the count is the loop's, not a constant
    assert 2000 * 100 < light < 2000 * 5000, light


@pytest.mark.slow
@needs_valgrind
@VALGRIND_PLACEBO
def test_counts_repeat_across_processes_within_a_percent(counted_home):
    results = results_of(counted_home, "counted")
    medians = [statistics.median(r["samples"]["instructions"]) for r in results]  # setup does not count
    assert len(medians) == 4
    assert (max(medians) - min(medians)) / min(medians) < 0.01, medians


@pytest.mark.slow
@needs_valgrind
def test_a_counting_worker_stops_timing_once_two_counts_repeat(counted_home):
    """Instruction counts repeat within the metric's `repeat_within` (0.2%): two timed calls say what five would."""
    colbench("run", "placebo", "--param", "duration=0", "--param", "work=2000", "--measure", "instructions",
             "--processes", "1", "--iterations", "5", "--warmup", "0", "--run-name", "repeat", home=counted_home,
             check=True, timeout=600)
    (result,) = results_of(counted_home, "repeat")
    counts = result["samples"]["instructions"]
    assert len(counts) == 2 and abs(counts[1] / counts[0] - 1) <= metric("instructions").repeat_within, counts
    assert result["iterations"] == 5  # what was asked: the most


@pytest.mark.slow
@needs_valgrind
@VALGRIND_PLACEBO
def test_compare_and_history_accept_instructions(counted_home):
    ran = ab_run(counted_home)  # run "ab": work=2000, base and more (+50%), 2 processes a side, profiles kept
    # +50% of work is decided at 2 processes a side (instruction counts: a t-interval), so the run exits 1
    assert ran.returncode == 1 and "1 regression" in ran.stdout, ran.stdout + ran.stderr
    for r in results_of(counted_home, "ab"):
        assert set(r["samples"]) == {"instructions"} and r["measure"]["metrics"] == ["instructions"]
        assert r["memory"] == {} and r["process"] == {}

    same = colbench("compare", "counted", "ab:base", "--metric", "instructions", "--format", "json",
                    home=counted_home)
    assert same.returncode == 0, same.stderr
    (case,) = json.loads(same.stdout)["comparisons"]
    assert case["metric"] == "instructions" and case["threshold"] == metric("instructions").threshold
    assert abs(case["ratio"] - 1) < 0.01, case

    more = colbench("compare", "ab:base", "ab:more", "--metric", "instructions", "--format", "json",
                    home=counted_home)
    (case,) = json.loads(more.stdout)["comparisons"]
    assert 1.45 < case["ratio"] < 1.55, case  # the injected 50% of extra work, counted

    history = colbench("history", "placebo", "--param", "work=2000", "--metric", "instructions", "--format", "json",
                       home=counted_home)
    assert history.returncode == 0, history.stderr
    series = json.loads(history.stdout)
    assert series and all(h["metric"] == "instructions" for h in series)
    assert all(p["median"] > 0 for h in series for p in h["points"])

    report = colbench("report", "ab", "--format", "markdown", "--output", "-", "--metric", "instructions",
                      home=counted_home)
    assert report.returncode == 0, report.stderr
    assert "environment more vs base — instructions" in report.stdout
    assert " M instr |" in report.stdout  # counts, not seconds


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("Rscript") is None, reason="needs R to plan an R case")
def test_an_r_case_cannot_count_instructions(home):
    proc = colbench("run", "csv-read", "--param", "reader=data.table", "--param", "rows=1000", "--threads", "1",
                    "--param", "compression=none", "--param", "source=fanniemae_2016Q4",
                    "--measure", "instructions", "--dry-run", home=home)
    assert proc.returncode == 2
    assert "Python workers only" in proc.stderr and "Traceback" not in proc.stderr
    # asked for both, the R case runs for wall time and its record says why it has no count
    both = colbench("run", "csv-read", "--param", "reader=data.table", "--param", "rows=1000", "--threads", "1",
                    "--param", "compression=none", "--param", "source=fanniemae_2016Q4", "--processes", "1",
                    "--iterations", "1", "--warmup", "0", "--measure", "wall,instructions", "--run-name", "r",
                    home=home)
    if "skipped" in both.stderr:
        pytest.skip(both.stderr.strip())
    assert both.returncode == 0, both.stderr
    (record,) = results_of(home, "r")
    assert record["status"] == "ok" and record["samples"]["wall_s"] and "instructions" not in record["samples"]
    assert record["measure"]["metrics"] == ["wall"]
    assert "Python workers only" in record["measure"]["instructions"]["skipped"]
    assert any("Python workers only" in w for w in record["warnings"])


def test_measure_option_is_checked():
    assert parse_measure("instructions,wall") == ("wall", "instructions")
    assert parse_measure("instructions") == ("instructions",)
    with pytest.raises(ValueError, match="choose wall, instructions"):
        parse_measure("cycles")


def test_other_runtimes_say_instructions_are_python_only():
    assert unsupported_reason("python") is None
    assert "Python workers only" in unsupported_reason("r")
    java = unsupported_reason("java")
    assert "Python workers only" in java and "JIT" in java


@pytest.mark.slow
def test_missing_valgrind_or_compiler_is_one_line_and_exit_2(home):
    proc = colbench("run", "placebo", "--measure", "instructions", home=home,
                    env={"COLBENCH_VALGRIND": str(home / "no-such-valgrind")})
    assert proc.returncode == 2
    assert "no-such-valgrind" in proc.stderr and "Traceback" not in proc.stderr
    if shutil.which("valgrind"):
        proc = colbench("run", "placebo", "--measure", "instructions", home=home,
                        env={"CC": str(home / "no-such-cc")})
        assert proc.returncode == 2
        assert "C compiler" in proc.stderr and "Traceback" not in proc.stderr
    bad = colbench("run", "placebo", "--measure", "cycles", home=home)
    assert bad.returncode == 2 and "choose wall, instructions" in bad.stderr


def test_a_failing_count_makes_the_record_an_error_but_keeps_wall_time():
    from colbench.runner.instructions import Toolchain

    wall = WorkerOutcome(WorkerReport(samples={"wall_s": [0.1]}, first_iteration={"wall_s": 0.1}),
                         {"spawn_to_result_s": 0.3})
    counted = WorkerOutcome(WorkerReport.failure("timeout", "no result"), {"spawn_to_result_s": 30.0})
    merged = merge(wall, counted, Toolchain("valgrind", "3.19.0", Path("helper.so")))
    report = merged.report
    assert report.status == "error" and report.error is not None and report.error.kind == "timeout"
    assert report.error.message.startswith("counting instructions under Valgrind")
    assert report.samples == {"wall_s": [0.1]}
    assert merged.process == {"spawn_to_result_s": 0.3}
    assert report.measure is not None and report.measure["instructions"]["process"] == {"spawn_to_result_s": 30.0}
    assert wall.report.status == "ok"  # the wall worker's own report is left as it was
