"""One store of instruction counts under real Valgrind, read by test_instructions.py and test_run_profile.py."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.conftest import colbench

#: the tests that read `instructions_home`: one xdist worker, so the store is built once (tests/xdist_plan.py); it
#: holds profiles keyed by the store file's path, so it cannot be read from a copy elsewhere (tests/shared.py)
VALGRIND_PLACEBO = pytest.mark.xdist_group("valgrind-placebo")


@pytest.fixture(scope="session")
def instructions_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two runs of the placebo, each case in two processes, under real Valgrind:

    - "counted": wall time and instructions of the same timed work (work=2000), with and without heavy setup
      (setup_work=0,300000);
    - "ab": instructions only, the same case in two environments, the second with 50% more work in the timed call
      (COLBENCH_EXTRA_WORK), its callgrind profiles kept (`--profile`). Its exit code and output are in ab.json.

    "ab" was a run of test_instructions.py and test_run_profile.py's own (with work=3000 there): one profiled run
    serves both (Valgrind is what the runner tests spend most on)."""
    home = tmp_path_factory.mktemp("counted")
    colbench("run", "placebo", "--param", "duration=0", "--param", "work=2000",
             "--param", "setup_work=0,300000", "--measure", "wall,instructions", "--processes", "2",
             "--iterations", "2", "--warmup", "1", "--run-name", "counted", home=home, check=True, timeout=900)
    ab: subprocess.CompletedProcess[str] = colbench(
        "run", "placebo", "--param", "duration=0", "--param", "work=2000", "--measure", "instructions",
        "--env", "base=@current", "--env", "more=@current COLBENCH_EXTRA_WORK=50%", "--processes", "2",
        "--iterations", "2", "--warmup", "1", "--profile", "--run-name", "ab", home=home, timeout=600)
    (home / "ab.json").write_text(json.dumps({"returncode": ab.returncode, "stdout": ab.stdout,
                                              "stderr": ab.stderr}))
    return home


def ab_run(home: Path) -> subprocess.CompletedProcess[str]:
    """How the "ab" run of `instructions_home` ended (`colbench run`'s exit code and output)."""
    done = json.loads((home / "ab.json").read_text())
    return subprocess.CompletedProcess(["colbench", "run"], done["returncode"], done["stdout"], done["stderr"])
