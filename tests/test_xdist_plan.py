"""tests/xdist_plan.py on a small suite run by real pytest-xdist workers: a module-scoped fixture is built once,
the serial tests run after every other test has ended, all on one worker, and a run of serial tests alone ends."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("xdist")

ROOT = Path(__file__).resolve().parents[1]

CONFTEST = '''
def pytest_configure(config):
    from tests.xdist_plan import Plan
    config.pluginmanager.register(Plan(), "plan")
    config.addinivalue_line("markers", "serial: alone")
    config.addinivalue_line("markers", "slow: slow")
'''

SUITE = '''
import os, time, pytest

def record(name, seconds):
    start = time.monotonic()
    time.sleep(seconds)
    with open(os.environ["PLAN_LOG"], "a") as log:
        log.write(f"{os.environ['PYTEST_XDIST_WORKER']} {name} {start:.3f} {time.monotonic():.3f}\\n")

@pytest.fixture(scope="module")
def shared():
    record("fixture", 0.05)

@pytest.fixture(scope="module")
def timed():
    record("timed-fixture", 0.05)

@pytest.mark.parametrize("i", range(6))
def test_plain(i):
    record(f"plain{i}", 0.2)

@pytest.mark.slow
def test_slow():
    record("slow", 0.8)

@pytest.mark.parametrize("i", range(3))
def test_reads_shared(shared, i):
    record(f"shared{i}", 0.1)

@pytest.mark.serial
@pytest.mark.parametrize("i", range(3))
def test_timed(timed, i):
    record(f"timed{i}", 0.2)

def test_shares_the_serial_fixture(timed):
    record("with-timed", 0.05)
'''


def run_suite(tmp_path: Path, *args: str) -> list[tuple[str, str, float, float]]:
    (tmp_path / "conftest.py").write_text(CONFTEST)
    (tmp_path / "test_suite.py").write_text(SUITE)
    log = tmp_path / "log.txt"
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}  # not a worker of this run's
    env.update(PYTHONPATH=str(ROOT), PLAN_LOG=str(log))
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "2", "--dist",
                           "loadgroup", "--no-loadscope-reorder", "--rootdir", str(tmp_path),
                           "--basetemp", str(tmp_path / "basetemp"), *args],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    rows = [line.split() for line in log.read_text().splitlines()]
    return sorted(((w, name, float(a), float(b)) for w, name, a, b in rows), key=lambda row: row[2])


def test_fixtures_are_built_once_and_serial_tests_run_last_and_alone(tmp_path: Path) -> None:
    rows = run_suite(tmp_path)
    names = [name for _, name, _, _ in rows]
    assert names.count("fixture") == 1 and names.count("timed-fixture") == 1
    serial = [row for row in rows if row[1].startswith(("timed", "with-timed"))]
    others = [row for row in rows if row not in serial]
    assert len(serial) == 5 and len({worker for worker, *_ in serial}) == 1  # with the test sharing its fixture
    assert min(start for *_, start, _ in serial) >= max(end for *_, end in others)  # after all, so alone
    assert {worker for worker, *_ in others} == {"gw0", "gw1"}  # the rest shared the workers
    assert names[0] == "slow" or names[1] == "slow"  # slow units are handed out first


def test_a_run_of_serial_tests_only_ends(tmp_path: Path) -> None:
    rows = run_suite(tmp_path, "-k", "timed or shares")
    assert [name for _, name, _, _ in rows] == ["timed-fixture", "timed0", "timed1", "timed2", "with-timed"]
