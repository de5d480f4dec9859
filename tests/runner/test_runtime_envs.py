"""Version matrices of the other runtimes: `--env NAME=java:arrow==V` (one jar per Arrow Java version, built with
Maven and cached in $COLBENCH_HOME) and `--env NAME=r:pkg==V` (the installed Debian version, or a one-line error).

Two Arrow Java versions run side by side in one real run; every result names the version it ran with; `compare`
and `history` work across them. 18.1.0 and 19.0.0 (pom.xml's): the worker needs >= 18.0.0, where Arrow Java's
MemoryUtil gained the raw-address accessors its scan reader uses (17.0.0 does not compile, and is refused up front).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from colbench.runtimes.java import JAR, MARKER, default_arrow_version
from tests.conftest import colbench, require_tools, with_java_worker

OTHER_ARROW = "18.1.0"
TINY_JAVA = ("ipc-bandwidth", "--param", "runtime=python,java", "--param", "rows=20000", "--param", "batch_rows=5000",
             "--param", "access=scan", "--threads", "1", "--iterations", "2", "--warmup", "0")


# ------------------------------------------------------------------------------------------------- Java


@pytest.fixture(scope="module")
def two_arrow_versions(tmp_path_factory, java_worker_home):
    """One run: the same Java case with Arrow Java 18.1.0 (a) and pom.xml's version (b), interleaved. The run builds
    18.1.0's jar; pom.xml's comes built from the session's `colbench setup java` (tests/conftest.py)."""
    require_tools("java", "mvn")
    home = with_java_worker(tmp_path_factory.mktemp("java-envs"), java_worker_home)
    default = default_arrow_version()
    assert default != OTHER_ARROW
    proc = colbench("run", *TINY_JAVA, "--processes", "2", "--env", f"a=java:arrow=={OTHER_ARROW}",
                    "--env", f"b=java:arrow=={default}", "--run-name", "javas", home=home, timeout=900)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return home, proc, default


def _results(home: Path) -> list[dict]:
    from colbench.store import open_store
    from colbench.store.base import ResultQuery

    return [r.to_json() for r in open_store(str(home / "results.duckdb"), create=False).results(ResultQuery())]


@pytest.mark.slow
def test_each_arrow_java_version_runs_and_is_recorded(two_arrow_versions):
    home, proc, default = two_arrow_versions
    results = _results(home)
    assert {r["env_name"] for r in results} == {"a", "b"}
    assert all(r["status"] == "ok" and r["runtime"]["name"] == "java" for r in results), results
    by_env = {r["env_name"]: r for r in results}
    # reported by the worker itself (the jar's build properties), not only by what was asked for
    assert by_env["a"]["versions"]["arrow"] == OTHER_ARROW
    assert by_env["b"]["versions"]["arrow"] == default
    assert by_env["a"]["env"]["spec"] == f"java:arrow=={OTHER_ARROW}"
    assert len([r for r in results if r["env_name"] == "a"]) == 2  # two interleaved blocks per env
    # the Python case of the plan cannot run in a Java environment: skipped, and said so
    assert "skipped ipc-bandwidth" in proc.stderr and "runtime=python" in proc.stderr
    for version in (OTHER_ARROW, default):
        assert (home / "workers" / "java" / version / JAR).is_file()
        meta = json.loads((home / "workers" / "java" / version / MARKER).read_text())
        assert meta["arrow_version"] == version


@pytest.mark.slow
def test_compare_and_history_work_across_arrow_java_versions(two_arrow_versions):
    home, _, default = two_arrow_versions
    proc = colbench("compare", "a", "b", "--format", "json", home=home)
    assert proc.returncode in (0, 1), proc.stderr  # 1 would be a regression verdict, not an error
    report = json.loads(proc.stdout)
    assert report["baseline"] == "a" and report["contender"] == "b"
    assert any("runtime=java" in c["key"] for c in report["comparisons"])
    history = colbench("history", "ipc-bandwidth", "--param", "runtime=java", home=home)
    assert history.returncode == 0, history.stderr
    assert f"arrow {OTHER_ARROW}" in history.stdout and f"arrow {default}" in history.stdout


@pytest.mark.slow
def test_a_cached_jar_is_reused_and_setup_lists_it(two_arrow_versions):
    home, _, _ = two_arrow_versions
    proc = colbench("setup", "java", "--arrow", OTHER_ARROW, home=home, check=True)
    assert "already built" in proc.stdout
    doctor = json.loads(colbench("doctor", "--format", "json", home=home, check=True).stdout)
    names = {f["name"]: f for f in doctor}
    assert names[f"Java worker, Arrow Java {OTHER_ARROW}"]["ok"]


@pytest.mark.slow
def test_environments_of_two_runtimes_are_refused(two_arrow_versions):
    home, _, default = two_arrow_versions
    proc = colbench("run", *TINY_JAVA, "--env", f"a=java:arrow=={default}", "--env", "b=@current", home=home)
    assert proc.returncode == 2
    assert "different runtimes" in proc.stderr and "Traceback" not in proc.stderr


@pytest.mark.parametrize(("spec", "message"), [
    ("java:arrow==17.0.0", "needs Arrow Java 18.0.0 or newer"),
    ("java:arrow>=18", "pin exact versions"),
    ("java:arrow==../../../tmp/x", "pin exact versions"),
    ("java:pyarrow==18.1.0", "pins Arrow Java only"),
    ("java:", "name what to pin"),
])
def test_bad_java_environments_are_one_line_errors(home, spec, message):
    require_tools("java")  # without it the Java case is skipped (a line of its own) before the pin is refused
    proc = colbench("run", *TINY_JAVA, "--env", f"a={spec}", home=home)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert message in proc.stderr and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert not (home / "workers").exists()  # refused before anything was built


# ---------------------------------------------------------------------------------------------------- R


def _installed_data_table() -> str:
    from colbench.runtimes.r import installed_versions

    version = installed_versions(["data.table"])["data.table"]
    assert version, "data.table is not installed: colbench setup r"
    return version


@pytest.mark.slow
def test_r_environment_with_the_installed_version_runs(home):
    require_tools("Rscript")
    version = _installed_data_table()
    proc = colbench("run", "csv-read", "--param", "reader=data.table,pyarrow", "--param", "rows=2000",
                    "--param", "source=nyctaxi_2010-01", "--param", "compression=none", "--param", "output=dataframe",
                    "--param", "threads=1",
                    "--iterations", "1", "--warmup", "0", "--processes", "1",
                    "--env", f"a=r:data.table=={version}", "--env", "b=r:data.table", home=home, timeout=600)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    results = _results(home)
    assert {r["env_name"] for r in results} == {"a", "b"}
    assert all(r["status"] == "ok" and r["engine"] == "data.table" for r in results), results
    assert all(r["versions"]["data.table"] == version for r in results)
    assert "skipped csv-read" in proc.stderr and "reader=pyarrow" in proc.stderr


def test_r_environment_with_another_version_says_debian_has_one(home):
    require_tools("Rscript")
    version = _installed_data_table()
    proc = colbench("run", "csv-read", "--param", "reader=data.table", "--env", "a=r:data.table==0.0.1", home=home)
    assert proc.returncode == 2
    line = proc.stderr.strip()
    assert len(line.splitlines()) == 1, line
    assert f"data.table {version}" in line and "Debian ships one version" in line and "CRAN" in line
