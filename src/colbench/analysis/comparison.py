"""The one comparison: two sides' stored results in, a verdict per case and metric out.

Every view that shows a verdict calls `compare_sides`: `colbench compare`, the gate (`run --until-decided`, whose
looks are replayed from the run's record), the HTML report, the dashboard, `calibrate`, `bisect` and the Conbench
export. So they cannot disagree: the same results, settings and evidence give the same verdicts everywhere.

- **Values** come from the metric registry (`model/metrics.py`): per process, its iterations of a per-iteration
  metric (time, instructions) or its one value (memory, file size).
- **Pairing.** Two sides of one run were interleaved in blocks and carry their block indices; sides from different
  runs are compared unpaired. Sides from different machines are never mixed unless asked.
- **Time basis.** Wall time, or CPU time with wall time as a check where `basis.py`'s rule finds it quieter
  (paired sides only: the rule reads block spreads).
- **Noise from history** (`t_tests.py`): for metrics of stable noise (instruction counts), earlier runs of the same
  case on the same machine lend their within-environment spread to the t, and the other cases counted there their
  spreads to "no change" of a case without a calibration of its own (`machine_noise.py`). Which results are history
  is the store's business (`store.selection.comparison_evidence`); the sides' own runs are never part of it.
- **Looks.** When the two sides are environments of a run decided by `run --until-decided`, the run's record says
  which blocks and which alpha each case's last look used; those verdicts are reproduced exactly (re-testing the
  final data at the full alpha, after stopping on the data, would no longer be valid).
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from colbench.analysis.basis import choose_basis, iteration_values
from colbench.analysis.machine_noise import MachineSpread
from colbench.analysis.t_tests import NoisePrior, pooled_prior
from colbench.analysis.verdicts import CaseComparison, CaseInput, Method, compare_suite
from colbench.model.metrics import COMPARE_METRICS, metric
from colbench.model.params import ParamValue
from colbench.model.records import Result, Side
from colbench.model.run_parts import SequentialLooks
from colbench.model.summary import ResultSummary
from colbench.words import plural

#: the newest earlier runs (run × environment) of a case whose spread a comparison may borrow
HISTORY_RUNS = 30
#: separates a case label from the metric in comparison keys of metrics other than time: "csv-read … [memory]"
METRIC_SUFFIX = " [{}]"


class ComparisonError(ValueError):
    """Two sides that cannot be compared as asked."""


@dataclass(frozen=True)
class CompareSettings:
    """How two sides are compared. `threshold` None: each metric's own default (model/metrics.py)."""

    metrics: tuple[str, ...] = COMPARE_METRICS
    threshold: float | None = None
    alpha: float = 0.01
    method: Method = "holm"
    #: time: "auto" (CPU time where quieter, paired sides only), "wall" or "cpu"
    basis: str = "auto"
    cross_machine: bool = False
    floor: float = 0.0


@dataclass(frozen=True)
class Comparison:
    """The verdicts of one comparison, keyed by case label (plus ` [metric]` for metrics other than time)."""

    baseline: str
    contender: str
    cases: list[CaseComparison]
    notes: list[str] = field(default_factory=list)
    #: key → (case id, benchmark) of the case behind it, for views that link or group by case
    case_of: dict[str, tuple[str, str]] = field(default_factory=dict)
    settings: CompareSettings = CompareSettings()
    #: the time verdicts were reproduced from the looks of `run --until-decided`
    replayed: bool = False
    #: the Python versions each side's workers ran on ("" when its results do not say; several joined by ", ")
    baseline_python: str = ""
    contender_python: str = ""


# ------------------------------------------------------------------------------------------------ labels


def case_label(benchmark: str, params: Mapping[str, ParamValue]) -> str:
    """A case as a person names it: the benchmark and its params, less the ones at their defaults."""
    shown = {k: v for k, v in params.items() if (k, v) not in (("allocator", "default"), ("cache", "warm"))}
    return f"{benchmark} " + " ".join(f"{k}={v}" for k, v in shown.items())


def short_labels(results: Iterable[Result]) -> dict[str, str]:
    """case_id → the benchmark and only the params that differ between the cases at hand (all, when one case)."""
    params_by_case = {r.case_id: (r.benchmark, r.params) for r in results}
    by_bench: dict[str, list[dict[str, ParamValue]]] = defaultdict(list)
    for bench, params in params_by_case.values():
        by_bench[bench].append(params)
    labels = {}
    for case_id, (bench, params) in params_by_case.items():
        members = by_bench[bench]
        varying = [k for k in params if len({str(m.get(k)) for m in members}) > 1]
        if not varying:
            labels[case_id] = case_label(bench, params)
        else:
            labels[case_id] = f"{bench} " + " ".join(f"{k}={params[k]}" for k in varying)
    return labels


