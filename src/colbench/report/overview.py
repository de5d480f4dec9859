"""What changed, at a glance: the dashboard's front page.

Two views over the newest runs of a store, in the spirit of asv's grid of graphs and Conbench's recent
regressions: the latest verdicts per benchmark (its newest run's environments against each other, else that run
against the one before it on the same machine: the statistics of `colbench compare`), and a small history chart
per case with its change points (the cases that changed first).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from urllib.parse import urlencode

from colbench.analysis.aggregate import summarize_cases
from colbench.model.records import Result, Run
from colbench.render.figures import Plot
from colbench.render.fmt import measured_metrics, params_label, varying_params
from colbench.report.compare_page import run_compare
from colbench.report.history_page import HistoryView, history_link
from colbench.report.plots_compare import CompareRow, verdict_counts
from colbench.report.plots_history import MIN_RUNS, HistorySeries, history_figure, series_from_results
from colbench.report.templating import metric_title
from colbench.store.base import ResultQuery, Store

RECENT_RUNS = 30  # the front page looks at the benchmarks of this many newest runs
MAX_CHARTS = 12  # history charts on the front page, the cases that changed first
MAX_LISTED = 5  # changed cases named per benchmark (the compare page lists them all)
CHANGED = ("regression", "improvement")


@dataclass
class LatestVerdicts:
    """One benchmark's newest comparison: which two sides, the verdict counts and the cases that changed."""

    benchmark: str
    what: str  # "environment new vs old, run R (name)" or "run R2 vs run R1"
    when: str  # when the newer side's run started (UTC)
    metric: str
    order: int  # the newer side's place among the runs considered, newest 0
    counts: dict[str, int] = field(default_factory=dict)
    changed: list[CompareRow] = field(default_factory=list)
    more_changed: int = 0
    link: str | None = None
    note: str = ""  # why there is no comparison (the benchmark's first run on its machine)

    @property
    def rank(self) -> tuple[int, int, str]:
        """Regressions first, then improvements, then the rest; newest first within."""
        return (0 if self.counts.get("regression") else 1 if self.counts.get("improvement") else 2, self.order,
                self.benchmark)


@dataclass
class Overview:
    verdicts: list[LatestVerdicts]
    histories: list[HistoryView]
    runs_considered: int


def _when(run: Run) -> str:
    return str(run.started_at or "")[:16].replace("T", " ")


def _label(run: Run) -> str:
    return f"run {run.run_id}" + (f" ({run.name})" if run.name else "")


def _metric_of(results: Sequence[Result]) -> str:
    """The metric the benchmark's latest run decides on: time when it measured time, else instructions."""
    return measured_metrics(summarize_cases(results))[0]


def _compare_link(baseline: str, contender: str, baseline_env: str | None, contender_env: str | None,
                  metric: str) -> str:
    query = {"baseline": baseline, "contender": contender}
    if baseline_env:
        query["baseline_env"] = baseline_env
    if contender_env:
        query["contender_env"] = contender_env
    if metric != "time":
        query["metric"] = metric
    return "/compare?" + urlencode(query)


def latest_verdicts(store: Store, runs: Sequence[Run]) -> list[LatestVerdicts]:
    """Per benchmark of these runs (newest first), its newest comparison."""
    by_run: dict[str, dict[str, list[Result]]] = defaultdict(lambda: defaultdict(list))
    if runs:
        for result in store.results(ResultQuery(run_ids=tuple(r.run_id for r in runs), status="ok")):
            by_run[result.run_id][result.benchmark].append(result)
    compared: dict[_Pair, list[CompareRow]] = {}
    found = []
    benchmarks = list(dict.fromkeys(b for run in runs for b in by_run.get(run.run_id, {})))
    for benchmark in benchmarks:
        index, latest = next((i, r) for i, r in enumerate(runs) if by_run[r.run_id].get(benchmark))
        results = by_run[latest.run_id][benchmark]
        metric = _metric_of(results)
        pairs = _pairs(benchmark, index, latest, results, runs, by_run)
        if not pairs:
            found.append(LatestVerdicts(benchmark, _label(latest), _when(latest), metric, index,
                                        note="no earlier run of it on this machine among the newest runs"))
            continue
        for baseline, contender, baseline_env, contender_env, what in pairs:
            key = (baseline, contender, baseline_env, contender_env, metric)
            if key not in compared:
                view = run_compare(store, baseline, contender, baseline_env, contender_env, with_plot=False,
                                   metric=metric, explain=False)
                compared[key] = view.rows
            found.append(_verdicts(benchmark, what, latest, metric, index, compared[key], key))
    return sorted(found, key=lambda v: v.rank)


