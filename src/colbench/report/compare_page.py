"""The compare view: two runs, or two environments of one run, compared case by case on one metric (with the flame
graphs of the changed cases) — a section of the report and the dashboard's compare page."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from colbench.analysis.aggregate import CaseSummary, summarize_cases
from colbench.analysis.comparison import CompareSettings, Comparison, ComparisonError, compare_sides
from colbench.model.metrics import deciding_metric
from colbench.model.metrics import metric as metric_named
from colbench.model.records import Result, Run, Side
from colbench.render.figures import Plot
from colbench.render.fmt import fmt_percent, measured_metrics, slug
from colbench.report.compare_text import method_note
from colbench.report.explain_view import CaseExplained, explained_cases
from colbench.report.plots_compare import CompareRow, compare_figure, compare_rows, verdict_counts
from colbench.report.templating import metric_title
from colbench.store.base import ResultQuery, Store
from colbench.store.selection import comparison_evidence


@dataclass
class CompareView:
    title: str
    baseline: str
    contender: str
    rows: list[CompareRow]
    note: str
    plot: Plot | None = None
    #: the changed cases' differential flame graphs and top functions (report/explain_view.py)
    explained: list[CaseExplained] = field(default_factory=list)
    explained_note: str = ""
    #: why there is no row, when there is none: no case ran on both sides, or none measured this metric
    empty: str = "No case ran successfully on both sides."

    @property
    def counts(self) -> dict[str, int]:
        return verdict_counts(self.rows)


def _env_names(run: Run, summaries: Sequence[CaseSummary]) -> list[str]:
    declared = [e.name for e in run.envs]
    present = list(dict.fromkeys(s.env_name for s in summaries))
    return [e for e in declared if e in present] + [e for e in present if e not in declared]


def _compare(store: Store, baseline: Side, contender: Side, metric_name: str) -> Comparison | None:
    """The one comparison (`analysis.comparison`) of two sides on one metric, with the store's evidence: what
    `colbench compare` says of the same sides. None when no case ran on both sides."""
    settings = CompareSettings(metrics=(metric_name,))
    try:
        return compare_sides(baseline, contender, settings,
                             **comparison_evidence(store, baseline, contender, settings.metrics))
    except ComparisonError:
        return None


def compare_view(comparison: Comparison | None, *, title: str, baseline_label: str, contender_label: str,
                 same_run: bool, with_plot: bool = True, metric_name: str = "time") -> CompareView:
    """The cases both sides ran, compared on `metric_name`, as the report and the dashboard show them."""
    rows = compare_rows(comparison, metric_name) if comparison is not None else []
    threshold = rows and comparison is not None and comparison.cases[0].threshold or metric_named(metric_name).threshold
    band = f"±{fmt_percent(threshold)}"
    title += metric_title(metric_name)
    pairing = "paired by interleaving block (same run)" if same_run else "unpaired (separate runs)"
    method = method_note(comparison.cases) if comparison is not None and comparison.cases else ""
    note = (f"Ratio = contender / baseline of {metric_named(metric_name).measured}: {method}; interval adjusted for "
            f"{len(rows)} comparison{'s' if len(rows) != 1 else ''} (Holm), {pairing}. Regression or improvement: "
            f"the interval excludes 1 and the estimate is beyond {band}; no change: the whole interval within.")
    if comparison is not None and comparison.replayed:
        note += " Verdicts as the run's --until-decided looks reached them."
    plot = None
    if with_plot and rows:
        figure = compare_figure(rows, f"{contender_label} vs {baseline_label}", threshold=threshold)
        if figure is not None:
            key = f"compare-{slug(baseline_label)}-vs-{slug(contender_label)}" + \
                ("" if metric_name == "time" else f"-{metric_name}")
            plot = Plot(key, title, figure, f"Ratio per case with its interval, coloured and labelled by verdict; "
                        f"the grey band is {band}, the smallest change that matters.")
    return CompareView(title, baseline_label, contender_label, rows, note, plot)


def env_compares(store: Store, run: Run, summaries: Sequence[CaseSummary], with_plot: bool = True,
                 metrics: Sequence[str] | None = None) -> list[CompareView]:
    """A run with several environments: each one against the first (same run, interleaved blocks), on each
    metric (default: every metric the run measured)."""
    envs = _env_names(run, summaries)
    views = []
    results = {env: [r for s in summaries if s.env_name == env for r in s.results] for env in envs}
    for metric_name in metrics or measured_metrics(summaries):
        for env in envs[1:]:
            baseline = Side(envs[0], run.run_id, envs[0], results[envs[0]])
            contender = Side(env, run.run_id, env, results[env])
            views.append(compare_view(_compare(store, baseline, contender, metric_name),
                                      title=f"environment {env} vs {envs[0]}", baseline_label=envs[0],
                                      contender_label=env, same_run=True, with_plot=with_plot,
                                      metric_name=metric_name))
            if metric_name == _explained_metric(measured_metrics(summaries)):
                _attach_explanations(views[-1], store, baseline, contender)
            elif metric_name == "memory":
                _attach_explanations(views[-1], store, baseline, contender, "memory")
    if "memory" not in (metrics or ()):
        views += _memory_compares(store, run, envs, results, with_plot)
    return views


def _memory_compares(store: Store, run: Run, envs: Sequence[str], results: dict[str, list[Result]],
                     with_plot: bool) -> list[CompareView]:
    """Peak RSS compared, with who owns the peak, for the environments whose cases kept memory profiles (`run
    --profile-memory`) or were explained (`explain --metric memory`); none otherwise."""
    from colbench.report.explain_memory_view import has_memory_profiles

    views = []
    for env in envs[1:]:
        baseline = Side(envs[0], run.run_id, envs[0], results[envs[0]])
        contender = Side(env, run.run_id, env, results[env])
        if has_memory_profiles(store, baseline, contender):
            views.append(compare_view(_compare(store, baseline, contender, "memory"),
                                      title=f"environment {env} vs {envs[0]}", baseline_label=envs[0],
                                      contender_label=env, same_run=True, with_plot=with_plot, metric_name="memory"))
            _attach_explanations(views[-1], store, baseline, contender, "memory")
    return views


def _explained_metric(metrics: Sequence[str]) -> str:
    """The one comparison of two sides that shows the flame graphs: instructions (what profiles count) when
    measured, else time."""
    return deciding_metric(metrics)


def _attach_explanations(view: CompareView, store: Store, baseline: Side, contender: Side,
                         metric: str = "instructions") -> None:
    """The flame graphs beside the verdicts: where the instructions went, or for the memory comparison who owns
    the peak (report/explain_memory_view.py)."""
    cases = [(r.case_id, r.label, r.verdict) for r in view.rows]
    if metric == "memory":
        from colbench.report.explain_memory_view import explained_memory_cases

        view.explained, view.explained_note = explained_memory_cases(store, baseline, contender, cases)
        return
    view.explained, view.explained_note = explained_cases(store, baseline, contender, cases)


def run_compare(store: Store, baseline_id: str, contender_id: str, baseline_env: str | None = None,
                contender_env: str | None = None, with_plot: bool = True, metric: str = "time",
                explain: bool = True) -> CompareView:
    """Two runs (or two environments of one run) compared case by case on `metric`; an environment not named
    is the run's first. `explain`: with the flame graphs of the changed cases that have profiles."""
    sides = []
    same_run = baseline_id == contender_id
    for run_id, env in ((baseline_id, baseline_env), (contender_id, contender_env)):
        run = store.get_run(run_id)
        results = store.results(ResultQuery(run_ids=(run_id,), env_name=env))
        if env is None:
            envs = _env_names(run, summarize_cases(results))
            env = envs[0] if envs else "default"
            results = [r for r in results if r.env_name == env]
        label = f"{run.name} ({run_id})" if run.name else run_id
        shown = env if same_run else (f"{label} [{env}]" if env != "default" else label)
        sides.append((Side(shown, run_id, env, [r.redacted() for r in results]), label))
    (base, run_label), (cont, _) = sides
    heading = f"environment {cont.label} vs {base.label} in run {run_label}" if same_run else \
        f"{cont.label} vs {base.label}"
    view = compare_view(_compare(store, base, cont, metric), title=heading, baseline_label=base.label,
                        contender_label=cont.label, same_run=same_run, with_plot=with_plot, metric_name=metric)
    if not view.rows:
        view.empty = _why_empty(base, cont, metric)
    if explain:
        _attach_explanations(view, store, base, cont, "memory" if metric == "memory" else "instructions")
    return view


