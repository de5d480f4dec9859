"""An asv suite, a pytest-benchmark file and a pytest-codspeed file across two releases of a library (real wheels of
`sourceprobe` built here, 2.0.0 doing twice the work of 1.0.0): an A/B run of both sides interleaved, compare's
verdict, bisect over the two wheels and explain's profiles, each with no more than the suite's folder or the test
files named (asv's runner and pytest reach every environment colbench builds). Counted in instructions: a verdict
that the load of a shared machine cannot move."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.app.probe import write_wheel
from tests.conftest import colbench

needs_valgrind = pytest.mark.skipif(shutil.which("valgrind") is None or shutil.which("cc") is None,
                                    reason="counting needs Valgrind and a C compiler")

LIBRARY = '''"""sourceprobe {version}: FACTOR times the integer work asked for."""
__version__ = "{version}"
FACTOR = {factor}


def work(units):
    acc = 0
    for i in range(units * FACTOR):
        acc = (acc * 31 + i) & 0xFFFF
    return acc
'''
ASV_PROBE = '''"""One benchmark of the library under test, as an asv suite writes it."""
import sourceprobe


class Work:
    params = [20000]
    param_names = ["units"]

    def time_work(self, units):
        sourceprobe.work(units)
'''
PYTEST_PROBE = '''import sourceprobe


def test_work(benchmark):
    benchmark(sourceprobe.work, 20000)
'''
CODSPEED_PROBE = '''import pytest
import sourceprobe


@pytest.mark.benchmark
def test_work_marked():
    sourceprobe.work(20000)
'''
FAST = ("--processes", "2", "--iterations", "2", "--warmup", "1", "--measure", "instructions")


def build_wheel(directory: Path, version: str, factor: int) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    return write_wheel(directory / f"sourceprobe-{version}-py3-none-any.whl", "sourceprobe", version,
                       {"sourceprobe.py": LIBRARY.format(version=version, factor=factor).encode()})


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("versions")
    wheels = root / "wheels"
    old, new = build_wheel(wheels, "1.0.0", 1), build_wheel(wheels, "2.0.0", 2)
    (root / "asvprobe" / "benchmarks").mkdir(parents=True)
    (root / "asvprobe" / "benchmarks" / "__init__.py").write_text("")
    (root / "asvprobe" / "benchmarks" / "bench_probe.py").write_text(ASV_PROBE)
    (root / "pyt").mkdir()
    (root / "pyt" / "bench_pb.py").write_text(PYTEST_PROBE)
    (root / "pyt" / "bench_cs.py").write_text(CODSPEED_PROBE)
    return {"root": root, "wheels": wheels, "old": old, "new": new, "home": root / "home"}


def run(lab: dict[str, Path], *args: str) -> object:
    return colbench(*args, home=lab["home"], timeout=1500)


def targets(lab: dict[str, Path]) -> list[str]:
    return [f"asv:{lab['root'] / 'asvprobe'}", f"pytest:{lab['root'] / 'pyt' / 'bench_pb.py'}",
            f"pytest:{lab['root'] / 'pyt' / 'bench_cs.py'}"]


@pytest.mark.slow
@pytest.mark.timeout(1800)
@needs_valgrind
def test_ab_run_compare_and_explain_across_two_wheels(lab):
    store = str(lab["root"] / "ab.duckdb")
    done = run(lab, "run", *targets(lab), "--env", f"old={lab['old']}", "--env", f"new={lab['new']}", *FAST,
               "--no-until-decided", "--store", store)
    assert done.returncode == 1, done.stdout + done.stderr  # 1: a regression, found on every case
    compared = run(lab, "compare", "latest:old", "latest:new", "--metric", "instructions", "--format", "json",
                   "--store", store)
    doc = json.loads(compared.stdout)
    verdicts = {c["key"].split(" ")[0]: c["verdict"] for c in doc["comparisons"]}
    assert verdicts == {"bench_probe.Work.time_work": "regression", "bench_pb.py::test_work": "regression",
                        "bench_cs.py::test_work_marked": "regression"}, verdicts
    probe = next(c["key"] for c in doc["comparisons"] if c["key"].startswith("bench_probe"))
    assert "units=20000" in probe  # asv's parameter string, as asv shows it
    explained = run(lab, "explain", "latest:old", "latest:new", "--case", "bench_probe.Work.time_work",
                    "--profiler", "callgrind", "--top", "5", "--format", "json", "--store", store)
    assert explained.returncode in (0, 1), explained.stdout + explained.stderr
    (case,) = json.loads(explained.stdout)["cases"]
    assert case["label"].startswith("bench_probe.Work.time_work") and case["verdict"].startswith("regression")
    assert 1.9 < case["ratio"] < 2.1  # twice the work, counted in the timed call's profile of each side
    assert case["functions"] and Path(case["flamegraph"]).is_file()


@pytest.mark.slow
@pytest.mark.timeout(1200)
@needs_valgrind
@pytest.mark.parametrize("target", ["asv", "pytest"])
def test_bisect_over_two_wheels_names_the_slow_one(lab, target):
    name = targets(lab)[0] if target == "asv" else targets(lab)[1]
    done = run(lab, "bisect", name, "--wheels", str(lab["wheels"]), "--good", "1.0.0", "--bad", "2.0.0",
               "--processes", "2", "--iterations", "2", "--measure", "instructions", "--format", "json",
               "--store", str(lab["root"] / f"bisect-{target}.duckdb"))
    assert done.returncode == 0, done.stdout + done.stderr
    doc = json.loads(done.stdout)
    assert (doc["status"], doc["last_good"], doc["first_bad"]) == ("found", "1.0.0", "2.0.0"), doc


@pytest.mark.slow
def test_an_environment_without_what_a_source_needs_stops_the_run_before_it_starts(lab):
    """pytest pinned out of reach of the source: every --env must import pytest; a broken one is one line, exit 2."""
    pkgs = lab["root"] / "blocked"
    shutil.rmtree(pkgs, ignore_errors=True)
    (pkgs / "pytest").mkdir(parents=True)
    (pkgs / "pytest" / "__init__.py").write_text("raise ImportError('pytest blocked on purpose')\n")
    done = colbench("run", targets(lab)[1], "--env", f"a=@current PYTHONPATH={pkgs}", "--processes", "2",
                    "--store", str(lab["root"] / "blocked.duckdb"), home=lab["home"], timeout=600)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "environment a cannot import pytest benchmark files: ImportError: pytest blocked on purpose" in done.stderr