#: (baseline run, contender run, baseline environment, contender environment, and what: a heading or a metric)
_Pair = tuple[str, str, str | None, str | None, str]


def _pairs(benchmark: str, index: int, latest: Run, results: Sequence[Result], runs: Sequence[Run],
           by_run: Mapping[str, Mapping[str, list[Result]]]) -> list[_Pair]:
    """What the benchmark's newest run compares: its environments against its first, else the run against the
    newest earlier run on its machine that shares a case with it (none: nothing to compare)."""
    envs = [e for e in latest.env_names if any(r.env_name == e for r in results)]
    if len(envs) > 1:
        return [(latest.run_id, latest.run_id, envs[0], env,
                 f"environment {env} vs {envs[0]}, {_label(latest)}") for env in envs[1:]]
    cases = {r.case_id for r in results}
    earlier = next((r for r in runs[index + 1:] if r.machine_id == latest.machine_id
                    and cases & {x.case_id for x in by_run[r.run_id].get(benchmark, [])}), None)
    if earlier is not None:
        return [(earlier.run_id, latest.run_id, None, None, f"{_label(latest)} vs {_label(earlier)}")]
    return []


def _verdicts(benchmark: str, what: str, latest: Run, metric: str, index: int, compared: list[CompareRow],
              key: _Pair) -> LatestVerdicts:
    """One comparison's verdicts on the benchmark's cases, the changed ones listed (regressions first, biggest
    change first)."""
    baseline, contender, baseline_env, contender_env, _ = key
    rows = [r for r in compared if r.benchmark == benchmark]
    changed = [r for r in rows if r.verdict in CHANGED]
    changed.sort(key=lambda r: (r.verdict != "regression", -abs((r.ratio or 1.0) - 1.0)))
    return LatestVerdicts(
        benchmark, what + metric_title(metric), _when(latest), metric, index,
        verdict_counts(rows), changed[:MAX_LISTED], max(len(changed) - MAX_LISTED, 0),
        _compare_link(baseline, contender, baseline_env, contender_env, metric))


def history_charts(store: Store, runs: Sequence[Run], limit: int = MAX_CHARTS) -> list[HistoryView]:
    """A small chart per case with at least MIN_RUNS runs on the machine of its benchmark's newest run, of the
    metric that run measured; the cases with change points first (biggest step first), then the newest."""
    newest: dict[str, Run] = {}
    order = {run.run_id: i for i, run in enumerate(runs)}
    if runs:
        for summary in store.summaries(ResultQuery(run_ids=tuple(order), status="ok")):
            known = newest.get(summary.benchmark)
            if known is None or order[summary.run_id] < order[known.run_id]:
                newest[summary.benchmark] = runs[order[summary.run_id]]
    found: list[HistorySeries] = []
    for benchmark, run in newest.items():
        results = store.results(ResultQuery(benchmark=benchmark, machine_id=run.machine_id, status="ok"))
        metric = _metric_of([r for r in results if r.run_id == run.run_id])
        summaries = summarize_cases(results)
        varying = varying_params(summaries).get(benchmark, [])
        labels = {s.case_id: f"{benchmark} {params_label(s, varying)}" for s in summaries}
        by_case: dict[str, list[Result]] = defaultdict(list)
        for r in results:  # every environment of a case: what ran beside a point is what places it
            by_case[r.case_id].append(r)
        for case_id, members in by_case.items():
            found.extend(s for s in series_from_results(members, labels[case_id], metric=metric)
                         if len(s.points) >= MIN_RUNS)
    found.sort(key=lambda s: s.label)
    found.sort(key=lambda s: s.points[-1].timestamp, reverse=True)  # the newest first …
    found.sort(key=lambda s: -s.biggest_change)  # … after the ones with a change point, biggest step first
    views = []
    for series in found[:limit]:
        figure = history_figure(series, small=True)
        key = f"overview-{series.case_id}-{series.env_name}-{series.metric}"
        plot = Plot(key, f"history of {series.label}", figure) if figure is not None else None
        views.append(HistoryView(series, plot, history_link(series)))
    return views


def build_overview(store: Store, runs: Sequence[Run], recent: int = RECENT_RUNS) -> Overview:
    """The front page's views over the `recent` newest of `runs` (newest first)."""
    newest = list(runs[:recent])
    return Overview(latest_verdicts(store, newest), history_charts(store, newest), len(newest))
