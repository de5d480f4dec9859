"""The README's first command: the quick suite on synthetic data, every benchmark for real, results stored."""

from __future__ import annotations

import json
import os
import shutil

import pytest

from tests.conftest import colbench, with_java_worker

pytestmark = pytest.mark.slow  # the module's fixture runs the whole quick suite (a minute and more)

REQUIRE_ALL = os.environ.get("COLBENCH_REQUIRE_ALL") == "1"


@pytest.fixture(scope="module")
def quick(tmp_path_factory, request):
    home = tmp_path_factory.mktemp("quick")
    if shutil.which("java") and shutil.which("mvn"):  # the Java worker as `colbench setup java` built it this session
        with_java_worker(home, request.getfixturevalue("java_worker_home"))
    proc = colbench("run", "quick", home=home, timeout=1200)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return home, proc


def test_every_benchmark_runs_validates_and_lands_in_the_store(quick):
    home, proc = quick
    rows = json.loads(colbench("show", "--format", "json", home=home, check=True).stdout)
    ran = {r["benchmark"] for r in rows}
    assert ran >= {"placebo", "csv-read", "file-read", "file-write", "dataframe-conversion", "dsib",
                   "ipc-bandwidth", "mmap-read"}
    failed = [(r["benchmark"], r["status"], r.get("error_message")) for r in rows if r["status"] != "ok"]
    assert not failed, failed
    assert all(r["n"] == 6 and r["processes"] == 2 for r in rows)
    writes = [r for r in rows if r["benchmark"] == "file-write"]
    assert writes and all(r["file_size_bytes"] > 0 for r in writes)


def test_optional_runtimes_ran_or_were_skipped_visibly(quick):
    home, proc = quick
    rows = json.loads(colbench("show", "--format", "json", home=home, check=True).stdout)
    readers = {r.get("reader") for r in rows if r["benchmark"] == "csv-read"}
    runtimes = {r.get("runtime") for r in rows if r["benchmark"] == "ipc-bandwidth"}
    if shutil.which("Rscript") or REQUIRE_ALL:
        assert "data.table" in readers
    else:
        assert "skipped csv-read" in proc.stderr and "colbench setup r" in proc.stderr
    if REQUIRE_ALL:
        assert "java" in runtimes


def test_the_experiment_tables_are_printed(quick):
    _, proc = quick
    for title in ("E1 — CSV read", "E2 — Data Science I/O", "E3 — Arrow in-memory", "E4 — 10 × Int64", "E5 — Feather"):
        assert title in proc.stdout
