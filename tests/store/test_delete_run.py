"""`Store.delete_run` on a real DuckDB file (the PostgreSQL store runs the same contract in test_postgres_store)."""

from __future__ import annotations

import socket
from dataclasses import replace

import pytest

from colbench.store import open_store
from colbench.store.base import StoreError
from tests.store.helpers import synthetic_result, synthetic_run
from tests.store_contract import check_delete_run


def test_delete_run_contract(tmp_path):
    store = open_store(str(tmp_path / "results.duckdb"))
    check_delete_run(store)
    reopened = open_store(str(tmp_path / "results.duckdb"), create=False)  # an open writes what waits: nothing
    assert [r.run_id for r in reopened.list_runs()] == ["20260102T000000-bbbbbb"]
    assert len(reopened.results()) == 3


def test_an_old_spool_folder_with_records_of_the_run_is_refused(tmp_path):
    """An older colbench spooled beside the store file; colbench deletes nothing there, and the next sync would
    write its results back: the delete is refused, saying what to do, and nothing is removed."""
    path = tmp_path / "results.duckdb"
    store = open_store(str(path))
    run_id = "20260101T000000-aaaaaa"
    store.create_run(synthetic_run(run_id))
    store.add_results([synthetic_result(run_id, 0)])
    legacy = tmp_path / "results.duckdb.spool" / "results"
    legacy.mkdir(parents=True)
    (legacy / "x.json").write_text(__import__("json").dumps(synthetic_result(run_id, 1).to_json()))
    with pytest.raises(StoreError, match="old spool folder results.duckdb.spool"):
        store.delete_run(run_id)
    assert store.get_run(run_id) and len(store.results()) == 1
    assert (legacy / "x.json").exists()


def test_a_run_of_another_host_is_refused_without_force(tmp_path):
    store = open_store(str(tmp_path / "results.duckdb"))
    run = replace(synthetic_run("20260101T000000-aaaaaa", status="running"),
                  process={"host": socket.gethostname() + "-elsewhere", "pid": 1, "started": 0.0})
    store.create_run(run)
    with pytest.raises(StoreError, match="on host .*-elsewhere"):
        store.delete_run(run.run_id)
    assert store.delete_run(run.run_id, force=True) == 0


def test_a_run_id_that_is_not_a_plain_name_is_deleted_without_touching_any_folder(tmp_path):
    """A store written by hand (or another tool) may hold any run id: it never had a profiles folder."""
    from colbench.app.delete import delete_runs, plan_deletion

    store = open_store(str(tmp_path / "results.duckdb"))
    odd = "../../" + "x" * 80
    store.create_run(synthetic_run(odd))
    store.add_results([synthetic_result(odd, 0)])
    (plan,) = delete_runs(store, plan_deletion(store, [odd]))
    assert plan.deleted and plan.results_removed == 1 and plan.kept.folders == () and store.list_runs() == []
