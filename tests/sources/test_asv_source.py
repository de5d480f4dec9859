"""An asv suite run unchanged (tests/sources/asv_project: every asv feature colbench supports, and faults on
purpose): discovered by asv_runner, each benchmark × parameter combination a case stored under asv's own name and
parameter strings, timed and counted, its faults error rows while the rest runs."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from colbench.benchmarks import sources
from tests.conftest import colbench

needs_valgrind = pytest.mark.skipif(shutil.which("valgrind") is None or shutil.which("cc") is None,
                                    reason="counting needs Valgrind and a C compiler")

SUITE = Path(__file__).parent / "asv_project"


@pytest.fixture(scope="module")
def suite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the suite (discovery writes bytecode next to it) and a home for the runs."""
    root = tmp_path_factory.mktemp("asv")
    shutil.copytree(SUITE, root / "project")
    return root


def results(home: Path, store: Path) -> list[dict]:
    out = home / "export.jsonl"
    colbench("export", "-f", "jsonl", "-o", str(out), "--store", str(store), home=home, check=True)
    return [json.loads(line) for line in out.read_text().splitlines()]


@pytest.mark.slow
def test_discovery_finds_asv_names_params_and_the_module_that_does_not_import(suite, monkeypatch):
    monkeypatch.setenv("COLBENCH_HOME", str(suite / "home"))
    target = sources.parse_target(f"asv:{suite / 'project'}")
    assert target is not None and target.path == (suite / "project" / "benchmarks").resolve()  # asv.conf.json's
    assert target.repo == "."
    found = {b.name: b for b in sources.benchmarks_of(target)}
    assert {"bench_features.time_function", "bench_features.TimeSuite.time_op", "bench_features.Cached.time_len",
            "bench_features.CamelCase.time_reverse", "bench_features.timeraw_import", "bench_features.mem_list",
            "bench_features.peakmem_alloc", "bench_features.track_constant", "bench_faults.Faults.time_crash",
            "asv-import:bench_broken_import"} <= set(found)
    op = found["bench_features.TimeSuite.time_op"]
    assert [(p.name, p.default) for p in op.grid.params] == [("n", ("100", "300")), ("how", ("'sum'", "'sorted'"))]
    assert op.valid({"n": "300", "how": "'sorted'"}) == "skip_params of the asv benchmark"
    assert op.processes_asked() == 3 and op.timeout_s() == 60  # asv's rounds and timeout
    assert "ModuleNotFoundError" in found["asv-import:bench_broken_import"].description
    only = sources.benchmarks_of(sources.parse_target(sources.with_bench(f"asv:{suite / 'project'}",
                                                                         ["TimeSuite", "^bench_features.mem"])))
    assert sorted(b.name for b in only) == ["asv-import:bench_broken_import",  # -b cannot see into it
                                            "bench_features.TimeSuite.time_op", "bench_features.TimeSuite.track_first",
                                            "bench_features.mem_list"]


