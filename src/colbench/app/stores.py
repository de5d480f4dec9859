"""Which store a use case means: the one named (a DuckDB file or a postgresql:// URL), else $COLBENCH_STORE, else
the default file in $COLBENCH_HOME; and which run of it a reference names."""

from __future__ import annotations

from colbench.paths import default_store_url
from colbench.store import open_store
from colbench.store.base import Store, resolve_run_id


def store_at(url: str | None, create: bool = True) -> Store:
    """The store at `url` (None: the default). `create=False` is for reading only: the store must exist and a DuckDB
    file is opened read-only, so reading never changes it."""
    return open_store(url or default_store_url(), create=create, read_only=not create)


def existing_store(url: str | None) -> Store:
    """The store at `url` (None: the default), open for writing, but never a new one: for what changes a store that
    must be there (`delete --yes`, `store sync`)."""
    return open_store(url or default_store_url(), create=False)


def run_id_of(store: Store, ref: str) -> str:
    """The run a reference names: an id, a unique prefix, a run name or `latest`."""
    return resolve_run_id(store, ref)
