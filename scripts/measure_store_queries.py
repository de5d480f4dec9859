"""How fast the queries behind compare/history/report are with a million results stored, with and without indexes.

Bulk-loads N synthetic result records (realistic ~3.5 KB documents: 10 machines, 30 benchmarks × 20 cases,
runs of 100 cases × 3 processes over two years) into a PostgreSQL store (COPY) and a DuckDB store, then times,
through the stores' own methods (so JSON decoding and transfer count):

    run          results of one run (show, compare, report)         results(ResultQuery(run_ids=(run,)))
    history      one benchmark on one machine, whole records        results(ResultQuery(benchmark=, machine_id=))
    case         one case on one machine over time (ok results)     results(ResultQuery(case_id=, machine_id=, ...))
    completed    what a resumed run skips                           completed(run)
    summaries    one benchmark on one machine, summary columns      summaries(ResultQuery(benchmark=, machine_id=))
    machines     machines with results of one benchmark             machines(benchmark)

and what the commands do with the store (the same calls `colbench history` and `colbench compare` make):

    history-cmd  pick_machine + case_histories (store reads, then e-divisive change points per case)
    history-read the store reads of history-cmd alone (machines + summaries)
    compare-cmd  the compare use case on two runs on one machine (resolve both sides, then intervals and verdicts)
    compare-read the store reads of compare-cmd alone (resolve_side twice)

first without the secondary indexes (primary keys stay: they make writes idempotent), then with them.

    uv run python scripts/measure_store_queries.py --url postgresql://USER@HOST:PORT/DB --duckdb /tmp/m.duckdb

The PostgreSQL database should be empty (it is loaded, not cleaned up); the DuckDB file is created anew. `--reuse`
times a store an earlier call loaded. Each figure is the median of `--repeat` calls after one warm-up call; the
machine's load average is printed beside them (the timings of a loaded machine are higher).
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import random
import statistics
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from colbench.model.records import Result, Run
from colbench.model.result import SCHEMA_VERSION, case_id, result_id
from colbench.store.base import ResultQuery

MACHINES = 10
BENCHMARKS = 30
CASES_PER_BENCHMARK = 20
CASES_PER_RUN = 100
PROCESSES = 3
START = datetime(2024, 1, 1, tzinfo=UTC)
SPAN_S = 2 * 365 * 86400


def _machine(index: int) -> dict[str, Any]:
    return {"name": f"runner-{index}", "hostname": f"runner-{index}", "cpu_model": "Intel(R) Xeon(R) Gold 6338",
            "architecture": "x86_64", "cpu_cores": 32, "cpu_threads": 64, "cpus_allowed": list(range(64)),
            "cpu_caches": {"L1d": "48K", "L1i": "32K", "L2": "1280K", "L3": "49152K"},
            "cpu_governors": ["performance"], "cpu_turbo": False, "cpu_smt": True, "memory_bytes": 256 << 30,
            "swap_bytes": 0, "os": "Linux", "os_release": "Debian GNU/Linux 12 (bookworm)", "kernel": "6.1.0-18",
            "python": "3.11.7", "aslr": "2", "load_average": [0.1, 0.2, 0.3], "machine_id": f"machine{index:05d}"}


def _cases() -> list[tuple[str, dict[str, Any], str]]:
    cases = []
    for b in range(BENCHMARKS):
        for c in range(CASES_PER_BENCHMARK):
            params = {"source": f"src{c % 5}", "format": ["parquet", "feather", "csv"][c % 3], "threads": 1 + c % 4,
                      "allocator": "default", "cache": "warm"}
            cases.append((f"bench_{b:02d}", params, case_id(f"bench_{b:02d}", params)))
    return cases


def synthetic(rows: int, seed: int = 1) -> Iterator[tuple[dict[str, Any], dict[str, Any] | None]]:
    """(result, run or None): runs of CASES_PER_RUN cases × PROCESSES on a random machine at a random time."""
    rng = random.Random(seed)
    cases = _cases()
    machines = [_machine(i) for i in range(MACHINES)]
    made, run_index = 0, 0
    while made < rows:
        machine = machines[rng.randrange(MACHINES)]
        started = START + timedelta(seconds=rng.randrange(SPAN_S))
        run_id = started.strftime("%Y%m%dT%H%M%S") + f"-{run_index:06x}"
        run = {"schema_version": SCHEMA_VERSION, "run_id": run_id, "name": None, "started_at": started.isoformat(),
               "finished_at": (started + timedelta(hours=1)).isoformat(), "status": "finished",
               "machine_id": machine["machine_id"], "machine": machine,
               "commit": {"sha": f"{rng.getrandbits(160):040x}"}, "config": {"targets": ["suite"]},
               "cases": CASES_PER_RUN}
        run_index += 1
        for n, (bench, params, case) in enumerate(rng.sample(cases, CASES_PER_RUN)):
            for process in range(PROCESSES):
                if made >= rows:
                    return
                wall = [0.01 * (1 + rng.random() * 0.05) for _ in range(5)]
                stamp = started + timedelta(seconds=n * 10 + process * 3)
                result = {
                    "schema_version": SCHEMA_VERSION, "result_id": result_id(run_id, case, "default", process),
                    "run_id": run_id, "run_name": None, "timestamp": stamp.isoformat(), "benchmark": bench,
                    "case_id": case, "params": params, "tags": {"name": bench, **params}, "engine": "pyarrow",
                    "runtime": {"name": "python", "version": "3.11.7"}, "env_name": "default",
                    "env": {"name": "default", "spec": None, "key": None}, "process_index": process, "block": process,
                    "status": "ok" if rng.random() > 0.02 else "error", "iterations": 5, "warmup": 1,
                    "samples": {"wall_s": wall, "cpu_user_s": wall, "cpu_sys_s": [0.0] * 5},
                    "summary": {"wall_s": {"n": 5, "min": min(wall), "median": statistics.median(wall),
                                           "mean": statistics.fmean(wall)}},
                    "memory": {"peak_rss_bytes": 123456789}, "versions": {"pyarrow": "15.0.0", "python": "3.11.7"},
                    "machine_id": machine["machine_id"], "machine": machine,
                    "environment_checks": [{"name": "load", "ok": True, "message": "load average fine"}],
                    "commit": run["commit"], "warnings": [], "error": None,
                }
                made += 1
                yield result, (run if n == 0 and process == 0 else None)


def _fresh(store: Any) -> None:
    """Close the DuckDB store's shared read-only connection: every timed call opens the file as a command does."""
    path = getattr(store, "path", None)
    if path is not None:
        try:
            from colbench.store.duckdb_connect import release
        except ImportError:  # a colbench from before shared connections opens the file for every query anyway
            return
        release(path)


