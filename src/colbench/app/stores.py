"""Which store a use case means: the one named (a DuckDB file or a postgresql:// URL), else $COLBENCH_STORE, else
the default file in $COLBENCH_HOME."""

from __future__ import annotations

from colbench.paths import default_store_url
from colbench.store import open_store
from colbench.store.base import Store


def store_at(url: str | None, create: bool = True) -> Store:
    """The store at `url` (None: the default). `create=False` is for reading only: the store must exist and a DuckDB
    file is opened read-only, so reading never changes it."""
    return open_store(url or default_store_url(), create=create, read_only=not create)
