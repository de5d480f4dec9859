"""Keeping stores: copy runs from one store into another (DuckDB ↔ PostgreSQL), write what waits in a store's local
spool, and describe a store (`colbench store copy|sync|info`).

A store-specific feature (the local spool, the description) is reached through a narrower protocol than `Store` and
an isinstance check: a store that lacks it gets a one-line answer, not an AttributeError."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from colbench.app.errors import UsageError
from colbench.app.stores import existing_store, run_id_of
from colbench.paths import UnsafePath, check_output_file, default_store_url, expand_user
from colbench.store import is_postgres_url, open_store
from colbench.store.base import Store
from colbench.store.spool import Spool, SyncReport


@runtime_checkable
class SpooledStore(Store, Protocol):
    """A store that keeps the writes it could not make in a local spool, to write them later: DuckDB (while another
    process holds the file) and PostgreSQL (while the server is away) both are."""

    spool: Spool
    #: what opening the store wrote of its spool
    synced_on_open: SyncReport

    def sync_spool(self) -> SyncReport: ...


@runtime_checkable
class DescribedStore(Store, Protocol):
    """A store that can describe itself: backend, schema version, counts, machines (DuckDB and PostgreSQL)."""

    def info(self, check: bool = False) -> dict[str, Any]: ...


@dataclass(frozen=True)
class Copied:
    runs: int
    results: int
    source_url: str
    target_url: str


def copy_runs(source_url: str, target_url: str, run_refs: Sequence[str] = ()) -> Copied:
    """Copy the runs named (none: every run) with their results from one store into another (created when
    missing); copying again adds only what is new."""
    from colbench.store.copy import copy_store

    if not is_postgres_url(target_url):  # a FIFO, a socket or a device: refused before the source is opened
        try:
            check_output_file(expand_user(target_url, "destination"), "the destination", makes_folders=True)
        except UnsafePath as exc:
            raise UsageError(str(exc)) from None
    source = open_store(source_url, create=False)
    target = open_store(target_url, create=True)
    try:
        ids = tuple(run_id_of(source, r) for r in run_refs) if run_refs else None
        runs, results = copy_store(source, target, run_ids=ids)
    finally:
        source.close()
        target.close()
    return Copied(runs, results, source.url, target.url)


@dataclass(frozen=True)
class Synced:
    url: str
    spool_dir: Path
    runs: int
    results: int
    #: records another colbench process is uploading meanwhile
    left: int


def sync_spool(url: str | None) -> Synced:
    """Write what waits in the store's spool (it must exist: it is written to)."""
    db = existing_store(url)
    try:
        if not isinstance(db, SpooledStore):
            raise UsageError(f"the store {db.url} keeps no local spool: there is nothing to sync")
        first = db.synced_on_open
        later = db.sync_spool()
        return Synced(db.url, db.spool.dir, first.runs + later.runs, first.results + later.results,
                      sum(db.spool.pending()))
    finally:
        db.close()


def store_info(db: DescribedStore, check: bool = False) -> dict[str, Any]:
    """Backend, schema version, counts and machines of a store (`damaged`: the parts that could not be read)."""
    from colbench.store.base import STORE_SCHEMA_VERSION

    found = db.info(check=check)
    found.setdefault("damaged", {})
    found["current_schema_version"] = STORE_SCHEMA_VERSION
    return found


def describe_store(url: str | None, check: bool = False) -> dict[str, Any]:
    """`store_info` of the store at `url` (None: the default), opened read-only and as much of it as is readable
    (`check`: every table read in full, to find damage the counts miss)."""
    db = open_store(url or default_store_url(), create=False, read_only=True, salvage=True)
    try:
        if not isinstance(db, DescribedStore):
            raise UsageError(f"the store {db.url} cannot describe itself: `store info` reads DuckDB and PostgreSQL "
                             "stores")
        return store_info(db, check=check)
    finally:
        db.close()


def check_damage(found: dict[str, Any]) -> None:
    """Raise the store's error when a part of it could not be read (after its description was shown)."""
    from colbench.store.base import StoreError
    from colbench.words import plural

    damaged = found["damaged"]
    if damaged:
        part, message = next(iter(damaged.items()))
        raise StoreError(f"{message} ({plural(len(damaged), 'part')} unreadable, first: {part})")
