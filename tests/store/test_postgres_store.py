"""The PostgreSQL store against a real server: the DuckDB store's contract, many writers, a server that goes away,
schema migration, store copy, and the CLI with `--store postgresql://…`."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path

import psycopg
import psycopg.sql
import pytest

from colbench.model.records import Result
from colbench.model.summary import summary_of
from colbench.store import open_store
from colbench.store.base import STORE_SCHEMA_VERSION, ResultQuery, StoreError
from colbench.store.copy import copy_store
from colbench.store.export import export_results
from colbench.store.postgres_store import PostgresStore, redact
from tests.conftest import colbench
from tests.store.helpers import store_cli, synthetic_result, synthetic_result_doc, synthetic_run, synthetic_run_doc
from tests.store_contract import check_delete_run, check_old_run_record, check_record_round_trip, check_round_trip

pytestmark = pytest.mark.slow  # real processes: the full run, not the fast tier


def _count(url: str, sql: str = "SELECT count(*), count(DISTINCT result_id) FROM results") -> tuple:
    with psycopg.connect(url) as con:
        return con.execute(sql).fetchone()


def _stored(url: str) -> int:
    try:
        return _count(url)[0]
    except psycopg.errors.UndefinedTable:
        return 0  # the run has not created the tables yet


@pytest.fixture(scope="module")
def pg_run(pg_server, tmp_path_factory):
    """One real `colbench run` into a PostgreSQL store."""
    home = tmp_path_factory.mktemp("pghome")
    url = pg_server.create_database("round_trip")
    colbench("run", "placebo", "--param", "duration=0.001,0.002", "--processes", "2", "--iterations", "3",
             "--run-name", "round-trip", "--store", url, home=home, check=True)
    return home, url


def test_round_trip_keeps_every_sample_and_validates(pg_run):
    _, url = pg_run
    store = open_store(url, create=False)
    check_round_trip(store)
    assert store.results(ResultQuery(run_ids=())) == []
    with pytest.raises(StoreError, match="no run"):
        store.get_run("nope")
    store.close()


def test_records_come_back_identical(pg_url):
    store = open_store(pg_url)
    check_record_round_trip(store)
    store.close()


def test_a_run_record_in_an_older_shape_reads_typed_and_writes_back_as_it_was(pg_url):
    from colbench.model.records import Run
    from colbench.store.postgres_store import _INSERT_RUN, run_row

    store = open_store(pg_url)

    def write_doc(doc: dict) -> None:
        with psycopg.connect(pg_url, autocommit=True) as con:  # as the older colbench wrote it: the document as it was
            con.execute(_INSERT_RUN, [*run_row(Run.from_json(doc))[:7], json.dumps(doc)])

    check_old_run_record(store, write_doc)
    store.close()


def test_delete_run_contract(pg_url):
    store = open_store(pg_url)
    check_delete_run(store)
    store.close()
    assert _count(pg_url, "SELECT count(*), count(DISTINCT run_id) FROM results") == (3, 1)


def test_cli_delete_over_postgres(pg_url, home):
    """`colbench delete --store postgresql://…`: the dry run keeps the run, --yes removes exactly it."""
    store = open_store(pg_url)
    for run_id in ("20260101T000000-aaaaaa", "20260102T000000-bbbbbb"):
        store.create_run(synthetic_run(run_id))
        store.add_results([synthetic_result(run_id, i) for i in range(2)])
    store.close()
    dry = colbench("delete", "20260101", "--store", pg_url, home=home, check=True)
    assert "would delete run 20260101T000000-aaaaaa" in dry.stdout and "nothing deleted; add --yes" in dry.stdout
    assert _count(pg_url)[0] == 4
    done = colbench("delete", "20260101", "--yes", "--store", pg_url, home=home, check=True)
    assert "deleted run 20260101T000000-aaaaaa" in done.stdout and ": 2 results" in done.stdout
    assert _count(pg_url, "SELECT count(*), min(run_id) FROM results") == (2, "20260102T000000-bbbbbb")
    assert _count(pg_url, "SELECT count(*), min(run_id) FROM runs") == (1, "20260102T000000-bbbbbb")


def test_cli_reads_postgres_exactly_as_duckdb(pg_run, tmp_path):
    """show/export over PostgreSQL give byte-for-byte what they give over a DuckDB copy of the same results."""
    home, url = pg_run
    duck = tmp_path / "copy.duckdb"
    assert copy_store(open_store(url, create=False), open_store(str(duck))) == (1, 4)
    for args in (("show", "latest", "--format", "json"), ("show", "--format", "csv")):
        on_pg = colbench(*args, "--store", url, home=home, check=True).stdout
        assert on_pg == colbench(*args, "--store", str(duck), home=home, check=True).stdout
    for name, where in (("pg.csv", url), ("duck.csv", str(duck))):
        colbench("export", "--format", "csv", "--output", str(tmp_path / name), "--store", where, home=home,
                 check=True)
    assert (tmp_path / "pg.csv").read_text() == (tmp_path / "duck.csv").read_text()
    for name, where in (("pg.jsonl", url), ("duck.jsonl", str(duck))):  # the documents, key order included
        export_results(open_store(where, create=False).results(), "jsonl", tmp_path / name)
    assert (tmp_path / "pg.jsonl").read_text() == (tmp_path / "duck.jsonl").read_text()
    env = {**os.environ, "COLBENCH_HOME": str(home), "COLBENCH_STORE": url}
    shown = subprocess.run([sys.executable, "-m", "colbench", "show", "--format", "json"], env=env,
                           capture_output=True, text=True, timeout=120)
    assert shown.returncode == 0 and len(json.loads(shown.stdout)) == 2  # COLBENCH_STORE works as --store


WRITER = """
import json, random, sys
from colbench.store import open_store
from tests.store.helpers import synthetic_result

