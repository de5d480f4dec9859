"""Turn the results of two sides into comparison inputs: samples per process, case by case.

Two sides of one run were interleaved in blocks and are compared paired by block; sides from different runs are
compared unpaired. Sides from different machines are never mixed unless asked. Which results form a side is the
store's business (colbench.store.selection).
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from typing import Any

from colbench.analysis.basis import choose_basis, iteration_values
from colbench.analysis.compare import CaseInput
from colbench.model.records import Side
from colbench.model.result import METRIC_SERIES

METRICS = ("time", "memory", "file_size", "instructions")


class ComparisonError(ValueError):
    """Two sides that cannot be compared as asked."""


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
    if metric == "time":
        return iteration_values(result, "wall")
    if metric in METRIC_SERIES:  # per-iteration series: wall seconds, instruction counts
        values = (result.get("samples") or {}).get(METRIC_SERIES[metric]) or []
        return [v for v in values if v is not None] or None
    if metric == "memory":
        value = (result.get("memory") or {}).get("peak_rss_bytes")
    else:
        value = (result.get("output") or {}).get("file_size_bytes")
    return [float(value)] if value else None


def _measured(results: list[dict[str, Any]], metric: str) -> list[tuple[dict[str, Any], list[float]]]:
    """The successful results that measured `metric`, each with its per-process values."""
    found = []
    for r in results:
        values = _per_process(r, metric) if r["status"] == "ok" else None
        if values:
            found.append((r, values))
    return found


def _time_input(wall: CaseInput, base: list[dict[str, Any]], cont: list[dict[str, Any]], basis: str) -> CaseInput:
    """The time comparison of one case on the basis the rule of `basis.py` picks (or the one asked for)."""
    if basis == "wall":
        return wall
    cpu_b = [v for r in base if (v := iteration_values(r, "cpu"))]
    cpu_c = [v for r in cont if (v := iteration_values(r, "cpu"))]
    if len(cpu_b) != len(base) or len(cpu_c) != len(cont):
        return wall
    cpu = dataclasses.replace(wall, baseline=cpu_b, contender=cpu_c, basis="cpu")
    if basis == "cpu":
        return cpu
    delays = [iteration_values(r, "run_delay") for r in [*base, *cont]]
    run_delay = [d for d in delays if d is not None]
    # `threads.requested` is in every stored result (result.schema.json); the worker pins itself to that many CPUs
    single = all(int(r["threads"]["requested"]) == 1 for r in [*base, *cont])
    chosen, _ = choose_basis(wall, cpu, run_delay if len(run_delay) == len(delays) else None, single)
    return dataclasses.replace(cpu, check=wall) if chosen == "cpu" else wall


def case_inputs(baseline: Side, contender: Side, metric: str = "time",
                allow_cross_machine: bool = False, basis: str = "auto") -> tuple[dict[str, CaseInput], list[str]]:
    """CaseInputs for every case both sides ran successfully; notes for what could not be compared.

    For time, `basis` "auto" compares CPU time where the rule of `basis.py` finds it quieter (with wall
    time as a check), else wall time; "wall" or "cpu" force one."""
    if not allow_cross_machine and baseline.machine_ids and contender.machine_ids and \
            baseline.machine_ids != contender.machine_ids:
        raise ComparisonError("the two sides ran on different machines; comparing them mixes hardware with code "
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
        base = _measured(sides[0][case_id], metric)
        cont = _measured(sides[1][case_id], metric)
        label = labels[case_id]
        if not base or not cont:
            ok = [[r for r in side[case_id] if r["status"] == "ok"] for side in sides]
            if metric == "time" and not (ok[0] and ok[1]):  # not for an instructions-only case without times
                notes.append(f"{label}: no successful results on one side")
            continue
        case = CaseInput(
            baseline=[v for _, v in base], contender=[v for _, v in cont], metric=metric,
            baseline_blocks=[r["block"] for r, _ in base] if paired else None,
            contender_blocks=[r["block"] for r, _ in cont] if paired else None,
            basis="wall" if metric == "time" else "value",
        )
        if metric == "time":
            chosen = basis if paired or basis != "auto" else "wall"  # the rule needs blocks
            case = _time_input(case, [r for r, _ in base], [r for r, _ in cont], chosen)
        cases[label] = case
    only = set(sides[0]) ^ set(sides[1])
    if only:
        notes.append(f"{len(only)} case(s) ran on one side only")
    return cases, notes
