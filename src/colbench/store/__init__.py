"""Results stores: a DuckDB file by default, PostgreSQL for teams; export, spool and Conbench publishing."""

from __future__ import annotations

from colbench.store.base import Store, StoreError


def is_postgres_url(url: str) -> bool:
    return url.startswith(("postgresql://", "postgres://"))


def open_store(url: str, *, create: bool = True) -> Store:
    """A DuckDB file path (the default) or a postgresql:// URL."""
    if is_postgres_url(url):
        try:
            from colbench.store.postgres_store import PostgresStore
        except ImportError as exc:
            raise StoreError(f"PostgreSQL store needs psycopg: `uv sync --extra postgres` ({exc})") from exc
        return PostgresStore(url, create=create)
    from colbench.store.duckdb_store import DuckDBStore

    return DuckDBStore(url, create=create)
