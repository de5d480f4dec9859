"""A store that is damaged, locked, read-only, misnamed or out of reach: every command says so in one line (exit 2),
reading never changes the store, and a run whose store another process holds loses no result.

Real parts only: the `colbench` CLI in subprocesses, real DuckDB files damaged the way disks and copies damage them,
and a real second process holding the DuckDB lock.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path

import duckdb
import pytest

from colbench.app.stores import store_at
from colbench.model.records import Result
from colbench.model.summary import summary_of
from colbench.store import open_store
from colbench.store.base import STORE_SCHEMA_VERSION, ResultQuery, StoreError, StoreLocked
from tests.conftest import colbench
from tests.store.helpers import store_cli, synthetic_result, synthetic_result_doc, synthetic_run

pytestmark = pytest.mark.slow  # real processes: the full run, not the fast tier

RUN = ("run", "placebo", "--param", "duration=0", "--processes", "2", "--iterations", "1", "--warmup", "0")


def _one_line(proc: subprocess.CompletedProcess[str]) -> str:
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2, (proc.returncode, proc.stdout[-2000:], proc.stderr)
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    return lines[0]


def _in_parallel(commands: list[tuple[str, ...]], store: Path, home: Path) -> list[subprocess.CompletedProcess[str]]:
    """Each command against `store`, in its own `colbench` process, as many at a time as there are CPUs."""
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        return list(pool.map(lambda command: colbench(*command, "--store", str(store), home=home, timeout=300),
                             commands))


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _reading_commands(out: Path) -> list[tuple[str, ...]]:
    return [("show", "latest"), ("show", "--runs"), ("export", "--output", str(out / "x.parquet")),
            ("report", "latest", "--output", str(out / "report")), ("history", "placebo"),
            ("compare", "first", "second"), ("store", "info"), ("serve", "--port", str(_free_port()))]


@pytest.fixture(scope="module")
def good_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store with two finished runs of placebo, named first and second."""
    home = tmp_path_factory.mktemp("home")
    for name in ("first", "second"):
        colbench(*RUN, "--run-name", name, home=home, check=True)
    return home / "results.duckdb"


def _copy(store: Path, where: Path) -> Path:
    where.mkdir(parents=True, exist_ok=True)
    return Path(shutil.copy(store, where / "results.duckdb"))


def _damage(kind: str, store: Path, where: Path) -> Path:
    where.mkdir(parents=True, exist_ok=True)
    if kind == "truncated":  # the last 40% cut away: a copy that stopped, a disk that filled
        path = _copy(store, where)
        os.truncate(path, int(path.stat().st_size * 0.6))
    elif kind == "garbage":
        path = where / "garbage.duckdb"
        path.write_bytes(os.urandom(64 * 1024))
    elif kind == "empty":
        path = where / "empty.duckdb"
        path.touch()
    elif kind == "under-a-file":
        (where / "afile").write_text("a regular file, not a directory\n")
        path = where / "afile" / "x.duckdb"
    else:
        raise AssertionError(kind)
    return path


@pytest.mark.parametrize("kind", ["truncated", "garbage", "empty", "under-a-file"])
def test_every_command_on_a_damaged_store_says_what_to_do_in_one_line(kind, good_store, tmp_path):
    path = _damage(kind, good_store, tmp_path / "stores")
    before = path.read_bytes() if path.exists() else None
    listing = sorted(p.name for p in path.parent.iterdir()) if path.parent.is_dir() else None
    out = tmp_path / "out"
    commands = [*_reading_commands(out), RUN]
    for command, proc in zip(commands, _in_parallel(commands, path, tmp_path / "home"), strict=True):
        line = _one_line(proc)
        assert str(path) in line and ("--store" in line or "colbench run" in line), (command, line)
    assert (path.read_bytes() if path.exists() else None) == before  # nothing tried to repair or overwrite it
    assert (sorted(p.name for p in path.parent.iterdir()) if path.parent.is_dir() else None) == listing
    assert not out.exists()
    if kind == "truncated":
        info = colbench("store", "info", "--format", "json", "--store", str(path), home=tmp_path / "home")
        assert info.returncode == 2 and "cut short" in info.stderr
        found = json.loads(info.stdout)  # what is still readable, and what is not
        assert "file" in found["damaged"] and found["runs"] in (2, None)


