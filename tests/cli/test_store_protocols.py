"""`store sync` and `store info` reach a store's spool and its description through narrower protocols than
`Store`: a DuckDB store (as PostgreSQL, tests/store) is both."""

from __future__ import annotations

from colbench.app.store_admin import DescribedStore, SpooledStore, store_info
from colbench.store import open_store
from colbench.store.base import STORE_SCHEMA_VERSION


def test_a_duckdb_store_has_a_spool_and_describes_itself(tmp_path, monkeypatch):
    monkeypatch.setenv("COLBENCH_HOME", str(tmp_path / "home"))
    store = open_store(str(tmp_path / "results.duckdb"))
    try:
        assert isinstance(store, SpooledStore) and isinstance(store, DescribedStore)
        assert store.synced_on_open.runs == 0 and sum(store.spool.pending()) == 0
        found = store_info(store)
        assert found["backend"] == "duckdb" and found["current_schema_version"] == STORE_SCHEMA_VERSION
        assert found["runs"] == 0 and found["damaged"] == {}
    finally:
        store.close()
