"""The embedded default store: one DuckDB file.

Each write opens, commits and closes its own connection, so a result is durable (in DuckDB's WAL) the
moment `add_result` returns, a `kill -9` of the runner loses nothing completed, and other processes
(`colbench show` while a run is going) can open the file between writes.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import duckdb

from colbench.model.records import median_of
from colbench.model.result import SCHEMA_VERSION
from colbench.store.base import ResultQuery, StoreError, results_sql

_LOCK_RETRY_S = 30.0

DDL = [
    "CREATE TABLE IF NOT EXISTS colbench_meta (key TEXT PRIMARY KEY, value TEXT)",
    """CREATE TABLE IF NOT EXISTS runs (
        run_id TEXT PRIMARY KEY, name TEXT, started_at TIMESTAMP, finished_at TIMESTAMP, status TEXT,
        machine_id TEXT, commit_sha TEXT, doc JSON)""",
    """CREATE TABLE IF NOT EXISTS results (
        result_id TEXT PRIMARY KEY, run_id TEXT NOT NULL, case_id TEXT NOT NULL, benchmark TEXT NOT NULL,
        env_name TEXT NOT NULL, process_index INTEGER NOT NULL, block INTEGER, status TEXT NOT NULL,
        machine_id TEXT, commit_sha TEXT, created_at TIMESTAMP NOT NULL, wall_median DOUBLE, doc JSON NOT NULL)""",
    "CREATE INDEX IF NOT EXISTS results_run ON results (run_id)",
    "CREATE INDEX IF NOT EXISTS results_history ON results (benchmark, machine_id, created_at)",
    "CREATE INDEX IF NOT EXISTS results_case ON results (case_id)",
]


def to_timestamp(value: Any) -> datetime | None:
    if value is None:
        return None
    if isinstance(value, datetime):
        return value.astimezone(UTC).replace(tzinfo=None)
    return datetime.fromisoformat(str(value)).astimezone(UTC).replace(tzinfo=None)


def result_row(result: dict[str, Any]) -> tuple[Any, ...]:
    """The indexed columns of a result, next to its whole document."""
    wall = median_of(result)
    return (
        result["result_id"], result["run_id"], result["case_id"], result["benchmark"], result.get("env_name", ""),
        result["process_index"], result.get("block"), result["status"], result.get("machine_id"),
        (result.get("commit") or {}).get("sha"), to_timestamp(result["timestamp"]), wall,
        json.dumps(result, default=str),
    )


def run_row(run: dict[str, Any]) -> tuple[Any, ...]:
    return (run["run_id"], run.get("name"), to_timestamp(run.get("started_at")), to_timestamp(run.get("finished_at")),
            run.get("status"), run.get("machine_id"), (run.get("commit") or {}).get("sha"),
            json.dumps(run, default=str))


def _count(con: Any, sql: str, params: Sequence[Any] = ()) -> int:
    row = con.execute(sql, params).fetchone()
    return int(row[0]) if row else 0


class DuckDBStore:
    def __init__(self, path: str | Path, *, create: bool = True) -> None:
        self.path = Path(path).expanduser()
        self.url = str(self.path)
        if not self.path.exists():
            if not create:
                raise StoreError(f"no results store at {self.path}: `colbench run` creates it, or pass --store")
            self.path.parent.mkdir(parents=True, exist_ok=True)
        with self._connect() as con:
            self._check_schema(con)

    @contextmanager
    def _connect(self) -> Iterator[duckdb.DuckDBPyConnection]:
        deadline = time.monotonic() + _LOCK_RETRY_S
        while True:
            try:
                con = duckdb.connect(str(self.path))
                break
            except duckdb.IOException as exc:
                if "lock" in str(exc).lower() and time.monotonic() < deadline:
                    time.sleep(0.05)  # another colbench process is writing: wait our turn
                    continue
                raise StoreError(f"cannot open results store {self.path}: {str(exc).splitlines()[0]} "
                                 "(point --store at a colbench DuckDB file or a new path)") from exc
            except duckdb.Error as exc:
                raise StoreError(f"cannot open results store {self.path}: {str(exc).splitlines()[0]} "
                                 "(point --store at a colbench DuckDB file or a new path)") from exc
        try:
            yield con
        finally:
            con.close()

    def _check_schema(self, con: duckdb.DuckDBPyConnection) -> None:
        tables = {row[0] for row in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
        if tables and "colbench_meta" not in tables:
            raise StoreError(f"{self.path} is a DuckDB file but not a colbench store: pass another --store path")
        if "colbench_meta" in tables:
            row = con.execute("SELECT value FROM colbench_meta WHERE key = 'schema_version'").fetchone()
            version = int(row[0]) if row else 0
            if version > SCHEMA_VERSION:
                raise StoreError(
                    f"{self.path} was written by a newer colbench (schema {version}, this one knows "
                    f"{SCHEMA_VERSION}): upgrade colbench, or use another --store"
                )
            if version == SCHEMA_VERSION:
                return  # up to date: reading commands leave the file untouched
        for statement in DDL:
            con.execute(statement)
        con.execute("INSERT INTO colbench_meta VALUES ('schema_version', ?) ON CONFLICT (key) DO UPDATE SET "
                    "value = excluded.value", [str(SCHEMA_VERSION)])

    def create_run(self, run: dict[str, Any]) -> None:
        with self._connect() as con:
            con.execute("INSERT INTO runs VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING", run_row(run))

    def update_run(self, run: dict[str, Any]) -> None:
        with self._connect() as con:
            con.execute("INSERT OR REPLACE INTO runs VALUES (?, ?, ?, ?, ?, ?, ?, ?)", run_row(run))

    def get_run(self, run_id: str) -> dict[str, Any]:
        with self._connect() as con:
            row = con.execute("SELECT doc FROM runs WHERE run_id = ?", [run_id]).fetchone()
        if row is None:
            raise StoreError(f"no run {run_id!r} in {self.url}")
        return json.loads(row[0])

    def list_runs(self, limit: int | None = None) -> list[dict[str, Any]]:
        sql = "SELECT doc FROM runs ORDER BY started_at DESC, run_id"
        with self._connect() as con:
            rows = con.execute(sql + (f" LIMIT {int(limit)}" if limit else "")).fetchall()
        return [json.loads(r[0]) for r in rows]

    def add_result(self, result: dict[str, Any]) -> bool:
        """Write one result; False when it was already there (same result id)."""
        with self._connect() as con:
            before = _count(con, "SELECT count(*) FROM results WHERE result_id = ?", [result["result_id"]])
            con.execute("INSERT INTO results VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                        result_row(result))
        return before == 0

    def add_results(self, results: Iterable[dict[str, Any]]) -> int:
        rows = [result_row(r) for r in results]
        if not rows:
            return 0
        with self._connect() as con:
            start = _count(con, "SELECT count(*) FROM results")
            con.executemany("INSERT INTO results VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
                            "ON CONFLICT DO NOTHING", rows)
            return _count(con, "SELECT count(*) FROM results") - start

    def results(self, query: ResultQuery | None = None) -> list[dict[str, Any]]:
        query = query or ResultQuery()
        built = results_sql(query, "?", lambda n: (f"run_id IN ({', '.join('?' * n)})", list(query.run_ids or ())))
        if built is None:
            return []
        sql, args = built
        with self._connect() as con:
            return [json.loads(r[0]) for r in con.execute(sql, args).fetchall()]

    def completed(self, run_id: str) -> set[tuple[str, str, int]]:
        with self._connect() as con:
            rows = con.execute("SELECT case_id, env_name, process_index FROM results WHERE run_id = ?",
                               [run_id]).fetchall()
        return {(r[0], r[1], int(r[2])) for r in rows}

    def close(self) -> None:
        """Nothing to release: every operation closes its own connection."""
