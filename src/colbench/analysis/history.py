"""A case over time, or over a library's versions, on one machine: its points placed on one scale by comparisons
(`analysis/chain.py`: within a run, chained across runs through a point both measured, raw medians only where the
machine's calibration trusts them), the interpreter each ran on, and change points among the comparable points."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
from packaging.version import InvalidVersion, Version

from colbench.analysis.chain import UNPLACEABLE, Measurement, Placement, place
from colbench.analysis.changepoint import ChangePoint, detect_change_points
from colbench.analysis.comparison import case_label
from colbench.engines import PYTHON_LIBRARIES
from colbench.model.metrics import metric as metric_of
from colbench.model.metrics import value_key
from colbench.model.packages import canonical_name
from colbench.model.summary import ResultSummary
from colbench.words import plural


@dataclass
class Point:
    when: str
    run_id: str
    env_name: str
    label: str          # commit, else the engine's version, else the date
    median: float       # raw: median over the point's process medians (all its runs): for the table, not the scale
    cv: float           # between-process spread
    processes: int
    #: the Python version its workers ran on ("" when the results do not say)
    interpreter: str = ""
    #: the point over the history's reference, from comparisons (analysis/chain.py); None: incomparable to it
    ratio: float | None = None
    low: float | None = None
    high: float | None = None
    #: how the ratio was reached ("measured beside 21.0.0 in run …", "chained through …", "incomparable: …")
    via: str = ""
    #: the runs that measured it
    runs: int = 1


@dataclass
class History:
    case_id: str
    label: str
    machine_id: str
    machine_name: str
    points: list[Point]
    change_points: list[ChangePoint] = field(default_factory=list)
    note: str = ""
    metric: str = "time"
    #: "time" (a point per run and environment, in time order) or "version" (a point per version of `package`)
    by: str = "time"
    package: str = ""
    #: the environment every point ran in ("default" without --env); the label names it too ("… [old]")
    env_name: str = "default"
    #: the label of the point every ratio is relative to, and its raw median
    reference: str = ""
    reference_median: float | None = None
    #: indices of the points whose interpreter differs from the point before them
    python_changes: list[int] = field(default_factory=list)
    #: what the machine's calibration says of raw medians across runs
    calibration: str = ""
    #: the benchmark's own unit of its values, for a metric without one (an asv `track_*`'s `unit`); "" else
    unit: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"case_id": self.case_id, "label": self.label, "env": self.env_name, "metric": self.metric,
                "by": self.by,
                **({"package": self.package} if self.package else {}), "machine_id": self.machine_id,
                "machine_name": self.machine_name, "reference": self.reference,
                **({"unit": self.unit} if self.unit else {}),
                "reference_median": self.reference_median, "calibration": self.calibration,
                "points": [asdict(p) for p in self.points],
                "python_changes": [{"index": i, "at": self.points[i].label, "from": self.points[i - 1].interpreter,
                                    "to": self.points[i].interpreter} for i in self.python_changes],
                "change_points": [{**asdict(cp), "at": self.points[cp.index].label} for cp in self.change_points],
                "note": self.note}


def _point_label(result: ResultSummary) -> str:
    if result.commit_sha:
        return result.commit_sha[:10]
    engine = result.engine or ""
    for name in (engine, engine.split("-")[0], "pyarrow"):
        if name in result.versions:
            return f"{name} {result.versions[name]}"
    return result.timestamp[:10]


def _measurement(node: Hashable, members: Sequence[ResultSummary], series: str) -> Measurement:
    done = [(r, median) for r in members if (median := r.medians.get(series)) is not None]
    return Measurement(node, done[0][0].run_id if done else "", done[0][0].env_name if done else "",
                       tuple(float(median) for _, median in done),
                       tuple(r.block for r, _ in done), min((r.timestamp for r, _ in done), default=""))


def _spread(values: Sequence[float]) -> float:
    array = np.asarray(values, dtype=float)
    return float(array.std(ddof=1) / array.mean()) if array.size > 1 else float("nan")


def _python_changes(points: Sequence[Point]) -> list[int]:
    return [i for i in range(1, len(points)) if points[i].interpreter and points[i - 1].interpreter
            and points[i].interpreter.split(".")[:2] != points[i - 1].interpreter.split(".")[:2]]


def _finish(history: History, placement: Placement, min_size: int, seed: int, unit: str) -> History:
    """Ratios onto the points, change points among the comparable ones (in the series' order), and the notes."""
    ratios = {i: p.ratio for i, p in enumerate(history.points) if p.ratio is not None}
    comparable = list(ratios)
    history.python_changes = _python_changes(history.points)
    if placement.calibration is not None:
        history.calibration = ("raw medians compared across runs: " if placement.calibration.trusted else
                               "raw medians not compared across runs: ") + placement.calibration.reason
    left_out = len(history.points) - len(comparable)
    notes = [f"{plural(left_out, 'point')} incomparable to {history.reference} (never measured beside a point "
             "chained to it): shown, not used for change points"] if left_out else []
    if len(comparable) >= 2 * min_size:
        found = detect_change_points(list(ratios.values()), min_size=min_size, seed=seed)
        history.change_points = [ChangePoint(**{**asdict(cp), "index": comparable[cp.index]}) for cp in found]
    else:
        notes.append(f"{plural(len(comparable), 'comparable ' + unit.removesuffix('s'))}: change points need at "
                     f"least {2 * min_size} (--min-size {min_size})")
    history.note = "; ".join(notes)
    return history


def case_histories(results: list[ResultSummary], machine_id: str, filters: dict[str, str],
                   min_size: int = 5, seed: int = 0, metric: str = "time",
                   env_specs: Mapping[tuple[str, str], str] | None = None) -> list[History]:
    """One history per case and environment from one machine's successful results of a benchmark (their
    summaries: the stored per-process medians, not the records, so a long history stays fast to read), of
    `metric`: "time" (wall seconds), "instructions", or a per-process metric such as "memory" (peak RSS, in the
    summaries' medians under its name: store/selection.py `history_results`); cases that never measured it have
    none. A point per run, in
    time order; its place on the scale comes from what was measured beside it (analysis/chain.py): runs chain only
    through a point both measured (`_identity`: an environment of the same spec, interpreter and versions, and for
    the checkout's own code the same commit), or by raw medians where the calibration trusts them. `env_specs`:
    (run, environment) → the spec the run recorded for it."""
    value_key(metric)  # an unknown metric fails here
    results = [r for r in results if all(str(r.params.get(k)) == v for k, v in filters.items())]
    by_case: dict[str, list[ResultSummary]] = defaultdict(list)
    for r in results:
        by_case[r.case_id].append(r)
    histories = []
    for case_id, members in by_case.items():
        histories += _case_histories(case_id, members, machine_id, metric, env_specs or {}, min_size, seed)
    return sorted(histories, key=lambda h: h.label)


def _case_histories(case_id: str, members: list[ResultSummary], machine_id: str, metric: str,
                    specs: Mapping[tuple[str, str], str], min_size: int, seed: int) -> list[History]:
    """One case's histories, one per environment, its runs placed together."""
    series = value_key(metric)
    definition = metric_of(metric)
    runs: dict[tuple[str, str], list[ResultSummary]] = defaultdict(list)
    for r in members:
        runs[(r.run_id, r.env_name)].append(r)
    measurements = {key: _measurement(_identity(group[0], specs.get(key)), group, series)
                    for key, group in runs.items()}
    measurements = {k: m for k, m in measurements.items() if m.values}
    if not measurements:
        return []
    ordered = sorted(measurements, key=lambda k: (measurements[k].when, k))
    placement = place(list(measurements.values()), [measurements[k].node for k in ordered], metric=metric,
                      stable_noise=definition.stable_noise, threshold=definition.threshold)
    histories = []
    for env_name in sorted({k[1] for k in ordered}):
        keys = [k for k in ordered if k[1] == env_name]
        points = [_time_point(key, measurements[key], runs[key], placement) for key in keys]
        any_result = runs[keys[0]][0]
        label = case_label(any_result.benchmark, any_result.params) + \
            (f" [{env_name}]" if env_name != "default" else "")
        reference = measurements_of(measurements, placement.reference)
        history = History(case_id=case_id, label=label, machine_id=machine_id,
                          machine_name=any_result.machine_name or machine_id, points=points, metric=metric,
                          env_name=env_name,
                          reference=f"{reference[1]} {_point_label(runs[reference][0])}" if reference else "",
                          reference_median=measurements[reference].median if reference else None)
        histories.append(_finish(history, placement, min_size, seed, "runs"))
    return histories


def _time_point(key: tuple[str, str], m: Measurement, group: list[ResultSummary], placement: Placement) -> Point:
    """A run's point (one environment of it) in a time history, at its place on the scale if it has one."""
    first = min(group, key=lambda r: r.timestamp)
    placed = placement.nodes.get(m.node)
    return Point(when=m.when, run_id=key[0], env_name=key[1], label=_point_label(first),
                 median=m.median, cv=_spread(m.values), processes=len(m.values),
                 interpreter=first.versions.get("python", ""),
                 ratio=placed.ratio if placed else None, low=placed.low if placed else None,
                 high=placed.high if placed else None, via=placed.via if placed else "")


def measurements_of(measurements: dict[tuple[str, str], Measurement], node: Hashable) -> tuple[str, str] | None:
    """The newest (run, environment) that measured `node`."""
    found = [k for k, m in measurements.items() if m.node == node]
    return max(found, key=lambda k: measurements[k].when) if found else None


def _identity(result: ResultSummary, spec: str | None) -> tuple[str, ...]:
    """What a point of a time history is: its environment (name and spec), interpreter and key packages' versions,
    and, for an environment that runs the checkout's own code (the default one, `@current …`), the commit. Two runs
    measured the same point only when all of these agree: a pinned baseline measured beside each night's code is
    one point, the night's code another each night."""
    versions = result.versions
    checkout = not spec or spec.startswith("@current")
    return (result.env_name, spec or "", (result.commit_sha or "") if checkout else "", versions.get("python", ""),
            *(f"{name} {versions[name]}" for name in PYTHON_LIBRARIES if name in versions))


def version_order(text: str) -> tuple[int, Any]:
    """Sort key: PEP 440 versions in version order, anything else after them as text."""
    try:
        return 0, Version(text)
    except InvalidVersion:
        return 1, text


def package_key(package: str) -> str:
    """The key of a package in a result's `versions`: its canonical name; `java:arrow` is Arrow Java's `arrow`."""
    name = package.split(":", 1)[1] if package.startswith("java:") else package
    return canonical_name(name)


def version_histories(results: list[ResultSummary], machine_id: str, filters: dict[str, str], package: str,
                      min_size: int = 5, seed: int = 0, metric: str = "time") -> list[History]:
    """One history per case over the versions of `package` its results ran with, in version order (not by date):
    a point per version (and interpreter, when one version ran on two), placed by comparisons (analysis/chain.py):
    the ratios a sweep over `--versions` measured side by side, a bisect's steps chained to them through a version
    both measured, raw medians only where the calibration trusts them. Where the interpreter changes from one point
    to the next, the history says so (`python_changes`): a Python change is not a library change."""
    series = value_key(metric)  # an unknown metric fails here
    name = package_key(package)
    results = [r for r in results if all(str(r.params.get(k)) == v for k, v in filters.items())]
    by_case: dict[str, dict[tuple[str, str], list[ResultSummary]]] = defaultdict(lambda: defaultdict(list))
    for r in results:
        version = r.versions.get(name) or r.versions.get(package)
        if version and r.medians.get(series) is not None:
            by_case[r.case_id][(r.run_id, r.env_name)].append(r)
    histories = [_version_history(case_id, runs, machine_id, package, metric, min_size, seed)
                 for case_id, runs in by_case.items()]
    return sorted(histories, key=lambda h: h.label)


def _version_history(case_id: str, runs: Mapping[tuple[str, str], list[ResultSummary]], machine_id: str,
                     package: str, metric: str, min_size: int, seed: int) -> History:
    """One case's history over the versions of `package`, a point per version (and interpreter)."""
    series = value_key(metric)
    definition = metric_of(metric)
    name = package_key(package)
    nodes = {run: _version_node(group[0], name, package) for run, group in runs.items()}
    measurements = [_measurement(nodes[run], group, series) for run, group in runs.items()]
    pythons_of: dict[str, set[str]] = defaultdict(set)
    for version, python in nodes.values():
        pythons_of[version].add(".".join(python.split(".")[:2]))
    order = sorted(set(nodes.values()), key=lambda n: (version_order(n[0]), n[1]))
    placement = place(measurements, order, metric=metric, stable_noise=definition.stable_noise,
                      threshold=definition.threshold)
    points = [_version_point(at, [m for m in measurements if m.node == at], placement, len(pythons_of[at[0]]))
              for at in order]
    any_result = next(iter(runs.values()))[0]
    reference = next((p for p, at in zip(points, order, strict=True) if at == placement.reference), None)
    history = History(case_id=case_id, label=case_label(any_result.benchmark, any_result.params),
                      machine_id=machine_id, machine_name=any_result.machine_name or machine_id, points=points,
                      metric=metric, by="version", package=package,
                      reference=reference.label if reference else "",
                      reference_median=reference.median if reference else None)
    return _finish(history, placement, min_size, seed, "versions")


def _version_point(at: tuple[str, str], members: list[Measurement], placement: Placement, pythons: int) -> Point:
    """A version's point (on one interpreter), its runs' values pooled; named with the Python when the version ran
    on `pythons` > 1 of them."""
    version, python = at
    values = [v for m in members for v in m.values]
    newest = max(members, key=lambda m: m.when)
    placed = placement.nodes.get(at, UNPLACEABLE)
    minor = ".".join(python.split(".")[:2])
    label = version if pythons == 1 else f"{version} (Python {minor})"
    return Point(when=min(m.when for m in members), run_id=newest.run_id, env_name=newest.env_name,
                 label=label, median=float(np.median(values)), cv=_spread(values),
                 processes=len(values), interpreter=python, ratio=placed.ratio, low=placed.low,
                 high=placed.high, via=placed.via, runs=len(members))


def _version_node(result: ResultSummary, name: str, package: str) -> tuple[str, str]:
    """A point of a version history: the package's version and the interpreter it ran on."""
    versions = result.versions
    return str(versions.get(name) or versions.get(package)), str(versions.get("python", ""))
