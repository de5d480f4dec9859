"""Results stores: a DuckDB file by default, PostgreSQL for teams; export, spool and Conbench publishing."""

from __future__ import annotations

import re

from colbench.store.base import Store, StoreError


def is_postgres_url(url: str) -> bool:
    return url.startswith(("postgresql://", "postgres://"))


# A URL scheme, or a DuckDB prefix such as `md:` or `sqlite:` that would make DuckDB load (and download) an
# extension: anything of the form `word:` at the start is not a plain file path.
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


def check_store_url(url: str) -> None:
    """Refuse what is neither a PostgreSQL URL nor a plain DuckDB file path, before any driver sees it (and
    without echoing the rest of it: it may hold a password)."""
    if is_postgres_url(url):
        return
    if not url.strip():
        raise StoreError("--store is empty: give a DuckDB file path or a postgresql://USER@HOST/DB URL")
    match = _SCHEME.match(url)
    if match or url.startswith(":"):
        kind = match.group(0) if match else url.split(":", 2)[1].join("::")
        raise StoreError(f"--store {kind}…: colbench stores results in a DuckDB file (a path, e.g. "
                         "~/.colbench/results.duckdb; write ./NAME for a file whose name has a colon) or in "
                         "PostgreSQL (postgresql://USER@HOST/DB)")


def open_store(url: str, *, create: bool = True, read_only: bool = False, salvage: bool = False) -> Store:
    """A DuckDB file path (the default) or a postgresql:// URL.

    `create`: make the store when it does not exist. `read_only`: for commands that only read: a DuckDB file is
    opened read-only (never created, upgraded or changed, except to write results a run left in its spool).
    `salvage`: open a damaged DuckDB file anyway, to report what is readable (`colbench store info`)."""
    check_store_url(url)
    if is_postgres_url(url):
        try:
            from colbench.store.postgres_store import PostgresStore
        except ImportError as exc:
            raise StoreError(f"PostgreSQL store needs psycopg: `uv sync --extra postgres` ({exc})") from exc
        return PostgresStore(url, create=create and not read_only)
    from colbench.store.duckdb_store import DuckDBStore

    return DuckDBStore(url, create=create and not read_only, read_only=read_only, salvage=salvage)