def timed(label: str, call: Callable[[], Any], repeat: int, store: Any = None) -> tuple[str, float, int, float]:
    """(label, median wall seconds, rows, median CPU seconds of this process, all threads): on a loaded machine the
    CPU time is the better guide to the wall time of a quiet one."""
    call()  # warm the operating system's caches: we measure the steady state a command or dashboard sees
    times, cpu, found = [], [], 0
    for _ in range(repeat):
        _fresh(store)
        started, started_cpu = time.perf_counter(), time.process_time()
        found = len(call())
        times.append(time.perf_counter() - started)
        cpu.append(time.process_time() - started_cpu)
    return label, statistics.median(times), found, statistics.median(cpu)


def queries(store: Any, probe: dict[str, str], repeat: int) -> list[tuple[str, float, int, float]]:
    from colbench.analysis.comparison import CompareSettings
    from colbench.analysis.history import case_histories
    from colbench.app.compare import CompareRequest, compare
    from colbench.store.selection import history_results, pick_machine, resolve_side

    history_query = ResultQuery(benchmark=probe["benchmark"], machine_id=probe["machine"])
    found = [
        timed("run", lambda: store.results(ResultQuery(run_ids=(probe["run"],))), repeat, store),
        timed("history", lambda: store.results(history_query), repeat, store),
        timed("case", lambda: store.results(ResultQuery(case_id=probe["case"], machine_id=probe["machine"],
                                                        status="ok")), repeat, store),
        timed("completed", lambda: store.completed(probe["run"]), repeat, store),
    ]
    if hasattr(store, "summaries"):  # colbench since store schema 2
        found += [timed("summaries", lambda: store.summaries(history_query), repeat, store),
                  timed("machines", lambda: store.machines(probe["benchmark"]), repeat, store)]

        def history_reads() -> list[Any]:
            store.machines(probe["benchmark"])
            return store.summaries(ResultQuery(benchmark=probe["benchmark"], machine_id=probe["machine"],
                                               status="ok"))

        found.append(timed("history-read", history_reads, repeat, store))

    def history_command() -> list[Any]:
        machine = pick_machine(store, probe["benchmark"], probe["machine_name"], here="")
        return case_histories(history_results(store, probe["benchmark"], machine), machine, {})

    def compare_command() -> list[Any]:
        settings = CompareSettings(metrics=("time", "memory", "file_size"))
        return compare(store, CompareRequest(probe["baseline"], probe["contender"], settings)).cases

    return found + [
        timed("history-cmd", history_command, repeat, store),
        timed("compare-read", lambda: [resolve_side(store, probe["baseline"]),
                                       resolve_side(store, probe["contender"])], repeat, store),
        timed("compare-cmd", compare_command, repeat, store),
    ]