def key_of(label: str, metric_name: str) -> str:
    return label if metric_name == "time" else label + METRIC_SUFFIX.format(metric_name)


# ------------------------------------------------------------------------------------------------ inputs


def _measured(results: list[Result], metric_name: str) -> list[tuple[Result, list[float]]]:
    """The successful results that measured the metric, each with its per-process values."""
    definition = metric(metric_name)
    found = []
    for r in results:
        values = definition.values(r) if r.ok else None
        if values and all(v > 0 for v in values):
            found.append((r, values))
    return found


def _time_input(wall: CaseInput, base: list[Result], cont: list[Result], basis: str) -> CaseInput:
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
    single = all(r.threads.get("requested") == 1 for r in [*base, *cont])
    chosen, _ = choose_basis(wall, cpu, run_delay if len(run_delay) == len(delays) else None, single)
    return dataclasses.replace(cpu, check=wall) if chosen == "cpu" else wall


#: metrics whose values depend on the machine that measured them: one case's samples of these are never pooled across
#: machines (instruction counts are, across machines of one CPU kind: runner/cluster.py)
MACHINE_BOUND = frozenset({"time", "first_run", "gbps"})


def _check_machines(baseline: Side, contender: Side, allow_cross_machine: bool) -> None:
    if not allow_cross_machine and baseline.machine_ids and contender.machine_ids and \
            baseline.machine_ids != contender.machine_ids:
        raise ComparisonError("the two sides ran on different machines; comparing them mixes hardware with code "
                              "(pass --cross-machine to do it anyway)")


def case_inputs(baseline: Side, contender: Side, metric_name: str = "time", *, allow_cross_machine: bool = False,
                basis: str = "auto", priors: Mapping[str, NoisePrior] | None = None,
                ) -> tuple[dict[str, CaseInput], list[str]]:
    """CaseInputs (keyed by case label) for every case both sides ran successfully; notes for what could not be
    compared. `priors`: case id → the noise earlier runs lend (metrics of stable noise)."""
    _check_machines(baseline, contender, allow_cross_machine)
    paired = baseline.run_id == contender.run_id
    sides = [_by_case(baseline.results), _by_case(contender.results)]
    notes: list[str] = []
    cases: dict[str, CaseInput] = {}
    labels = short_labels([*baseline.results, *contender.results])
    for case_id in [c for c in sides[0] if c in sides[1]]:
        base = _measured(sides[0][case_id], metric_name)
        cont = _measured(sides[1][case_id], metric_name)
        label = labels[case_id]
        machines = {r.machine_id for r, _ in [*base, *cont]}
        if metric_name in MACHINE_BOUND and len(machines) > 1 and not allow_cross_machine:
            notes.append(f"{label}: measured on {len(machines)} machines; their times are not pooled (`run "
                         "--cluster` measures a case whole on one worker)")
            continue
        if not base or not cont:
            ok = [[r for r in side[case_id] if r.ok] for side in sides]
            if metric_name == "time" and not (ok[0] and ok[1]):  # not for an instructions-only case
                notes.append(f"{label}: no successful results on one side")
            continue
        cases[label] = _case_input(base, cont, metric_name, paired=paired, basis=basis,
                                   prior=(priors or {}).get(case_id), machine=machine_spread(priors or {}, case_id))
    only = set(sides[0]) ^ set(sides[1])
    if only:
        notes.append(f"{plural(len(only), 'case')} ran on one side only")
    return cases, notes


def _by_case(results: Iterable[Result]) -> dict[str, list[Result]]:
    grouped: dict[str, list[Result]] = defaultdict(list)
    for r in results:
        grouped[r.case_id].append(r)
    return grouped


def _case_input(base: list[tuple[Result, list[float]]], cont: list[tuple[Result, list[float]]], metric_name: str, *,
                paired: bool, basis: str, prior: NoisePrior | None, machine: MachineSpread | None = None,
                ) -> CaseInput:
    """One case's values on both sides (with their blocks when paired); time on the basis chosen for it."""
    case = CaseInput(
        baseline=[v for _, v in base], contender=[v for _, v in cont], metric=metric_name,
        baseline_blocks=[int(r.block or 0) for r, _ in base] if paired else None,
        contender_blocks=[int(r.block or 0) for r, _ in cont] if paired else None,
        basis="wall" if metric_name == "time" else "value",
        prior=prior, machine=machine, unit=_own_unit([r for r, _ in [*base, *cont]], metric_name),
    )
    if metric_name == "time":
        chosen = basis if paired or basis != "auto" else "wall"  # the rule needs blocks
        case = _time_input(case, [r for r, _ in base], [r for r, _ in cont], chosen)
    return case