url, me = sys.argv[1], int(sys.argv[2])
store = open_store(url)
docs = [synthetic_result("shared-run", i) for i in range(150)]
docs += [synthetic_result(f"own-run-{me}", i) for i in range(50)]
random.Random(me).shuffle(docs)
new = sum(store.add_result(d) for d in docs[:100]) + store.add_results(docs[100:])
print(json.dumps({"new": new}))
"""


def test_concurrent_writers_never_lose_or_duplicate(pg_url):
    """Four processes open a fresh database at once (schema creation races) and write overlapping results."""
    writers = [subprocess.Popen([sys.executable, "-c", WRITER, pg_url, str(me)], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, cwd=Path(__file__).parents[2]) for me in range(4)]
    outputs = [w.communicate(timeout=120) for w in writers]
    assert all(w.returncode == 0 for w in writers), outputs
    new = sum(json.loads(out)["new"] for out, _ in outputs)
    assert _count(pg_url) == (150 + 4 * 50, 150 + 4 * 50)
    assert new == 150 + 4 * 50  # every result reported new by exactly one writer
    version = _count(pg_url, "SELECT value FROM colbench_meta WHERE key = 'schema_version'")
    assert version == (str(STORE_SCHEMA_VERSION),)


def test_concurrent_cli_runs(pg_url, home):
    runs = [subprocess.Popen([sys.executable, "-m", "colbench", "run", "placebo", "--param", "duration=0.001",
                              "--processes", "2", "--iterations", "2", "--warmup", "0", "--store", pg_url],
                             env={**os.environ, "COLBENCH_HOME": str(home)}, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True) for _ in range(4)]
    outputs = [r.communicate(timeout=120) for r in runs]
    assert all(r.returncode == 0 for r in runs), outputs
    assert _count(pg_url) == (8, 8)
    assert _count(pg_url, "SELECT count(*), count(*) FILTER (WHERE status = 'finished') FROM runs") == (4, 4)


def test_server_restart_mid_run_loses_nothing(pg_server, pg_url, home):
    """Stop the server while a run is going, start it again: the results written while it was away are spooled,
    and uploaded when it is back; nothing is lost or doubled."""
    env = {**os.environ, "COLBENCH_HOME": str(home), "COLBENCH_STORE_RETRY_S": "1"}
    run = subprocess.Popen([sys.executable, "-m", "colbench", "run", "placebo", "--param", "duration=0.2",
                            "--processes", "8", "--iterations", "4", "--warmup", "0", "--store", pg_url],
                           env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while _stored(pg_url) < 2:
        assert run.poll() is None and time.monotonic() < deadline, run.communicate()
        time.sleep(0.05)
    pg_server.stop("fast")
    time.sleep(3.0)  # > the retry window: at least one result goes to the spool
    pg_server.start()
    out, err = run.communicate(timeout=120)
    assert run.returncode == 0, out + err
    assert "kept in the local spool" in err and "is back" in err
    assert _count(pg_url) == (8, 8)
    assert _count(pg_url, "SELECT status FROM runs") == ("finished",)
    assert not list((home / "spool").glob("*/results/*"))


def test_spool_waits_for_the_server_and_sync_uploads_it(pg_server, pg_url, home, caplog):
    store = PostgresStore(pg_url, retry_s=0.3)
    store.create_run(synthetic_run("r1", status="running"))
    pg_server.stop("fast")
    try:
        with caplog.at_level(logging.WARNING, logger="colbench.store"):
            assert store.add_result(synthetic_result("r1", 0)) is True  # spooled: the run goes on
            started = time.monotonic()
            assert store.add_results([synthetic_result("r1", 1), synthetic_result("r1", 2)]) == 2
            store.update_run(synthetic_run("r1"))
            assert time.monotonic() - started < 5  # once away, writes spool without waiting a window each
        assert "kept in the local spool" in caplog.text
        assert store.spool.pending() == (1, 3)
        with pytest.raises(StoreError, match="cannot reach"):
            store.results()
        proc = store_cli("sync", "--store", pg_url, home=home, env={"COLBENCH_STORE_RETRY_S": "0.5"})
        assert proc.returncode == 2 and "cannot reach PostgreSQL store" in proc.stderr
        assert "4 records wait in the local spool" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
    finally:
        pg_server.start()
    proc = store_cli("sync", "--store", pg_url, home=home)
    assert proc.returncode == 0 and "uploaded 1 run record and 3 results" in proc.stdout, proc.stderr
    assert _count(pg_url) == (3, 3) and store.get_run("r1").status == "finished"
    assert store.spool.pending() == (0, 0)
    proc = store_cli("sync", "--store", pg_url, home=home)
    assert "spool of" in proc.stdout and "is empty" in proc.stdout
    store.spool.put_result(synthetic_result("r1", 3))  # left behind by an earlier process
    reopened = open_store(pg_url)
    assert reopened.synced_on_open.results == 1 and _count(pg_url) == (4, 4)


V0_DDL = [
    "CREATE TABLE colbench_meta (key TEXT PRIMARY KEY, value TEXT)",
    "CREATE TABLE runs (run_id TEXT PRIMARY KEY, name TEXT, started_at TIMESTAMP, finished_at TIMESTAMP, "
    "status TEXT, machine_id TEXT, doc TEXT)",
    "CREATE TABLE results (result_id TEXT PRIMARY KEY, run_id TEXT NOT NULL, case_id TEXT NOT NULL, "
    "benchmark TEXT NOT NULL, env_name TEXT NOT NULL, process_index INTEGER NOT NULL, block INTEGER, "
    "status TEXT NOT NULL, machine_id TEXT, created_at TIMESTAMP NOT NULL, doc TEXT NOT NULL)",
]


def test_migrates_a_store_from_schema_0(pg_url):
    docs = [synthetic_result_doc("old-run", i) for i in range(3)]  # as the prototype wrote them
    with psycopg.connect(pg_url, autocommit=True) as con:
        # naive UTC timestamps must survive whatever time zone the server's sessions use
        con.execute(f"ALTER DATABASE {psycopg.sql.Identifier(con.info.dbname).as_string(con)} "
                    "SET timezone = 'America/New_York'")
        for statement in V0_DDL:
            con.execute(statement)
        con.execute("INSERT INTO runs VALUES ('old-run', NULL, '2026-01-01 00:00:00', NULL, 'finished', 'm1', %s)",
                    [json.dumps(synthetic_run_doc("old-run"))])
        for doc in docs:
            con.execute("INSERT INTO results VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
                        [doc["result_id"], doc["run_id"], doc["case_id"], doc["benchmark"], "default",
                         doc["process_index"], doc["block"], "ok", "m1", doc["timestamp"][:19].replace("T", " "),
                         json.dumps(doc)])
    store = open_store(pg_url)
    assert store.schema_version() == STORE_SCHEMA_VERSION
    records = [Result.from_json(d) for d in docs]
    assert store.results(ResultQuery(run_ids=("old-run",))) == records
    assert store.summaries(ResultQuery(run_ids=("old-run",))) == [summary_of(r) for r in records]  # backfilled
    assert store.add_result(records[0]) is False and store.add_result(synthetic_result("old-run", 3)) is True
    with psycopg.connect(pg_url) as con:
        rows = con.execute("SELECT wall_median, commit_sha, created_at FROM results ORDER BY process_index").fetchall()
        indexes = {r[0] for r in con.execute("SELECT indexname FROM pg_indexes WHERE tablename = 'results'")}
        types = dict(con.execute("SELECT column_name, data_type FROM information_schema.columns "
                                 "WHERE table_name = 'results'").fetchall())
    assert [r[0] for r in rows[:3]] == [d["summary"]["wall_s"]["median"] for d in docs]
    assert rows[0][1] == docs[0]["commit"]["sha"] and rows[0][2] == datetime.fromisoformat(docs[0]["timestamp"])
    assert {"results_run", "results_history", "results_case"} <= indexes
    assert types["created_at"] == "timestamp with time zone" and types["doc"] == "json"


def test_a_store_from_a_newer_colbench_is_refused(pg_url, cli):
    open_store(pg_url).close()
    with psycopg.connect(pg_url, autocommit=True) as con:
        con.execute("UPDATE colbench_meta SET value = %s WHERE key = 'schema_version'", [str(STORE_SCHEMA_VERSION + 1)])
    with pytest.raises(StoreError, match="newer colbench"):
        open_store(pg_url)
    proc = cli("show", "--store", pg_url)
    assert proc.returncode == 2 and "upgrade colbench" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1


def test_foreign_missing_and_unreachable_stores_are_refused(pg_url, cli):
    proc = cli("show", "--store", pg_url)
    assert proc.returncode == 2 and "no results store at" in proc.stderr
    with psycopg.connect(pg_url, autocommit=True) as con:
        con.execute("CREATE TABLE results (x INT)")
    proc = cli("run", "placebo", "--store", pg_url)
    assert proc.returncode == 2 and "not a colbench store" in proc.stderr
    started = time.monotonic()
    proc = cli("show", "--store", "postgresql://colbench:secret@127.0.0.1:1/nowhere",
               env={"COLBENCH_STORE_RETRY_S": "1"})
    assert proc.returncode == 2 and "cannot reach PostgreSQL store" in proc.stderr and "secret" not in proc.stderr
    assert time.monotonic() - started < 30
    proc = cli("show", "--store", pg_url.replace("colbench@", "nobody@"))
    assert proc.returncode == 2 and 'role "nobody" does not exist' in proc.stderr
    assert redact("postgresql://u:pw@h:5/db") == "postgresql://u:***@h:5/db"


def test_store_copy_round_trip(pg_url, tmp_path, home):
    source = tmp_path / "laptop.duckdb"
    colbench("run", "placebo", "--param", "duration=0.001", "--param", "error=none,exception", "--processes", "2",
             "--iterations", "2", "--store", str(source), home=home, check=True)
    laptop = open_store(str(source), create=False)
    for minutes in (0, 1):  # plus a second machine and more history
        laptop.create_run(synthetic_run(f"synthetic-{minutes}", machine_id="m2"))
        laptop.add_results([synthetic_result(f"synthetic-{minutes}", i, machine_id="m2", minutes=minutes)
                            for i in range(5)])
    proc = store_cli("copy", str(source), pg_url, home=home)
    assert proc.returncode == 0 and "copied 3 runs and 14 results" in proc.stdout, proc.stderr
    proc = store_cli("copy", str(source), pg_url, home=home)
    assert "copied 0 runs and 0 results" in proc.stdout
    back = tmp_path / "back.duckdb"
    assert copy_store(open_store(pg_url, create=False), open_store(str(back))) == (3, 14)
    returned = open_store(str(back), create=False)
    assert returned.results() == laptop.results() and returned.list_runs() == laptop.list_runs()
    for machine in ("m2", laptop.results()[0].machine_id):
        query = ResultQuery(machine_id=machine)
        assert returned.results(query) == laptop.results(query) == open_store(pg_url).results(query)
    info = json.loads(store_cli("info", "--store", pg_url, "--format", "json", home=home).stdout)
    assert info["schema_version"] == STORE_SCHEMA_VERSION and (info["runs"], info["results"]) == (3, 14)
    assert {m["machine_id"]: m["results"] for m in info["machines"]}["m2"] == 10
    info = json.loads(store_cli("info", "--store", str(back), "--format", "json", home=home).stdout)
    assert info["backend"] == "duckdb" and (info["runs"], info["results"]) == (3, 14)
    table = store_cli("info", "--store", pg_url, home=home).stdout
    assert "schema version" in table and "box-m2" in table