def load_postgres(url: str, rows: int) -> None:
    from colbench.store.postgres_store import RESULT_COLUMNS, RUN_COLUMNS, PostgresStore, result_row, run_row

    store = PostgresStore(url)
    set_indexes("postgresql", url, False)  # load first, index after
    con = store._connection()
    started = time.perf_counter()
    runs = []
    with con.cursor() as cur, cur.copy(f"COPY results ({', '.join(RESULT_COLUMNS)}) FROM STDIN") as copy:
        for result, run in synthetic(rows):
            copy.write_row(result_row(Result.from_json(result)))
            if run is not None:
                runs.append(run_row(Run.from_json(run)))
    with con.cursor() as cur, cur.copy(f"COPY runs ({', '.join(RUN_COLUMNS)}) FROM STDIN") as copy:
        for row in runs:
            copy.write_row(row)
    con.execute("ANALYZE results")
    size = con.execute("SELECT pg_size_pretty(pg_total_relation_size('results'))").fetchone()[0]
    print(f"postgresql: loaded {rows:,} results and {len(runs):,} runs in {time.perf_counter() - started:.0f} s "
          f"({size} on disk, primary key only)")
    store.close()


def load_duckdb(path: Path, rows: int) -> None:
    import duckdb
    import pyarrow as pa

    from colbench.store.duckdb_store import DuckDBStore, result_row, run_row
    from colbench.store.queries import RESULT_COLUMNS

    path.unlink(missing_ok=True)
    DuckDBStore(path)
    started = time.perf_counter()
    names = list(RESULT_COLUMNS)
    con = duckdb.connect(str(path))
    for statement in ("DROP INDEX results_run", "DROP INDEX results_history", "DROP INDEX results_case"):
        con.execute(statement)  # load first; DuckDBStore builds its indexes again when it next opens the file
    batch: list[tuple[Any, ...]] = []
    runs: list[tuple[Any, ...]] = []

    def flush() -> None:
        arrow_batch = pa.Table.from_pylist([dict(zip(names, row, strict=True)) for row in batch])  # noqa: F841
        con.execute("INSERT INTO results SELECT * FROM arrow_batch")
        batch.clear()

    for result, run in synthetic(rows):
        batch.append(result_row(Result.from_json(result)))
        if run is not None:
            runs.append(run_row(Run.from_json(run)))
        if len(batch) >= 50_000:
            flush()
    if batch:
        flush()
    con.executemany("INSERT INTO runs VALUES (?, ?, ?, ?, ?, ?, ?, ?)", runs)
    con.close()
    print(f"duckdb: loaded {rows:,} results in {time.perf_counter() - started:.0f} s "
          f"({path.stat().st_size / 2**30:.1f} GiB)")


