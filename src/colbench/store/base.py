"""What every results store offers, and how a store URL picks its backend."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any, Protocol

from colbench.store.queries import ResultQuery, ResultSummary, RunRef
from colbench.store.spool import SyncReport

__all__ = ["ResultQuery", "ResultSummary", "RunRef", "Store", "StoreError", "StoreLocked", "check_store_url",
           "is_postgres_url", "open_store", "resolve_run_id"]

#: Version of the store's layout (tables, columns, indexes), kept in `colbench_meta.schema_version`. Independent of
#: the record's schema version (model/result.py): 2 added the summary columns history and compare read.
STORE_SCHEMA_VERSION = 2


class StoreError(RuntimeError):
    """The store cannot be used as asked: unreadable, newer schema, unknown run …"""


class StoreLocked(StoreError):
    """Another process holds the store (a DuckDB file lock) beyond the wait we allow."""

    def __init__(self, message: str, holder: str) -> None:
        super().__init__(message)
        self.holder = holder


class Store(Protocol):
    url: str

    def create_run(self, run: dict[str, Any]) -> None: ...
    def update_run(self, run: dict[str, Any]) -> None: ...
    def get_run(self, run_id: str) -> dict[str, Any]: ...
    def list_runs(self, limit: int | None = None) -> list[dict[str, Any]]: ...
    def find_runs(self, ref: str | None) -> list[RunRef]: ...
    def add_result(self, result: dict[str, Any]) -> bool: ...
    def add_results(self, results: Iterable[dict[str, Any]]) -> int: ...
    def results(self, query: ResultQuery | None = None) -> list[dict[str, Any]]: ...
    def summaries(self, query: ResultQuery | None = None) -> list[ResultSummary]: ...
    def machines(self, benchmark: str | None = None) -> dict[str, str | None]: ...
    def completed(self, run_id: str) -> set[tuple[str, str, int]]: ...
    def finish_writes(self) -> SyncReport: ...
    def close(self) -> None: ...


def is_postgres_url(url: str) -> bool:
    return url.startswith(("postgresql://", "postgres://"))


# A URL scheme, or a DuckDB prefix such as `md:` or `sqlite:` that would make DuckDB load (and download) an
# extension: anything of the form `word:` at the start is not a plain file path.
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


def check_store_url(url: str) -> None:
    """Refuse what is neither a PostgreSQL URL nor a plain DuckDB file path, before any driver sees it."""
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
    opened read-only (never created, migrated or changed, except to write results a run left in its spool).
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


def resolve_run_id(store: Store, ref: str) -> str:
    """A run id, a unique prefix of one, a run name, or `latest`."""
    if ref == "latest":
        newest = store.find_runs(None)
        if not newest:
            raise StoreError(f"no runs in {store.url}: `colbench run` first")
        return newest[0].run_id
    runs = store.find_runs(ref)  # newest first
    if any(r.run_id == ref for r in runs):
        return ref
    prefixed = [r for r in runs if r.run_id.startswith(ref)]
    named = [r for r in runs if r.name == ref]
    if len(prefixed) == 1:
        return prefixed[0].run_id
    if len(prefixed) > 1:
        raise StoreError(f"run {ref!r} is ambiguous ({len(prefixed)} runs start with it): give more characters")
    if named:
        return named[0].run_id  # the newest run of that name
    if not store.find_runs(None):
        raise StoreError(f"no runs in {store.url}: `colbench run` first")
    raise StoreError(f"no run {ref!r} in {store.url}: `colbench show` lists runs, or use `latest`")
