"""Results stores: a DuckDB file by default, PostgreSQL for teams; export, spool and Conbench publishing."""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

from colbench.paths import UnsafePath, check_output_file, expand_user
from colbench.store.base import Store, StoreError


def is_postgres_url(url: str) -> bool:
    return url.startswith(("postgresql://", "postgres://"))


# A URL scheme, or a DuckDB prefix such as `md:` or `sqlite:` that would make DuckDB load (and download) an
# extension: anything of the form `word:` at the start is not a plain file path.
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


# `key=value` words: a libpq keyword DSN (host=… user=… password=…), which must never become a file name
_KEYWORD_DSN = re.compile(r"(^|\s)[A-Za-z_]+\s*=")
DUCKDB_SUFFIX = ".duckdb"
_DUCKDB_MAGIC = b"DUCK"  # bytes 8-11 of every DuckDB database file
_WHAT_A_STORE_IS = ("colbench stores results in a DuckDB file whose name ends in .duckdb (e.g. "
                    "~/.colbench/results.duckdb) or in PostgreSQL (postgresql://USER@HOST/DB, the password in "
                    "PGPASSWORD or ~/.pgpass)")


def is_duckdb_file(path: Path) -> bool:
    """Whether `path` is a regular file with DuckDB's magic bytes; opened without blocking (a FIFO would wait for a
    writer) and only read when it is a regular file."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except (OSError, ValueError):  # ValueError: a NUL in the path
        return False
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return False
        return handle.read(12)[8:12] == _DUCKDB_MAGIC


def _store_path(url: str) -> Path:
    """The file a DuckDB store's --store names, if it is one: a new name, or an existing regular file (a directory,
    a FIFO, a socket or a device is refused before anything opens it: a FIFO would block)."""
    try:
        path = expand_user(url, "--store")
        if path.is_dir():
            raise StoreError(f"--store {path} is a directory: give a file, e.g. {path / 'results.duckdb'}")
        if os.path.lexists(path):
            check_output_file(path, "--store")
    except UnsafePath as exc:
        raise StoreError(str(exc)) from None
    return path


def check_store_url(url: str) -> None:
    """Refuse what is neither a PostgreSQL URL nor a DuckDB file (a path ending in .duckdb, or an existing DuckDB
    file), before any driver sees it, and without echoing it: it may hold a password (a keyword DSN, a URL)."""
    if is_postgres_url(url):
        return
    if not url.strip():
        raise StoreError(f"--store is empty: {_WHAT_A_STORE_IS}")
    if any(ord(c) < 32 or 0x7F <= ord(c) <= 0x9F for c in url):
        raise StoreError(f"--store holds control characters: {_WHAT_A_STORE_IS}")
    match = _SCHEME.match(url)
    if match or url.startswith(":"):
        kind = match.group(0) if match else url.split(":", 2)[1].join("::")
        raise StoreError(f"--store {kind}…: {_WHAT_A_STORE_IS}; write ./NAME.duckdb for a file whose name has a colon")
    if _KEYWORD_DSN.search(url):
        raise StoreError("--store looks like a PostgreSQL keyword connection string (key=value …), which would "
                         f"become a file name, password included: write it as a postgresql:// URL; {_WHAT_A_STORE_IS}")
    path = _store_path(url)
    if not path.name.endswith(DUCKDB_SUFFIX) and not is_duckdb_file(path):
        shown = path.name if len(path.name) <= 60 else path.name[:57] + "…"
        raise StoreError(f"--store {shown!r} is not a DuckDB file, and its name does not end in .duckdb: "
                         f"{_WHAT_A_STORE_IS}")


def open_store(url: str, *, create: bool = True, read_only: bool = False, salvage: bool = False,
               wait_s: float | None = None) -> Store:
    """A DuckDB file path (the default) or a postgresql:// URL.

    `create`: make the store when it does not exist. `read_only`: for commands that only read: a DuckDB file is
    opened read-only (never created, upgraded or changed, except to write results a run left in its spool).
    `salvage`: open a damaged DuckDB file anyway, to report what is readable (`colbench store info`).
    `wait_s`: how long a read-only opening waits for a DuckDB file another process holds before StoreLocked
    (None: COLBENCH_STORE_WAIT_S), for a read the caller can do without (a run's estimate)."""
    check_store_url(url)
    if is_postgres_url(url):
        try:
            from colbench.store.postgres_store import PostgresStore
        except ImportError as exc:
            from colbench.install import add_extra

            raise StoreError(f"PostgreSQL store needs psycopg: `{add_extra('postgres')}` ({exc})") from exc
        return PostgresStore(url, create=create and not read_only, read_only=read_only)
    from colbench.store.duckdb_store import DuckDBStore

    return DuckDBStore(url, create=create and not read_only, read_only=read_only, salvage=salvage, wait_s=wait_s)
