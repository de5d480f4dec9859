"""A case over time on one machine: one point per run (and environment), with change points."""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
from packaging.version import InvalidVersion, Version

from colbench.analysis.changepoint import ChangePoint, detect_change_points
from colbench.analysis.comparison import case_label
from colbench.model.metrics import series_of
from colbench.model.summary import ResultSummary
from colbench.words import plural


@dataclass
class Point:
    when: str
    run_id: str
    env_name: str
    label: str          # commit, else the engine's version, else the date
    median: float       # median over the run's process medians
    cv: float           # between-process spread
    processes: int


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

    def to_dict(self) -> dict[str, Any]:
        return {"case_id": self.case_id, "label": self.label, "env": self.env_name, "metric": self.metric,
                "by": self.by,
                **({"package": self.package} if self.package else {}), "machine_id": self.machine_id,
                "machine_name": self.machine_name, "points": [asdict(p) for p in self.points],
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


def case_histories(results: list[ResultSummary], machine_id: str, filters: dict[str, str],
                   min_size: int = 5, seed: int = 0, metric: str = "time") -> list[History]:
    """One history per case and environment from one machine's successful results of a benchmark (their
    summaries: the stored per-process medians, not the records, so a long history stays fast to read), of
    `metric`: "time" (wall seconds) or "instructions"; cases that never measured it have none."""
    series = series_of(metric)
    results = [r for r in results if all(str(r.params.get(k)) == v for k, v in filters.items())]
    # one series per case and environment: two library versions are two histories, not one zig-zag
    by_case: dict[tuple[str, str], dict[tuple[str, str], list[ResultSummary]]] = defaultdict(lambda: defaultdict(list))
    for r in results:
        by_case[(r.case_id, r.env_name)][(r.run_id, r.env_name)].append(r)
    histories = []
    for (case_id, env_name), runs in by_case.items():
        points = []
        for (run_id, env_name), members in runs.items():
            medians = np.array([r.medians[series] for r in members if r.medians.get(series) is not None])
            if medians.size == 0:
                continue
            first = min(members, key=lambda r: r.timestamp)
            cv = float(medians.std(ddof=1) / medians.mean()) if medians.size > 1 else float("nan")
            points.append(Point(when=first.timestamp, run_id=run_id, env_name=env_name,
                                label=_point_label(first), median=float(np.median(medians)), cv=cv,
                                processes=int(medians.size)))
        if not points:
            continue
        points.sort(key=lambda p: p.when)
        any_result = next(iter(runs.values()))[0]
        label = case_label(any_result.benchmark, any_result.params) + \
            (f" [{env_name}]" if env_name != "default" else "")
        history = History(case_id=case_id, label=label, machine_id=machine_id,
                          machine_name=any_result.machine_name or machine_id, points=points, metric=metric,
                          env_name=env_name)
        if len(points) >= 2 * min_size:
            history.change_points = detect_change_points([p.median for p in points], min_size=min_size, seed=seed)
        else:
            history.note = (f"{plural(len(points), 'point')}: change points need at least {2 * min_size} "
                            f"(--min-size {min_size})")
        histories.append(history)
    return sorted(histories, key=lambda h: h.label)


def version_order(text: str) -> tuple[int, Any]:
    """Sort key: PEP 440 versions in version order, anything else after them as text."""
    try:
        return 0, Version(text)
    except InvalidVersion:
        return 1, text


def package_key(package: str) -> str:
    """The key of a package in a result's `versions`: its canonical name; `java:arrow` is Arrow Java's `arrow`."""
    name = package.split(":", 1)[1] if package.startswith("java:") else package
    return re.sub(r"[-_.]+", "-", name).lower()


def version_histories(results: list[ResultSummary], machine_id: str, filters: dict[str, str], package: str,
                      min_size: int = 5, seed: int = 0, metric: str = "time") -> list[History]:
    """One history per case over the versions of `package` its results ran with, in version order (not by date):
    every run and environment that ran a version adds its processes to that version's point (a sweep over `--env`
    environments, the steps of `colbench bisect`, runs of the default environment as it was upgraded)."""
    series = series_of(metric)
    key = package_key(package)
    results = [r for r in results if all(str(r.params.get(k)) == v for k, v in filters.items())]
    by_case: dict[str, dict[str, list[ResultSummary]]] = defaultdict(lambda: defaultdict(list))
    for r in results:
        version = r.versions.get(key) or r.versions.get(package)
        if version and r.medians.get(series) is not None:
            by_case[r.case_id][str(version)].append(r)
    histories = []
    for case_id, versions in by_case.items():
        points = []
        for version in sorted(versions, key=version_order):
            members = versions[version]
            medians = np.array([float(r.medians[series]) for r in members])  # type: ignore[arg-type]
            newest = max(members, key=lambda r: r.timestamp)
            cv = float(medians.std(ddof=1) / medians.mean()) if medians.size > 1 else float("nan")
            points.append(Point(when=min(r.timestamp for r in members), run_id=newest.run_id,
                                env_name=newest.env_name, label=version, median=float(np.median(medians)), cv=cv,
                                processes=int(medians.size)))
        any_result = next(iter(versions.values()))[0]
        label = case_label(any_result.benchmark, any_result.params)
        history = History(case_id=case_id, label=label, machine_id=machine_id,
                          machine_name=any_result.machine_name or machine_id, points=points, metric=metric,
                          by="version", package=package)
        if len(points) >= 2 * min_size:
            history.change_points = detect_change_points([p.median for p in points], min_size=min_size, seed=seed)
        else:
            history.note = (f"{plural(len(points), 'version')}: change points need at least {2 * min_size} "
                            f"(--min-size {min_size})")
        histories.append(history)
    return sorted(histories, key=lambda h: h.label)
