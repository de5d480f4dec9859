"""The figures of docs/scale.md, measured on this machine: a counting sweep's throughput on a Dask cluster of 1 and of
2 local workers, the scheduler's overhead per task, and the whole version history projected from the sample.

    uv run --extra cluster python scripts/cluster_figures.py [--processes 2] [--tasks 100] [--rounds 5] [--skip-sweep]
        [--skip-overhead] [--sweep-rounds 3]

Each sweep is a real `colbench run --versions … --measure instructions --cluster local:N` in a fresh home whose
environments are built first (a local run of one process each), so the figures are the measuring, not the builds;
the time is the run record's own (started → finished). The overhead is what one task costs beyond its worker process:
tasks whose environment is marked broken, so each returns an error result at once without starting a process, sent
through the same executor (`runner/cluster.py`) to one worker. Prints the load average beside every figure: on a
shared machine the throughput ratio says how much of a second CPU the other work left free.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

RELEASES = "pyarrow==14.0.2,16.1.0,21.0.0"
CASES = ("--param", "engine=pyarrow", "--param", "format=feather", "--param", "codec=zstd,lz4",
         "--param", "source=fanniemae_2016Q4", "--param", "output=arrow_table", "--param", "rows=100000",
         "--param", "threads=1")
#: the arrowbench history of the issue: the five experiments' cases over about 30 pyarrow releases, 2 processes a side
HISTORY_CASES, HISTORY_RELEASES, HISTORY_PROCESSES = 262, 30, 2


def _colbench(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLBENCH_HOME": str(home)}
    env.pop("COLBENCH_STORE", None)
    done = subprocess.run([sys.executable, "-m", "colbench", *args], env=env, text=True, capture_output=True)
    if done.returncode not in (0, 1):  # 1: the sweep found a regression between releases, a finished run
        raise SystemExit(f"colbench {' '.join(args[:2])} … failed ({done.returncode}):\n{done.stdout[-2000:]}"
                         f"{done.stderr[-2000:]}")
    return done


def _span(home: Path, name: str) -> tuple[float, int]:
    """(seconds from the run's start to its end, processes stored) of the run named `name`."""
    from colbench.store import open_store

    store = open_store(str(home / "results.duckdb"), create=False)
    run = next(r for r in store.list_runs() if r.name == name)
    results = [r for r in store.results() if r.run_id == run.run_id]
    took = datetime.fromisoformat(run.finished_at).timestamp() - datetime.fromisoformat(run.started_at).timestamp()
    return took, len(results)


#: the local runner one process at a time and two side by side (`--jobs`, runner/local_jobs.py), beside the cluster
#: of 1 and 2 workers: the same sweep, one after the other
RUNNERS = (("local runner, --jobs 1", ("--jobs", "1")), ("Dask, 1 worker", ("--cluster", "local:1")),
           ("Dask, 2 workers", ("--cluster", "local:2")), ("local runner, --jobs 2", ("--jobs", "2")))


def sweep(processes: int, rounds: int = 1, backward_first: bool = False) -> list[dict[str, tuple[float, int]]]:
    """Per round, runner label → (seconds, processes) of the counting sweep; prints the load average before and after
    each sweep beside its figure (on a shared machine the ratio is worth no more than the load it was taken at).
    Rounds alternate the runners' order (forward, then backward), so that a change of the CPU's speed within a
    sitting (docs/gating.md) hits each runner alike over the rounds; ratios are taken within a round."""
    home = Path(tempfile.mkdtemp(prefix="colbench-scale-"))
    common = ("run", "file-read", *CASES, "--versions", RELEASES, "--measure", "instructions", "--iterations", "1",
              "--warmup", "0", "--no-until-decided")
    _colbench(home, *common, "--processes", "1", "--run-name", "builds")  # environments built, data made
    figures: list[dict[str, tuple[float, int]]] = []
    for round_ in range(rounds):
        figures.append({})
        for label, option in RUNNERS if (round_ + backward_first) % 2 == 0 else RUNNERS[::-1]:
            name = f"{'-'.join(option).strip('-').replace(':', '')}-{round_}"
            before = os.getloadavg()[0]
            _colbench(home, *common, "--processes", str(processes), "--run-name", name, *option)
            took, done = _span(home, name)
            figures[-1][label] = (took, done)
            print(f"round {round_ + 1}, counting sweep, {label}: {done} processes in {took:.0f} s "
                  f"({took / done:.1f} s each; load {before:.1f} before, {os.getloadavg()[0]:.1f} after, on "
                  f"{os.cpu_count()} CPUs)", flush=True)
    return figures


def throughput_ratio(round_: dict[str, tuple[float, int]], faster: str, slower: str) -> float:
    (fast_s, fast_n), (slow_s, slow_n) = round_[faster], round_[slower]
    return (fast_n / fast_s) / (slow_n / slow_s)


def _spread(values: list[float]) -> str:
    """`12.3 ms (median of 5 rounds, 10.1–14.0)`"""
    ms = sorted(v * 1000 for v in values)
    return f"{statistics.median(ms):.1f} ms (median of {len(ms)} rounds, {ms[0]:.1f}–{ms[-1]:.1f})"


def _noop(index: int) -> int:
    return index


def overhead(tasks: int = 100, rounds: int = 5) -> float:
    """Seconds one task costs through the executor beyond its worker process (submit, schedule, send the task, run
    its own code on the worker, return the result, the client's progress), on one local worker: `rounds` rounds of
    `tasks` tasks, each beside a round of as many empty Dask tasks (Dask's own floor), alternated so that both see
    the same load. Also the client's store write of a result (the same on the local runner)."""
    from dataclasses import replace

    from distributed import Client, LocalCluster

    from colbench.model.run_config import EnvChoice, RunConfig
    from colbench.runner.cluster import DaskExecutor
    from colbench.runner.execute import start_run
    from colbench.runner.executor import Job
    from colbench.runner.plan import Execution, make_plan
    from colbench.store import open_store

    home = Path(tempfile.mkdtemp(prefix="colbench-overhead-"))
    os.environ["COLBENCH_HOME"] = str(home)
    plan = make_plan(["placebo"])
    config = RunConfig(targets=["placebo"], measure=("instructions",), processes=tasks, iterations=1, warmup=0)
    store = open_store(str(home / "results.duckdb"))
    env = EnvChoice(name="none", broken="not built (an overhead measurement)")
    run = start_run(store, config, plan, [env], ["overhead"])
    executions = [Execution(plan.cases[0], replace(env), i, i) for i in range(tasks)]
    job = Job(run, config, 1, 0, None, {plan.cases[0].case_id: {}}, store)
    ours, floor, loads = [], [], []
    with LocalCluster(n_workers=1, threads_per_worker=1, host="127.0.0.1", dashboard_address=None,
                      silence_logs=40) as cluster, Client(cluster) as client:
        executor = DaskExecutor(client, "overhead")
        executor.check(job, executions[:1])
        list(executor.results(executions[:5], job, lambda _: None))  # warm: the worker imports colbench once
        for _ in range(rounds):
            started = time.perf_counter()
            client.gather(client.map(_noop, range(tasks), pure=False))
            floor.append((time.perf_counter() - started) / tasks)
            started = time.perf_counter()
            done = list(executor.results(executions, job, lambda _: None))
            ours.append((time.perf_counter() - started) / tasks)
            loads.append(os.getloadavg()[0])
            assert len(done) == tasks
    writes = []
    for index, (_, result) in enumerate(done[:20]):
        started = time.perf_counter()
        store.add_result(replace(result, result_id=f"{result.result_id}-{index}"))
        writes.append(time.perf_counter() - started)
    print(f"scheduler overhead: {_spread(ours)} per task ({tasks} tasks a round on 1 worker, load "
          f"{min(loads):.1f}–{max(loads):.1f} on {os.cpu_count()} CPUs); Dask's own floor (an empty task): "
          f"{_spread(floor)}", flush=True)
    print(f"the client's store write: {_spread(writes)} a result ({len(writes)} results into DuckDB; the same on "
          "the local runner; on a cluster it overlaps the workers' tasks)".replace("rounds", "writes"), flush=True)
    return statistics.median(ours)


def projection(per_process_s: float, workers: int, efficiency: float) -> float:
    """Hours for the whole history on `workers` workers at the measured seconds per counting process on one, each
    added worker worth `efficiency` of the first (the 2-worker ratio measured here, minus one)."""
    total = HISTORY_CASES * HISTORY_RELEASES * HISTORY_PROCESSES * per_process_s
    return total / (1 + (workers - 1) * efficiency) / 3600


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--tasks", type=int, default=100, help="tasks of a round of the overhead measurement")
    parser.add_argument("--rounds", type=int, default=5, help="rounds of the overhead measurement")
    parser.add_argument("--skip-sweep", action="store_true", help="the overhead only")
    parser.add_argument("--skip-overhead", action="store_true", help="the sweeps only")
    parser.add_argument("--sweep-rounds", type=int, default=1,
                        help="rounds of the four sweeps, in alternating order; ratios within each round")
    parser.add_argument("--backward-first", action="store_true", help="the first round in backward order")
    args = parser.parse_args()
    if not args.skip_overhead:
        overhead(args.tasks, args.rounds)
    if args.skip_sweep:
        return
    figures = sweep(args.processes, args.sweep_rounds, args.backward_first)
    for faster, slower, what in (("Dask, 2 workers", "Dask, 1 worker", "Dask, 2 workers against 1"),
                                 ("local runner, --jobs 2", "local runner, --jobs 1", "local, --jobs 2 against 1"),
                                 ("Dask, 2 workers", "local runner, --jobs 2", "Dask 2 workers against local --jobs 2"),
                                 ("Dask, 1 worker", "local runner, --jobs 1", "Dask 1 worker against local --jobs 1")):
        ratios = [throughput_ratio(round_, faster, slower) for round_ in figures]
        print(f"throughput, {what}: {statistics.median(ratios):.2f}× (median of {len(ratios)} rounds: "
              f"{', '.join(f'{r:.2f}' for r in ratios)})" + (" (goal ≥ 1.7× on an idle 2-core machine)"
                                                              if what.startswith("Dask, 2") else ""))
    one, n1 = figures[0]["Dask, 1 worker"]
    per_process = one / n1
    for workers in (1, 32):
        hours = projection(per_process, workers, 1.0)
        print(f"whole history ({HISTORY_CASES} cases × {HISTORY_RELEASES} releases × {HISTORY_PROCESSES} processes) "
              f"on {workers} worker(s) at {per_process:.1f} s a process: {hours:.1f} h (perfect scaling)")


if __name__ == "__main__":
    main()
