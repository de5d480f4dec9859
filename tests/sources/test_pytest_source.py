"""pytest-benchmark and pytest-codspeed files run unchanged (tests/sources/pytest_files): collected by pytest, each
test a case in a fresh worker, parametrized tests as parameter combinations, the benchmark call (or the marked test's
body) timed and counted; a test that fails after its benchmark is an error row."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.conftest import colbench

FILES = Path(__file__).parent / "pytest_files"
needs_valgrind = pytest.mark.skipif(shutil.which("valgrind") is None or shutil.which("cc") is None,
                                    reason="counting needs Valgrind and a C compiler")


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The files copied out of colbench's own tree (whose pytest settings are not theirs)."""
    root = tmp_path_factory.mktemp("pyt")
    shutil.copytree(FILES, root / "bench")
    return root


def targets(lab: Path) -> list[str]:
    return [f"pytest:{lab / 'bench' / 'bench_pytest_benchmark.py'}", f"pytest:{lab / 'bench' / 'bench_codspeed.py'}"]


def rows(lab: Path, store: Path) -> list[dict]:
    out = lab / "rows.jsonl"
    colbench("export", "latest", "-f", "jsonl", "-o", str(out), "--store", str(store), home=lab / "home", check=True)
    return [json.loads(line) for line in out.read_text().splitlines()]


@pytest.mark.slow
def test_list_collects_the_benchmark_tests_and_their_combinations(lab):
    out = colbench("list", *targets(lab), "--format", "json", home=lab / "home", check=True)
    doc = json.loads(out.stdout)
    cases = {name: b["cases"] for name, b in doc["benchmarks"].items()}
    assert cases == {"bench_pytest_benchmark.py::test_plain": 1, "bench_pytest_benchmark.py::test_parametrized": 4,
                     "bench_pytest_benchmark.py::test_pedantic": 1, "bench_pytest_benchmark.py::test_fails_after": 1,
                     "bench_codspeed.py::test_marked": 1, "bench_codspeed.py::test_marked_parametrized": 2}
    assert doc["benchmarks"]["bench_pytest_benchmark.py::test_parametrized"]["params"] == {
        "kind": ["'a'", "'b'"], "units": ["1000", "4000"]}
    selected = colbench("list", *targets(lab), "-b", "parametrized", "--format", "json", home=lab / "home",
                        check=True)
    assert json.loads(selected.stdout)["total"] == {"benchmarks": 2, "cases": 6}


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_each_test_runs_in_fresh_workers_and_a_failing_one_is_an_error_row(lab):
    store = lab / "wall.duckdb"
    done = colbench("run", *targets(lab), "-b", "test_plain|test_parametrized|test_pedantic|fails_after|test_marked$",
                    "--processes", "2", "--iterations", "2", "--store", str(store), home=lab / "home", timeout=900)
    assert done.returncode == 0, done.stdout + done.stderr
    found = rows(lab, store)
    by = {}
    for row in found:
        shown = {k: v for k, v in row["params"].items() if k not in ("threads", "allocator", "cache")}
        by.setdefault((row["benchmark"], json.dumps(shown, sort_keys=True)), []).append(row)
    assert len({r["process"]["started_at"] for r in found}) == len(found)  # one fresh worker each
    ok = {key for key, group in by.items() if all(r["status"] == "ok" for r in group)}
    assert ("bench_pytest_benchmark.py::test_plain", "{}") in ok and ("bench_codspeed.py::test_marked", "{}") in ok
    assert ("bench_pytest_benchmark.py::test_pedantic", "{}") in ok
    small = by[("bench_pytest_benchmark.py::test_parametrized", json.dumps({"kind": "'a'", "units": "1000"}))]
    large = by[("bench_pytest_benchmark.py::test_parametrized", json.dumps({"kind": "'b'", "units": "4000"}))]
    median = lambda group: sorted(s for r in group for s in r["samples"]["wall_s"])[2]  # noqa: E731
    assert median(large) > 3 * median(small)  # 8x the work
    failed = by[("bench_pytest_benchmark.py::test_fails_after", "{}")][0]
    assert failed["status"] == "error" and "fails after its benchmark on purpose" in failed["error"]["message"]