@pytest.mark.slow
def test_list_counts_benchmarks_and_cases(suite):
    out = colbench("list", f"asv:{suite / 'project'}", "-b", "TimeSuite", "--format", "json", home=suite / "home",
                   check=True)
    doc = json.loads(out.stdout)
    # 2 × 4 combinations, skip_params drops one each; and the module that does not import here, which -b cannot see
    # into (an environment may import it: its benchmarks are found again there)
    assert doc["total"] == {"benchmarks": 3, "cases": 7}
    assert "asv-import:bench_broken_import" in doc["benchmarks"]
    bad = colbench("list", f"asv:{suite / 'nowhere'}", home=suite / "home")
    assert bad.returncode == 2 and "is not a folder" in bad.stderr and "Traceback" not in bad.stderr


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_the_whole_suite_runs_with_its_faults_as_error_rows(suite):
    home, store, log = suite / "home", suite / "run.duckdb", suite / "asv.log"
    done = colbench("run", f"asv:{suite / 'project'}", "--processes", "2", "--iterations", "2", "--store",
                    str(store), home=home, env={"ASVPROBE_LOG": str(log)}, timeout=900)
    assert done.returncode == 0, done.stdout + done.stderr
    rows = results(home, store)
    by = {}
    for row in rows:
        by.setdefault((row["benchmark"], json.dumps({k: v for k, v in row["params"].items()
                                                     if k not in ("threads", "allocator", "cache")})), []).append(row)
    ok = {name for (name, _), group in by.items() if all(r["status"] == "ok" for r in group)}
    assert {"bench_features.time_function", "bench_features.Cached.time_len", "bench_features.CamelCase.time_reverse",
            "bench_features.timeraw_import", "bench_features.mem_list", "bench_features.peakmem_alloc",
            "bench_features.track_constant", "bench_features.TimeSuite.time_op"} <= ok
    # asv's parameter strings, the skipped combination left out
    combos = sorted(p for (name, p) in by if name == "bench_features.TimeSuite.time_op")
    assert combos == sorted(json.dumps(d) for d in [{"n": "100", "how": "'sum'"}, {"n": "100", "how": "'sorted'"},
                                                    {"n": "300", "how": "'sum'"}])
    errors = {name: group[0]["error"] for (name, _), group in by.items() if group[0]["status"] == "error"}
    assert errors["bench_faults.Faults.time_crash"]["kind"] == "crash"
    assert errors["bench_faults.Faults.time_hang"]["kind"] == "timeout"  # asv's timeout = 5 s, not the run's
    assert "setup fails on purpose" in errors["bench_faults.BrokenSetup.time_never"]["message"]
    assert "a_module_that_does_not_exist" in errors["asv-import:bench_broken_import"]["message"]
    track = by[("bench_features.track_constant", "{}")][0]
    assert track["samples"]["asv_track"] == [42.0, 42.0] and track["units"]["asv_track"] == "widgets"
    assert by[("bench_features.mem_list", "{}")][0]["samples"]["asv_mem"][0] > 8000  # 1000 pointers at least
    assert by[("bench_features.peakmem_alloc", "{}")][0]["samples"]["asv_peakmem"][0] > 20 * 1024 * 1024
    # the same seeded data in every process of a case: track_first reads the first number of unseeded random data
    firsts = [{r["samples"]["asv_track"][0] for r in g} for (n, p), g in by.items() if n.endswith("track_first")]
    assert len(firsts) == 3 and all(len(values) == 1 for values in firsts)
    # setup_cache made once for the whole run in this environment, not once per process
    lines = log.read_text().splitlines()
    assert sum("setup-cache" in line for line in lines) == 1
    assert sum("module-setup" in line for line in lines) >= 2


@pytest.mark.slow
@pytest.mark.timeout(900)
@needs_valgrind
def test_counts_are_the_timed_call_only_and_timeraw_is_refused(suite):
    home, store = suite / "home", suite / "count.duckdb"
    done = colbench("run", f"asv:{suite / 'project'}", "-b", r"time_function$|timeraw_import|CamelCase",
                    "--measure", "instructions", "--processes", "2", "--iterations", "2", "--store", str(store),
                    home=home, timeout=900)
    assert done.returncode == 0, done.stdout + done.stderr
    rows = {}
    for row in results(home, store):
        rows.setdefault(row["benchmark"], []).append(row)
    # one call of spin(2000): the n-th timed call counts the same in every process (the 2nd counts a few % more
    # than the 1st in each, the same in each: docs/asv.md)
    per_call = list(zip(*(r["samples"]["instructions"] for r in rows["bench_features.time_function"]), strict=False))
    assert len(per_call) == 2 and all(len(c) == 2 and max(c) / min(c) < 1.001 for c in per_call), per_call
    assert 10_000 < min(min(c) for c in per_call) < 2_000_000
    refused = rows["bench_features.timeraw_import"][0]
    assert refused["error"]["kind"] == "invalid" and "Valgrind" in refused["error"]["message"], refused["error"]
    assert "\n" not in refused["error"]["message"]
    assert all(r["status"] == "ok" for r in rows["bench_features.CamelCase.time_reverse"])


