"""What changed, at a glance: the dashboard's front page.

Three views over the newest runs of a store, in the spirit of asv's grid of graphs and Conbench's recent
regressions:
- **every change of the recent runs**: each run compared (its environments against its first, else the run against
  the newest earlier run on its machine that shares a case, with the statistics of `colbench compare`, on the
  metric that decides it: instructions where counted), and every regression and improvement found, regressions
  first, each with a small chart of the case's processes run by run (from its second run on) and a link to the
  comparison. A later inconclusive or unchanged run hides nothing: each run's comparison stands on its own;
- the latest verdicts per benchmark (its newest comparison, counts of each verdict);
- a small history chart per case with its change points (the cases that changed first).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from urllib.parse import urlencode

from colbench.analysis.aggregate import summarize_cases
from colbench.model.metrics import deciding_metric
from colbench.model.metrics import metric as metric_named
from colbench.model.records import Result, Run
from colbench.render.figures import Plot
from colbench.render.fmt import measured_metrics, params_label, varying_params
from colbench.report.compare_page import run_compare
from colbench.report.history_page import HistoryView, history_link
from colbench.report.plots_compare import CompareRow, verdict_counts
from colbench.report.plots_history import HistorySeries, history_figure, series_from_results
from colbench.report.plots_overview import Column, change_figure
from colbench.report.templating import metric_title
from colbench.store.base import ResultQuery, Store

RECENT_RUNS = 30  # the front page looks at the benchmarks of this many newest runs
MAX_CHARTS = 12  # history charts on the front page, the cases that changed first
MAX_LISTED = 5  # changed cases named per benchmark (the compare page lists them all)
MAX_CHANGES = 24  # changes of the recent runs shown with a chart (the rest are counted)
CONTEXT_RUNS = 6  # runs of a case a change's chart shows, up to the compared run
MIN_HISTORY_RUNS = 2  # a front-page history chart from a case's second run on
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
class RecentChange:
    """One case that changed in one comparison of the recent runs, with its small chart."""

    benchmark: str
    row: CompareRow
    what: str  # which two sides, as LatestVerdicts.what
    when: str
    order: int  # the newer side's place among the runs considered, newest 0
    link: str
    plot: Plot | None = None

    @property
    def rank(self) -> tuple[int, int, float]:
        """Regressions first, then improvements; newest first, the biggest change first within a run."""
        return (0 if self.row.verdict == "regression" else 1, self.order, -abs((self.row.ratio or 1.0) - 1.0))


@dataclass
class Overview:
    verdicts: list[LatestVerdicts]
    histories: list[HistoryView]
    runs_considered: int
    changes: list[RecentChange] = field(default_factory=list)
    more_changes: int = 0


def _when(run: Run) -> str:
    return str(run.started_at or "")[:16].replace("T", " ")


def _label(run: Run) -> str:
    return f"run {run.run_id}" + (f" ({run.name})" if run.name else "")


def deciding_metric_of(results: Sequence[Result]) -> str:
    """The metric a run's results decide on, by the one rule (`model.metrics.deciding_metric`) over what they
    measured."""
    return deciding_metric(measured_metrics(summarize_cases(results)))


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


class _Comparisons:
    """The recent runs' results by run and benchmark, and each comparison made once (the front page's views share
    them)."""

    def __init__(self, store: Store, runs: Sequence[Run]) -> None:
        self.store, self.runs = store, runs
        self.by_run: dict[str, dict[str, list[Result]]] = defaultdict(lambda: defaultdict(list))
        if runs:
            for result in store.results(ResultQuery(run_ids=tuple(r.run_id for r in runs), status="ok")):
                self.by_run[result.run_id][result.benchmark].append(result)
        self.done: dict[_Pair, list[CompareRow]] = {}

    def rows(self, pair: _Pair, metric: str) -> list[CompareRow]:
        baseline, contender, baseline_env, contender_env, _ = pair
        key = (baseline, contender, baseline_env, contender_env, metric)
        if key not in self.done:
            view = run_compare(self.store, baseline, contender, baseline_env, contender_env, with_plot=False,
                               metric=metric, explain=False)
            self.done[key] = view.rows
        return self.done[key]

    def pairs(self, benchmark: str, index: int) -> list[_Pair]:
        run = self.runs[index]
        return _pairs(benchmark, index, run, self.by_run[run.run_id][benchmark], self.runs, self.by_run)


def latest_verdicts(store: Store, runs: Sequence[Run], comparisons: _Comparisons | None = None
                    ) -> list[LatestVerdicts]:
    """Per benchmark of these runs (newest first), its newest comparison."""
    known = comparisons or _Comparisons(store, runs)
    by_run = known.by_run
    found = []
    benchmarks = list(dict.fromkeys(b for run in runs for b in by_run.get(run.run_id, {})))
    for benchmark in benchmarks:
        index, latest = next((i, r) for i, r in enumerate(runs) if by_run[r.run_id].get(benchmark))
        metric = deciding_metric_of(by_run[latest.run_id][benchmark])
        pairs = known.pairs(benchmark, index)
        if not pairs:
            found.append(LatestVerdicts(benchmark, _label(latest), _when(latest), metric, index,
                                        note="no earlier run of it on this machine among the newest runs"))
            continue
        for pair in pairs:
            key = (*pair[:4], metric)
            found.append(_verdicts(benchmark, pair[4], latest, metric, index, known.rows(pair, metric), key))
    return sorted(found, key=lambda v: v.rank)


def recent_changes(store: Store, runs: Sequence[Run], comparisons: _Comparisons | None = None,
                   limit: int = MAX_CHANGES) -> tuple[list[RecentChange], int]:
    """Every regression and improvement of the recent runs: each run's own comparison (as `latest_verdicts` makes
    it for a benchmark's newest run), so a later run that changed nothing hides nothing. The first `limit` (ranked)
    get a chart; how many more there are."""
    known = comparisons or _Comparisons(store, runs)
    found: list[tuple[RecentChange, _Pair]] = []
    for index, run in enumerate(runs):
        for benchmark, results in known.by_run.get(run.run_id, {}).items():
            metric = deciding_metric_of(results)
            for pair in known.pairs(benchmark, index):
                link = _compare_link(*pair[:4], metric)
                found += [(RecentChange(benchmark, row, pair[4] + metric_title(metric), _when(run), index, link),
                           pair) for row in known.rows(pair, metric)
                          if row.benchmark == benchmark and row.verdict in CHANGED]
    found.sort(key=lambda item: item[0].rank)
    for change, pair in found[:limit]:
        columns = _columns(known, pair, change.row.case_id, change.row.metric)
        figure = change_figure(columns, change.row.metric, change.row.verdict) if len(columns) > 1 else None
        if figure is not None:
            change.plot = Plot(f"change-{change.row.case_id}-{pair[0]}-{pair[1]}-{pair[2]}-{pair[3]}",
                               f"{change.row.label}: {change.what}", figure)
    return [c for c, _ in found[:limit]], max(len(found) - limit, 0)


def _process_values(results: Sequence[Result], case_id: str, env: str | None, metric: str,
                    order: Sequence[str] = ()) -> tuple[float, ...]:
    """Each process's median of the metric, of one case (and environment: None, the first one there)."""
    mine = [r for r in results if r.case_id == case_id]
    if env is None and mine:  # as run_compare takes a run without an environment named: its first one there
        present = {r.env_name for r in mine}
        env = next((e for e in order if e in present), mine[0].env_name)
    values = []
    for result in mine:
        if result.env_name == env:
            found = sorted(metric_named(metric).values(result) or [])
            if found:
                values.append(found[len(found) // 2])
    return tuple(values)


def _columns(known: _Comparisons, pair: _Pair, case_id: str, metric: str) -> list[Column]:
    """What a change's chart shows: the two environments of one run, or the case's runs on the contender's
    machine up to the compared one (the last CONTEXT_RUNS, oldest first), the compared two coloured."""
    baseline, contender, baseline_env, contender_env, _ = pair
    if baseline == contender:
        results = [r for rs in known.by_run[contender].values() for r in rs]
        return [Column(str(baseline_env), _process_values(results, case_id, baseline_env, metric), "baseline"),
                Column(str(contender_env), _process_values(results, case_id, contender_env, metric), "contender")]
    runs = {r.run_id: r for r in known.runs}
    machine = runs[contender].machine_id
    order = [r for r in known.runs if r.machine_id == machine][::-1]  # oldest first
    columns = []
    for run in order[:order.index(runs[contender]) + 1]:
        results = [r for rs in known.by_run[run.run_id].values() for r in rs]
        values = _process_values(results, case_id, None, metric, run.env_names)
        if values:
            role = "baseline" if run.run_id == baseline else "contender" if run.run_id == contender else ""
            columns.append(Column(_short(run), values, role))
    return columns[-CONTEXT_RUNS:]


def _short(run: Run) -> str:
    """A run under a small chart's axis: its name, else when it started (MM-DD HH:MM)."""
    if run.name:
        return run.name if len(run.name) <= 12 else run.name[:11] + "…"
    return str(run.started_at or run.run_id)[5:16].replace("T", " ")


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
    """A small chart per case with at least MIN_HISTORY_RUNS runs on the machine of its benchmark's newest run, of
    the metric that run decides on; the cases with change points first (biggest step first), then the newest."""
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
        metric = deciding_metric_of([r for r in results if r.run_id == run.run_id])
        summaries = summarize_cases(results)
        varying = varying_params(summaries).get(benchmark, [])
        labels = {s.case_id: f"{benchmark} {params_label(s, varying)}" for s in summaries}
        by_case: dict[str, list[Result]] = defaultdict(list)
        for r in results:  # every environment of a case: what ran beside a point is what places it
            by_case[r.case_id].append(r)
        for case_id, members in by_case.items():
            found.extend(s for s in series_from_results(members, labels[case_id], metric=metric)
                         if len(s.points) >= MIN_HISTORY_RUNS)
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
    comparisons = _Comparisons(store, newest)
    changes, more = recent_changes(store, newest, comparisons)
    return Overview(latest_verdicts(store, newest, comparisons), history_charts(store, newest), len(newest),
                    changes, more)
