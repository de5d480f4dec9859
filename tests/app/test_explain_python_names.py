"""`colbench explain` names Python functions on Python 3.12 and 3.13: a pure-Python function planted on one side
is rank 1 with its qualified name, its module and its line, under callgrind and under `--profiler perf`.

The plant: `plantedlib`, a library built here as two real wheels. 1.0's `work(units)` runs a loop (`spin`); 2.0's
runs the same loop and then `Planted.checksum`, a second loop as costly, so the contender does about twice the work,
all of it in one Python function the baseline does not have. A third-party benchmark (`planted-work`, on
PYTHONPATH as an installed distribution) times `plantedlib.work`. One run holds both sides on each Python
(`--env a312='python==3.12 plantedlib-1.0…whl'` …), then `explain` profiles them again in fresh workers.

Real processes throughout: uv environments on pyenv's 3.12 and 3.13 (colbench's requirements from uv's cache), the
worker under Valgrind and under perf. An interpreter that is not installed is skipped (a failure under
COLBENCH_REQUIRE_ALL=1, as CI runs); perf where the kernel does not let it sample is skipped with perf's reason."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from colbench.app.explain import find_perf
from colbench.runtimes.interpreters import installed_interpreters
from tests.app.probe import install_benchmark, write_wheel
from tests.app.test_explain import Sandbox, needs_valgrind, within
from tests.conftest import REQUIRE_ALL

MINORS = (12, 13)
LIBRARY = "plantedlib"
SPIN = '''

def spin(units):
    acc = 0
    for i in range(units):
        acc = (acc * 31 + i) & 0xFFFF
    return acc
'''
PLAIN = '"""plantedlib 1.0: one loop."""' + SPIN + '''

def work(units):
    return spin(units)
'''
PLANTED = '"""plantedlib 2.0: the loop, and a planted one as costly."""' + SPIN + '''

class Planted:
    @staticmethod
    def checksum(units):
        acc = 1
        for i in range(units):
            acc = (acc * 17 + i) & 0xFFFF
        return acc


def work(units):
    return spin(units) + Planted.checksum(units)
'''
#: the planted function's first line as its code object has it (the decorator's)
PLANTED_LINE = PLANTED.splitlines().index("    @staticmethod") + 1
PLANTED_FRAME = f"py::Planted.checksum ({LIBRARY}/__init__.py)"

BENCH = '''from typing import Any, ClassVar

from colbench.model.benchmark import Benchmark, Context, OutputCheck, Work
from colbench.model.params import Grid, Param


class PlantedWork(Benchmark):
    name = "planted-work"
    description = "plantedlib.work(units): a library whose 2.0 calls a planted Python function"
    engine = "plantedlib"
    work_unit = "rows"
    grid: ClassVar[Grid] = Grid((Param("units", default=(100000,), type=int),
                                 Param("threads", default=(1,), type=int)))

    def setup(self, ctx: Context) -> None:
        import plantedlib

        ctx.state["work"] = plantedlib.work

    def run(self, ctx: Context) -> Any:
        return ctx.state["work"](int(ctx.params["units"]))

    def after_each(self, ctx: Context, output: Any) -> OutputCheck:
        return OutputCheck(rows=1, columns=1)

    def work(self, ctx: Context) -> Work:
        return Work(rows=1)
'''


def _minors() -> list[int]:
    have = {i.version[:2] for i in installed_interpreters()}
    missing = [f"3.{m}" for m in MINORS if (3, m) not in have]
    if missing and REQUIRE_ALL:
        pytest.fail(f"Python {', '.join(missing)} not installed (COLBENCH_REQUIRE_ALL=1)")
    return [m for m in MINORS if (3, m) in have]


@pytest.fixture(scope="module")
def planted(tmp_path_factory) -> tuple[Sandbox, str, list[int]]:
    """One run: on each installed Python of 3.12 and 3.13, side `a3X` with plantedlib 1.0, `b3X` with 2.0."""
    minors = _minors()
    if not minors:
        pytest.skip("neither Python 3.12 nor 3.13 is installed")
    root = tmp_path_factory.mktemp("explain-python-names")
    box = Sandbox(root)
    wheels = root / "wheels"
    wheels.mkdir()
    plain = write_wheel(wheels / f"{LIBRARY}-1.0-py3-none-any.whl", LIBRARY, "1.0",
                        {f"{LIBRARY}/__init__.py": PLAIN.encode()})
    grown = write_wheel(wheels / f"{LIBRARY}-2.0-py3-none-any.whl", LIBRARY, "2.0",
                        {f"{LIBRARY}/__init__.py": PLANTED.encode()})
    site = install_benchmark(root / "site", "plantedlib_bench", BENCH, "planted-work = plantedlib_bench:PlantedWork")
    envs = [option for m in minors for option in
            ("--env", f"a3{m}=python==3.{m} {plain}", "--env", f"b3{m}=python==3.{m} {grown}")]
    ran = box("run", "planted-work", "--processes", "1", "--iterations", "3", *envs,
              env={"PYTHONPATH": str(site)}, timeout=900)
    assert ran.returncode in (0, 1), ran.stdout[-3000:] + ran.stderr[-3000:]
    return box, box.run_id(), minors


def _explain(planted: tuple[Sandbox, str, list[int]], minor: int, *options: str) -> dict:
    box, run_id, minors = planted
    if minor not in minors:
        pytest.skip(f"Python 3.{minor} is not installed")
    site = str(box.cwd.parent / "site")
    out = box("explain", f"{run_id}:a3{minor}", f"{run_id}:b3{minor}", "--top", "5", "--format", "json", *options,
              env={"PYTHONPATH": site}, timeout=900)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    (case,) = json.loads(out.stdout)["cases"]
    assert case["error"] is None, case["error"]
    return case


def _the_planted_function_is_rank_1(case: dict, box: Sandbox) -> None:
    top = case["functions"][0]
    assert top["function"] == PLANTED_FRAME and top["library"] == "python", case["functions"]
    # its line, from its code object (the map has none): only the contender has the function
    assert top["short"] == f"py::Planted.checksum ({LIBRARY}/__init__.py:{PLANTED_LINE})"
    assert top["lines"] == {"baseline": [], "contender": [PLANTED_LINE]}
    assert top["self"]["baseline"] == 0 and top["share"] >= 0.5, top
    assert case["baseline"]["python_named"] and case["contender"]["python_named"]
    assert any("named through CPython's perf trampolines" in note for note in case["notes"])
    # the map and the lines are kept with each side's profile, inside the home; /tmp keeps none of this run's maps
    for side in ("baseline", "contender"):
        kept = Path(case["profiles"][side]["python_names"])
        assert kept.name == "perf.map" and within(kept, box.home) and (kept.parent / "perf.map.lines.json").is_file()
    contender_map = Path(case["profiles"]["contender"]["python_names"]).read_text()
    assert re.search(r"^[0-9a-f]+ [0-9a-f]+ py::Planted\.checksum:\S+/plantedlib/__init__\.py$", contender_map, re.M)
    assert not [m for m in Path("/tmp").glob("perf-*.map") if LIBRARY in m.read_text(errors="replace")]


@pytest.mark.slow
@pytest.mark.parametrize("minor", MINORS)
def test_callgrind_names_the_planted_python_function_at_rank_1(planted, minor: int):
    needs_valgrind()
    case = _explain(planted, minor)
    _the_planted_function_is_rank_1(case, planted[0])
    # twice the loop: the change is about the baseline's whole cost, nearly all of it the planted function's
    assert 0.6 <= case["total_change"] / case["baseline"]["total"] <= 1.5, case["ratio"]
    assert case["functions"][0]["share"] >= 0.8


@pytest.mark.slow
@pytest.mark.serial  # perf samples time: alone (tests/xdist_plan.py)
@pytest.mark.parametrize("minor", MINORS)
def test_perf_names_the_planted_python_function_at_rank_1(planted, minor: int):
    perf, why = find_perf()
    if perf is None:  # never required: whether perf may sample is the kernel's setting, not the install's
        pytest.skip(why)
    case = _explain(planted, minor, "--profiler", "perf")
    _the_planted_function_is_rank_1(case, planted[0])
    assert not case["functions"][0]["within_noise"] and case["profiles"]["contender"]["path"].endswith(
        "profile.perf.gz")
    assert any("innermost Python function" in note for note in case["notes"])
