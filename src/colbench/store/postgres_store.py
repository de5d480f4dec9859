"""The team store: one PostgreSQL database that every benchmark machine writes to.

Same tables, columns and answers as the DuckDB store (`duckdb_store.py`), with what many writers need:

- Idempotent writes: `result_id` is the primary key and every insert is `ON CONFLICT DO NOTHING`, so concurrent
  runners, retries, resumes and store copies never duplicate a result.
- Connection loss: an operation that fails with a connection error reconnects and retries with exponential backoff
  for `COLBENCH_STORE_RETRY_S` seconds (default 60). A write that still cannot land goes to a local spool
  (`spool.py`) and the run goes on; the spool is uploaded by the store's next successful write, by the next
  `open_store` of the URL, or by `colbench store sync`. After a write was spooled, later writes try the server once
  and spool at once while it is away, so a run does not stall for a full retry window per result.
- Schema: created and migrated by colbench (never by hand) under an advisory lock, so runners starting together
  on a fresh database do not race; `colbench_meta.schema_version` records the version and a newer version is refused.
- Documents are stored as `json` (the text as written, like DuckDB's JSON type) rather than `jsonb`: jsonb reorders
  object keys, and params/samples/metric order is visible in `show`, CSV exports and reports.
- Text key columns use the "C" collation so ordering is bytewise, as in DuckDB, whatever the database's locale.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import threading
from collections.abc import Callable, Iterable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

import psycopg
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from colbench.backoff import Backoff
from colbench.model.records import Result, Run
from colbench.model.watch import WatchAlert, WatchedRelease, WatchHolder, holder_of
from colbench.redact import redact as redact_secrets
from colbench.store.base import STORE_SCHEMA_VERSION, WATCH_SCHEMA_VERSION, StoreError, check_deletable
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
    summary_values,
    watched_sql,
)
from colbench.store.run_owner import may_claim
from colbench.store.spool import RunOp, Spool, SpooledRun, SyncReport, store_key
from colbench.words import plural, waits

log = logging.getLogger("colbench.store")
T = TypeVar("T")

DEFAULT_RETRY_S = 60.0
CONNECT_TIMEOUT_S = 10
_SCHEMA_LOCK = 7_303_258_741_126_404_161  # pg_advisory_xact_lock key: "colbench schema"
_BATCH = 1000
_C = 'COLLATE "C"'

RUN_COLUMNS = ("run_id", "name", "started_at", "finished_at", "status", "machine_id", "commit_sha", "doc")

DDL = [
    "CREATE TABLE IF NOT EXISTS colbench_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    f"""CREATE TABLE IF NOT EXISTS runs (
        run_id TEXT {_C} PRIMARY KEY, name TEXT, started_at TIMESTAMPTZ, finished_at TIMESTAMPTZ, status TEXT,
        machine_id TEXT {_C}, commit_sha TEXT, doc JSON NOT NULL)""",
    f"""CREATE TABLE IF NOT EXISTS results (
        result_id TEXT {_C} PRIMARY KEY, run_id TEXT {_C} NOT NULL, case_id TEXT {_C} NOT NULL,
        benchmark TEXT {_C} NOT NULL, env_name TEXT {_C} NOT NULL, process_index INTEGER NOT NULL, block INTEGER,
        status TEXT {_C} NOT NULL, machine_id TEXT {_C}, commit_sha TEXT, created_at TIMESTAMPTZ NOT NULL,
        wall_median DOUBLE PRECISION, doc JSON NOT NULL, machine_name TEXT, engine TEXT, params JSON,
        versions JSON, medians JSON)""",
    *[
        # the queries behind show/compare (a run), history (benchmark × machine over time) and one case over time
        "CREATE INDEX IF NOT EXISTS results_run ON results (run_id)",
        "CREATE INDEX IF NOT EXISTS results_history ON results (benchmark, machine_id, created_at)",
        "CREATE INDEX IF NOT EXISTS results_case ON results (case_id, machine_id, created_at)",
        "CREATE INDEX IF NOT EXISTS runs_started ON runs (started_at DESC NULLS LAST, run_id)",
    ],
]
INDEXES = [s for s in DDL if s.startswith("CREATE INDEX")]
# schema 3: `colbench watch` (model/watch.py); one row per (watch, version), alert and watch being run
WATCH_DDL = [
    f"""CREATE TABLE IF NOT EXISTS watched (
        watch_id TEXT {_C} NOT NULL, version TEXT {_C} NOT NULL, package TEXT {_C} NOT NULL, machine_id TEXT {_C},
        verdict TEXT NOT NULL, watched_at TIMESTAMPTZ NOT NULL, doc JSON NOT NULL, PRIMARY KEY (watch_id, version))""",
    f"""CREATE TABLE IF NOT EXISTS watch_alerts (
        alert_id TEXT {_C} PRIMARY KEY, created_at TIMESTAMPTZ NOT NULL, sent_at TIMESTAMPTZ, doc JSON NOT NULL)""",
    f"CREATE TABLE IF NOT EXISTS watch_locks (watch_id TEXT {_C} PRIMARY KEY, holder TEXT NOT NULL, "
    "expires_at TIMESTAMPTZ)",
]
DDL += WATCH_DDL


class StoreUnavailable(StoreError):
    """The server did not answer within the retry window."""


def redact(url: str) -> str:
    """The URL without its password (in the user part or a `password=` parameter), for messages and spool labels."""
    if "://" not in url:  # key=value conninfo
        try:
            params = conninfo_to_dict(url)
        except psycopg.ProgrammingError:
            return "(unreadable connection string)"
        kept: dict[str, Any] = {k: v for k, v in params.items() if k != "password"}
        return make_conninfo("", **kept)
    return redact_secrets(url)  # the one redaction colbench applies everywhere: user:***@, password=***


def identity(url: str) -> str:
    """What names one server and database, whatever the spelling of the URL and without the password."""
    params = conninfo_to_dict(url)
    return " ".join(f"{k}={params[k]}" for k in sorted(params) if k in ("host", "hostaddr", "port", "dbname", "user"))


def _utc(value: str | datetime | None) -> datetime | None:
    if value is None:
        return None
    stamp = value if isinstance(value, datetime) else datetime.fromisoformat(str(value))
    return stamp.replace(tzinfo=UTC) if stamp.tzinfo is None else stamp.astimezone(UTC)


def result_row(result: Result) -> tuple[Any, ...]:
    return (
        result.result_id, result.run_id, result.case_id, result.benchmark, result.env_name, result.process_index,
        result.block, result.status, result.machine_id, result.commit_sha, _utc(result.timestamp), result.median(),
        json.dumps(result.to_json(), default=str), *summary_values(result),
    )


def run_row(run: Run) -> tuple[Any, ...]:
    return (run.run_id, run.name, _utc(run.started_at), _utc(run.finished_at), run.status, run.machine_id,
            run.commit_sha, json.dumps(run.to_json(), default=str))


_INSERT_RESULT = (f"INSERT INTO results ({', '.join(RESULT_COLUMNS)}) VALUES ({', '.join(['%s'] * 12)}, %s::json, "
                  "%s, %s, %s::json, %s::json, %s::json) ON CONFLICT (result_id) DO NOTHING")
_INSERT_RUN = f"INSERT INTO runs ({', '.join(RUN_COLUMNS)}) VALUES ({', '.join(['%s'] * 7)}, %s::json)"
_UPSERT_RUN = _INSERT_RUN + " ON CONFLICT (run_id) DO UPDATE SET " + ", ".join(
    f"{c} = excluded.{c}" for c in RUN_COLUMNS[1:])


def _is_permanent(exc: BaseException) -> bool:
    """A refusal that waiting will not fix: bad password, unknown role or database, no pg_hba entry."""
    text = str(exc)
    transient = ("starting up", "shutting down", "in recovery", "too many clients", "terminating connection")
    return "FATAL:" in text and not any(t in text for t in transient)


def _first_line(exc: BaseException) -> str:
    text = str(exc).replace("connection failed: ", "").strip()
    return " ".join(line.strip() for line in text.splitlines()[:1]) or type(exc).__name__


def _retry_window() -> float:
    try:
        return max(0.0, float(os.environ.get("COLBENCH_STORE_RETRY_S", DEFAULT_RETRY_S)))
    except ValueError:
        return DEFAULT_RETRY_S


def _count(con: Any, sql: str, params: Sequence[Any] = ()) -> int:
    row = con.execute(sql, params).fetchone()
    return int(row[0]) if row else 0


class PostgresStore:
    def __init__(self, url: str, *, create: bool = True, retry_s: float | None = None,
                 read_only: bool = False) -> None:
        self._conninfo = url
        self.url = redact(url)
        self.retry_s = _retry_window() if retry_s is None else retry_s
        try:
            self.spool = Spool(store_key(identity(url)), self.url)
        except psycopg.ProgrammingError as exc:
            raise StoreError(f"cannot read store URL {self.url}: {_first_line(exc)}") from None
        self._conn: psycopg.Connection[Any] | None = None
        self._lock = threading.RLock()  # one connection, shared safely by a threaded server (the dashboard)
        self._offline = False
        self._spool_dirty = False  # the spool has files this process could not upload yet
        self._watch_tables: bool | None = None  # whether the watch tables exist (schema 3), once asked
        self._run(lambda con: self._check_schema(con, create), retry_s=min(self.retry_s, CONNECT_TIMEOUT_S),
                  what="schema check")
        self.synced_on_open = SyncReport()
        if len(self.spool) and read_only:  # a reading command never writes: it says what waits instead
            log.warning("%s in the local spool %s for %s: the next `colbench run` or `colbench store sync` "
                        "uploads them", waits(len(self.spool)), self.spool.dir, self.url)
        elif len(self.spool):
            try:
                self.synced_on_open = self.sync_spool()
            except StoreError as exc:
                self._spool_dirty = True
                log.warning("could not upload the local spool of %s yet: %s", self.url, exc)
            else:
                if self.synced_on_open:
                    log.warning("uploaded %s and %s that waited in the local spool %s",
                                plural(self.synced_on_open.runs, "run record"),
                                plural(self.synced_on_open.results, "result"), self.spool.dir)

    # -- connection handling ---------------------------------------------------------------------------------

    def _connection(self) -> psycopg.Connection[Any]:
        if self._conn is None or self._conn.closed:
            self._conn = psycopg.connect(self._conninfo, autocommit=True, connect_timeout=CONNECT_TIMEOUT_S,
                                         application_name="colbench", keepalives=1, keepalives_idle=10,
                                         keepalives_interval=5, keepalives_count=3)
        return self._conn

    def _drop(self) -> None:
        if self._conn is not None:
            with contextlib.suppress(psycopg.Error):
                self._conn.close()
        self._conn = None

    def _run(self, operation: Callable[[psycopg.Connection[Any]], T], *, retry_s: float | None = None,
             what: str = "query") -> T:
        """Run `operation` on a live connection; on a connection error reconnect and retry with exponential backoff
        until `retry_s` has passed, then raise StoreUnavailable."""
        backoff = Backoff(0.1, 2.0, within_s=self.retry_s if retry_s is None else retry_s)
        while True:
            try:
                with self._lock:
                    return operation(self._connection())
            except (psycopg.OperationalError, psycopg.InterfaceError) as exc:
                with self._lock:
                    self._drop()
                if _is_permanent(exc):
                    raise StoreError(f"cannot open results store {self.url}: {_first_line(exc)}") from None
                if not backoff.wait():
                    pending = len(self.spool)
                    waiting = f"; {waits(pending)} in the local spool" if pending else ""
                    raise StoreUnavailable(
                        f"cannot reach PostgreSQL store {self.url} ({what}): {_first_line(exc)}{waiting} "
                        "(is the server up? `colbench store sync` uploads the spool later)") from None
            except psycopg.Error as exc:  # refused for good: permissions, a damaged table …
                raise StoreError(f"PostgreSQL store {self.url} refused the {what}: {_first_line(exc)}") from None

    # -- schema ----------------------------------------------------------------------------------------------

    def _version(self, con: psycopg.Connection[Any]) -> int | None:
        """None: no colbench tables at all; 0: a colbench store from before versioning."""
        tables = {r[0] for r in con.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() "
            "AND table_name IN ('colbench_meta', 'runs', 'results')").fetchall()}
        if "colbench_meta" not in tables:
            if tables:
                raise StoreError(f"{self.url} has tables named {', '.join(sorted(tables))} that colbench did not "
                                 "create: not a colbench store; pass another --store (or another database)")
            return None
        row = con.execute("SELECT value FROM colbench_meta WHERE key = 'schema_version'").fetchone()
        return int(row[0]) if row else 0

    def _check_schema(self, con: psycopg.Connection[Any], create: bool) -> None:
        version = self._version(con)
        if version == STORE_SCHEMA_VERSION:
            return  # the usual case: nothing to write, so read-only roles can open the store
        if version is None and not create:
            raise StoreError(f"no results store at {self.url}: `colbench run --store URL` creates it, "
                             "or pass another --store")
        with con.transaction():
            con.execute("SELECT pg_advisory_xact_lock(%s)", [_SCHEMA_LOCK])
            version = self._version(con)  # another runner may have done it while we waited
            if version is not None and version > STORE_SCHEMA_VERSION:
                raise StoreError(
                    f"{self.url} was written by a newer colbench (store schema {version}, this one knows "
                    f"{STORE_SCHEMA_VERSION}): upgrade colbench, or use another --store"
                )
            if version is None:
                for statement in DDL:
                    con.execute(statement)
            else:
                for target in range(version + 1, STORE_SCHEMA_VERSION + 1):
                    MIGRATIONS[target](con)
                    log.warning("migrated %s to schema %d", self.url, target)
            con.execute("INSERT INTO colbench_meta VALUES ('schema_version', %s) ON CONFLICT (key) DO UPDATE "
                        "SET value = excluded.value", [str(STORE_SCHEMA_VERSION)])

    def schema_version(self) -> int:
        return self._run(lambda con: self._version(con) or 0)

    # -- runs ------------------------------------------------------------------------------------------------

    def create_run(self, run: Run) -> None:
        self._write_run(run, "create")

    def update_run(self, run: Run) -> None:
        self._write_run(run, "update")

    def _write_run(self, run: Run, op: RunOp) -> None:
        sql = _UPSERT_RUN if op == "update" else _INSERT_RUN + " ON CONFLICT (run_id) DO NOTHING"
        try:
            self._run(lambda con: con.execute(sql, run_row(run)), retry_s=0.0 if self._offline else None,
                      what="run write")
        except StoreUnavailable as exc:
            path = self.spool.put_run(run, op)
            self._went_offline(f"run record {run.run_id}", path, exc)
            return
        self._back_online()

    def get_run(self, run_id: str) -> Run:
        row = self._run(lambda con: con.execute("SELECT doc FROM runs WHERE run_id = %s", [run_id]).fetchone())
        if row is None:
            raise StoreError(f"no run {run_id!r} in {self.url}")
        return Run.from_json(row[0])

    def list_runs(self, limit: int | None = None) -> list[Run]:
        sql = "SELECT doc FROM runs" + RUNS_ORDER
        args: list[Any] = []
        if limit:
            sql += " LIMIT %s"
            args.append(int(limit))
        return [Run.from_json(r[0]) for r in self._run(lambda con: con.execute(sql, args).fetchall())]

    def find_runs(self, ref: str | None) -> list[RunRef]:
        sql, args = find_runs_sql(ref, "%s")
        return [RunRef(run_id, name) for run_id, name in self._run(lambda con: con.execute(sql, args).fetchall())]

    # -- results ---------------------------------------------------------------------------------------------

    def add_result(self, result: Result) -> bool:
        """Write one result; False when it was already there (same result id). When the server stays away the
        result goes to the local spool, a warning says so, and this returns True (it will be written)."""
        row = result_row(result)
        try:
            inserted = self._run(lambda con: con.execute(_INSERT_RESULT + " RETURNING 1", row).fetchone(),
                                 retry_s=0.0 if self._offline else None, what="result write")
        except StoreUnavailable as exc:
            path = self.spool.put_result(result)
            self._went_offline(f"result {result.result_id}", path, exc)
            return True
        self._back_online()
        return inserted is not None

    def add_results(self, results: Iterable[Result]) -> int:
        """Write many results in batches; returns how many were new. Batches the server does not take in the retry
        window go to the spool (and count as new)."""
        docs = list(results)
        added = 0
        for start in range(0, len(docs), _BATCH):
            chunk = docs[start:start + _BATCH]
            try:
                added += self._insert_results(chunk, retry_s=0.0 if self._offline else None)
            except StoreUnavailable as exc:
                for result in chunk:
                    path = self.spool.put_result(result)
                self._went_offline(f"{len(chunk)} results", path.parent, exc)
                added += len(chunk)
                continue
            self._back_online()
        return added

    def _insert_results(self, results: list[Result], retry_s: float | None = None) -> int:
        rows = [result_row(r) for r in results]

        def insert(con: psycopg.Connection[Any]) -> int:
            with con.transaction(), con.cursor() as cur:
                cur.executemany(_INSERT_RESULT, rows)
                return cur.rowcount

        return self._run(insert, retry_s=retry_s, what="result write") if rows else 0

    def _upsert_runs(self, spooled: list[SpooledRun]) -> None:
        def write(con: psycopg.Connection[Any]) -> None:
            with con.transaction():
                for item in spooled:
                    sql = _UPSERT_RUN if item.op == "update" else _INSERT_RUN + " ON CONFLICT (run_id) DO NOTHING"
                    con.execute(sql, run_row(item.run))

        self._run(write, what="run write")

    def results(self, query: ResultQuery | None = None) -> list[Result]:
        query = query or ResultQuery()
        built = results_sql(query, "%s", lambda n: ("run_id = ANY(%s)", [list(query.run_ids or ())]))
        if built is None:
            return []
        sql, args = built
        return [Result.from_json(r[0]) for r in self._run(lambda con: con.execute(sql, args).fetchall())]

    def summaries(self, query: ResultQuery | None = None) -> list[ResultSummary]:
        """The summary columns of the results `query` matches (history and compare read these, not the records)."""
        query = query or ResultQuery()
        built = summaries_sql(query, "%s", lambda n: ("run_id = ANY(%s)", [list(query.run_ids or ())]))
        if built is None:
            return []
        sql, args = built
        return [summary_from_row(row) for row in self._run(lambda con: con.execute(sql, args).fetchall())]

    def machines(self, benchmark: str | None = None) -> dict[str, str | None]:
        sql, args = machines_sql(benchmark, "%s")
        return dict(self._run(lambda con: con.execute(sql, args).fetchall()))

    def completed(self, run_id: str) -> set[tuple[str, str, int]]:
        rows = self._run(lambda con: con.execute(
            "SELECT case_id, env_name, process_index FROM results WHERE run_id = %s", [run_id]).fetchall())
        return {(r[0], r[1], int(r[2])) for r in rows}

    def delete_run(self, run_id: str, *, force: bool = False) -> int:
        """Delete a run: its results and its record in one transaction (the run row locked, and checked again,
        inside it), and what of it waits in the local spool; returns the results removed. A run going on in another
        process is refused (RunInUse) unless `force`. A spool on another machine is out of reach: a run going on
        there is refused for that reason too (its host cannot be checked from here)."""
        check_deletable(self.get_run(run_id), force)
        spooled = self.spool.forget_run(run_id)

        def delete(con: psycopg.Connection[Any]) -> int:
            with con.transaction():
                row = con.execute("SELECT doc FROM runs WHERE run_id = %s FOR UPDATE", [run_id]).fetchone()
                if row is None:
                    raise StoreError(f"no run {run_id!r} in {self.url}")
                check_deletable(Run.from_json(row[0]), force)
                removed = con.execute("DELETE FROM results WHERE run_id = %s", [run_id]).rowcount
                con.execute("DELETE FROM runs WHERE run_id = %s", [run_id])
                return int(removed)

        return self._run(delete, what="run deletion") + spooled

    # -- watch -----------------------------------------------------------------------------------------------

    def _has_watch(self) -> bool:
        """A store of an older schema opened read-only has no watch tables yet: it has watched nothing."""
        if self._watch_tables is None:
            self._watch_tables = self.schema_version() >= WATCH_SCHEMA_VERSION
        return self._watch_tables

    def watched(self, query: WatchQuery | None = None) -> list[WatchedRelease]:
        if not self._has_watch():
            return []
        sql, args = watched_sql(query or WatchQuery(), "%s")
        rows = self._run(lambda con: con.execute(sql, args).fetchall(), what="watch read")
        return [WatchedRelease.from_json(row[0]) for row in rows]

    def record_watch(self, release: WatchedRelease) -> None:
        values = [release.watch_id, release.version, release.package, release.machine_id, release.verdict,
                  _utc(release.watched_at), json.dumps(release.to_json(), default=str)]
        self._run(lambda con: con.execute(
            "INSERT INTO watched VALUES (%s, %s, %s, %s, %s, %s, %s::json) ON CONFLICT (watch_id, version) DO UPDATE "
            "SET verdict = excluded.verdict, watched_at = excluded.watched_at, doc = excluded.doc", values),
            what="watch write")

    def watch_alerts(self, watch_ids: tuple[str, ...] | None = None, *, pending: bool = True) -> list[WatchAlert]:
        if not self._has_watch():
            return []
        sql = "SELECT doc FROM watch_alerts" + (" WHERE sent_at IS NULL" if pending else "") + " ORDER BY created_at"
        alerts = [WatchAlert.from_json(row[0]) for row in self._run(lambda con: con.execute(sql).fetchall())]
        return [a for a in alerts if watch_ids is None or set(a.watch_ids) & set(watch_ids)]

    def save_alert(self, alert: WatchAlert) -> None:
        values = [alert.alert_id, _utc(alert.created_at), _utc(alert.sent_at), json.dumps(alert.to_json(), default=str)]
        self._run(lambda con: con.execute(
            "INSERT INTO watch_alerts VALUES (%s, %s, %s, %s::json) ON CONFLICT (alert_id) DO UPDATE "
            "SET sent_at = excluded.sent_at, doc = excluded.doc", values), what="alert write")

    def claim_watch(self, watch_id: str, holder: WatchHolder, lease_s: float) -> WatchHolder | None:
        def claim(con: psycopg.Connection[Any]) -> WatchHolder | None:
            with con.transaction():
                con.execute("INSERT INTO watch_locks VALUES (%s, %s, NULL) ON CONFLICT (watch_id) DO NOTHING",
                            [watch_id, "null"])
                row = con.execute("SELECT holder, expires_at FROM watch_locks WHERE watch_id = %s FOR UPDATE",
                                  [watch_id]).fetchone()
                current = json.loads(row[0]) if row else None
                now = datetime.now(UTC)
                if not may_claim(current, row[1] if row else None, holder, now):
                    return holder_of(current) if current else None
                con.execute("UPDATE watch_locks SET holder = %s, expires_at = %s WHERE watch_id = %s",
                            [json.dumps(holder), now + timedelta(seconds=lease_s), watch_id])
                return None

        return self._run(claim, what="watch claim")

    def release_watch(self, watch_id: str, holder: WatchHolder) -> None:
        self._run(lambda con: con.execute("DELETE FROM watch_locks WHERE watch_id = %s AND holder = %s",
                                          [watch_id, json.dumps(holder)]), what="watch release")

    # -- spool -----------------------------------------------------------------------------------------------

    def _went_offline(self, what: str, path: Any, exc: StoreError) -> None:
        first = not self._offline
        self._offline = True
        log.warning("%s kept in the local spool %s: %s%s", what, path, exc,
                    "" if first else " (still away)")

    def _back_online(self) -> None:
        if self._offline or self._spool_dirty:
            self._offline = self._spool_dirty = False
            try:
                report = self.sync_spool()
            except StoreError as exc:
                self._spool_dirty = True
                log.warning("the server is back but the spool did not upload yet: %s", exc)
                return
            log.warning("%s is back: uploaded %s and %s from the local spool",
                        self.url, plural(report.runs, "run record"), plural(report.results, "result"))

    def sync_spool(self) -> SyncReport:
        """Upload the local spool of this store; raises StoreUnavailable (keeping the files) if the server is away."""
        return self.spool.drain(self._upsert_runs, self._insert_results)

    def finish_writes(self) -> SyncReport:
        """End of a run: what the spool holds waits for `colbench store sync` (the writes already said so)."""
        return SyncReport()

    # -- housekeeping ----------------------------------------------------------------------------------------

    def info(self, check: bool = False) -> dict[str, Any]:
        """Schema version, counts, machines, server version; `check` also reads every document in full."""
        def collect(con: psycopg.Connection[Any]) -> dict[str, Any]:
            if check:
                for table in ("runs", "results"):
                    con.execute(f"SELECT count(*), sum(length(doc::text)) FROM {table}").fetchone()
            machines = con.execute(
                "SELECT r.machine_id, (SELECT max(doc->'machine'->>'name') FROM runs WHERE runs.machine_id = "
                "r.machine_id), r.n FROM (SELECT machine_id, count(*) AS n FROM results GROUP BY machine_id) r "
                "ORDER BY r.n DESC, r.machine_id").fetchall()
            return {
                "url": self.url, "backend": "postgresql", "schema_version": self._version(con) or 0,
                "runs": _count(con, "SELECT count(*) FROM runs"),
                "results": _count(con, "SELECT count(*) FROM results"),
                "machines": [{"machine_id": m, "name": n, "results": c} for m, n, c in machines],
                "server": (con.execute("SHOW server_version").fetchone() or ("?",))[0],
            }

        found = self._run(collect)
        runs, results = self.spool.pending()
        found["spool"] = {"dir": str(self.spool.dir), "runs": runs, "results": results}
        return found

    def close(self) -> None:
        self._drop()


# -- migrations --------------------------------------------------------------------------------------------------
#
# Schema 0 is the layout of colbench's first prototype: the same three tables, but an empty colbench_meta (no
# schema_version row), no extracted `wall_median`/`commit_sha` columns, naive UTC `TIMESTAMP`s, text documents,
# the database's default collation and no indexes. MIGRATIONS[n] takes a store from schema n-1 to n, inside the
# schema transaction (and under the advisory lock).


def _column_types(con: psycopg.Connection[Any], table: str) -> dict[str, str]:
    rows = con.execute("SELECT column_name, data_type FROM information_schema.columns "
                       "WHERE table_schema = current_schema() AND table_name = %s", [table]).fetchall()
    return {name: kind for name, kind in rows}


def _migrate_to_1(con: psycopg.Connection[Any]) -> None:
    for table, keys in (("runs", ("run_id", "machine_id")),
                        ("results", ("result_id", "run_id", "case_id", "benchmark", "env_name", "status",
                                     "machine_id"))):
        types = _column_types(con, table)
        if types.get("doc") != "json":
            con.execute(f"ALTER TABLE {table} ALTER COLUMN doc TYPE JSON USING doc::json")
        for column in keys:
            con.execute(f'ALTER TABLE {table} ALTER COLUMN {column} TYPE TEXT COLLATE "C"')
        for column in ("started_at", "finished_at", "created_at"):
            if types.get(column) == "timestamp without time zone":
                con.execute(f"ALTER TABLE {table} ALTER COLUMN {column} TYPE TIMESTAMPTZ "
                            f"USING {column} AT TIME ZONE 'UTC'")
        con.execute(f"ALTER TABLE {table} ADD COLUMN IF NOT EXISTS commit_sha TEXT")
        con.execute(f"UPDATE {table} SET commit_sha = doc #>> '{{commit,sha}}' WHERE commit_sha IS NULL")
    con.execute("ALTER TABLE results ADD COLUMN IF NOT EXISTS wall_median DOUBLE PRECISION")
    con.execute("UPDATE results SET wall_median = (doc #>> '{summary,wall_s,median}')::double precision "
                "WHERE wall_median IS NULL")
    for statement in INDEXES:
        con.execute(statement)
    con.execute("INSERT INTO colbench_meta VALUES ('migrated_to_1_at', %s) ON CONFLICT (key) DO NOTHING",
                [datetime.now(UTC).isoformat()])


def _migrate_to_2(con: psycopg.Connection[Any]) -> None:
    """The summary columns history and compare read instead of the records, filled from each record."""
    for column, kind in (("machine_name", "TEXT"), ("engine", "TEXT"), ("params", "JSON"), ("versions", "JSON"),
                         ("medians", "JSON")):
        con.execute(f"ALTER TABLE results ADD COLUMN IF NOT EXISTS {column} {kind}")
    con.execute("""UPDATE results SET machine_name = doc #>> '{machine,name}', engine = doc ->> 'engine',
        params = coalesce(doc -> 'params', '{}'), versions = coalesce(doc -> 'versions', '{}'),
        medians = coalesce((SELECT json_object_agg(key, value -> 'median') FROM json_each(
            CASE WHEN json_typeof(doc -> 'summary') = 'object' THEN doc -> 'summary' END)
            WHERE json_typeof(value) = 'object'), '{}')
        WHERE medians IS NULL""")


def _migrate_to_3(con: psycopg.Connection[Any]) -> None:
    """The tables of `colbench watch`: nothing existing changes."""
    for statement in WATCH_DDL:
        con.execute(statement)


MIGRATIONS: dict[int, Callable[[psycopg.Connection[Any]], None]] = {1: _migrate_to_1, 2: _migrate_to_2,
                                                                     3: _migrate_to_3}
