"""The embedded default store: one DuckDB file.

Each operation opens, commits and closes its own connection (`duckdb_connect.connection`), so other processes
(`colbench show` while a run is going) can open the file between writes, and every DuckDB failure, while
connecting or while querying, reaches the user as one line that says what to do.

Reading commands open the file read-only: they never create, migrate or change it. A run opens it read-write.

A completed result is never lost, even while another process holds the file: `add_result` first writes the
result to the spool beside the file (`<file>.spool/`, fsync'd), then into the store, waiting a little for a lock;
if the file stays locked the result waits in the spool, the run goes on and says so once, each later write tries
again, and `finish_writes` (the end of a run) waits for the lock before giving up with the spool kept. The next
store open that can write (`colbench run`, `show`, `store sync` …) writes what the spool holds. Writes are
idempotent on the deterministic result id, so a result written twice is stored once.
"""

from __future__ import annotations

import errno
import json
import logging
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import duckdb

from colbench.model.records import Result, Run
from colbench.model.watch import WatchAlert, WatchedRelease, WatchHolder, holder_of
from colbench.paths import UnsafePath, check_output_file, colbench_home, expand_user, in_tree, owned, owned_dir
from colbench.store.base import STORE_SCHEMA_VERSION, WATCH_SCHEMA_VERSION, StoreError, StoreLocked, check_deletable
from colbench.store.duckdb_connect import connection, wait_window
from colbench.store.queries import (
    RESULT_COLUMNS,
    RUNS_ORDER,
    ResultQuery,
    ResultSummary,
    RunRef,
    WatchQuery,
    find_runs_sql,
    machines_sql,
    results_sql,
    summaries_sql,
    summary_from_row,
    summary_of,
    summary_values,
    watched_sql,
)
from colbench.store.run_owner import may_claim
from colbench.store.spool import RunOp, Spool, SpooledRun, SyncReport, legacy_documents, store_key
from colbench.words import plural, waits

log = logging.getLogger("colbench.store")

#: A write while the run goes on waits this long for a lock before its result stays in the spool.
WRITE_WAIT_S = 2.0

DDL = [
    "CREATE TABLE IF NOT EXISTS colbench_meta (key TEXT PRIMARY KEY, value TEXT)",
    """CREATE TABLE IF NOT EXISTS runs (
        run_id TEXT PRIMARY KEY, name TEXT, started_at TIMESTAMP, finished_at TIMESTAMP, status TEXT,
        machine_id TEXT, commit_sha TEXT, doc JSON)""",
    """CREATE TABLE IF NOT EXISTS results (
        result_id TEXT PRIMARY KEY, run_id TEXT NOT NULL, case_id TEXT NOT NULL, benchmark TEXT NOT NULL,
        env_name TEXT NOT NULL, process_index INTEGER NOT NULL, block INTEGER, status TEXT NOT NULL,
        machine_id TEXT, commit_sha TEXT, created_at TIMESTAMP NOT NULL, wall_median DOUBLE, doc JSON NOT NULL,
        machine_name TEXT, engine TEXT, params JSON, versions JSON, medians JSON)""",
    "CREATE INDEX IF NOT EXISTS results_run ON results (run_id)",
    "CREATE INDEX IF NOT EXISTS results_history ON results (benchmark, machine_id, created_at)",
    "CREATE INDEX IF NOT EXISTS results_case ON results (case_id)",
    # schema 3: `colbench watch` (model/watch.py)
    """CREATE TABLE IF NOT EXISTS watched (
        watch_id TEXT NOT NULL, version TEXT NOT NULL, package TEXT NOT NULL, machine_id TEXT,
        verdict TEXT NOT NULL, watched_at TIMESTAMP NOT NULL, doc JSON NOT NULL, PRIMARY KEY (watch_id, version))""",
    """CREATE TABLE IF NOT EXISTS watch_alerts (
        alert_id TEXT PRIMARY KEY, created_at TIMESTAMP NOT NULL, sent_at TIMESTAMP, doc JSON NOT NULL)""",
    "CREATE TABLE IF NOT EXISTS watch_locks (watch_id TEXT PRIMARY KEY, holder TEXT NOT NULL, expires_at TIMESTAMP)",
]

