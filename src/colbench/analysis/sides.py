"""Turn stored results into comparisons: which results form each side, and their samples per process.

A side is a run (`RUN`, a prefix, a name or `latest`), an environment of the latest run (`ENV`), or both
(`RUN:ENV`). Two sides of one run were interleaved in blocks and are compared paired by block; sides from
different runs are compared unpaired. Sides from different machines are never mixed unless asked.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from colbench.analysis.compare import CaseInput
from colbench.model.result import METRIC_SERIES
from colbench.store.base import ResultQuery, Store, StoreError, resolve_run_id

METRICS = ("time", "memory", "file_size", "instructions")


@dataclass
class Side:
    label: str
    run_id: str
    env_name: str
    results: list[dict[str, Any]]

    @property
    def machine_ids(self) -> set[str]:
        return {r.get("machine_id") for r in self.results}


def _envs_of(store: Store, run_id: str) -> list[str]:
    run = store.get_run(run_id)
    return [e["name"] for e in run.get("envs") or [{"name": "default"}]]


def resolve_side(store: Store, ref: str) -> Side:
    run_ref, _, env = ref.partition(":")
    try:
        run_id = resolve_run_id(store, run_ref)
    except StoreError:
        if env:
            raise
        run_id, env = resolve_run_id(store, "latest"), run_ref
        if env not in _envs_of(store, run_id):
            raise StoreError(f"{ref!r} is neither a run nor an environment of the latest run "
                             f"(its environments: {', '.join(_envs_of(store, run_id))})") from None
    envs = _envs_of(store, run_id)
    if not env:
        if len(envs) > 1:
            raise StoreError(f"run {run_id} has environments {', '.join(envs)}: name one as {run_id}:ENV")
        env = envs[0]
    elif env not in envs:
        raise StoreError(f"run {run_id} has no environment {env!r} (it has {', '.join(envs)})")
    results = store.results(ResultQuery(run_ids=(run_id,), env_name=env))
    return Side(label=ref if ":" in ref or env == "default" else f"{env}", run_id=run_id, env_name=env,
                results=results)


def case_label(result: dict[str, Any]) -> str:
    params = {k: v for k, v in result["params"].items()
              if (k, v) not in (("allocator", "default"), ("cache", "warm"))}
    return f"{result['benchmark']} " + " ".join(f"{k}={v}" for k, v in params.items())


def short_labels(results: list[dict[str, Any]]) -> dict[str, str]:
    """case_id → the benchmark and only the params that differ between the cases at hand (all, when one case)."""
    params_by_case = {r["case_id"]: (r["benchmark"], r["params"]) for r in results}
    by_bench: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for bench, params in params_by_case.values():
        by_bench[bench].append(params)
    labels = {}
    for case_id, (bench, params) in params_by_case.items():
        members = by_bench[bench]
        varying = [k for k in params if len({str(m.get(k)) for m in members}) > 1]
        if not varying:
            labels[case_id] = case_label({"benchmark": bench, "params": params})
        else:
            labels[case_id] = f"{bench} " + " ".join(f"{k}={params[k]}" for k in varying)
    return labels


def _per_process(result: dict[str, Any], metric: str) -> list[float] | None:
    if metric in METRIC_SERIES:
        values = (result.get("samples") or {}).get(METRIC_SERIES[metric]) or []
        return [v for v in values if v is not None] or None
    if metric == "memory":
        value = (result.get("memory") or {}).get("peak_rss_bytes")
    else:
        value = (result.get("output") or {}).get("file_size_bytes")
    return [float(value)] if value else None


def case_inputs(baseline: Side, contender: Side, metric: str = "time",
                allow_cross_machine: bool = False) -> tuple[dict[str, CaseInput], list[str]]:
    """CaseInputs for every case both sides ran successfully; notes for what could not be compared."""
    if not allow_cross_machine and baseline.machine_ids and contender.machine_ids and \
            baseline.machine_ids != contender.machine_ids:
        raise StoreError("the two sides ran on different machines; comparing them mixes hardware with code "
                         "(pass --cross-machine to do it anyway)")
    paired = baseline.run_id == contender.run_id
    sides: list[dict[str, list[dict[str, Any]]]] = []
    for side in (baseline, contender):
        grouped: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for r in side.results:
            grouped[r["case_id"]].append(r)
        sides.append(grouped)
    notes: list[str] = []
    cases: dict[str, CaseInput] = {}
    labels = short_labels(baseline.results + contender.results)
    for case_id in [c for c in sides[0] if c in sides[1]]:
        base = [(r, _per_process(r, metric)) for r in sides[0][case_id] if r["status"] == "ok"]
        cont = [(r, _per_process(r, metric)) for r in sides[1][case_id] if r["status"] == "ok"]
        label = labels[case_id]
        if metric == "time" and (not base or not cont):
            notes.append(f"{label}: no successful results on one side")
        base = [(r, v) for r, v in base if v]
        cont = [(r, v) for r, v in cont if v]
        if not base or not cont:
            continue
        cases[label] = CaseInput(
            baseline=[v for _, v in base], contender=[v for _, v in cont], metric=metric,
            baseline_blocks=[r["block"] for r, _ in base] if paired else None,
            contender_blocks=[r["block"] for r, _ in cont] if paired else None,
        )
    only = set(sides[0]) ^ set(sides[1])
    if only:
        notes.append(f"{len(only)} case(s) ran on one side only")
    return cases, notes
