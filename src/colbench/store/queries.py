"""The SQL both stores run, built in one place for either driver's placeholder style, and the rows it returns.

Only column names from this module and placeholders reach the SQL text; every value is a parameter. History and
compare read `ResultSummary` rows: the indexed and summary columns of `results`, never the whole JSON record,
so asking for a benchmark's history over a million stored results decodes a few small values per result.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from colbench.model.summary import ResultSummary, iso_utc, summary_of, summary_values

__all__ = ["RESULT_COLUMNS", "RUNS_ORDER", "ResultQuery", "ResultSummary", "RunRef", "WatchQuery", "find_runs_sql",
           "machines_sql", "results_sql", "summaries_sql", "summary_from_row", "summary_of", "summary_values",
           "watched_sql"]


@dataclass(frozen=True)
class ResultQuery:
    run_ids: tuple[str, ...] | None = None
    benchmark: str | None = None
    machine_id: str | None = None
    case_id: str | None = None
    env_name: str | None = None
    status: str | None = None


@dataclass(frozen=True)
class WatchQuery:
    """Watched releases of one watch, of a package, or of a machine (None: any)."""

    watch_id: str | None = None
    package: str | None = None
    machine_id: str | None = None


@dataclass(frozen=True)
class RunRef:
    run_id: str
    name: str | None


# The columns of `results` in the order of the stores' `result_row` (the table's own order: the summary columns
# came with store schema 2 and sit after `doc`, where ALTER TABLE puts them in a migrated store).
RESULT_COLUMNS = ("result_id", "run_id", "case_id", "benchmark", "env_name", "process_index", "block", "status",
                  "machine_id", "commit_sha", "created_at", "wall_median", "doc",
                  "machine_name", "engine", "params", "versions", "medians")
SUMMARY_COLUMNS = ("machine_name", "engine", "params", "versions", "medians")
_SUMMARY_SELECT = ("result_id", "run_id", "case_id", "benchmark", "env_name", "process_index", "block", "status",
                   "machine_id", "machine_name", "created_at", "commit_sha", "engine", "params", "versions", "medians")
RESULTS_ORDER = " ORDER BY created_at, run_id, case_id, env_name, process_index"
RUNS_ORDER = " ORDER BY started_at DESC NULLS LAST, run_id"


def _json(value: Any) -> Any:
    """A JSON column as the driver returns it: text from DuckDB, decoded from psycopg; NULL is empty."""
    if value is None:
        return {}
    return json.loads(value) if isinstance(value, str) else value


def summary_from_row(row: tuple[Any, ...]) -> ResultSummary:
    values = dict(zip(_SUMMARY_SELECT, row, strict=True))
    return ResultSummary(
        result_id=values["result_id"], run_id=values["run_id"], case_id=values["case_id"],
        benchmark=values["benchmark"], env_name=values["env_name"], process_index=int(values["process_index"]),
        block=values["block"], status=values["status"], machine_id=values["machine_id"],
        machine_name=values["machine_name"], timestamp=iso_utc(values["created_at"]), commit_sha=values["commit_sha"],
        engine=values["engine"], params=_json(values["params"]), versions=_json(values["versions"]),
        medians=_json(values["medians"]))


def _where(query: ResultQuery, placeholder: str, runs_clause: Callable[[int], tuple[str, list[Any]]]
           ) -> tuple[str, list[Any]] | None:
    where: list[str] = []
    args: list[Any] = []
    if query.run_ids is not None:
        if not query.run_ids:
            return None
        clause, clause_args = runs_clause(len(query.run_ids))
        where.append(clause)
        args.extend(clause_args)
    for column in ("benchmark", "machine_id", "case_id", "env_name", "status"):
        value = getattr(query, column)
        if value is not None:
            where.append(f"{column} = {placeholder}")
            args.append(value)
    return (" WHERE " + " AND ".join(where) if where else ""), args


def results_sql(query: ResultQuery, placeholder: str, runs_clause: Callable[[int], tuple[str, list[Any]]],
                columns: str = "doc") -> tuple[str, list[Any]] | None:
    """The results query for `query` in a driver's placeholder style; None when it can match nothing.
    `runs_clause(n)` gives the run-id condition for n ids and its parameters (IN (...) or = ANY(...))."""
    built = _where(query, placeholder, runs_clause)
    if built is None:
        return None
    where, args = built
    return f"SELECT {columns} FROM results{where}{RESULTS_ORDER}", args


def summaries_sql(query: ResultQuery, placeholder: str, runs_clause: Callable[[int], tuple[str, list[Any]]]
                  ) -> tuple[str, list[Any]] | None:
    return results_sql(query, placeholder, runs_clause, columns=", ".join(_SUMMARY_SELECT))


def machines_sql(benchmark: str | None, placeholder: str) -> tuple[str, list[Any]]:
    """machine_id → a machine name, for the machines with results (of one benchmark)."""
    where, args = (f" AND benchmark = {placeholder}", [benchmark]) if benchmark is not None else ("", [])
    return (f"SELECT machine_id, max(machine_name) FROM results WHERE machine_id IS NOT NULL{where} "
            "GROUP BY machine_id ORDER BY machine_id", args)


def find_runs_sql(ref: str | None, placeholder: str) -> tuple[str, list[Any]]:
    """Runs `ref` may name (its id, an id it starts, a name), newest first; the newest run when `ref` is None."""
    if ref is None:
        return f"SELECT run_id, name FROM runs{RUNS_ORDER} LIMIT 1", []
    condition = (f"run_id = {placeholder} OR left(run_id, {len(ref)}) = {placeholder} "
                 f"OR name = {placeholder}")
    return f"SELECT run_id, name FROM runs WHERE {condition}{RUNS_ORDER}", [ref, ref, ref]


def watched_sql(query: WatchQuery, placeholder: str) -> tuple[str, list[Any]]:
    """The watched releases `query` names, oldest watched first (a store sorts versions itself: SQL cannot)."""
    where, args = [], []
    for column in ("watch_id", "package", "machine_id"):
        value = getattr(query, column)
        if value is not None:
            where.append(f"{column} = {placeholder}")
            args.append(value)
    condition = f" WHERE {' AND '.join(where)}" if where else ""
    return f"SELECT doc FROM watched{condition} ORDER BY watched_at, watch_id, version", args