# Schema 1 → 2: the summary columns, filled from each stored record (one UPDATE, in DuckDB's JSON functions).
MIGRATE_TO_2 = [
    *[f"ALTER TABLE results ADD COLUMN IF NOT EXISTS {column} {kind}"
      for column, kind in (("machine_name", "TEXT"), ("engine", "TEXT"), ("params", "JSON"), ("versions", "JSON"),
                           ("medians", "JSON"))],
    """UPDATE results SET machine_name = json_extract_string(doc, '$.machine.name'),
        engine = json_extract_string(doc, '$.engine'),
        params = coalesce(json_extract(doc, '$.params'), '{}'),
        versions = coalesce(json_extract(doc, '$.versions'), '{}'),
        medians = coalesce(to_json(map_from_entries([{'key': e.key, 'value': e.value.median} for e in
            map_entries(json_transform(json_extract(doc, '$.summary'), '"MAP(VARCHAR, STRUCT(median DOUBLE))"'))])),
            '{}')
      WHERE medians IS NULL""",
]

_INSERT_RESULTS = (f"INSERT INTO results ({', '.join(RESULT_COLUMNS)}) VALUES ({', '.join('?' * len(RESULT_COLUMNS))})"
                   " ON CONFLICT DO NOTHING")


def to_timestamp(value: str | datetime | None) -> datetime | None:
    if value is None:
        return None
    if isinstance(value, datetime):
        return value.astimezone(UTC).replace(tzinfo=None)
    return datetime.fromisoformat(str(value)).astimezone(UTC).replace(tzinfo=None)


def result_row(result: Result) -> tuple[Any, ...]:
    """The indexed and summary columns of a result, next to its whole document (in RESULT_COLUMNS order)."""
    return (
        result.result_id, result.run_id, result.case_id, result.benchmark, result.env_name, result.process_index,
        result.block, result.status, result.machine_id, result.commit_sha, to_timestamp(result.timestamp),
        result.median(), json.dumps(result.to_json(), default=str), *summary_values(result),
    )


def run_row(run: Run) -> tuple[Any, ...]:
    return (run.run_id, run.name, to_timestamp(run.started_at), to_timestamp(run.finished_at), run.status,
            run.machine_id, run.commit_sha, json.dumps(run.to_json(), default=str))


def _in_clause(ids: tuple[str, ...] | None) -> Callable[[int], tuple[str, list[Any]]]:
    """The run-id condition of queries.py for DuckDB: IN (?, ?, …)."""
    return lambda n: (f"run_id IN ({', '.join('?' * n)})", list(ids or ()))


def _first_missing(path: Path) -> Path:
    """The outermost directory of `path` that does not exist."""
    missing = path
    while not missing.parent.exists() and missing.parent != missing:
        missing = missing.parent
    return missing


def _blocker(path: Path) -> Path | None:
    """The nearest ancestor of `path` that exists but is not a directory (a file in the way), if any."""
    for parent in path.parents:
        if parent.exists():
            return None if parent.is_dir() else parent
    return None


def _count(con: Any, sql: str, params: Sequence[Any] = ()) -> int:
    row = con.execute(sql, params).fetchone()
    return int(row[0]) if row else 0


