"""Shared fixtures: an isolated COLBENCH_HOME per test and a way to run the real `colbench` command."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

#: CI sets it: a test that would skip for a missing tool fails instead
REQUIRE_ALL = os.environ.get("COLBENCH_REQUIRE_ALL") == "1"


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
