"""The profiled worker's Python names (workers/python/python_names.py) in real interpreters: on 3.12 and 3.13 the
trampolines' map leaves /tmp for the profile's folder with each function's first line from its code object; a
map left at the pid's path is never used; 3.8-3.11 have no trampolines and nothing is written. An interpreter that
is not installed is skipped (a failure under COLBENCH_REQUIRE_ALL=1, as CI runs)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from colbench.profiles.symbols import PerfMap
from colbench.runtimes.interpreters import Interpreter, installed_interpreters
from colbench.workers.python.python_names import LINES_NAME, PERF_MAP_NAME
from tests.conftest import REQUIRE_ALL

SRC = Path(__file__).resolve().parents[2] / "src"

PLANTED = '''\
import sys
from pathlib import Path

from colbench.workers.python.python_names import PythonNames, perf_map_path


class Planted:
    @staticmethod
    def checksum(units):
        acc = 0
        for i in range(units):
            acc = (acc * 31 + i) & 0xFFFF
        return acc


names = PythonNames(Path(sys.argv[1]))
if sys.argv[2] == "leftover":  # a map at this pid's path that this interpreter did not write
    perf_map_path().write_text("7f0000001000 40 py::someone_else:/x.py\\n")
started = names.start()
Planted.checksum(1000)
names.keep()
print(started, perf_map_path().exists())
if sys.argv[2] == "leftover":
    print(perf_map_path().read_text().strip())
    perf_map_path().unlink()
'''


def _interpreter(minor: int) -> Interpreter:
    found = next((i for i in installed_interpreters() if i.version[:2] == (3, minor)), None)
    if found is None:
        if REQUIRE_ALL:
            pytest.fail(f"Python 3.{minor} is not installed (COLBENCH_REQUIRE_ALL=1)")
        pytest.skip(f"Python 3.{minor} is not installed")
    return found


def _run(interpreter: Interpreter, tmp_path: Path, mode: str = "fresh") -> list[str]:
    script = tmp_path / "planted.py"
    script.write_text(PLANTED)
    folder = tmp_path / "profile"
    folder.mkdir()
    proc = subprocess.run([str(interpreter.path), str(script), str(folder), mode], capture_output=True, text=True,
                          env={"PYTHONPATH": str(SRC)}, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.split("\n")


@pytest.mark.parametrize("minor", [12, 13])
def test_the_map_moves_into_the_profile_with_each_functions_first_line(tmp_path: Path, minor: int):
    started, left_in_tmp = _run(_interpreter(minor), tmp_path)[0].split()
    assert started == "True" and left_in_tmp == "False"  # the worker cleaned /tmp after itself
    kept = tmp_path / "profile" / PERF_MAP_NAME
    entry = f"py::Planted.checksum:{tmp_path / 'planted.py'}"
    assert any(line.endswith(" " + entry) for line in kept.read_text().splitlines())
    # the map has no lines: the worker took the function's from its code object (the decorator's line, as
    # co_firstlineno has it)
    lines = json.loads((tmp_path / "profile" / LINES_NAME).read_text())
    assert lines[entry] == [PLANTED.splitlines().index("    @staticmethod") + 1]
    names = PerfMap.read(kept)
    start = next(names.starts[i] for i, name in enumerate(names.names) if name == entry)
    assert names.python_frame(start + 1) == ("py::Planted.checksum (planted.py)", tuple(lines[entry]))


@pytest.mark.parametrize("minor", [12, 13])
def test_a_map_left_at_the_pids_path_is_never_used_nor_touched(tmp_path: Path, minor: int):
    out = _run(_interpreter(minor), tmp_path, "leftover")
    assert out[0].split() == ["False", "True"] and out[1] == "7f0000001000 40 py::someone_else:/x.py"
    assert list((tmp_path / "profile").iterdir()) == []


@pytest.mark.parametrize("minor", [8, 9, 10, 11])
def test_before_312_there_are_no_trampolines_and_nothing_is_written(tmp_path: Path, minor: int):
    started, left_in_tmp = _run(_interpreter(minor), tmp_path)[0].split()
    assert started == "False" and left_in_tmp == "False"
    assert list((tmp_path / "profile").iterdir()) == []
