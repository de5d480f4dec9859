"""Which stored results a command means: the two sides of a comparison, the machine of a history.

A side is a run (`RUN`, a prefix, a name or `latest`), an environment of the latest run (`ENV`), or both
(`RUN:ENV`).
"""

from __future__ import annotations

from typing import Any

from colbench.model.metrics import metric
from colbench.model.records import RunEnv, Side, SideRef
from colbench.model.summary import ResultSummary, summary_of
from colbench.store.base import ResultQuery, Store, StoreError, resolve_run_id


def _envs_of(store: Store, run_id: str) -> list[str]:
    return store.get_run(run_id).env_names


def resolve_side(store: Store, ref: SideRef) -> Side:
    """One side: `RUN`, `RUN:ENV`, or `ENV` (of the newest run that has an environment of that name)."""
    return resolve_sides(store, ref)[0]


def resolve_sides(store: Store, *refs: SideRef) -> list[Side]:
    """The sides of a comparison. A bare name that is no run is an environment: of the newest run that has every
    environment named this way (`compare old new` after `run --env old=… --env new=…`, however many runs came
    since), else of the newest run that has it; a StoreError says so when no run has it. A `RunEnv` is taken as it
    is."""
    found: dict[SideRef, tuple[str, str | None]] = {}  # ref → (run id, environment or None for the run's only one)
    bare_envs: list[str] = []
    for ref in refs:
        if isinstance(ref, RunEnv):
            found[ref] = (ref.run_id, ref.env_name)
            continue
        run_ref, sep, env = ref.partition(":")
        if sep:
            found[ref] = (resolve_run_id(store, run_ref), env)
            continue
        try:
            found[ref] = (resolve_run_id(store, ref), None)
        except StoreError:
            bare_envs.append(ref)
    if bare_envs:
        runs = store.list_runs()  # newest first
        if not runs:
            raise StoreError(f"no runs in {store.url}: `colbench run` first")
        together = next((r for r in runs if all(env in r.env_names for env in bare_envs)), None)
        for env in bare_envs:
            having = together or next((r for r in runs if env in r.env_names), None)
            if having is None:
                shown = env if len(env) <= 80 else env[:77] + "..."
                raise StoreError(f"{shown!r} is neither a run nor an environment of any run in {store.url} "
                                 f"(the latest run's environments: {', '.join(runs[0].env_names)})")
            found[env] = (having.run_id, env)
    return [_side(store, ref, *found[ref]) for ref in refs]


def _side(store: Store, ref: SideRef, run_id: str, env: str | None) -> Side:
    envs = _envs_of(store, run_id)
    if not env:
        if len(envs) > 1:
            raise StoreError(f"run {run_id} has environments {', '.join(envs)}: name one as {run_id}:ENV")
        env = envs[0]
    elif env not in envs:
        raise StoreError(f"run {run_id} has no environment {env!r} (it has {', '.join(envs)})")
    results = store.results(ResultQuery(run_ids=(run_id,), env_name=env))
    text = str(ref)
    return Side(label=text if ":" in text or env == "default" else f"{env}", run_id=run_id, env_name=env,
                results=results)


def pick_machine(store: Store, benchmark: str, machine: str | None, here: str) -> str:
    """The machine whose history to show: named (by name or id), else this one (`here`); never a mix."""
    machines = {mid: name or mid for mid, name in store.machines(benchmark).items()}
    if not machines:
        raise StoreError(f"no results of {benchmark!r} in {store.url}")
    if machine:
        chosen = [mid for mid, name in machines.items() if machine in (mid, name)]
        if not chosen:
            raise StoreError(f"no results of {benchmark} on machine {machine!r}; machines with results: "
                             + ", ".join(f"{n} ({m})" for m, n in machines.items()))
        if len(chosen) > 1:
            raise StoreError(f"machine name {machine!r} matches {len(chosen)} fingerprints: use the id "
                             + ", ".join(chosen))
        return chosen[0]
    if here in machines:
        return here
    if len(machines) == 1:
        return next(iter(machines))
    raise StoreError("results come from several machines and none is this one: choose with --machine "
                     + ", ".join(f"{n} ({m})" for m, n in machines.items()))


def history_results(store: Store, benchmark: str, machine_id: str, metric_name: str = "time") -> list[ResultSummary]:
    """One machine's successful results of a benchmark, for its history of `metric_name`: their summaries, not
    their records, for a per-iteration metric (the summaries keep its median); for a per-process one (peak RSS) the
    records are read and each summary carries the process's value under the metric's name."""
    query = ResultQuery(benchmark=benchmark, machine_id=machine_id, status="ok")
    definition = metric(metric_name)
    if definition.series is not None:
        return store.summaries(query)
    found = []
    for result in store.results(query):
        summary = summary_of(result)
        values = definition.values(result)
        if values:
            summary.medians[metric_name] = values[0]
        found.append(summary)
    return found


def latest_run_of_suite(store: Store, suite: str) -> str:
    """The newest run whose targets name this suite."""
    for run in store.list_runs():
        if suite in run.targets:
            return run.run_id
    raise StoreError(f"no run of suite {suite!r} in {store.url}: `colbench run {suite}` first")


def comparison_evidence(store: Store, baseline: Side, contender: Side, metrics: tuple[str, ...]) -> dict[str, Any]:
    """What `analysis.comparison.compare_sides` needs of the store beyond the two sides: the history of the cases on
    their machine (for metrics whose noise earlier runs may lend; only queried when one is compared), and the record
    of `run --until-decided` looks when both sides are environments of one run."""
    history: list[ResultSummary] = []
    if any(metric(m).stable_noise for m in metrics):
        # every case on the machine: the compared cases' earlier runs lend their noise, the others their spreads
        # (analysis/machine_noise.py)
        for machine_id in sorted({m for m in (*baseline.machine_ids, *contender.machine_ids) if m}):
            history.extend(store.summaries(ResultQuery(machine_id=machine_id, status="ok")))
    sequential = None
    if baseline.run_id == contender.run_id:
        sequential = store.get_run(baseline.run_id).sequential
    return {"history": history, "sequential": sequential}
