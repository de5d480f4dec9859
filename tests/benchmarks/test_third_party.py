"""A third-party package registers a benchmark and a suite through entry points, exactly as the docs show."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.conftest import colbench

pytestmark = pytest.mark.slow  # real processes: the full run, not the fast tier

DOC = Path(__file__).parents[2] / "docs" / "writing-benchmarks.md"


def _example_source(cls: str = "JsonRead") -> str:
    text = DOC.read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    return next(b for b in blocks if f"class {cls}" in b)


def install_example(root: Path) -> Path:
    """A minimal installed distribution: the doc's two modules plus a dist-info with entry points, on PYTHONPATH."""
    site = root / "site"
    site.mkdir()
    (site / "colbench_json.py").write_text(_example_source())
    (site / "colbench_columns.py").write_text(_example_source("ParquetColumns"))
    info = site / "colbench_json-0.1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: colbench-json\nVersion: 0.1.0\n")
    (info / "entry_points.txt").write_text(
        "[colbench.benchmarks]\njson-read = colbench_json:JsonRead\n"
        "parquet-columns = colbench_columns:ParquetColumns\n\n[colbench.suites]\njson = colbench_json:SUITE\n"
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


def test_the_data_example_reads_a_built_in_data_set(tmp_path):
    """The doc's DataRequest example: the cache builds the Parquet twin, the worker reads it through ctx.inputs,
    the check reads ctx.input_info; one file per codec, read by both column counts."""
    site = install_example(tmp_path)
    env = {"PYTHONPATH": str(site)}
    colbench("run", "parquet-columns", "--param", "rows=2000", "--param", "columns=1,8", "--param", "codec=zstd",
             "--threads", "1", "--processes", "1", "--iterations", "2", home=tmp_path / "home", env=env, check=True)
    rows = json.loads(colbench("show", "--format", "json", home=tmp_path / "home", env=env, check=True).stdout)
    assert sorted((r["columns"], r["status"]) for r in rows) == [(1, "ok"), (8, "ok")], rows
    files = list((tmp_path / "home" / "data").rglob("*.parquet"))
    assert len(files) == 1 and "fanniemae_2016Q4" in str(files[0]), files
    # a read's throughput is of the bytes it decoded (the table's buffers), the file's size beside it
    import pyarrow.parquet as pq

    names = pq.read_schema(files[0]).names
    for row in rows:
        decoded = pq.read_table(files[0], columns=names[: row["columns"]]).nbytes
        assert row["memory_bytes"] == decoded, (row, decoded)
        assert row["decoded_mb_per_s"] == pytest.approx(decoded / row["median_s"] / 1e6)
    table = colbench("show", home=tmp_path / "home", env=env, check=True).stdout
    assert " MB/s decoded " in table and " read " in table and '"decoded" (parquet-columns)' in table
    bad = colbench("run", "parquet-columns", "--param", "rows=2000", "--param", "columns=99", "--param",
                   "codec=zstd", "--threads", "1", "--processes", "1", home=tmp_path / "home", env=env)
    assert "has 31 columns" in bad.stdout, bad.stdout
