"""A counting worker in an environment without bytecode keeps its bytecode under colbench's home (issue #46)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from colbench.runner.instructions import bytecode_cache


def test_without_bytecode_workers_cache_it_under_the_home_and_not_in_the_environment(tmp_path: Path):
    cache, drop = bytecode_cache({"PYTHONDONTWRITEBYTECODE": "1"}, home=tmp_path)
    assert cache == {"PYTHONPYCACHEPREFIX": str(tmp_path / "pycache")} and drop == ["PYTHONDONTWRITEBYTECODE"]
    # what a worker started with those variables does: a module it imports is compiled into the home's folder,
    # its own folder gets no __pycache__
    source = tmp_path / "env" / "lib"
    source.mkdir(parents=True)
    (source / "some_module.py").write_text("VALUE = 1\n")
    env = {"PATH": "/usr/bin:/bin", **cache, "PYTHONPATH": str(source)}
    subprocess.run([sys.executable, "-c", "import some_module"], env=env, check=True)
    assert not (source / "__pycache__").exists()
    assert list((tmp_path / "pycache").rglob("some_module.*.pyc"))


def test_an_environment_with_bytecode_or_a_prefix_of_its_own_is_left_alone(tmp_path: Path):
    assert bytecode_cache({}, home=tmp_path) == ({}, [])
    assert bytecode_cache({"PYTHONDONTWRITEBYTECODE": "1", "PYTHONPYCACHEPREFIX": "/mine"}, home=tmp_path) == ({}, [])
    assert not (tmp_path / "pycache").exists()