def test_a_setup_rerun_between_counted_calls_draws_the_same_data_and_is_not_instrumented(suite, tmp_path):
    """asv re-runs a benchmark's setup between timed calls (`redo_setup`): under counting it ran instrumented before
    every counted call with new random data (pyarrow's 100-column Parquet read: over 10 minutes a process, and counts
    that never repeated). The re-run starts from the benchmark's seed again, and the worker runs it uninstrumented."""
    from colbench.benchmarks.asv_suite import asv_benchmark
    from colbench.model.benchmark import Context

    root = str(suite / "project" / "benchmarks")
    doc = {"name": "bench_features.TimeSuite.time_op", "type": "time", "param_names": ["n", "how"],
           "params": [["100"], ["'sum'"]]}
    bench = asv_benchmark(root, doc, str(tmp_path / "cache"))
    ctx = Context(params={"n": "100", "how": "'sum'"}, inputs={}, threads=1, seed=1, scratch=tmp_path,
                  input_info={}, measure="instructions")
    bench.setup(ctx)
    try:
        instance = ctx.state["asv"].func.__self__  # the suite's TimeSuite, as asv made it
        first = list(instance.data)
        bench.before_each(ctx)  # asv's first: no re-run
        bench.run(ctx)
        bench.before_each(ctx)  # a re-run of the setup: the same data again, not the random stream's next draws
        assert instance.data == first
        assert bench.sets_up_each_call(ctx)
    finally:
        bench.teardown(ctx)
    plain = asv_benchmark(root, {"name": "bench_features.time_function", "type": "time", "param_names": [],
                                 "params": []}, str(tmp_path / "cache"))
    plain_ctx = Context(params={}, inputs={}, threads=1, seed=1, scratch=tmp_path, input_info={},
                        measure="instructions")
    plain.setup(plain_ctx)
    assert plain.sets_up_each_call(plain_ctx) is bool(plain_ctx.state["asv"]._setups)


def test_an_asv_config_file_names_its_suite_as_asvs_config_option_does(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / "bench" / "suite").mkdir(parents=True)
    (project / "bench" / "suite" / "__init__.py").write_text("")
    conf = project / "bench" / "asv.conf.json"
    conf.write_text('// asv lets a config hold comments\n{"version": 1, "benchmark_dir": "suite", "repo": ".."}\n')
    target = sources.parse_target(f"asv:{conf}")
    assert target is not None and target.kind == "asv"
    assert target.path == (project / "bench" / "suite").resolve() and target.repo == ".."
    conf.write_text('{"version": 1, "benchmark_dir": "elsewhere"}')
    with pytest.raises(sources.SourceError, match="names benchmark_dir 'elsewhere', which is not a folder"):
        sources.parse_target(f"asv:{conf}")


def test_a_package_of_pytest_files_without_the_prefix_is_pytests_not_an_asv_suite(tmp_path: Path) -> None:
    tests_dir = tmp_path / "tests" / "benchmark"  # polars' layout: a package, with a conftest
    tests_dir.mkdir(parents=True)
    (tests_dir / "__init__.py").write_text("")
    (tests_dir / "conftest.py").write_text("")
    found = sources.parse_target(str(tests_dir))
    assert found is not None and found.kind == "pytest"
    (tests_dir / "conftest.py").unlink()
    (tests_dir / "test_io.py").write_text("")
    found = sources.parse_target(str(tests_dir))
    assert found is not None and found.kind == "pytest"
    suite = tmp_path / "bench"
    suite.mkdir()
    (suite / "__init__.py").write_text("")
    (suite / "bench_io.py").write_text("def time_read():\n    pass\n")
    found = sources.parse_target(str(suite))
    assert found is not None and found.kind == "asv"