def _own_unit(results: Sequence[Result], metric_name: str) -> str:
    """The unit the benchmark gives its values of a metric without one of its own (an asv `track_*`'s `unit`, which
    the worker records in `Result.units`); "" otherwise."""
    if metric(metric_name).unit:
        return ""
    return next((r.units[metric_name] for r in results if r.units.get(metric_name)), "")


def noise_priors(history: Iterable[ResultSummary], metric_name: str,
                 exclude_runs: Iterable[str] = ()) -> dict[str, NoisePrior]:
    """case id → the pooled within-environment spread of per-process log values over earlier runs (one group per
    run and environment), for a metric of stable noise; {} for the others. `exclude_runs`: the compared runs."""
    definition = metric(metric_name)
    if not definition.stable_noise or definition.series is None:
        return {}
    excluded = set(exclude_runs)
    groups: dict[str, dict[tuple[str, str], list[float]]] = defaultdict(lambda: defaultdict(list))
    newest: dict[tuple[str, str], str] = {}
    for summary in history:
        value = summary.medians.get(definition.series)
        if summary.status != "ok" or summary.run_id in excluded or not value or value <= 0:
            continue
        group = (summary.run_id, summary.env_name)
        groups[summary.case_id][group].append(float(np.log(value)))
        newest[group] = max(newest.get(group, ""), summary.timestamp)
    priors = {}
    for case_id, by_run in groups.items():
        recent = sorted(by_run, key=lambda g: newest[g], reverse=True)[:HISTORY_RUNS]
        prior = pooled_prior([np.asarray(by_run[g]) for g in recent])
        if prior is not None:
            priors[case_id] = prior
    return priors


def machine_spread(priors: Mapping[str, NoisePrior], case_id: str) -> MachineSpread | None:
    """The spreads of the other cases counted on this machine (`priors`: every case's, from `noise_priors` over the
    machine's history), for "no change" of `case_id` without a calibration of its own (`machine_noise.py`)."""
    return MachineSpread.of((p.variance, p.df) for other, p in priors.items() if other != case_id)


# --------------------------------------------------------------------------------------------- comparison


def truncate_blocks(case: CaseInput, blocks: int) -> CaseInput:
    """The case as it was when only blocks 0 .. blocks-1 had run (for reproducing an earlier look)."""
    if case.baseline_blocks is None or case.contender_blocks is None:
        return case
    keep_b = [i for i, b in enumerate(case.baseline_blocks) if b < blocks]
    keep_c = [i for i, b in enumerate(case.contender_blocks) if b < blocks]
    return dataclasses.replace(
        case,
        baseline=[case.baseline[i] for i in keep_b], contender=[case.contender[i] for i in keep_c],
        baseline_blocks=[case.baseline_blocks[i] for i in keep_b],
        contender_blocks=[case.contender_blocks[i] for i in keep_c],
        check=truncate_blocks(case.check, blocks) if case.check is not None else None,
    )


def _replay(record: SequentialLooks, baseline: Side, contender: Side, settings: CompareSettings,
            ) -> tuple[str, list[CaseComparison]] | None:
    """(metric, verdicts) of the looks `run --until-decided` recorded for this pair of environments, each case with
    the blocks, alpha and noise prior of its last look; None when the record is not about this pair."""
    if record.baseline != baseline.env_name:
        return None
    wanted = record.cases_of(contender.env_name)
    if not wanted:
        return None
    metric_name = record.metric
    priors = {label: NoisePrior(look.prior.variance, look.prior.df, look.prior.runs, look.prior.calibrated)
              for label, look in wanted.items() if look.prior}
    machines = {label: MachineSpread(tuple(s for s, _ in look.machine), tuple(d for _, d in look.machine))
                for label, look in wanted.items() if look.machine}
    cases, _ = case_inputs(baseline, contender, metric_name, basis=record.basis)
    out = []
    for label, case in cases.items():
        if label not in wanted:
            continue
        case = dataclasses.replace(truncate_blocks(case, wanted[label].blocks), prior=priors.get(label),
                                   machine=machines.get(label))
        (comparison,) = compare_suite(
            {key_of(label, metric_name): case},
            threshold=settings.threshold or record.threshold, alpha=wanted[label].alpha,
            family_size=record.family_size, floor=record.floor if settings.floor == 0 else settings.floor)
        out.append(comparison)
    return metric_name, out


