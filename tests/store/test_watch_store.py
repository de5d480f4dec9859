"""What `colbench watch` keeps in a store: watched releases, alerts and the claim on a watch, the same in DuckDB and
PostgreSQL; a store of schema 2 reads as one that has watched nothing and is upgraded by the first write."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import replace

import duckdb
import pytest

from colbench.model.watch import CaseExplained, CaseVerdict, FunctionGrowth, WatchAlert, WatchedRelease, WatchHolder
from colbench.store import open_store
from colbench.store.base import STORE_SCHEMA_VERSION, Store, WatchQuery
from colbench.store.run_owner import holder_stamp


def release(version: str, verdict: str = "no change", watch: str = "w1", machine: str = "m1") -> WatchedRelease:
    explained = CaseExplained(functions=(FunctionGrowth("adler32_z", "libz.so", 0.0, 116968.0, 0.97),),
                              flamegraph="/x/flamegraph.svg", total_before=2.0e6, total_after=2.1e6)
    case = CaseVerdict("c1", "probe rounds=8", "instructions", verdict, 1.06, 1.05, 1.07, 2.0e6, 2.1e6,
                       explained=explained if verdict == "regression" else None)
    return WatchedRelease(watch_id=watch, package="watchprobe", version=version, machine_id=machine,
                          verdict=verdict, watched_at=f"2026-11-2{version[2]}T10:00:00+00:00", machine_name="vm",
                          targets=("watchprobe-crc",), baseline="1.0.0", run_id="r" + version, cases=(case,),
                          between=("1.5.0",) if verdict == "regression" else (), notes=("n",))


def check_watch_state(store: Store) -> None:
    assert store.watched() == [] and store.watch_alerts() == []
    records = [release("1.1.0"), release("1.2.0", "regression"), release("1.3.0", "error", watch="w2")]
    for record in records:
        store.record_watch(record)
    assert store.watched(WatchQuery(watch_id="w1")) == records[:2]  # the records come back identical
    assert store.watched(WatchQuery(package="watchprobe", machine_id="m1")) == records
    assert store.watched(WatchQuery(machine_id="m2")) == []
    again = replace(records[0], verdict="improvement")
    store.record_watch(again)  # one row per (watch, version)
    assert store.watched(WatchQuery(watch_id="w1"))[0] == again and len(store.watched()) == 3

    alert = WatchAlert("a1", ("w1",), "2026-11-26T10:00:00+00:00", "## md", {"text": "t", "colbench": {"k": 1}})
    store.save_alert(alert)
    assert store.watch_alerts(("w1",)) == [alert] and store.watch_alerts(("w2",)) == []
    sent = replace(alert, sent_at="2026-11-26T10:01:00+00:00", attempts=1)
    store.save_alert(sent)
    assert store.watch_alerts() == [] and store.watch_alerts(pending=False) == [sent]

    me = holder_stamp()
    other_host = WatchHolder(host="another-host", pid=1, started=1.0)
    assert store.claim_watch("w1", me, 60) is None
    assert store.claim_watch("w1", me, 60) is None  # mine: extended
    assert store.claim_watch("w1", other_host, 60) == me  # a live holder keeps it
    store.release_watch("w1", me)
    assert store.claim_watch("w1", other_host, 30) is None  # (a lease of seconds: a loaded machine outlasts less)
    assert store.claim_watch("w1", me, 60) == other_host  # another host's holder, within its lease
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead = WatchHolder(host=me["host"], pid=int(gone.stdout), started=1.0)
    assert store.claim_watch("w2", dead, 3600) is None
    assert store.claim_watch("w2", me, 60) is None  # its holder on this host is gone (killed): taken over


def test_duckdb_keeps_watch_state(tmp_path) -> None:
    check_watch_state(open_store(str(tmp_path / "results.duckdb")))


def test_a_schema_2_store_reads_as_watching_nothing_and_upgrades_on_write(tmp_path) -> None:
    path = tmp_path / "old.duckdb"
    open_store(str(path)).close()
    with duckdb.connect(str(path)) as con:  # as colbench before watch left it
        for table in ("watched", "watch_alerts", "watch_locks"):
            con.execute(f"DROP TABLE {table}")
        con.execute("UPDATE colbench_meta SET value = '2' WHERE key = 'schema_version'")
    reading = open_store(str(path), create=False, read_only=True)
    assert reading.watched() == [] and reading.watch_alerts() == []
    assert open_store(str(path), create=False, read_only=True).schema_version == 2  # reading changed nothing
    writing = open_store(str(path))
    writing.record_watch(release("1.1.0"))
    assert writing.watched() == [release("1.1.0")]
    assert open_store(str(path), create=False, read_only=True).schema_version == STORE_SCHEMA_VERSION


@pytest.mark.slow
def test_postgres_keeps_watch_state(pg_url) -> None:
    check_watch_state(open_store(pg_url))


@pytest.mark.slow
def test_a_postgres_store_of_schema_2_is_migrated(pg_url) -> None:
    import psycopg

    open_store(pg_url).close()
    with psycopg.connect(pg_url, autocommit=True) as con:
        for table in ("watched", "watch_alerts", "watch_locks"):
            con.execute(f"DROP TABLE {table}")
        con.execute("UPDATE colbench_meta SET value = '2' WHERE key = 'schema_version'")
    store = open_store(pg_url)
    store.record_watch(release("1.1.0"))
    assert store.watched() == [release("1.1.0")]
    assert os.environ.get("COLBENCH_HOME")  # the spool of this store stays in the test's home


def test_copying_a_whole_store_takes_its_watch_state_along(tmp_path) -> None:
    from colbench.store.copy import copy_store

    src, dst = open_store(str(tmp_path / "a.duckdb")), open_store(str(tmp_path / "b.duckdb"))
    src.record_watch(release("1.1.0"))
    src.save_alert(WatchAlert("a1", ("w1",), "2026-11-26T10:00:00+00:00", "md"))
    copy_store(src, dst)
    copy_store(src, dst)  # twice: nothing twice
    assert dst.watched() == [release("1.1.0")] and [a.alert_id for a in dst.watch_alerts()] == ["a1"]
