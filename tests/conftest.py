"""Shared fixtures: an isolated COLBENCH_HOME per test and a way to run the real `colbench` command."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

#: CI sets it: a test that would skip for a missing tool fails instead
REQUIRE_ALL = os.environ.get("COLBENCH_REQUIRE_ALL") == "1"


def pytest_configure(config: pytest.Config) -> None:
    """Where pytest-xdist runs the suite on several workers, tests/xdist_plan.py says which tests go together and
    which run alone."""
    if config.pluginmanager.hasplugin("xdist"):
        from tests.xdist_plan import Plan

        config.pluginmanager.register(Plan(), "colbench-xdist-plan")


def require_tools(*tools: str) -> None:
    """Skip (fail under COLBENCH_REQUIRE_ALL=1) unless every tool is on PATH."""
    import shutil

    missing = [t for t in tools if shutil.which(t) is None]
    if missing:
        reason = f"{', '.join(missing)} not on PATH"
        if REQUIRE_ALL:
            pytest.fail(f"{reason} (COLBENCH_REQUIRE_ALL=1)")
        pytest.skip(reason)


@pytest.fixture(autouse=True)
def _no_test_touches_the_users_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test starts with COLBENCH_HOME in a temporary directory, so nothing a test forgets to isolate (a store's
    spool, a cache, an environment) lands in ~/.colbench; fixtures and tests that need their own set it again."""
    monkeypatch.setenv("COLBENCH_HOME", str(tmp_path_factory.mktemp("default-home")))


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh data directory; COLBENCH_HOME too, so the user source registry is isolated."""
    monkeypatch.setenv("COLBENCH_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("COLBENCH_DATA", str(tmp_path / "data"))
    return tmp_path / "data"


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("COLBENCH_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("COLBENCH_STORE", raising=False)
    return tmp_path / "home"


def colbench(*args: str, home: Path, check: bool = False, timeout: float = 300, env: dict | None = None,
             ) -> subprocess.CompletedProcess[str]:
    """Run the real CLI in a subprocess, as a user would."""
    environment = {**os.environ, "COLBENCH_HOME": str(home), **(env or {})}
    environment.pop("COLBENCH_STORE", None)
    proc = subprocess.run([sys.executable, "-m", "colbench", *args], capture_output=True, text=True,
                          env=environment, timeout=timeout)
    if check and proc.returncode != 0:
        raise AssertionError(f"colbench {' '.join(args)} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    return proc


@pytest.fixture
def cli(home: Path):
    def run(*args: str, **kwargs):
        return colbench(*args, home=home, **kwargs)
    return run


# ------------------------------------------------------------------------- built once, read by several modules


@pytest.fixture(scope="session")
def built_dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """colbench's wheel and sdist, built once for the session by `uv build` from this checkout (the release and the
    install tests install the same wheel)."""
    import shutil

    from tests.shared import built_once

    uv = shutil.which("uv") or str(Path.home() / ".local" / "bin" / "uv")
    if not Path(uv).exists():
        require_tools("uv")
    clean = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH", "COLBENCH_STORE",
                                                              "COLBENCH_WORKERS_DIR", "COLBENCH_DATA",
                                                              "UV_PROJECT_ENVIRONMENT")}

    def build(dist: Path) -> None:
        done = subprocess.run([uv, "build", "--out-dir", str(dist), str(Path(__file__).resolve().parents[1])],
                              capture_output=True, text=True, env=clean, timeout=300)
        assert done.returncode == 0, done.stderr[-2000:]

    return built_once(tmp_path_factory, "dist", build)


@pytest.fixture(scope="session")
def java_worker_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A COLBENCH_HOME holding the default Java worker jar, built once for the whole session (every xdist worker)
    by `colbench setup java`, as a user builds it. Homes that run Java cases start from a copy of its `workers/`
    (`with_java_worker`), so one Maven build serves them all; the release test builds its own from the wheel."""
    from tests.shared import built_once

    require_tools("java", "mvn")

    def build(home: Path) -> None:
        colbench("setup", "java", home=home, check=True, timeout=900)

    return built_once(tmp_path_factory, "java-worker", build)


def with_java_worker(home: Path, built: Path) -> Path:
    """`home` with a copy of the built Java worker (the jar and its build.json, valid while the sources are the
    same): `colbench run` finds it ready instead of building it again."""
    from tests.shared import copy_of

    copy_of(built / "workers", home / "workers")
    return home


STEPPED_DURATION = "0.05"


@pytest.fixture(scope="session")
def stepped_history(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A COLBENCH_HOME with 12 real placebo runs of one case, each measuring a baseline (`ref`) beside the code under
    test (`code`), as a nightly run beside a pinned release would; the code 50% slower from the 7th run on
    (COLBENCH_PLACEBO_FACTOR): a history with a known step, read by `colbench history` (tests/cli) and `app.history`
    (tests/app). The runs chain through the baseline (analysis/chain.py: this VM's runs of unchanged code differ too
    much between runs for raw medians to compare). 6 + 6 points: fewer could not reach the change-point test's
    p <= 0.01 (4 + 4 have only 70 orderings). Its times are what is asserted: the tests that read it are serial.
    50 ms, not 10: with other developers' work on this VM (load 13 on 2 CPUs) a worker waits ~100 ms for a CPU at
    times, and a wait that swallows a whole 10 or 15 ms call read the 50% step as +4.7%."""
    home = tmp_path_factory.mktemp("stepped-history")
    for i in range(12):
        factor = "1.0" if i < 6 else "1.5"
        colbench("run", "placebo", "--param", f"duration={STEPPED_DURATION}", "--processes", "2", "--iterations", "5",
                 "--env", "ref=@current", "--env", f"code=@current COLBENCH_PLACEBO_FACTOR={factor}", home=home,
                 check=True)
    return home
