"""`colbench watch` and `colbench bisect` against a hostile package index (issue 48, tests/index_server.py
`HostileIndex`): releases that hang or segfault on import, entries of the wrong JSON types and a 5,000-digit
version, every release yanked, a page slow for uv, a login in the index URL. Real uv environments built from the
index on 127.0.0.1, the real CLI; the cases measure wall time (cheap: nothing here compares numbers)."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from pathlib import Path

import duckdb
import psutil
import pytest

from tests.app.watch_probe import BENCHMARK, HANG_MARK, NAME, build_wheel, install_benchmark
from tests.conftest import colbench
from tests.index_server import HostileIndex

pytestmark = pytest.mark.slow  # real uv environments and workers

SECRET = "Pw-hostile-7f3a9c"
#: two wall-time processes of three calls: enough to compare, nothing here is about the numbers
CHEAP = ("--param", "rounds=8", "--iterations", "3", "--warmup", "1", "--processes", "2", "--measure", "wall")


@pytest.fixture
def site(tmp_path: Path) -> Path:
    """Per test (two small files): a module-scoped one would take this module's tests that need no timing into the
    serial group of its two timed ones (tests/xdist_plan.py), to run alone at the suite's end."""
    return install_benchmark(tmp_path / "site")


@pytest.fixture
def wheels(tmp_path: Path) -> Path:
    return tmp_path / "wheels"


@pytest.fixture
def serve(wheels: Path) -> Iterator:
    started: list[HostileIndex] = []

    def start(**options) -> HostileIndex:
        index = HostileIndex(wheels, **options).start()
        started.append(index)
        return index

    yield start
    for index in started:
        index.stop()


def _watch(index: HostileIndex, home: Path, site: Path, *extra: str, env: dict[str, str] | None = None,
           timeout: float = 600):
    return colbench("watch", BENCHMARK, "--package", NAME, "--index", index.url, *CHEAP, "--format", "json",
                    "--store", str(home / "watch.duckdb"), *extra, home=home, timeout=timeout,
                    env={"PYTHONPATH": str(site), **(env or {})})


def _hung_children() -> list[psutil.Process]:
    found = []
    for proc in psutil.process_iter(["cmdline"]):
        if HANG_MARK in (proc.info["cmdline"] or []):
            found.append(proc)
    return found


def _secret_in(root: Path) -> list[Path]:
    hits = []
    for path in root.rglob("*"):
        if path.is_file() and not path.is_symlink():
            try:
                if SECRET.encode() in path.read_bytes():
                    hits.append(path)
            except OSError:
                continue
    return hits


@pytest.mark.serial  # a budget in seconds of building environments: alone (tests/xdist_plan.py)
def test_a_release_whose_import_hangs_ends_a_60s_pass_in_time_as_an_error_row(serve, wheels, tmp_path, site):
    """The issue's "done when", as cron meets it: a first pass finds 1.1.0 segfaulting on import (an error row
    naming the crash); then 1.2.0 appears, whose import hangs (and starts a child that hangs too), and a pass with
    `--budget 60s` ends within 90 s with 1.2.0 an error row and nothing it started left running. The index wants
    a login, given in its URL: uv uses it, and it is in no output and no file."""
    build_wheel(wheels, "1.0.0")
    build_wheel(wheels, "1.1.0", kind="segfaults")
    index = serve(login=("probe", SECRET))
    home = tmp_path / "home"
    first = _watch(index, home, site, "--since", "1.0.0", timeout=600)
    assert first.returncode == 0, first.stderr
    (package,) = json.loads(first.stdout)["packages"]
    rows = {r["version"]: r for r in package["releases"]}
    assert set(rows) == {"1.0.0", "1.1.0"}, (package, first.stderr[-2000:])
    assert rows["1.1.0"]["verdict"] == "error" and "killed by SIGSEGV (a crash)" in rows["1.1.0"]["cause"]

    build_wheel(wheels, "1.2.0", kind="hangs")
    started = time.monotonic()
    second = _watch(index, home, site, "--budget", "60s", timeout=300)
    elapsed = time.monotonic() - started
    assert second.returncode == 0, second.stderr
    assert elapsed < 90, (elapsed, second.stderr[-2000:])
    (package,) = json.loads(second.stdout)["packages"]
    assert package["releases"], (package["stopped"], elapsed)  # stopped: the machine built too slowly for 60 s
    (hung,) = package["releases"]
    assert (hung["version"], hung["baseline"], hung["verdict"]) == ("1.2.0", "1.0.0", "error"), hung
    assert "the import check of watchprobe did not finish within 30 s" in hung["cause"], hung
    assert not _hung_children(), "what the hung import started lives on"
    for out in (first, second):
        assert SECRET not in out.stdout + out.stderr
    assert _secret_in(home) == []


