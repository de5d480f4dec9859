"""A third-party package registers a benchmark and a suite through entry points, exactly as the docs show."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.conftest import colbench

pytestmark = pytest.mark.slow  # real processes: the full run, not the fast tier

DOC = Path(__file__).parents[2] / "docs" / "writing-benchmarks.md"


def _example_source() -> str:
    text = DOC.read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    return next(b for b in blocks if "class JsonRead" in b)


def install_example(root: Path) -> Path:
    """A minimal installed distribution: the module plus a dist-info with entry points, on PYTHONPATH."""
    site = root / "site"
    site.mkdir()
    (site / "colbench_json.py").write_text(_example_source())
    info = site / "colbench_json-0.1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: colbench-json\nVersion: 0.1.0\n")
    (info / "entry_points.txt").write_text(
        "[colbench.benchmarks]\njson-read = colbench_json:JsonRead\n\n[colbench.suites]\njson = colbench_json:SUITE\n"
    )
    return site


def test_entry_point_benchmark_and_suite_run_like_builtins(tmp_path):
    site = install_example(tmp_path)
    env = {"PYTHONPATH": str(site)}
    listed = json.loads(colbench("list", "--format", "json", home=tmp_path / "home", env=env, check=True).stdout)
    assert "json-read" in listed["benchmarks"] and "json" in listed["suites"]
    assert listed["benchmarks"]["json-read"]["params"]["rows"]["default"] == [10_000, 100_000]
    colbench("run", "json", "--processes", "1", "--iterations", "2", home=tmp_path / "home", env=env, check=True)
    rows = json.loads(colbench("show", "--format", "json", home=tmp_path / "home", env=env, check=True).stdout)
    assert len(rows) == 1 and rows[0]["status"] == "ok" and rows[0]["benchmark"] == "json-read"
    bad = colbench("run", "json-read", "--param", "block_size=8", home=tmp_path / "home", env=env)
    assert bad.returncode == 2 and "blocks smaller than a row" in bad.stderr