def _why_empty(baseline: Side, contender: Side, metric: str) -> str:
    """Why two sides have nothing to compare on `metric`: no case succeeded on both, or they measured another
    metric (an instruction-count run opened on wall time)."""
    both = {r.case_id for r in baseline.results if r.ok} & {r.case_id for r in contender.results if r.ok}
    if not both:
        return "No case ran successfully on both sides."
    shared = [r for r in (*baseline.results, *contender.results) if r.ok and r.case_id in both]
    measured = [m for m in measured_metrics(summarize_cases(shared)) if m != metric]
    other = f": they measured {' and '.join(measured)} (choose it above)" if measured else ""
    return (f"{len(both)} case{'s' if len(both) != 1 else ''} ran successfully on both sides, but none measured "
            f"{metric_named(metric).name} on both{other}.")


def cross_run_compares(store: Store, run_ids: Sequence[str], baseline_id: str | None,
                       with_plot: bool = True, metrics: Sequence[str] | None = None) -> list[CompareView]:
    """Each run against the baseline when one is named; else each run after the first against the first, kept
    only when the two share cases (several runs of different benchmarks are just reported side by side). Of each
    of `metrics`; by default time, plus instructions where both runs counted them."""
    views = []
    for metric in metrics or ("time", "instructions"):
        if baseline_id is not None:
            found = [run_compare(store, baseline_id, r, with_plot=with_plot, metric=metric)
                     for r in run_ids if r != baseline_id]
            views += [v for v in found if v.rows or (metric == "time" and not metrics)]
        else:
            found = [run_compare(store, run_ids[0], r, with_plot=with_plot, metric=metric) for r in run_ids[1:]]
            views += [v for v in found if v.rows]
    return views
