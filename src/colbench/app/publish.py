"""Publish stored runs to a Conbench server: the use case behind `colbench publish`.

The runs are read from the store first and the store is closed before any network traffic, so a slow server
never holds the store (a DuckDB file a running `colbench run` needs). Nothing is written locally: the server is
the record of what was published (`store.conbench.publish`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from colbench.app.errors import UsageError
from colbench.model.records import Result, Run
from colbench.store.base import ResultQuery, Store, resolve_run_id
from colbench.store.conbench import ConbenchSession, PublishReport, publish_run


@dataclass(frozen=True)
class PublishRequest:
    """Where to publish, which runs (references as `colbench show` takes them; none: the latest), and what
    Conbench should say about the project under test."""

    url: str | None
    runs: tuple[str, ...] = ()
    repository: str | None = None
    run_reason: str | None = None
    #: the total deadline of each call to the server (None: $COLBENCH_NET_DEADLINE_S, else a minute)
    deadline_s: float | None = None


@dataclass(frozen=True)
class StoredRun:
    run: Run
    results: list[Result]


def read_runs(store: Store, refs: Sequence[str]) -> list[StoredRun]:
    """The runs to publish with their results, secrets masked (records written before redaction may hold them).
    A run still marked running is refused: it is going on, or was killed and waits for `--resume`."""
    found = []
    for run_id in dict.fromkeys(resolve_run_id(store, ref) for ref in (refs or ["latest"])):
        run = store.get_run(run_id)
        if run.status == "running":
            raise UsageError(f"run {run_id} has not finished (it is running, or was killed): `colbench run --resume "
                             f"{run_id}` completes it, then publish it")
        found.append(StoredRun(run.redacted(), [r.redacted() for r in store.results(ResultQuery(run_ids=(run_id,)))]))
    return found


def connect(request: PublishRequest) -> ConbenchSession:
    """The session with the server (not yet logged in): checks the URL before anything is read or sent."""
    if not request.url:
        raise UsageError("--conbench URL is required (or set CONBENCH_URL)")
    return ConbenchSession(request.url, timeout_s=request.deadline_s)


def publish(request: PublishRequest, runs: Sequence[StoredRun], session: ConbenchSession | None = None,
            on_run: Callable[[PublishReport], None] | None = None) -> list[PublishReport]:
    """Publish each run (one Conbench run, one result per case); `on_run` hears of each as it is done, so what was
    published is known even when a later run cannot be (ConbenchError: network, login)."""
    session = session or connect(request)
    reports = []
    for stored in runs:
        report = publish_run(session, stored.run, stored.results, repository=request.repository,
                             run_reason=request.run_reason)
        reports.append(report)
        if on_run:
            on_run(report)
    return reports
