"""`run --versions`: a sweep over a package's releases, each on the newest installed Python its wheels support.

The slow tests run real workers on Python 3.8 (pyarrow 0.17.1, the oldest release with wheels for an installed
Python) and 3.13 (pyarrow 21.0.0) with the releases' wheels from PyPI, as CI does (COLBENCH_REQUIRE_ALL=1 fails
instead of skipping when 3.8 or 3.13 is missing)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from colbench.model.env_request import Versions, parse_versions
from colbench.runtimes.interpreters import installed_interpreters
from colbench.runtimes.python import EnvError
from tests.conftest import REQUIRE_ALL, colbench


def test_versions_named_or_a_range() -> None:
    assert parse_versions("pyarrow==0.17.1,1.0.1") == Versions("pyarrow", ("0.17.1", "1.0.1"))
    assert parse_versions("pyarrow>=0.17,<20", "minor") == Versions("pyarrow", within=">=0.17,<20", every="minor")


@pytest.mark.parametrize(("text", "every", "said"), [
    ("pyarrow", None, "name a package and its releases"),
    ("pyarrow==1.0,banana", None, "'banana' is not a version"),
    ("pyarrow==1.0,1.0", None, "named twice"),
    ("pyarrow==1.0,2.0", "minor", "--every goes with a range"),
    ("pyarrow>=0.17", "weekly", "--every 'weekly': choose release, minor, major"),
    ("pyarrow~~1", None, "neither ==V1,V2"),
])
def test_bad_versions_are_one_line(text: str, every: str | None, said: str) -> None:
    with pytest.raises(EnvError, match=said):
        parse_versions(text, every)


def _need(*minors: tuple[int, int]) -> None:
    have = {i.version[:2] for i in installed_interpreters()}
    missing = [f"{a}.{b}" for a, b in minors if (a, b) not in have]
    if missing:
        reason = f"Python {', '.join(missing)} not installed"
        if REQUIRE_ALL:
            pytest.fail(f"{reason} (COLBENCH_REQUIRE_ALL=1)")
        pytest.skip(reason)


@pytest.mark.slow
def test_a_sweep_runs_each_release_on_its_python_and_records_it(tmp_path: Path) -> None:
    """pyarrow 0.17.1 on 3.8 and 21.0.0 on 3.13, CSV to a table and a data frame and Feather V2 read, one run: each
    result records its interpreter and versions; lz4 Feather on 0.17.1 is an invalid case, not an error."""
    _need((3, 8), (3, 13))
    home = tmp_path / "home"
    sweep = ("--versions", "pyarrow==0.17.1,21.0.0", "--processes", "1", "--iterations", "2", "--warmup", "0")
    csv = colbench("run", "csv-read", "--param", "reader=pyarrow", "--param", "source=nyctaxi_2010-01",
                   "--param", "compression=none", "--param", "output=arrow_table,dataframe", "--param", "rows=2000",
                   "--param", "threads=1", *sweep, home=home, timeout=900)
    assert csv.returncode == 0, csv.stdout[-3000:] + csv.stderr[-3000:]
    assert "environment 0.17.1: resolving python==3.8 pyarrow==0.17.1 numpy pandas (as of 2020-05-18)" in csv.stdout
    feather = colbench("run", "file-read", "--param", "engine=pyarrow", "--param", "format=feather",
                       "--param", "codec=uncompressed,lz4", "--param", "source=fanniemae_2016Q4",
                       "--param", "output=arrow_table", "--param", "rows=2000", "--param", "threads=1", *sweep,
                       home=home, timeout=900)
    assert feather.returncode == 0, feather.stdout[-3000:] + feather.stderr[-3000:]
    from colbench.store import open_store

    results = open_store(str(home / "results.duckdb"), create=False).results()
    ok = [r for r in results if r.ok]
    assert {(r.env_name, r.versions["python"][:4], r.versions["pyarrow"]) for r in ok} == {
        ("0.17.1", "3.8.", "0.17.1"), ("21.0.0", "3.13", "21.0.0")}
    assert {r.params.get("output") for r in ok if r.benchmark == "csv-read"} == {"arrow_table", "dataframe"}
    (invalid,) = [r for r in results if not r.ok]
    assert invalid.env_name == "0.17.1" and invalid.params["codec"] == "lz4" and invalid.error is not None
    assert invalid.error["kind"] == "invalid" and "cannot read lz4-compressed Arrow IPC" in invalid.error["message"]
    early = next(r for r in ok if r.env_name == "0.17.1")
    assert early.versions["pandas"].startswith("1.0.") and early.versions["numpy"].startswith("1.18.")
    history = colbench("history", "csv-read", "--by", "version", "--package", "pyarrow", "--format", "json",
                       home=home, check=True)
    (table, *_) = json.loads(history.stdout)
    assert [p["label"] for p in table["points"]] == ["0.17.1", "21.0.0"]
    assert table["python_changes"][0]["from"].startswith("3.8") and table["python_changes"][0]["to"].startswith("3.13")


@pytest.mark.slow
@pytest.mark.parametrize(("versions", "said"), [
    ("pyarrow==0.15.1", "--versions pyarrow==0.15.1: no wheel for any installed Python (its wheels are for Python "
                        "2.7, 3.5, 3.6, 3.7"),
    ("pyarrow==0.0.0", "--versions pyarrow==0.0.0: no such release on"),
])
def test_a_release_that_cannot_run_here_is_one_line(tmp_path: Path, versions: str, said: str) -> None:
    proc = colbench("run", "placebo", "--versions", versions, home=tmp_path / "home")
    assert proc.returncode == 2 and said in proc.stderr and proc.stderr.count("\n") <= 1, proc.stderr


@pytest.mark.slow
def test_a_python_no_installed_interpreter_provides_stops_the_run_before_it_starts(tmp_path: Path) -> None:
    proc = colbench("run", "placebo", "--env", "a=python==3.99 pyarrow", "--env", "b=pyarrow",
                    home=tmp_path / "home")
    assert proc.returncode == 2 and "no Python 3.99 installed here" in proc.stderr
    assert "install it with `" in proc.stderr


@pytest.mark.slow
def test_a_release_that_installs_but_does_not_import_is_error_rows_and_the_sweep_goes_on(tmp_path: Path) -> None:
    """pyarrow 14.0.2's wheels are built against NumPy 1.x: with numpy>=2 beside it, it installs and fails to import.
    Its cases are error results that say so; 16.1.0's run."""
    _need((3, 12))
    proc = colbench("run", "placebo", "--param", "duration=0.001", "--versions", "pyarrow==14.0.2,16.1.0",
                    "--with", "numpy>=2", "--processes", "1", "--iterations", "1", "--warmup", "0",
                    home=tmp_path / "home", timeout=900)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "environment 14.0.2: does not install" in proc.stdout and "the sweep goes on" in proc.stdout
    from colbench.store import open_store

    results = open_store(str(tmp_path / "home" / "results.duckdb"), create=False).results()
    broken = [r for r in results if r.env_name == "14.0.2"]
    assert broken and all(not r.ok and r.error is not None and "does not import" in r.error["message"] for r in broken)
    assert [r.ok for r in results if r.env_name == "16.1.0"] == [True]
