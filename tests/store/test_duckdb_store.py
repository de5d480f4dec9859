"""The DuckDB store: round trip, idempotent writes, schema versions, unusable files, exports."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import duckdb
import pyarrow.parquet as pq
import pytest

from colbench.store import open_store
from colbench.store.base import STORE_SCHEMA_VERSION, StoreError
from tests.store_contract import check_round_trip

pytestmark = pytest.mark.slow  # real processes: the full run, not the fast tier


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory):
    from tests.conftest import colbench

    home = tmp_path_factory.mktemp("home")
    colbench("run", "placebo", "--param", "duration=0.001,0.002", "--processes", "2", "--iterations", "3",
             "--run-name", "round-trip", home=home, check=True)
    return home


def test_round_trip_keeps_every_sample_and_validates(finished_run):
    check_round_trip(open_store(str(finished_run / "results.duckdb"), create=False))


def test_exports_carry_raw_samples(finished_run, tmp_path):
    from tests.conftest import colbench

    for fmt, name in (("parquet", "r.parquet"), ("csv", "r.csv"), ("jsonl", "r.jsonl")):
        colbench("export", "latest", "--format", fmt, "--output", str(tmp_path / name), home=finished_run, check=True)
    table = pq.read_table(tmp_path / "r.parquet")
    assert table.num_rows == 4 and all(len(v) == 3 for v in table.column("wall_s").to_pylist())
    assert len((tmp_path / "r.csv").read_text().strip().splitlines()) == 1 + 4 * 3  # one row per iteration
    docs = [json.loads(line) for line in (tmp_path / "r.jsonl").read_text().splitlines()]
    assert {d["process_index"] for d in docs} == {0, 1}


def test_export_without_output_names_its_file_after_the_format(finished_run, tmp_path):
    environment = {**os.environ, "COLBENCH_HOME": str(finished_run)}
    environment.pop("COLBENCH_STORE", None)
    for fmt, name in (("csv", "colbench-results.csv"), ("jsonl", "colbench-results.jsonl")):
        proc = subprocess.run([sys.executable, "-m", "colbench", "export", "latest", "--format", fmt], cwd=tmp_path,
                              capture_output=True, text=True, env=environment, timeout=300)
        assert proc.returncode == 0 and f"to {name}" in proc.stdout, proc.stdout + proc.stderr
    assert (tmp_path / "colbench-results.csv").read_text().startswith("result_id,")
    assert json.loads((tmp_path / "colbench-results.jsonl").read_text().splitlines()[0])["run_id"]
    assert not (tmp_path / "colbench-results.parquet").exists()


def test_show_formats(finished_run):
    from tests.conftest import colbench

    rows = json.loads(colbench("show", "latest", "--format", "json", home=finished_run, check=True).stdout)
    assert {r["duration"] for r in rows} == {0.001, 0.002} and all(r["n"] == 6 for r in rows)
    md = colbench("show", "--format", "markdown", home=finished_run, check=True).stdout
    assert md.startswith("| benchmark |") and md.count("\n") >= 3
    table = colbench("show", home=finished_run, check=True).stdout
    assert "duration=0.001" in table and "6 (2p)" in table


def test_a_store_from_a_newer_colbench_is_refused(tmp_path, cli):
    path = tmp_path / "newer.duckdb"
    open_store(str(path))
    with duckdb.connect(str(path)) as con:
        con.execute("UPDATE colbench_meta SET value = ? WHERE key = 'schema_version'", [str(STORE_SCHEMA_VERSION + 1)])
    with pytest.raises(StoreError, match="newer colbench"):
        open_store(str(path))
    proc = cli("show", "--store", str(path))
    assert proc.returncode == 2 and "upgrade colbench" in proc.stderr


def test_unreadable_and_foreign_files_are_refused(tmp_path, cli):
    garbage = tmp_path / "garbage.duckdb"
    garbage.write_bytes(b"this is not a database" * 100)
    proc = cli("run", "placebo", "--store", str(garbage))
    assert proc.returncode == 2 and "is not a DuckDB file" in proc.stderr
    assert garbage.read_bytes().startswith(b"this is not a database")
    foreign = tmp_path / "foreign.duckdb"
    with duckdb.connect(str(foreign)) as con:
        con.execute("CREATE TABLE t (x INT)")
    proc = cli("show", "--store", str(foreign))
    assert proc.returncode == 2 and "not a colbench store" in proc.stderr


def test_dry_run_estimates_from_this_machines_history(finished_run):
    from tests.conftest import colbench

    out = colbench("run", "placebo", "--param", "duration=0.001,0.002", "--dry-run", home=finished_run,
                   check=True).stdout
    assert "cases: 2 from history" in out  # every case from its own measured history on this machine
    assert "estimated time: at least" not in out