class DuckDBStore:
    def __init__(self, path: str | Path, *, create: bool = True, read_only: bool = False,
                 salvage: bool = False, wait_s: float | None = None) -> None:
        """`salvage` (for `colbench store info`): open a damaged file anyway, noting the damage in `self.damage`.
        `wait_s`: how long opening read-only waits for a lock another process holds (None: COLBENCH_STORE_WAIT_S)."""
        try:
            self.path = expand_user(path, "--store")
        except UnsafePath as exc:
            raise StoreError(str(exc)) from None
        self.url = str(self.path)
        self.read_only = read_only
        self.spool = Spool(store_key("duckdb:" + str(self.path.resolve())), str(self.path))
        self.synced_on_open = SyncReport()
        self.schema_version: int | None = None  # None until a connection checked it
        self.damage: dict[str, str] = {}
        self._salvage = salvage
        self._locked_by: str | None = None  # who holds the file while our writes wait in the spool
        # runs this process started, and the executions it wrote to them: `completed` answers while locked
        self._runs_here: dict[str, set[tuple[str, str, int]]] = {}
        self._check_location(create)
        if not read_only:  # its spool, where every result goes first: a folder there linked out of the home is refused
            self.spool.check()
            if in_tree(self.path, colbench_home()):  # a store in the home: no level of its path may lead out of it
                owned(self.path, "store file")
        try:
            with self._connect(wait_s=wait_s if read_only else min(WRITE_WAIT_S, wait_window())):
                pass
        except StoreLocked as exc:
            if read_only:
                raise
            self._went_locked(exc)  # a run measures anyway: its results wait in the spool, the check comes later
        waiting = self._waiting()
        if waiting and read_only:  # a reading command never writes, not even what waits: it says so instead
            log.warning("%s in the spool %s for the store %s: the next `colbench run` or `colbench store sync` "
                        "writes them", waits(waiting), self.spool.dir, self.path)
        elif waiting:
            self._write_leftovers()
        elif not read_only:
            self.spool.prune()  # empty folders a killed run left

    # -- opening -----------------------------------------------------------------------------------------------

    def _waiting(self) -> int:
        """How many records wait in the spool (none when it cannot be listed: writing there would say why)."""
        try:
            return len(self.spool)
        except OSError:
            return 0

    def _check_location(self, create: bool) -> None:
        try:
            self._check_path(create)
        except OSError as exc:  # a directory on the way we may not enter
            raise StoreError(f"cannot reach the store {self.path} ({exc.strerror or exc}): point --store, or "
                             "COLBENCH_HOME, at a place you can read and write") from None

    def _check_path(self, create: bool) -> None:
        if self.path.is_dir():
            raise StoreError(f"--store {self.path} is a directory: give a file, e.g. {self.path / 'results.duckdb'}")
        if self.path.exists():
            try:  # a FIFO, a socket or a device is no store (DuckDB would block on a FIFO)
                check_output_file(self.path, "--store")
            except UnsafePath as exc:
                raise StoreError(str(exc)) from None
            return
        blocker = _blocker(self.path)
        in_the_way = f" ({blocker} is a file, not a directory)" if blocker else ""
        if not create:
            raise StoreError(f"no results store at {self.path}{in_the_way}: `colbench run` creates it, or pass --store")
        parent = self.path.parent
        home = colbench_home().resolve()
        under_home = parent.resolve() == home or parent.resolve().is_relative_to(home)
        if not parent.is_dir() and not blocker and not under_home:
            missing = _first_missing(parent)
            raise StoreError(f"the directory {missing} of --store {self.path} does not exist: create it first, or fix "
                             "the path (colbench makes directories only under $COLBENCH_HOME, so a typo never starts "
                             "a new store somewhere else)")
        try:
            if under_home:
                owned_dir(self.path.parent, "store directory")
            else:
                self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"cannot create the store {self.path} ({exc.strerror or exc}{in_the_way}): point "
                             "--store, or COLBENCH_HOME, at a directory you can write") from None

    @contextmanager
    def _connect(self, *, write: bool = False, wait_s: float | None = None) -> Iterator[duckdb.DuckDBPyConnection]:
        """A connection; read-write when this store was opened for writing or `write` asks for it. The first one
        checks the file (and creates or upgrades the schema when writing)."""
        with connection(self.path, read_only=self.read_only and not write, wait_s=wait_s) as con:
            if self.schema_version is None:
                self._check_length(con)
                self.schema_version = self._check_schema(con)
            yield con

    def _check_length(self, con: duckdb.DuckDBPyConnection) -> None:
        """A file cut short (a copy that stopped, a full disk) opens, then fails on whichever query reaches the
        missing blocks: check at once, for every command, that the file can hold the blocks its header says are in
        use (a lower bound: free blocks at the end may be truncated away, used ones never are)."""
        row = con.execute("PRAGMA database_size").fetchone()
        if row is None:
            return
        _, _, block_size, _, used_blocks, *_ = row
        expected, actual = int(block_size) * int(used_blocks), self.path.stat().st_size
        if actual < expected:
            damage = (f"the store {self.path} is damaged (the file is cut short: {actual:,} bytes, less than the "
                      f"{expected:,} bytes of blocks its header says are in use): restore it from a copy, or start "
                      f"a new one with --store NEW; `colbench store info --store {self.path}` shows what is readable")
            if not self._salvage:
                raise StoreError(damage)
            self.damage["file"] = damage

    def _check_schema(self, con: duckdb.DuckDBPyConnection) -> int:
        tables = {row[0] for row in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
        if tables and "colbench_meta" not in tables:
            raise StoreError(f"{self.path} is a DuckDB file but not a colbench store: pass another --store path")
        version = 0
        if "colbench_meta" in tables:
            row = con.execute("SELECT value FROM colbench_meta WHERE key = 'schema_version'").fetchone()
            version = int(row[0]) if row else 0
            if version > STORE_SCHEMA_VERSION:
                raise StoreError(
                    f"{self.path} was written by a newer colbench (store schema {version}, this one knows "
                    f"{STORE_SCHEMA_VERSION}): upgrade colbench, or use another --store"
                )
            if version == STORE_SCHEMA_VERSION:
                return version  # up to date: nothing to write
        if self.read_only:
            if not tables:
                raise StoreError(f"{self.path} is an empty DuckDB file, not a colbench store yet: `colbench run "
                                 "--store` makes it one, or pass another --store")
            return version  # read as it is: history and compare read the records instead of the summary columns
        fresh = "results" not in tables
        if not fresh:
            count = _count(con, "SELECT count(*) FROM results")
            log.warning("upgrading the store %s to schema %d (%d results) …", self.path, STORE_SCHEMA_VERSION, count)
        con.execute("BEGIN TRANSACTION")
        for statement in DDL + ([] if fresh or version >= 2 else MIGRATE_TO_2):
            con.execute(statement)
        con.execute("INSERT INTO colbench_meta VALUES ('schema_version', ?) ON CONFLICT (key) DO UPDATE SET "
                    "value = excluded.value", [str(STORE_SCHEMA_VERSION)])
        con.execute("COMMIT")
        return STORE_SCHEMA_VERSION

    @property
    def _has_summaries(self) -> bool:
        return (self.schema_version or 0) >= 2

    # -- runs --------------------------------------------------------------------------------------------------

    def create_run(self, run: Run) -> None:
        self._runs_here.setdefault(run.run_id, set())
        self._write_run(run, "create")

    def update_run(self, run: Run) -> None:
        self._write_run(run, "update")

    def _write_run(self, run: Run, op: RunOp) -> None:
        kept = self._spooled(lambda: self.spool.put_run(run, op))
        try:
            self._upsert_runs([SpooledRun(op, run)], self._write_wait())
        except StoreLocked as exc:
            self._went_locked(exc)
            return
        self.spool.remove(kept)
        self._write_waiting()

    def _upsert_runs(self, spooled: list[SpooledRun], wait_s: float | None = None) -> None:
        with self._connect(write=True, wait_s=wait_s) as con:
            con.execute("BEGIN TRANSACTION")
            for item in spooled:
                verb = "INSERT OR REPLACE" if item.op == "update" else "INSERT"
                conflict = "" if item.op == "update" else " ON CONFLICT DO NOTHING"
                con.execute(f"{verb} INTO runs VALUES (?, ?, ?, ?, ?, ?, ?, ?){conflict}", run_row(item.run))
            con.execute("COMMIT")

    def get_run(self, run_id: str) -> Run:
        with self._connect() as con:
            row = con.execute("SELECT doc FROM runs WHERE run_id = ?", [run_id]).fetchone()
        if row is None:
            raise StoreError(f"no run {run_id!r} in {self.url}")
        return Run.from_json(json.loads(row[0]))

    def list_runs(self, limit: int | None = None) -> list[Run]:
        sql = "SELECT doc FROM runs" + RUNS_ORDER
        with self._connect() as con:
            rows = con.execute(sql + (f" LIMIT {int(limit)}" if limit else "")).fetchall()
        return [Run.from_json(json.loads(r[0])) for r in rows]

    def find_runs(self, ref: str | None) -> list[RunRef]:
        sql, args = find_runs_sql(ref, "?")
        with self._connect() as con:
            return [RunRef(run_id, name) for run_id, name in con.execute(sql, args).fetchall()]

    # -- results -----------------------------------------------------------------------------------------------

    def add_result(self, result: Result) -> bool:
        """Write one result; False when it was already there (same result id). The result is in the spool before
        the store is tried; when the store stays locked it waits there (and this returns True)."""
        if result.run_id in self._runs_here:
            self._runs_here[result.run_id].add((result.case_id, result.env_name, int(result.process_index)))
        kept = self._spooled(lambda: self.spool.put_result(result))
        try:
            added = self._insert_results([result], self._write_wait())
        except StoreLocked as exc:
            self._went_locked(exc)
            return True
        except StoreError as exc:
            raise StoreError(f"{exc} (the result that just completed is kept in the spool {self.spool.dir})") from None
        self.spool.remove(kept)
        self._write_waiting()
        return added == 1

    def add_results(self, results: Iterable[Result]) -> int:
        return self._insert_results(list(results))

    def _insert_results(self, results: list[Result], wait_s: float | None = None) -> int:
        rows = [result_row(r) for r in results]
        if not rows:
            return 0
        with self._connect(write=True, wait_s=wait_s) as con:
            con.execute("BEGIN TRANSACTION")
            start = _count(con, "SELECT count(*) FROM results")
            con.executemany(_INSERT_RESULTS, rows)
            added = _count(con, "SELECT count(*) FROM results") - start
            con.execute("COMMIT")
        return added

    def results(self, query: ResultQuery | None = None) -> list[Result]:
        query = query or ResultQuery()
        built = results_sql(query, "?", _in_clause(query.run_ids))
        if built is None:
            return []
        sql, args = built
        with self._connect() as con:
            return [Result.from_json(json.loads(r[0])) for r in con.execute(sql, args).fetchall()]

    def summaries(self, query: ResultQuery | None = None) -> list[ResultSummary]:
        """The summary columns of the results `query` matches (from the records in a store not yet upgraded)."""
        query = query or ResultQuery()
        if not self._has_summaries:
            return [summary_of(result) for result in self.results(query)]
        built = summaries_sql(query, "?", _in_clause(query.run_ids))
        if built is None:
            return []
        sql, args = built
        with self._connect() as con:
            return [summary_from_row(row) for row in con.execute(sql, args).fetchall()]

    def machines(self, benchmark: str | None = None) -> dict[str, str | None]:
        """machine_id → machine name, for the machines with results (of `benchmark`)."""
        if not self._has_summaries:
            return {s.machine_id: s.machine_name for s in self.summaries(ResultQuery(benchmark=benchmark))
                    if s.machine_id is not None}
        sql, args = machines_sql(benchmark, "?")
        with self._connect() as con:
            return dict(con.execute(sql, args).fetchall())

    def completed(self, run_id: str) -> set[tuple[str, str, int]]:
        """(case, environment, process) of the results a run has, in the store or waiting in the spool."""
        try:
            with self._connect(wait_s=self._write_wait() if run_id in self._runs_here else None) as con:
                rows = con.execute("SELECT case_id, env_name, process_index FROM results WHERE run_id = ?",
                                   [run_id]).fetchall()
        except StoreLocked as exc:
            if run_id not in self._runs_here:
                raise
            self._went_locked(exc)  # a run this process started: it knows what it wrote
            return set(self._runs_here[run_id]) | self.spool.result_keys(run_id)
        return {(r[0], r[1], int(r[2])) for r in rows} | self.spool.result_keys(run_id)

    def delete_run(self, run_id: str, *, force: bool = False) -> int:
        """Delete a run: its results and its record in one transaction, and what of it waits in the spool; returns
        the results removed. A run going on in another process is refused (RunInUse) unless `force`."""
        check_deletable(self.get_run(run_id), force)
        runs, results = legacy_documents(self.path.with_name(self.path.name + ".spool"))
        left = sum(1 for r in runs if r.run.run_id == run_id) + sum(1 for r in results if r.run_id == run_id)
        if left:  # the next sync would bring them back, and that folder is not colbench's to delete in
            verb = "waits" if left == 1 else "wait"
            raise StoreError(f"run {run_id} is not deleted: {plural(left, 'record')} of it {verb} in the old spool "
                             f"folder {self.path.name}.spool beside the store, which the next sync would write back: "
                             "delete that folder (or its files of this run) first")
        spooled = self.spool.forget_run(run_id)
        self._runs_here.pop(run_id, None)
        with self._connect(write=True) as con:  # an exception before COMMIT: closing the connection rolls back
            con.execute("BEGIN TRANSACTION")
            row = con.execute("SELECT doc FROM runs WHERE run_id = ?", [run_id]).fetchone()
            if row is None:
                raise StoreError(f"no run {run_id!r} in {self.url}")
            # the run as it is now, under the file's write lock
            check_deletable(Run.from_json(json.loads(row[0])), force)
            removed = _count(con, "SELECT count(*) FROM results WHERE run_id = ?", [run_id])
            con.execute("DELETE FROM results WHERE run_id = ?", [run_id])
            con.execute("DELETE FROM runs WHERE run_id = ?", [run_id])
            con.execute("COMMIT")
        return removed + spooled

    # -- watch -------------------------------------------------------------------------------------------------

    @property
    def _has_watch(self) -> bool:
        """An older store, opened read-only, has no watch tables yet: it has watched nothing."""
        return (self.schema_version or 0) >= WATCH_SCHEMA_VERSION

    def watched(self, query: WatchQuery | None = None) -> list[WatchedRelease]:
        if not self._has_watch:
            return []
        sql, args = watched_sql(query or WatchQuery(), "?")
        with self._connect() as con:
            return [WatchedRelease.from_json(json.loads(row[0])) for row in con.execute(sql, args).fetchall()]

    def record_watch(self, release: WatchedRelease) -> None:
        with self._connect(write=True) as con:
            con.execute("INSERT OR REPLACE INTO watched VALUES (?, ?, ?, ?, ?, ?, ?)",
                        [release.watch_id, release.version, release.package, release.machine_id, release.verdict,
                         to_timestamp(release.watched_at), json.dumps(release.to_json(), default=str)])

    def watch_alerts(self, watch_ids: tuple[str, ...] | None = None, *, pending: bool = True) -> list[WatchAlert]:
        if not self._has_watch:
            return []
        sql = "SELECT doc FROM watch_alerts" + (" WHERE sent_at IS NULL" if pending else "") + " ORDER BY created_at"
        with self._connect() as con:
            alerts = [WatchAlert.from_json(json.loads(row[0])) for row in con.execute(sql).fetchall()]
        return [a for a in alerts if watch_ids is None or set(a.watch_ids) & set(watch_ids)]

    def save_alert(self, alert: WatchAlert) -> None:
        with self._connect(write=True) as con:
            con.execute("INSERT OR REPLACE INTO watch_alerts VALUES (?, ?, ?, ?)",
                        [alert.alert_id, to_timestamp(alert.created_at), to_timestamp(alert.sent_at),
                         json.dumps(alert.to_json(), default=str)])

    def claim_watch(self, watch_id: str, holder: WatchHolder, lease_s: float) -> WatchHolder | None:
        now = datetime.now(UTC)
        with self._connect(write=True) as con:  # the file's write lock makes the look and the take one step
            con.execute("BEGIN TRANSACTION")
            row = con.execute("SELECT holder, expires_at FROM watch_locks WHERE watch_id = ?", [watch_id]).fetchone()
            current = json.loads(row[0]) if row else None
            expires = row[1].replace(tzinfo=UTC) if row and row[1] is not None else None
            if not may_claim(current, expires, holder, now):
                con.execute("ROLLBACK")
                return holder_of(current) if current else None
            con.execute("INSERT OR REPLACE INTO watch_locks VALUES (?, ?, ?)",
                        [watch_id, json.dumps(holder), to_timestamp(now + timedelta(seconds=lease_s))])
            con.execute("COMMIT")
        return None

    def release_watch(self, watch_id: str, holder: WatchHolder) -> None:
        with self._connect(write=True) as con:
            con.execute("DELETE FROM watch_locks WHERE watch_id = ? AND holder = ?",
                        [watch_id, json.dumps(holder)])

    # -- the spool ---------------------------------------------------------------------------------------------

    def _spooled(self, put: Callable[[], Path]) -> Path:
        try:
            return put()
        except OSError as exc:
            full = exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG)
            hint = "free some space there" if full else f"{self.spool.dir.parent} must be writable"
            raise StoreError(f"cannot keep a result in the spool {self.spool.dir} ({exc.strerror or exc}): "
                             f"{hint}") from None

    def _write_wait(self) -> float:
        """Once the store is known to be locked, try it without waiting between executions."""
        return 0.0 if self._locked_by else min(WRITE_WAIT_S, wait_window())

    def _went_locked(self, exc: StoreLocked) -> None:
        if self._locked_by is None:
            log.warning("store locked by %s: results kept in the spool at %s, will be written when it frees",
                        exc.holder, self.spool.dir)
        self._locked_by = exc.holder

    def _write_waiting(self) -> None:
        """After a write went through: write what waited in the spool while the store was locked."""
        if self._locked_by is None:
            return
        try:
            report = self.sync_spool(wait_s=0.0)
        except StoreLocked:
            return
        self._locked_by = None
        log.warning("the store %s is free again: wrote %s that waited in the spool", self.path,
                    plural(report.results, "result"))

    def sync_spool(self, wait_s: float | None = None) -> SyncReport:
        """Write what waits in the spool into the store; raises StoreLocked (keeping the files) if it stays locked."""
        report = self.spool.drain(lambda runs: self._upsert_runs(runs, wait_s),
                                  lambda docs: self._insert_results(docs, wait_s))
        self.spool.prune()
        legacy = self.path.with_name(self.path.name + ".spool")
        runs, results = legacy_documents(legacy)
        if runs or results:  # written by an older colbench beside the file: taken, and the folder left alone
            self._upsert_runs(runs, wait_s)
            taken = self._insert_results(results, wait_s)
            log.warning("took %s from the old spool folder %s; colbench keeps its spools under "
                        "$COLBENCH_HOME/spool now, so that folder can be deleted", plural(taken, "result"), legacy)
        return report

    def _write_leftovers(self) -> None:
        """At open: results an earlier process left in the spool (store locked, run killed) go into the store."""
        try:
            self.synced_on_open = self.sync_spool(wait_s=min(WRITE_WAIT_S, wait_window()))
        except StoreError as exc:
            runs, results = self.spool.pending()
            log.warning("%s and %s wait in the spool %s (%s); `colbench store sync` writes them",
                        plural(results, "result"), plural(runs, "run record"), self.spool.dir, exc)
            return
        if self.synced_on_open:
            log.warning("wrote %s and %s that waited in the spool %s into %s",
                        plural(self.synced_on_open.results, "result"), plural(self.synced_on_open.runs, "run record"),
                        self.spool.dir, self.path)

    def finish_writes(self) -> SyncReport:
        """End of a run: wait (COLBENCH_STORE_WAIT_S) for a locked store to take what waits in the spool, or raise a
        StoreError that says where the results are kept."""
        if not len(self.spool):
            self.spool.prune()
            return SyncReport()
        try:
            report = self.sync_spool()
        except StoreLocked as exc:
            runs, results = self.spool.pending()
            raise StoreError(f"the store {self.path} is still locked by {exc.holder}: {plural(results, 'result')} and "
                             f"{plural(runs, 'run record')} are kept in the spool {self.spool.dir}; `colbench store "
                             "sync --store "
                             f"{self.path}` (or the next `colbench run` or `show`) writes them once it frees") from None
        if self._locked_by:
            log.warning("the store %s is free again: wrote %s that waited in the spool", self.path,
                        plural(report.results, "result"))
            self._locked_by = None
        return report

    # -- housekeeping ------------------------------------------------------------------------------------------

    def info(self, check: bool = False) -> dict[str, Any]:
        """Schema version, counts and machines; with `check`, every table read in full. A part that cannot be read
        is reported as unreadable (under "damaged") rather than raised."""
        found: dict[str, Any] = {"url": self.url, "backend": "duckdb", "schema_version": self.schema_version,
                                 "damaged": dict(self.damage)}
        parts = {
            "runs": "SELECT count(*) FROM runs",
            "results": "SELECT count(*) FROM results",
            "machines": "SELECT machine_id, count(*) AS n FROM results GROUP BY machine_id ORDER BY n DESC, "
                        "machine_id",
            "names": "SELECT machine_id, max(json_extract_string(doc, '$.machine.name')) FROM runs GROUP BY "
                     "machine_id",
        }
        if check:
            parts["runs, read in full"] = "SELECT count(*), sum(length(CAST(doc AS TEXT))) FROM runs"
            parts["results, read in full"] = ("SELECT count(*), sum(length(CAST(doc AS TEXT))), "
                                              "count(DISTINCT run_id) FROM results")
        answers: dict[str, Any] = {}
        for part, sql in parts.items():
            try:
                with self._connect() as con:
                    answers[part] = con.execute(sql).fetchall()
            except StoreLocked:
                raise
            except StoreError as exc:
                found["damaged"][part] = str(exc)
        names = dict(answers.get("names") or [])
        for part in ("runs", "results"):
            found[part] = answers[part][0][0] if part in answers else None
        found["machines"] = [{"machine_id": m, "name": names.get(m), "results": n}
                             for m, n in answers.get("machines") or []]
        runs, results = self.spool.pending()
        found["spool"] = {"dir": str(self.spool.dir), "runs": runs, "results": results}
        return found

    def close(self) -> None:
        """Nothing to release: every operation closes its own connection."""

