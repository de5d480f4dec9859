"""What every results store offers: the protocol, its errors, and how a run reference becomes a run id."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

from colbench.model.records import Result, Run
from colbench.model.watch import WatchAlert, WatchedRelease, WatchHolder
from colbench.store.queries import ResultQuery, ResultSummary, RunRef, WatchQuery
from colbench.store.spool import SyncReport

__all__ = ["ResultQuery", "RunInUse", "RunRef", "Store", "StoreError", "StoreLocked", "WatchQuery", "check_deletable",
           "resolve_run_id"]

#: Version of the store's layout (tables, columns, indexes), kept in `colbench_meta.schema_version`. Independent of
#: the record's schema version (model/result.py): 2 added the summary columns history and compare read; 3 the
#: tables of `colbench watch` (watched releases, alerts, who runs a pass). A store of an older schema is read as it
#: is (it has watched nothing) and upgraded by the first command that writes to it.
STORE_SCHEMA_VERSION = 3
#: the first schema with the watch tables
WATCH_SCHEMA_VERSION = 3


class StoreError(RuntimeError):
    """The store cannot be used as asked: unreadable, newer schema, unknown run …"""


class StoreLocked(StoreError):
    """Another process holds the store (a DuckDB file lock) beyond the wait we allow."""

    def __init__(self, message: str, holder: str) -> None:
        super().__init__(message)
        self.holder = holder


class RunInUse(StoreError):
    """A run that is going on in a process (or may be: another host's, an older record's) was to be deleted."""


class Store(Protocol):
    """A results store. It takes and gives records (`Run`, `Result`); each implementation turns them into its
    documents and rows, and back, at its own edge."""

    url: str

    def create_run(self, run: Run) -> None: ...
    def update_run(self, run: Run) -> None: ...
    def get_run(self, run_id: str) -> Run: ...
    def list_runs(self, limit: int | None = None) -> list[Run]: ...
    def find_runs(self, ref: str | None) -> list[RunRef]: ...
    def add_result(self, result: Result) -> bool: ...
    def add_results(self, results: Iterable[Result]) -> int: ...
    def results(self, query: ResultQuery | None = None) -> list[Result]: ...
    def summaries(self, query: ResultQuery | None = None) -> list[ResultSummary]: ...
    def machines(self, benchmark: str | None = None) -> dict[str, str | None]: ...
    def completed(self, run_id: str) -> set[tuple[str, str, int]]: ...
    def delete_run(self, run_id: str, *, force: bool = False) -> int: ...
    def finish_writes(self) -> SyncReport: ...
    def close(self) -> None: ...

    # `colbench watch`: the releases watched, the alerts not yet sent, and who runs a pass of a watch
    def watched(self, query: WatchQuery | None = None) -> list[WatchedRelease]: ...
    def record_watch(self, release: WatchedRelease) -> None: ...
    def watch_alerts(self, watch_ids: tuple[str, ...] | None = None, *, pending: bool = True) -> list[WatchAlert]: ...
    def save_alert(self, alert: WatchAlert) -> None: ...

    def claim_watch(self, watch_id: str, holder: WatchHolder, lease_s: float) -> WatchHolder | None:
        """Take (or extend) the right to run a pass of `watch_id` for `lease_s` seconds; None when taken, else the
        holder that has it (a live process, or one of another host whose lease has not ended)."""
        ...

    def release_watch(self, watch_id: str, holder: WatchHolder) -> None: ...


def resolve_run_id(store: Store, ref: str) -> str:
    """A run id, a unique prefix of one, a run name, or `latest`. A blank reference names no run (issue 48: as a
    prefix, '' is one of every run id, and `delete '' --yes` deleted the only run)."""
    if not ref.strip():
        raise StoreError("an empty run reference names no run: give a run id, a prefix of one, a run name or "
                         "`latest` (`colbench show` lists runs)")
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


def check_deletable(run: Run, force: bool) -> None:
    """RunInUse unless the run may be deleted: it is not going on in a process (store/run_owner.py), or `force`."""
    if force:
        return
    from colbench.store.run_owner import going_on

    why = going_on(run)
    if why:
        raise RunInUse(f"run {run.run_id} is not deleted: {why}; wait for it to end (or stop it), or add --force "
                       "to delete it anyway (results it stores afterwards would have no run record)")
