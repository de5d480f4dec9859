"""The history view: a case over the runs on one machine with its change points (or over the versions of a package a
bisect measured) — a section of the report and the dashboard's history page."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from colbench.analysis.aggregate import CaseSummary
from colbench.model.records import Result, Run
from colbench.render.figures import Plot
from colbench.render.fmt import measured_metrics, params_label, slug, varying_params
from colbench.report.plots_history import (
    MIN_RUNS,
    HistorySeries,
    history_figure,
    series_from_results,
    version_series_from_results,
)
from colbench.report.templating import metric_title
from colbench.store.base import ResultQuery, Store

HISTORY_LIMIT = 24  # history plots in one report, the cases with change points first


@dataclass
class HistoryView:
    series: HistorySeries
    plot: Plot | None
    link: str | None = None


def case_history(store: Store, benchmark: str, case_id: str, machine_id: str | None = None,
                 label: str | None = None, metric: str = "time") -> list[HistorySeries]:
    results = store.results(ResultQuery(benchmark=benchmark, case_id=case_id, machine_id=machine_id, status="ok"))
    if not results:
        return []
    if label is None:
        params = results[-1].params
        label = f"{benchmark} " + " ".join(f"{k}={v}" for k, v in params.items()
                                           if (k, v) not in (("allocator", "default"), ("cache", "warm")))
    return series_from_results(results, label, metric=metric)


def run_histories(store: Store, run: Run, summaries: Sequence[CaseSummary],
                  limit: int = HISTORY_LIMIT, link: bool = False,
                  metrics: Sequence[str] | None = None) -> list[HistoryView]:
    """History of every case of the run that has at least MIN_RUNS runs on this machine in the store, of each
    metric (default: every metric the run measured)."""
    machine_id = run.machine_id
    varying = varying_params(summaries)
    labels = {(s.case_id, s.env_name): f"{s.benchmark} {params_label(s, varying.get(s.benchmark, []))}"
              for s in summaries}
    found: list[HistorySeries] = []
    for benchmark in dict.fromkeys(s.benchmark for s in summaries):
        results = store.results(ResultQuery(benchmark=benchmark, machine_id=machine_id, status="ok"))
        by_case: dict[str, list[Result]] = defaultdict(list)
        for r in results:  # every environment of a case: what ran beside a point is what places it
            if any(case_id == r.case_id for case_id, _ in labels):
                by_case[r.case_id].append(r)
        for case_id, members in by_case.items():
            for metric in metrics or measured_metrics(summaries):
                for series in series_from_results(members, "", metric=metric):
                    label = labels.get((case_id, series.env_name))
                    if label is not None and len(series.points) >= MIN_RUNS:
                        series.label = label
                        found.append(series)
    found.sort(key=lambda s: (-s.biggest_change, s.label))
    found[:0] = _version_histories(store, run, summaries, labels, metrics)
    views = []
    for series in found[:limit]:
        figure = history_figure(series, compact=True)
        suffix = "" if series.metric == "time" else f"-{series.metric}"
        plot = Plot(f"history-{series.case_id}-{slug(series.env_name)}{suffix}", f"history of {series.label}"
                    + metric_title(series.metric), figure) if figure is not None else None
        views.append(HistoryView(series, plot, history_link(series) if link else None))
    return views


def _version_histories(store: Store, run: Run, summaries: Sequence[CaseSummary],
                       labels: dict[tuple[str, str], str], metrics: Sequence[str] | None) -> list[HistorySeries]:
    """A step of `colbench bisect` (its run record names the package): the case over every version of that package
    measured on this machine, in version order, first in the run's histories."""
    package = run.bisect.package if run.bisect else None
    if not package:
        return []
    found = []
    for case_id in dict.fromkeys(s.case_id for s in summaries):
        summary = next(s for s in summaries if s.case_id == case_id)
        label = next(v for (c, _), v in labels.items() if c == case_id)
        results = store.results(ResultQuery(benchmark=summary.benchmark, case_id=case_id,
                                            machine_id=run.machine_id, status="ok"))
        for metric in metrics or measured_metrics(summaries):
            found.extend(version_series_from_results(results, label, package, metric=metric))
    return found


def history_link(series: HistorySeries) -> str:
    from urllib.parse import urlencode

    query = {"benchmark": series.benchmark, "case": series.case_id}
    if series.machine_id:
        query["machine"] = series.machine_id
    if series.metric != "time":
        query["metric"] = series.metric
    return "/history?" + urlencode(query)
