"""What every results store offers, and how a store URL picks its backend."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Protocol


class StoreError(RuntimeError):
    """The store cannot be used as asked: unreadable, newer schema, unknown run …"""


@dataclass(frozen=True)
class ResultQuery:
    run_ids: tuple[str, ...] | None = None
    benchmark: str | None = None
    machine_id: str | None = None
    case_id: str | None = None
    env_name: str | None = None
    status: str | None = None


RESULTS_ORDER = " ORDER BY created_at, run_id, case_id, env_name, process_index"


def results_sql(query: ResultQuery, placeholder: str, runs_clause: Callable[[int], tuple[str, list[Any]]]
                ) -> tuple[str, list[Any]] | None:
    """The results query for `query` in a driver's placeholder style; None when it can match nothing.

    Only column names from this code and placeholders reach the SQL text; every value is a parameter.
    `runs_clause(n)` gives the run-id condition for n ids and its parameters (IN (...) or = ANY(...)).
    """
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
    sql = "SELECT doc FROM results" + (" WHERE " + " AND ".join(where) if where else "") + RESULTS_ORDER
    return sql, args


class Store(Protocol):
    url: str

    def create_run(self, run: dict[str, Any]) -> None: ...
    def update_run(self, run: dict[str, Any]) -> None: ...
    def get_run(self, run_id: str) -> dict[str, Any]: ...
    def list_runs(self, limit: int | None = None) -> list[dict[str, Any]]: ...
    def add_result(self, result: dict[str, Any]) -> bool: ...
    def add_results(self, results: Iterable[dict[str, Any]]) -> int: ...
    def results(self, query: ResultQuery | None = None) -> list[dict[str, Any]]: ...
    def completed(self, run_id: str) -> set[tuple[str, str, int]]: ...
    def close(self) -> None: ...


def resolve_run_id(store: Store, ref: str) -> str:
    """A run id, a unique prefix of one, a run name, or `latest`."""
    runs = store.list_runs()
    if not runs:
        raise StoreError(f"no runs in {store.url}: `colbench run` first")
    if ref == "latest":
        return runs[0]["run_id"]
    exact = [r for r in runs if r["run_id"] == ref]
    if exact:
        return ref
    prefixed = [r for r in runs if r["run_id"].startswith(ref)]
    named = [r for r in runs if r.get("name") == ref]
    for candidates in (prefixed, named):
        if len(candidates) == 1:
            return candidates[0]["run_id"]
        if len(candidates) > 1 and candidates is named:
            return candidates[0]["run_id"]  # the newest run of that name
        if len(candidates) > 1:
            raise StoreError(f"run {ref!r} is ambiguous ({len(candidates)} runs start with it): give more characters")
    raise StoreError(f"no run {ref!r} in {store.url}: `colbench show` lists runs, or use `latest`")