def test_a_query_that_reaches_a_corrupt_block_is_a_store_error(good_store, tmp_path):
    """The catalog opens fine; only reading the results' documents fails (a checksum error inside a query)."""
    path = _copy(good_store, tmp_path)
    with duckdb.connect(str(path), read_only=True) as con:
        block_size = con.execute("PRAGMA database_size").fetchone()[2]
        block, offset = con.execute("SELECT block_id, block_offset FROM pragma_storage_info('results') "
                                    "WHERE column_name = 'doc' AND block_id >= 0 LIMIT 1").fetchone()
    with open(path, "r+b") as handle:
        handle.seek(3 * 4096 + block * block_size + offset + 16)
        handle.write(b"\xff" * 256)
    store = open_store(str(path), create=False, read_only=True)
    assert len(store.find_runs(None)) == 1  # the runs table is intact
    with pytest.raises(StoreError, match="is damaged .*DuckDB: .*restore it from a copy"):
        store.results()
    line = _one_line(colbench("export", "--output", str(tmp_path / "x.jsonl"), "--format", "jsonl",
                              "--store", str(path), home=tmp_path / "home"))
    assert "is damaged" in line and "colbench store info" in line
    line = _one_line(colbench("store", "info", "--check", "--store", str(path), home=tmp_path / "home"))
    assert "is damaged" in line


