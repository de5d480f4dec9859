"""scripts/test_budget.py on JUnit files like pytest's: the slowest tests and the total printed, exit 1 past a budget
or when the fast tier leaves a package of colbench untested."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "test_budget.py"
PACKAGES = sorted(p.name for p in (SCRIPT.parents[1] / "src" / "colbench").iterdir() if (p / "__init__.py").exists())


def junit(path: Path, wall: float, cases: list[tuple[str, str, float, str]]) -> Path:
    rows = []
    for classname, name, seconds, outcome in cases:
        inner = "" if outcome == "passed" else f'<{outcome} message="x"/>'
        rows.append(f'<testcase classname="{classname}" name="{name}" time="{seconds}">{inner}</testcase>')
    path.write_text(f'<?xml version="1.0"?><testsuites><testsuite name="pytest" time="{wall}" tests="{len(cases)}">'
                    f'{"".join(rows)}</testsuite></testsuites>')
    return path


def budget(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(SCRIPT), *map(str, args)], capture_output=True, text=True, timeout=60)


def every_package(seconds: float = 0.1) -> list[tuple[str, str, float, str]]:
    return [(f"tests.{package}.test_it", "test_one", seconds, "passed") for package in PACKAGES]


def test_within_budget_prints_the_slowest_and_the_total(tmp_path: Path) -> None:
    fast = junit(tmp_path / "fast.xml", 100.0, every_package())
    slow = junit(tmp_path / "slow.xml", 600.0, [("tests.test_hostile_inputs", "test_big", 250.5, "passed"),
                                                ("tests.report.test_browser", "test_page", 30.0, "failure")])
    done = budget("--fast", fast, "--slow", slow, "--top", "2")
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert lines[1].split() == ["250.5", "s", "tests/test_hostile_inputs.py::test_big"]
    assert "tests/report/test_browser.py::test_page  (failure)" in lines[2]
    assert f"the suite: {len(PACKAGES) + 2} tests in 11:40.0 (budget 35:00.0)" in done.stdout


def test_over_either_budget_fails_and_says_which(tmp_path: Path) -> None:
    fast = junit(tmp_path / "fast.xml", 181.0, every_package())
    slow = junit(tmp_path / "slow.xml", 1920.0, [])
    done = budget("--fast", fast, "--slow", slow)
    assert done.returncode == 1
    assert "the fast tier took 3:01.0, over its budget of 3:00.0" in done.stderr
    assert "the suite took 35:01.0, over its budget of 35:00.0" in done.stderr
    assert budget("--fast", fast, "--slow", slow, "--fast-budget", "4m", "--budget", "36m").returncode == 0


def test_a_package_without_a_passing_fast_test_fails(tmp_path: Path) -> None:
    cases = [c for c in every_package() if c[0] != "tests.render.test_it"]
    cases.append(("tests.runner.test_it", "test_skipped", 0.1, "skipped"))
    done = budget("--fast", junit(tmp_path / "fast.xml", 60.0, cases))
    assert done.returncode == 1 and "the fast tier has no passing test of render" in done.stderr