def test_bad_entries_and_a_huge_version_are_skipped_with_a_note_in_a_dry_run(serve, wheels, tmp_path, site):
    build_wheel(wheels, "1.0.0")
    build_wheel(wheels, "1.1.0")
    index = serve(bad_entries=True)
    home = tmp_path / "home"
    planned = _watch(index, home, site, "--dry-run")
    assert planned.returncode == 0, planned.stderr
    doc = json.loads(planned.stdout)
    (package,) = doc["packages"]
    assert (package["baseline"], package["candidates"]) == ("1.0.0", ["1.1.0"])
    assert any("skipped 7 index entries" in note for note in doc["notes"]), doc["notes"]
    assert "Traceback" not in planned.stderr and "attribute" not in planned.stderr
    assert not (home / "watch.duckdb").exists()  # a dry run writes nothing, not even a new store

    # nor upgrades a store of schema 2 (before watch's tables) to schema 3: it reads it as it is
    from colbench.store import open_store

    old = home / "watch.duckdb"
    home.mkdir()
    open_store(str(old)).close()
    with duckdb.connect(str(old)) as con:
        for table in ("watched", "watch_alerts", "watch_locks"):
            con.execute(f"DROP TABLE {table}")
        con.execute("UPDATE colbench_meta SET value = '2' WHERE key = 'schema_version'")
    before = old.read_bytes()
    again = _watch(index, home, site, "--dry-run")
    assert again.returncode == 0, again.stderr
    assert old.read_bytes() == before
    assert open_store(str(old), create=False, read_only=True).schema_version == 2


def test_a_package_whose_every_release_is_yanked_says_so(serve, wheels, tmp_path, site):
    build_wheel(wheels, "1.0.0")
    build_wheel(wheels, "1.1.0")
    index = serve(yank_all=True)
    refused = _watch(index, tmp_path / "home", site, "--dry-run")
    assert refused.returncode == 2
    (line,) = refused.stderr.strip().splitlines()
    assert "every one of its 2 releases is yanked" in line and "--pre" not in line


@pytest.mark.serial  # a bound in seconds: alone (tests/xdist_plan.py)
def test_an_index_slow_for_uv_is_bounded_by_the_network_deadline_there_too(serve, wheels, tmp_path, site):
    """A page colbench lists at once but uv waits 40 s for: uv's requests get colbench's network deadline (3 s
    here) and one retry, so the pass stops soon, says the release cannot be built now, and records nothing."""
    build_wheel(wheels, "1.0.0")
    build_wheel(wheels, "1.1.0")
    index = serve(page_delay_s=40, delay_for="uv")
    started = time.monotonic()
    done = _watch(index, tmp_path / "home", site, env={"COLBENCH_NET_DEADLINE_S": "3"}, timeout=300)
    elapsed = time.monotonic() - started
    assert index.requests.get("uv", 0) >= 1, index.requests
    assert elapsed < 35, elapsed
    (package,) = json.loads(done.stdout)["packages"]
    assert "timed out" in (package["stopped"] or "") and "the next pass tries again" in package["stopped"], package
    assert package["releases"] == []


def test_bisect_over_a_release_that_segfaults_on_import_skips_it_with_the_cause(serve, wheels, tmp_path, site):
    build_wheel(wheels, "1.0.0")
    build_wheel(wheels, "1.1.0", kind="segfaults")
    build_wheel(wheels, "1.2.0", kind="slow")
    index = serve()
    home = tmp_path / "home"
    found = colbench("bisect", BENCHMARK, "--package", NAME, "--good", "1.0.0", "--bad", "1.2.0",
                     "--index", index.url, *CHEAP, "--threshold", "50%", "--budget", "5m", "--format", "json",
                     "--store", str(home / "b.duckdb"), home=home, timeout=600,
                     env={"PYTHONPATH": str(site)})
    assert "Traceback" not in found.stderr, found.stderr
    text = found.stdout + found.stderr
    assert "1.1.0" in text and "killed by SIGSEGV (a crash)" in text, text[-3000:]
    assert os.environ.get("COLBENCH_HOME") != str(home)


def test_a_sweep_dry_run_asks_the_index_and_plans_every_environment(serve, wheels, tmp_path, site):
    """Issue 48: `run --versions 'pkg>=X' --dry-run` never asked the index and planned no environment. It lists
    the range from the index as the run would, counts its environments, and writes nothing."""
    for version in ("0.9.0", "1.0.0", "1.1.0"):
        build_wheel(wheels, version)
    index = serve()
    home = tmp_path / "home"
    planned = colbench("run", BENCHMARK, "--versions", f"{NAME}>=1.0", "--dry-run", *CHEAP[:6], home=home,
                       timeout=300, env={"PYTHONPATH": str(site), "UV_INDEX_URL": index.url, "UV_NO_CONFIG": "1"})
    assert planned.returncode == 0, planned.stdout + planned.stderr
    assert index.requests.get("colbench", 0) >= 1, index.requests
    assert "sweep over 2 releases: 1.0.0, 1.1.0" in planned.stdout, planned.stdout
    assert "× 2 environments" in planned.stdout
    assert not home.exists() or not any(home.rglob("*.duckdb"))