def test_a_home_that_cannot_be_written(tmp_path):
    blocker = tmp_path / "afile"
    blocker.write_text("not a directory\n")
    home = blocker / "home"
    line = _one_line(colbench(*RUN, home=home))
    assert "cannot create the store" in line and f"{blocker} is a file, not a directory" in line
    line = _one_line(colbench("show", home=home))
    assert "no results store at" in line and "is a file, not a directory" in line
    assert blocker.read_text() == "not a directory\n"


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into a directory whatever its mode")
def test_a_home_without_write_permission(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    home.chmod(0o555)
    try:
        line = _one_line(colbench(*RUN, home=home))
        assert "cannot write the store" in line
    finally:
        home.chmod(0o755)


def _snapshot(path: Path) -> tuple[bytes, int, list[str]]:
    return path.read_bytes(), path.stat().st_mtime_ns, sorted(p.name for p in path.parent.iterdir())


def test_reading_commands_leave_the_store_untouched(good_store, tmp_path):
    path = _copy(good_store, tmp_path / "store")
    before = _snapshot(path)
    out = tmp_path / "out"
    commands = _reading_commands(out)[:-1] + [("store", "info", "--check"),
                                              ("export", "--format", "jsonl", "--output", str(out / "r.jsonl"))]
    for command, proc in zip(commands, _in_parallel(commands, path, tmp_path / "home"), strict=True):
        assert proc.returncode in (0, 3) and "Traceback" not in proc.stderr, (command, proc.stderr)
    assert _snapshot(path) == before  # same bytes, same mtime, no .wal or spool beside it
    assert len((out / "r.jsonl").read_text().splitlines()) == 4


def _immutable(path: Path, on: bool) -> bool:
    done = subprocess.run(["chattr", "+i" if on else "-i", str(path)], capture_output=True)
    return done.returncode == 0


def test_an_immutable_store_is_read_but_a_run_is_refused(good_store, tmp_path):
    """`chattr +i`: a file even root cannot write (the real test of read-only opening when tests run as root)."""
    path = _copy(good_store, tmp_path / "store")
    if shutil.which("chattr") is None or not _immutable(path, True):
        pytest.skip("chattr +i is not available here (needs CAP_LINUX_IMMUTABLE and ext4/xfs/btrfs)")
    try:
        before = _snapshot(path)
        for command in (("show", "latest"), ("history", "placebo"), ("compare", "first", "second")):
            proc = colbench(*command, "--store", str(path), home=tmp_path / "home")
            assert proc.returncode == 0, (command, proc.stderr)
        line = _one_line(colbench(*RUN, "--store", str(path), home=tmp_path / "home"))
        assert "cannot write the store" in line and "permissions" in line
        assert _snapshot(path) == before
    finally:
        _immutable(path, False)


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into a file whatever its mode")
def test_a_read_only_file_is_read_but_a_run_is_refused(good_store, tmp_path):
    path = _copy(good_store, tmp_path / "store")
    path.chmod(0o444)
    proc = colbench("show", "latest", "--store", str(path), home=tmp_path / "home")
    assert proc.returncode == 0, proc.stderr
    assert "cannot write the store" in _one_line(colbench(*RUN, "--store", str(path), home=tmp_path / "home"))


@pytest.mark.parametrize("url", ["mysql://bench:s3cret@db.example.org/results", "sqlite:results.db",
                                 "md:results", ":memory:", "https://example.org/results.duckdb"])
def test_a_store_url_colbench_does_not_speak_is_refused_up_front(url, tmp_path):
    cwd, home = tmp_path / "cwd", tmp_path / "home"
    cwd.mkdir()
    env = {"HOME": str(tmp_path / "user")}  # DuckDB would download extensions to ~/.duckdb
    for command in (("show", "--store", url), (*RUN, "--store", url), ("store", "info", "--store", url)):
        proc = subprocess.run([sys.executable, "-m", "colbench", *command], capture_output=True, text=True,
                              cwd=cwd, env={**os.environ, "COLBENCH_HOME": str(home), **env}, timeout=120)
        line = _one_line(proc)
        assert "postgresql://" in line and "DuckDB file" in line and "s3cret" not in line
    proc = subprocess.run([sys.executable, "-m", "colbench", "show"], capture_output=True, text=True, cwd=cwd,
                          env={**os.environ, "COLBENCH_HOME": str(home), "COLBENCH_STORE": url, **env}, timeout=120)
    assert "postgresql://" in _one_line(proc)
    assert list(cwd.iterdir()) == [] and not (tmp_path / "user" / ".duckdb").exists() and not home.exists()


# -- a lock held by another process --------------------------------------------------------------------------------

HOLDER = "import duckdb, sys; con = duckdb.connect(sys.argv[1]); print('holding', flush=True); sys.stdin.readline()"


@pytest.fixture
def holder():
    """Start a process that opens a DuckDB file read-write (taking its lock) and keeps it until told."""
    started: list[subprocess.Popen[str]] = []

    def hold(path: Path) -> subprocess.Popen[str]:
        proc = subprocess.Popen([sys.executable, "-c", HOLDER, str(path)], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, text=True)
        started.append(proc)
        assert proc.stdout.readline().strip() == "holding"
        return proc

    yield hold
    for proc in started:
        if proc.poll() is None:
            proc.communicate("\n", timeout=30)


def _release(proc: subprocess.Popen[str]) -> None:
    proc.communicate("\n", timeout=30)


def _stored(path: Path, run_name: str) -> list[tuple[str, str]]:
    with duckdb.connect(str(path), read_only=True) as con:
        return con.execute("SELECT r.result_id, r.run_id FROM results r JOIN runs USING (run_id) WHERE runs.name = ? "
                           "ORDER BY r.result_id", [run_name]).fetchall()


def _spool_of(path: Path, home: Path) -> Path:
    """A DuckDB store's spool: in the home, whatever directory the store file is in (colbench deletes only there)."""
    from colbench.store.spool import store_key

    return home / "spool" / store_key("duckdb:" + str(path.resolve()))


def test_a_store_locked_through_the_whole_run_keeps_every_result_in_the_spool(good_store, tmp_path, holder):
    path = _copy(good_store, tmp_path / "store")
    spool = _spool_of(path, tmp_path / "home")
    locker = holder(path)
    proc = colbench(*RUN, "--run-name", "locked", "--store", str(path), home=tmp_path / "home",
                    env={"COLBENCH_STORE_WAIT_S": "1"})
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    said = proc.stderr.strip().splitlines()
    assert len([line for line in said if "store locked by" in line]) == 1  # said once, not per result
    assert f"store locked by PID {locker.pid}" in said[0] and str(spool) in said[0]
    assert "still locked" in said[-1] and "2 results and 1 run record are kept in the spool" in said[-1]
    assert len(list((spool / "results").glob("*.json"))) == 2
    _release(locker)
    assert _stored(path, "locked") == []  # nothing reached the store while it was held
    # a reading command never writes: it says what waits, and the store file stays as it was
    before = path.read_bytes()
    shown = colbench("show", "--runs", "--store", str(path), home=tmp_path / "home")
    assert shown.returncode == 0, shown.stderr
    assert "3 records wait in the spool" in shown.stderr and "colbench store sync" in shown.stderr
    assert path.read_bytes() == before and _stored(path, "locked") == []
    synced = store_cli("sync", "--store", str(path), home=tmp_path / "home")
    assert synced.returncode == 0, synced.stderr
    stored = _stored(path, "locked")
    assert len(stored) == 2 and len({result_id for result_id, _ in stored}) == 2 and not spool.exists()
    assert open_store(str(path), create=False, read_only=True).get_run(stored[0][1]).status == "finished"
    again = store_cli("sync", "--store", str(path), home=tmp_path / "home")
    assert again.returncode == 0 and "is empty" in again.stdout and _stored(path, "locked") == stored


def test_a_lock_released_during_the_run_loses_nothing_and_writes_nothing_twice(good_store, tmp_path, holder):
    """The run measures while the store is held (its start-line estimate does not wait for the store either: with a
    wait window past the test's timeout, a run that waited for it before measuring would fail here)."""
    path = _copy(good_store, tmp_path / "store")
    locker = holder(path)
    command = [*RUN[:4], "--processes", "4", *RUN[6:], "--run-name", "freed"]
    run = subprocess.Popen([sys.executable, "-m", "colbench", *command,
                            "--store", str(path)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                           env={**os.environ, "COLBENCH_HOME": str(tmp_path / "home"), "COLBENCH_STORE_WAIT_S": "900"})
    first = run.stderr.readline()
    assert f"store locked by PID {locker.pid}" in first, first
    _release(locker)  # the run goes on meanwhile; its next write finds the store free
    rest = run.stderr.read()
    assert run.wait(timeout=300) == 0, rest
    assert "is free again" in rest and "Traceback" not in rest
    stored = _stored(path, "freed")
    assert len(stored) == 4 and not _spool_of(path, tmp_path / "home").exists()


@pytest.mark.timeout(60)
def test_a_reader_that_can_do_without_the_store_does_not_wait_for_its_lock(good_store, tmp_path, holder, monkeypatch):
    """`wait_s=0` (a run's estimate): StoreLocked at once, naming the holder, whatever COLBENCH_STORE_WAIT_S says."""
    path = _copy(good_store, tmp_path / "store")
    locker = holder(path)
    monkeypatch.setenv("COLBENCH_STORE_WAIT_S", "900")
    with pytest.raises(StoreLocked, match=f"locked by PID {locker.pid}"):
        store_at(str(path), create=False, wait_s=0.0)
    _release(locker)
    assert store_at(str(path), create=False, wait_s=0.0).find_runs("first")  # free: read at once


def test_store_sync_writes_what_an_earlier_process_left_in_the_spool(tmp_path, monkeypatch):
    monkeypatch.setenv("COLBENCH_HOME", str(tmp_path / "home"))  # the spool lives in the home, as for the CLI below
    path = tmp_path / "results.duckdb"
    store = open_store(str(path))
    store.create_run(synthetic_run("r1"))
    store.add_results([synthetic_result("r1", 0)])
    store.spool.put_result(synthetic_result("r1", 1))  # a run killed between its spool write and its store write
    store.spool.put_result(synthetic_result("r1", 0))  # … and one that had reached the store already
    proc = store_cli("sync", "--store", str(path), home=tmp_path / "home")
    assert proc.returncode == 0 and "uploaded 0 run records and 2 results" in proc.stdout, proc.stderr
    assert len(store.results()) == 2 and not store.spool.dir.exists()


# -- the summary columns, and stores from before them ----------------------------------------------------------

V1_RESULTS = """CREATE TABLE results (
    result_id TEXT PRIMARY KEY, run_id TEXT NOT NULL, case_id TEXT NOT NULL, benchmark TEXT NOT NULL,
    env_name TEXT NOT NULL, process_index INTEGER NOT NULL, block INTEGER, status TEXT NOT NULL, machine_id TEXT,
    commit_sha TEXT, created_at TIMESTAMP NOT NULL, wall_median DOUBLE, doc JSON NOT NULL)"""


def _schema_1_store(path: Path, docs: list[dict]) -> None:
    """A store as colbench wrote it before the summary columns (store schema 1)."""
    from colbench.store.duckdb_store import DDL, run_row, to_timestamp

    with duckdb.connect(str(path)) as con:
        con.execute(DDL[0])
        con.execute(DDL[1])
        con.execute(V1_RESULTS)
        con.execute("INSERT INTO colbench_meta VALUES ('schema_version', '1')")
        con.execute("INSERT INTO runs VALUES (?, ?, ?, ?, ?, ?, ?, ?)", run_row(synthetic_run("old")))
        for doc in docs:
            con.execute("INSERT INTO results VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                        [doc["result_id"], doc["run_id"], doc["case_id"], doc["benchmark"], "default",
                         doc["process_index"], doc["block"], "ok", doc["machine_id"], doc["commit"]["sha"],
                         to_timestamp(doc["timestamp"]), doc["summary"]["wall_s"]["median"], json.dumps(doc)])


def test_a_schema_1_store_is_read_as_it_is_and_upgraded_by_a_writer(tmp_path):
    docs = [synthetic_result_doc("old", i, minutes=i) for i in range(6)]  # as the older colbench wrote them
    docs[5]["summary"]["cpu_user_s"] = {"n": 3, "median": 0.5}
    records = [Result.from_json(d) for d in docs]
    path = tmp_path / "old.duckdb"
    _schema_1_store(path, docs)
    before = _snapshot(path)
    reader = open_store(str(path), create=False, read_only=True)
    expected = [summary_of(r) for r in records]
    assert reader.schema_version == 1 and reader.summaries() == expected  # from the records
    assert reader.machines("placebo") == {"m1": "box-m1"}
    assert _snapshot(path) == before
    writer = open_store(str(path), create=False)
    assert writer.schema_version == STORE_SCHEMA_VERSION and writer.summaries() == expected  # from the columns
    assert writer.summaries()[5].medians == {"wall_s": docs[5]["summary"]["wall_s"]["median"], "cpu_user_s": 0.5}
    assert writer.results() == records and writer.add_result(records[0]) is False
    with duckdb.connect(str(path), read_only=True) as con:
        stored = con.execute("SELECT value FROM colbench_meta WHERE key = 'schema_version'").fetchone()
    assert stored == (str(STORE_SCHEMA_VERSION),)


def test_summaries_and_run_lookup_answer_like_the_records(tmp_path):
    store = open_store(str(tmp_path / "s.duckdb"))
    for run_id, machine in (("20260101T000000-aaaaaa", "m1"), ("20260102T000000-bbbbbb", "m2")):
        store.create_run(replace(synthetic_run(run_id, machine_id=machine), name="nightly",
                                 started_at=f"{run_id[:4]}-{run_id[4:6]}-{run_id[6:8]}T00:00:00+00:00"))
        store.add_results([synthetic_result(run_id, i, machine_id=machine) for i in range(3)])
    query = ResultQuery(benchmark="placebo", machine_id="m2", status="ok")
    assert store.summaries(query) == [summary_of(r) for r in store.results(query)]
    assert store.machines("placebo") == {"m1": "box-m1", "m2": "box-m2"} and store.machines("other") == {}
    assert [r.run_id for r in store.find_runs("nightly")] == ["20260102T000000-bbbbbb", "20260101T000000-aaaaaa"]
    assert [r.run_id for r in store.find_runs("2026010")] == ["20260102T000000-bbbbbb", "20260101T000000-aaaaaa"]
    assert store.find_runs("%") == [] and store.find_runs(None)[0].run_id == "20260102T000000-bbbbbb"
