"""`colbench bisect --git`: commits of a local repository of a Python package, each built from source by uv."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.app.probe import BENCHMARK, MODULE, NAME, install_benchmark
from tests.conftest import colbench

PYPROJECT = f'''[project]
name = "{NAME}"
version = "0.1.0"

[build-system]
requires = ["hatchling"]
build-backend = "hatchling.build"
'''


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", *args],
                          capture_output=True, text=True, check=True).stdout.strip()


@pytest.mark.slow
def test_bisect_over_commits_names_the_commit_that_made_it_slower(tmp_path):
    repo = tmp_path / "probe"
    (repo / NAME).mkdir(parents=True)
    (repo / "pyproject.toml").write_text(PYPROJECT)
    _git(repo, "init", "-q", "-b", "main")
    shas = []
    for i, factor in enumerate((1, 1, 1, 2, 2)):  # commit 3 makes work() twice as slow
        (repo / NAME / "__init__.py").write_text(MODULE.format(version=f"0.1.{i}", factor=factor, body="pass"))
        _git(repo, "add", "-A")
        _git(repo, "commit", "-qm", f"commit {i}")
        shas.append(_git(repo, "rev-parse", "HEAD"))
    site = install_benchmark(tmp_path / "site")
    # wall time: the probe spins for a time (counted instructions of it are noise); 50 ms calls: see test_bisect_wheels
    done = colbench("bisect", BENCHMARK, "--git", str(repo), "--package", NAME, "--good", shas[0], "--bad", "main",
                    "--processes", "4", "--iterations", "3", "--param", "duration=0.05", "--measure", "wall",
                    "--format", "json",
                    home=tmp_path / "home", env={"PYTHONPATH": str(site)}, timeout=900)
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["points"] == [sha[:12] for sha in shas]
    assert (doc["last_good"], doc["first_bad"]) == (shas[2][:12], shas[3][:12])
    assert doc["skipped"] == {} and doc["ratio"]["verdict"] == "regression"