@pytest.mark.slow
@pytest.mark.timeout(900)
@needs_valgrind
def test_counts_are_the_benchmark_call_only(lab):
    store = lab / "count.duckdb"
    done = colbench("run", *targets(lab), "-b", r"test_plain|test_marked$", "--measure", "instructions",
                    "--processes", "2", "--iterations", "2", "--store", str(store), home=lab / "home", timeout=900)
    assert done.returncode == 0, done.stdout + done.stderr
    counts: dict[str, list[list[int]]] = {}
    for row in rows(lab, store):
        assert row["status"] == "ok", row["error"]
        counts.setdefault(row["benchmark"], []).append(row["samples"]["instructions"])
    for name, processes in counts.items():  # within the few % docs/asv.md reports for pytest cases
        for calls in zip(*processes, strict=False):
            assert max(calls) / min(calls) < 1.08, (name, processes)
    flat = {name: [c for calls in processes for c in calls] for name, processes in counts.items()}
    # work(2000) in the fixture's call, work(2500) as the marked test's body: counts in that proportion
    ratio = min(flat["bench_codspeed.py::test_marked"]) / min(flat["bench_pytest_benchmark.py::test_plain"])
    assert 1.1 < ratio < 1.4, ratio


#: a project's pytest settings as they come (polars' py-polars/pyproject.toml has most of them): its benchmarks kept
#: out of its own test runs (`-m "not benchmark"`), the turned-off plugins' options in addopts (xdist's `-n` and
#: `--dist`, pytest-benchmark's), their ini keys under --strict-config (pytest-timeout's `timeout`), every warning an
#: error (pytest warns of a plugin module imported before its assertion rewriter is in place)
PROJECT_INI = """[tool.pytest.ini_options]
addopts = "-ra -n 2 --dist loadgroup --benchmark-min-rounds=5 --strict-config --strict-markers -m 'not benchmark'"
timeout = 300
markers = ["benchmark: a benchmark"]
filterwarnings = ["error", "ignore::pytest.PytestUnknownMarkWarning"]
"""


@pytest.mark.slow
def test_a_projects_addopts_and_ini_for_the_plugins_colbench_turns_off_do_not_stop_it(tmp_path: Path) -> None:
    project = tmp_path / "project"
    shutil.copytree(FILES, project / "benches")
    (project / "pyproject.toml").write_text(PROJECT_INI)
    files = [f"pytest:{project / 'benches' / name}" for name in ("bench_pytest_benchmark.py", "bench_codspeed.py")]
    listed = colbench("list", *files, "-b", "test_plain|test_marked$", "--format", "json", home=tmp_path / "home")
    assert listed.returncode == 0, listed.stdout + listed.stderr
    # named from the project's rootdir, as its own pytest names them
    assert set(json.loads(listed.stdout)["benchmarks"]) == {"benches/bench_pytest_benchmark.py::test_plain",
                                                            "benches/bench_codspeed.py::test_marked"}
    store = tmp_path / "wall.duckdb"
    done = colbench("run", *files, "-b", "test_plain|test_marked$", "--processes", "1", "--iterations", "2",
                    "--store", str(store), home=tmp_path / "home", timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    found = rows(tmp_path, store)
    assert sorted(r["benchmark"] for r in found) == ["benches/bench_codspeed.py::test_marked",
                                                     "benches/bench_pytest_benchmark.py::test_plain"]
    assert all(r["status"] == "ok" and len(r["samples"]["wall_s"]) == 2 for r in found), found


def test_options_pytest_does_not_know_are_one_error_in_pytests_words_with_what_to_install(tmp_path: Path) -> None:
    from colbench.benchmarks.pytest_source import PytestSourceError, _Session

    (tmp_path / "pyproject.toml").write_text('[tool.pytest.ini_options]\naddopts = "--from-a-missing-plugin=3"\n')
    (tmp_path / "bench_one.py").write_text("def test_one(benchmark):\n    benchmark(sum, [1, 2])\n")
    session = _Session(f"{tmp_path / 'bench_one.py'}::test_one", str(tmp_path))
    session.start()
    with pytest.raises(PytestSourceError) as refused:
        session.wait_for_target()
    session.finish()
    message = str(refused.value)
    assert "unrecognized arguments: --from-a-missing-plugin=3" in message, message
    assert "add it to the environment" in message and "\n" not in message
