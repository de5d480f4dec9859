"""An asv suite's value benchmarks (mem_, peakmem_, track_) through history, the HTML report and the dashboard with
their metrics, and its setup_cache folders removed when the run ends (only inside the home)."""

from __future__ import annotations

import os
import shutil
import urllib.request
from pathlib import Path

import pytest

from colbench.benchmarks.sources import clean_setup_caches
from tests.conftest import colbench

SUITE = Path(__file__).parent / "asv_project"
#: a setup_cache benchmark and the three value kinds, two cases each cheap
SELECTION = r"Cached\.time_len$|track_constant$|mem_list$|peakmem_alloc$"


def test_stale_setup_cache_folders_go_and_nothing_outside_the_home(tmp_path, monkeypatch):
    monkeypatch.setenv("COLBENCH_HOME", str(tmp_path / "home"))
    base = tmp_path / "home" / "asv-setup-cache"
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("the user's")
    dead = base / "999999999-deadbeef"  # no such process
    dead.mkdir(parents=True)
    (dead / "x.pickle").write_bytes(b"0" * 100)
    (dead / "link").symlink_to(outside)
    alive = base / f"{os.getpid()}-cafecafe"
    alive.mkdir()
    mine = base / f"{os.getppid()}-0123abcd"
    mine.mkdir()
    assert clean_setup_caches(base, keep=mine) == 100
    assert not dead.exists() and alive.is_dir() and mine.is_dir()
    assert (outside / "keep.txt").read_text() == "the user's"  # the link went, not what it pointed to


@pytest.mark.slow
def test_value_benchmarks_reach_history_report_and_dashboard_and_setup_cache_goes(tmp_path):
    home = tmp_path / "home"
    root = tmp_path / "project"
    shutil.copytree(SUITE, root)
    stale = home / "asv-setup-cache" / "999999999-deadbeef"
    stale.mkdir(parents=True)
    store = home / "s.duckdb"
    for name in ("a", "b"):
        colbench("run", f"asv:{root}", "-b", SELECTION, "--processes", "1", "--iterations", "2", "--warmup", "0",
                 "--run-name", name, "--store", str(store), home=home, check=True)
        # the run's setup_cache results are gone with it, and the stale folder of a killed run too
        assert list((home / "asv-setup-cache").iterdir()) == []

    compared = colbench("compare", "a", "b", "--store", str(store), home=home, check=True).stdout
    assert "asv_track" in compared and "asv_mem" in compared and "asv_peakmem" in compared
    assert "42 widgets" in compared  # a track_ value in its benchmark's own `unit`
    history = colbench("history", "bench_features.track_constant", "--metric", "asv_track", "--store", str(store),
                       home=home, check=True).stdout
    assert "│ 42 widgets" in history  # the value as the benchmark returns it, in its own `unit`, none of colbench's
    history = colbench("history", "bench_features.mem_list", "--metric", "asv_mem", "--store", str(store),
                       home=home, check=True).stdout
    assert "KiB" in history  # asizeof of [0] * 1000: bytes

    out = tmp_path / "report"
    colbench("report", "a", "b", "-o", str(out), "--store", str(store), home=home, check=True)
    page = (out / "index.html").read_text()
    for metric in ("asv_mem", "asv_peakmem", "asv_track"):
        assert f"-{metric}.svg" in page, metric

    from tests.report.conftest import serve_in_thread

    with serve_in_thread(str(store)) as url:
        with urllib.request.urlopen(f"{url}/history?benchmark=bench_features.track_constant&metric=asv_track",
                                    timeout=60) as response:
            assert response.status == 200
            shown = response.read().decode()
        assert "bench_features.track_constant" in shown and "asv_track" in shown