def compare_sides(baseline: Side, contender: Side, settings: CompareSettings = CompareSettings(), *,
                  history: Sequence[ResultSummary] = (), sequential: SequentialLooks | None = None) -> Comparison:
    """Every case both sides ran, on every metric of `settings` they measured, as one family (Holm or BH over
    all of them). `history`: summaries of earlier results on the sides' machine (noise for metrics of stable
    noise); `sequential`: the record of the run's `--until-decided` looks, when both sides are its environments."""
    if baseline.run_id == contender.run_id and baseline.env_name == contender.env_name:
        raise ComparisonError("baseline and contender are the same results: name two runs or two environments")
    _check_machines(baseline, contender, settings.cross_machine)
    replayed: list[CaseComparison] = []
    replayed_metric = None
    notes: list[str] = []
    if sequential and baseline.run_id == contender.run_id:
        found = _replay(sequential, baseline, contender, settings)
        if found is not None and found[0] in settings.metrics:
            replayed_metric, replayed = found
            notes.append(f"{replayed_metric} verdicts as the run's --until-decided looks reached them (each case at "
                         "the alpha of its last look); other metrics compared as their own family")
    cases = _all_case_inputs(baseline, contender, settings, history, replayed_metric, notes)
    if not cases and not replayed:
        raise ComparisonError("no case ran successfully on both sides: nothing to compare")
    others = compare_suite(cases, threshold=settings.threshold, alpha=settings.alpha, method=settings.method,
                           floor=settings.floor) if cases else []
    case_of = _cases_compared([*replayed, *others], baseline, contender)
    pythons = [interpreters(side.results) for side in (baseline, contender)]
    if all(pythons):
        notes.append(_pythons_note(baseline, contender, pythons))
    return Comparison(baseline.label, contender.label, [*replayed, *others], list(dict.fromkeys(notes)), case_of,
                      settings, bool(replayed), *pythons)


def _all_case_inputs(baseline: Side, contender: Side, settings: CompareSettings, history: Sequence[ResultSummary],
                     replayed_metric: str | None, notes: list[str]) -> dict[str, CaseInput]:
    """The inputs of every case on every metric of `settings` but the replayed one, keyed by label and metric;
    their notes added to `notes`."""
    excluded = {baseline.run_id, contender.run_id}
    cases: dict[str, CaseInput] = {}
    for metric_name in settings.metrics:
        if metric_name == replayed_metric:
            continue
        inputs, metric_notes = case_inputs(baseline, contender, metric_name,
                                           allow_cross_machine=settings.cross_machine, basis=settings.basis,
                                           priors=noise_priors(history, metric_name, excluded))
        notes.extend(metric_notes)
        for label, case in inputs.items():
            cases[key_of(label, metric_name)] = case
    return cases


def _cases_compared(comparisons: list[CaseComparison], baseline: Side, contender: Side) -> dict[str, tuple[str, str]]:
    """Each comparison's key → (case id, benchmark)."""
    labels = short_labels([*baseline.results, *contender.results])
    by_label = {label: case_id for case_id, label in labels.items()}
    benchmarks = {r.case_id: r.benchmark for r in [*baseline.results, *contender.results]}
    case_of = {}
    for comparison in comparisons:
        label = str(comparison.key).removesuffix(METRIC_SUFFIX.format(comparison.metric))
        if label in by_label:
            case_of[str(comparison.key)] = (by_label[label], benchmarks[by_label[label]])
    return case_of


def _pythons_note(baseline: Side, contender: Side, pythons: list[str]) -> str:
    same = "both" if pythons[0] == pythons[1] else ""
    return (f"{same} on Python {pythons[0]}" if same else
            f"{baseline.label} ran on Python {pythons[0]}, {contender.label} on Python {pythons[1]}: the "
            "ratios include what the interpreter changed")


def interpreters(results: Iterable[Result]) -> str:
    """The Python versions a side's workers ran on (what each Python result records), in version order."""
    found = {str(r.versions["python"]) for r in results if r.runtime.get("name", "python") == "python"
             and r.versions.get("python")}
    return ", ".join(sorted(found, key=lambda v: tuple(int(x) for x in v.split(".") if x.isdigit())))