def set_indexes(kind: str, target: str, on: bool) -> float:
    """Create (and ANALYZE) or drop the PostgreSQL store's secondary indexes; seconds it took."""
    import psycopg

    from colbench.store.postgres_store import INDEXES

    assert kind == "postgresql"
    started = time.perf_counter()
    with psycopg.connect(target, autocommit=True) as con:
        for statement in INDEXES:
            if on:
                con.execute(statement)
            else:
                con.execute(f"DROP INDEX IF EXISTS {statement.split()[5]}")
        con.execute("ANALYZE results")
    return time.perf_counter() - started


def _probe() -> dict[str, str]:
    """The first synthetic run's machine, benchmark and case, and the next run on that machine (to compare with):
    every loader makes the same data from the same seed."""
    first = next(synthetic(1))[0]
    contender = next(run["run_id"] for _, run in synthetic(10**9)
                     if run and run["machine_id"] == first["machine_id"] and run["run_id"] != first["run_id"])
    return {"run": first["run_id"], "benchmark": first["benchmark"], "machine": first["machine_id"],
            "machine_name": first["machine"]["name"], "case": first["case_id"], "baseline": first["run_id"],
            "contender": contender}


def _open_reading(url: str) -> Any:
    """The store as a reading command opens it (read-only, where this colbench knows how)."""
    from colbench.store import open_store

    if "read_only" in inspect.signature(open_store).parameters:
        return open_store(url, create=False, read_only=True)
    return open_store(url, create=False)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", help="an empty PostgreSQL database")
    parser.add_argument("--duckdb", type=Path, help="a DuckDB file to create")
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--reuse", action="store_true", help="time the queries on data an earlier call loaded")
    args = parser.parse_args()
    load = os.getloadavg()
    report = []
    if args.url:
        if not args.reuse:
            load_postgres(args.url, args.rows)
        for indexed in (False, True):
            build = set_indexes("postgresql", args.url, indexed)
            if indexed:
                print(f"postgresql: built the indexes in {build:.1f} s")
            store = _open_reading(args.url)
            report += [("postgresql", indexed, *row) for row in queries(store, _probe(), args.repeat)]
            store.close()
    if args.duckdb:
        if not args.reuse:
            load_duckdb(args.duckdb, args.rows)
        store = _open_reading(str(args.duckdb))  # with the indexes a writing open of the file made
        report += [("duckdb", True, *row) for row in queries(store, _probe(), args.repeat)]
        store.close()
    after = os.getloadavg()
    print(f"\nload average {load[0]:.2f} before, {after[0]:.2f} after, on {os.cpu_count()} CPUs")
    print(f"{'store':<11} {'query':<13} {'rows':>6} {'no indexes':>12} {'indexes':>10} {'(CPU)':>10}")
    for kind, label in dict.fromkeys((k, q) for k, _, q, *_ in report):
        found = {indexed: (seconds, rows, cpu) for k, indexed, q, seconds, rows, cpu in report
                 if (k, q) == (kind, label)}
        cells = [f"{found[i][0] * 1000:>9.1f} ms" if i in found else f"{'n/a':>12}" for i in (False, True)]
        print(f"{kind:<11} {label:<13} {found[True][1]:>6} {cells[0]} {cells[1]:>10} {found[True][2] * 1000:>7.1f} ms")
    print(json.dumps([{"store": k, "indexes": i, "query": q, "median_ms": round(s * 1000, 2), "rows": n,
                       "cpu_ms": round(c * 1000, 2)} for k, i, q, s, n, c in report]))


if __name__ == "__main__":
    main()
