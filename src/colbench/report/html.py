"""The report of one or more runs — a self-contained `index.html` with its plots, or Markdown — and the views
(run, compare, history) that the dashboard pages share with it.

Self-contained means: every plot inlined as a PNG data URI, CSS inline, no script, no font or other
resource fetched; a Content-Security-Policy of `default-src 'none'` makes the browser refuse anything else.
Every value from the store goes through Jinja2's autoescaping (error messages and stderr tails included).
"""

from __future__ import annotations

import functools
import math
import sys
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypedDict

import jinja2
import markupsafe
from rich.errors import MarkupError
from rich.table import Table
from rich.text import Text

import colbench
from colbench.analysis.aggregate import CaseSummary, summarize_cases
from colbench.analysis.comparison import CompareSettings, Comparison, ComparisonError, compare_sides
from colbench.experiments.registry import experiment_tables
from colbench.model.metrics import metric as metric_named
from colbench.model.records import EnvironmentCheck, Result, Run, Side
from colbench.model.run_parts import MachineBandwidth
from colbench.paths import inside, owned_dir, write_text
from colbench.redact import document_text, redact_argv
from colbench.render.figures import Plot
from colbench.render.fmt import (
    fmt_bytes,
    fmt_measured,
    fmt_percent,
    fmt_seconds,
    md_text,
    measured_metrics,
    params_label,
    varying_params,
)
from colbench.report.claims import claims_figure, claims_table, evaluate_results, experiments_of_run
from colbench.report.compare_text import method_note
from colbench.report.explain_view import CaseExplained, explained_cases
from colbench.report.plots import make_plots
from colbench.report.plots_compare import VERDICT_CLASSES, CompareRow, compare_figure, compare_rows, verdict_counts
from colbench.report.plots_history import (
    MIN_RUNS,
    HistorySeries,
    history_figure,
    series_from_results,
    version_series_from_results,
)
from colbench.report.terminal import ErrorView, error_views, every_case_note, results_table
from colbench.report.watch_view import WatchTimeline, timelines, watch_markdown
from colbench.store.base import ResultQuery, Store
from colbench.store.selection import comparison_evidence
from colbench.words import plural

TEMPLATES = Path(__file__).parent / "templates"
REPORT_CSP = "default-src 'none'; img-src data:; style-src 'unsafe-inline'"
HISTORY_LIMIT = 24  # history plots in one report, the cases with change points first
LIBRARY_ORDER = ("python", "colbench", "pyarrow", "pandas", "polars", "duckdb", "numpy", "fastparquet")
STYLE_CLASSES = (("red", "bad"), ("yellow", "warn"), ("green", "good"), ("dim", "dim"))


# -------------------------------------------------------------------------------------------------- views


@dataclass
class Column:
    name: str
    align: str = "left"
    css: str = ""  # e.g. "pre": keep the cell's line breaks and never wrap inside a line (versions)


@dataclass
class Cell:
    text: str
    css: str = ""


@dataclass
class TableView:
    title: str
    columns: list[Column]
    rows: list[list[Cell]]
    links: list[str | None] = field(default_factory=list)  # per row, e.g. the case's history page
    note: str = ""  # under the table: what its figures are (units, what a column divides)
    css: str = ""  # a class for the table, e.g. "claims"


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

    @property
    def counts(self) -> dict[str, int]:
        return verdict_counts(self.rows)


@dataclass
class HistoryView:
    series: HistorySeries
    plot: Plot | None
    link: str | None = None


@dataclass
class RunView:
    run: Run
    summaries: list[CaseSummary]
    info: list[tuple[str, str]]
    machine: list[tuple[str, str]]
    checks: list[EnvironmentCheck]
    versions: list[tuple[str, str]]
    tables: list[TableView]
    plots: list[Plot]
    errors: list[ErrorView]
    warnings: list[tuple[str, str]]
    compares: list[CompareView] = field(default_factory=list)
    histories: list[HistoryView] = field(default_factory=list)
    claims: TableView | None = None
    claims_plot: Plot | None = None

    @property
    def command(self) -> str:
        argv = redact_argv([str(a) for a in self.run.argv])
        return " ".join(["colbench", *argv[1:]]) if argv else ""


# ------------------------------------------------------------------------------------------ Rich → tables


def _css(style: Any) -> str:
    text = str(style or "")
    return " ".join(css for name, css in STYLE_CLASSES if name in text.split() or text == name)


def _cell(renderable: Any, column_style: Any) -> Cell:
    if isinstance(renderable, Text):
        text = renderable
    else:
        try:
            text = Text.from_markup(str(renderable))
        except MarkupError:
            text = Text(str(renderable))
    classes = {_css(span.style) for span in text.spans} | {_css(column_style)}
    return Cell(text.plain, " ".join(sorted(c for c in classes if c)))


def table_view(table: Table, links: Sequence[str | None] = ()) -> TableView:
    """The same rows and columns as a Rich table, colours turned into CSS classes."""
    columns = [Column(str(c.header), "right" if c.justify == "right" else "left") for c in table.columns]
    cells = [list(c.cells) for c in table.columns]
    rows = [[_cell(cells[j][i], table.columns[j].style) for j in range(len(columns))] for i in range(table.row_count)]
    return TableView(str(table.title or ""), columns, rows, list(links))


def markdown_table(view: TableView) -> str:
    md = md_text
    lines = [f"**{md(view.title)}**", ""] if view.title else []
    lines.append("| " + " | ".join(md(c.name) for c in view.columns) + " |")
    lines.append("|" + "|".join("---:" if c.align == "right" else "---" for c in view.columns) + "|")
    lines += ["| " + " | ".join(md(cell.text) for cell in row) + " |" for row in view.rows]
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------- run metadata


def _when(value: Any) -> str:
    return str(value or "")[:19].replace("T", " ")


def run_status(run: Run) -> str:
    """The run's status with its history: 'finished (interrupted: SIGTERM; resumed 2026-11-25 10:02)'."""
    status = str(run.status or "")
    notes = []
    for resume in run.resumes:
        earlier = resume.get("stopped")
        why = f"{resume.get('status') or 'stopped'}" + (f" after {earlier['after']} of {earlier['of']} executions"
                                                        if earlier and earlier.get("of") else "")
        notes.append(f"{why}; resumed {_when(resume.get('at'))} UTC")
    if run.stopped:
        stopped = run.stopped
        notes.append(f"stopped after {stopped.get('after')} of {stopped.get('of')} executions: "
                     f"{stopped.get('error', '')}; colbench run --resume {run.run_id} goes on")
    return status + (f" ({'; '.join(notes)})" if notes else "")


def _process_counts(summaries: Sequence[CaseSummary]) -> str:
    counts = sorted({s.processes for s in summaries})
    if not counts:
        return "-"
    return " or ".join(map(str, counts)) if len(counts) <= 3 else f"{counts[0]}–{counts[-1]}"


def _count(value: int | None) -> str:
    return "-" if value is None else str(value)


def run_info(run: Run, summaries: Sequence[CaseSummary]) -> list[tuple[str, str]]:
    config = run.config
    processes = sum(s.processes for s in summaries)
    failed = sum(1 for s in summaries if not s.ok)
    info = [
        ("status", run_status(run)),
        ("started", _when(run.started_at) + " UTC"),
        ("finished", _when(run.finished_at) + (" UTC" if run.finished_at else "")),
        ("machine", f"{(run.machine or {}).get('name', '')} ({run.machine_id or ''})"),
        ("suite / targets", config.suite or ", ".join(config.targets) or "-"),
        ("cases", f"{len(summaries)} ({failed} with errors), {plural(processes, 'worker process')}"),
        ("per process", f"{_count(config.warmup)} warm-up + {_count(config.iterations)} timed iterations; "
                        f"{_process_counts(summaries)} processes per case (as they ran)"),
        ("environments", ", ".join(e.name for e in run.envs) or "default"),
        ("commit", run.commit_sha or "-"),
        ("colbench", str(run.colbench_version or "")),
    ]
    bandwidth = MachineBandwidth.of(run)
    for name, figures in (("memcpy bandwidth", bandwidth.memcpy_gbps), ("read bandwidth", bandwidth.read_gbps)):
        if figures:
            info.append((name, ", ".join(f"{t} {'thread' if str(t) == '1' else 'threads'} {g:g} Gbps"
                                         for t, g in figures.items())))
    return info


def machine_rows(machine: Mapping[str, object]) -> list[tuple[str, str]]:
    rows = []
    for key, value in machine.items():
        if key in ("memory_bytes", "swap_bytes") and isinstance(value, int | float):
            shown = fmt_bytes(value)
        elif isinstance(value, dict):
            shown = ", ".join(f"{k} {v}" for k, v in value.items())
        elif isinstance(value, list):
            shown = ", ".join(f"{v:.2f}" if isinstance(v, float) else str(v) for v in value)
        else:
            shown = "-" if value is None else str(value)
        rows.append((key.removesuffix("_bytes").replace("_", " "), shown))
    return rows


def versions_seen(summaries: Sequence[CaseSummary]) -> list[tuple[str, str]]:
    """Library → every version the run's results report (third-party and runtimes; the stdlib left out)."""
    seen: dict[str, set[str]] = defaultdict(set)
    for s in summaries:
        for result in s.results:
            for name, version in result.versions.items():
                if name.startswith("_") or (name in sys.stdlib_module_names and name != "python"):
                    continue
                seen[name].add(str(version))
            runtime = result.runtime or {}
            if runtime.get("name") and runtime.get("name") != "python" and runtime.get("version"):
                seen[f"runtime {runtime['name']}"].add(str(runtime["version"]))
    order = {name: i for i, name in enumerate(LIBRARY_ORDER)}
    names = sorted(seen, key=lambda n: (order.get(n, len(order)), n))
    return [(n, ", ".join(sorted(seen[n]))) for n in names]


# ------------------------------------------------------------------------------------ compare and history


def _env_names(run: Run, summaries: Sequence[CaseSummary]) -> list[str]:
    declared = [e.name for e in run.envs]
    present = list(dict.fromkeys(s.env_name for s in summaries))
    return [e for e in declared if e in present] + [e for e in present if e not in declared]


def metric_title(name: str) -> str:
    """What a view's title adds for a metric other than time: ' — instructions'."""
    return "" if name == "time" else f" — {name}"


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
            key = f"compare-{_slug(baseline_label)}-vs-{_slug(contender_label)}" + \
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
    return "instructions" if "instructions" in metrics else "time"


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
    if explain:
        _attach_explanations(view, store, base, cont, "memory" if metric == "memory" else "instructions")
    return view


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
        plot = Plot(f"history-{series.case_id}-{_slug(series.env_name)}{suffix}", f"history of {series.label}"
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


# ------------------------------------------------------------------------------------------------ run view


def build_run_view(store: Store, run_id: str, *, plots: bool = True, history: bool = True,
                   dashboard: bool = False, metrics: Sequence[str] | None = None) -> RunView:
    """Everything one run's section shows (`run_id` must be an exact id: resolve it first); compares and
    histories of `metrics` (default: every metric the run measured)."""
    # redacted on read too: records stored before colbench redacted them may hold a password in argv or a URL
    run = store.get_run(run_id).redacted()
    summaries = summarize_cases([r.redacted() for r in store.results(ResultQuery(run_ids=(run_id,)))])
    links = [history_link_for(s, run) for s in summaries] if dashboard else []
    tables = [table_view(t) for t in experiment_tables(summaries, run)]
    every_case = table_view(results_table(summaries, title="every case (processes pooled)",
                                          bandwidth=MachineBandwidth.of(run)), links)
    every_case.note = every_case_note(summaries)
    tables.append(every_case)
    warnings = []
    varying = varying_params(summaries)
    several_envs = len({s.env_name for s in summaries}) > 1
    for s in summaries:
        label = f"{s.benchmark} {params_label(s, varying.get(s.benchmark, []))}"
        for text in s.warnings:
            warnings.append((label + (f" [{s.env_name}]" if several_envs else ""), text))
    return RunView(
        run=run, summaries=summaries, info=run_info(run, summaries), machine=machine_rows(run.machine or {}),
        checks=list(run.checks), versions=versions_seen(summaries), tables=tables,
        plots=make_plots(summaries, run) if plots else [], errors=error_views(summaries), warnings=warnings,
        compares=env_compares(store, run, summaries, with_plot=plots, metrics=metrics),
        histories=run_histories(store, run, summaries, link=dashboard, metrics=metrics) if history else [],
        **claims_views(store, run, with_plot=plots),
    )


class ClaimsViews(TypedDict, total=False):
    """A run view's claims part: empty for a run of no experiment suite."""

    claims: TableView
    claims_plot: Plot | None


def claims_views(store: Store, run: Run, with_plot: bool = True) -> ClaimsViews:
    """The posts' claims over a run of experiment suites: their table and the measured-vs-published plot."""
    experiments = experiments_of_run(run)
    if not experiments:
        return {}
    results = store.results(ResultQuery(run_ids=(run.run_id,)))
    verdicts, untestable = evaluate_results(results, {run.run_id: run}, experiments)
    table = claims_table(verdicts, untestable, cores=(run.machine or {}).get("cpu_threads"))
    figure = claims_figure(verdicts) if with_plot else None
    plot = None if figure is None else Plot(
        "claims", "Claims: measured vs published factors", figure,
        "Each claim's ratio (slower / faster) measured here, with its interval (whiskers: the Holm-adjusted "
        "interval of the table), against the ratio the post published; on the dashed diagonal the factor is the "
        "same, above it larger here. Colour: the verdict; the numbers are the claims listed under the plot.")
    view = table_view(table)
    view.css = "claims"
    for column in view.columns:
        column.css = {"claim": "wraps", "conditions": "conditions", "versions": "pre"}.get(column.name, "")
    view.note = ("measured: the ratio slower / faster of the two sides' medians (times; sizes for size claims), "
                 "with its interval; bar: what the claim needs; published: the post's own ratio.")
    return {"claims": view, "claims_plot": plot}


def history_link_for(summary: CaseSummary, run: Run) -> str:
    from urllib.parse import urlencode

    return "/history?" + urlencode({"benchmark": summary.benchmark, "case": summary.case_id,
                                    "machine": run.machine_id or ""})


# --------------------------------------------------------------------------------------------- rendering


def _ratio(value: float | None) -> str:
    return "–" if value is None or not math.isfinite(value) else f"{value:.3f}"


def _pct(value: float | None) -> str:
    return "–" if value is None or not math.isfinite(value) else f"{value:+.1%}"


def _level(value: float | None) -> str:
    return "" if value is None else f"{value * 100:.4g}%"


def _slug(text: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "-" for c in text).strip("-") or "x"


def _document_value(value: Any) -> Any:
    """Every value a template prints, before it is escaped: control characters (ESC, BEL, NUL … from a profiled
    function's name, a shared store's run name, a parameter) replaced by U+FFFD, as in the SVG flame graphs. Markup
    (an SVG drawn here) stays markup."""
    if isinstance(value, markupsafe.Markup):
        return markupsafe.Markup(document_text(str(value)))
    if isinstance(value, str):
        return document_text(value)
    return value


@functools.cache
def environment() -> jinja2.Environment:
    """The templates of the report and the dashboard: autoescaped, and every printed value is document text
    (`_document_value`), whichever field it comes from."""
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES), undefined=jinja2.StrictUndefined,
                             autoescape=jinja2.select_autoescape(("html",), default_for_string=True),
                             trim_blocks=True, lstrip_blocks=True, finalize=_document_value)
    env.filters.update(seconds=fmt_seconds, ratio=_ratio, pct=_pct, level=_level, bytes=fmt_bytes,
                       measured=fmt_measured)
    env.globals.update(colbench_version=colbench.__version__, min_runs=MIN_RUNS,
                       verdict_css=lambda v: VERDICT_CLASSES.get(v, ""))
    return env


def render(template: str, **context: Any) -> str:
    context.setdefault("csp", REPORT_CSP)
    return environment().get_template(template).render(**context)


def render_report_html(views: Sequence[RunView], compares: Sequence[CompareView] = (),
                       files: dict[str, dict[str, tuple[str, str]]] | None = None,
                       watches: Sequence[WatchTimeline] = ()) -> str:
    return render("report.html", views=views, compares=compares, files=files or {}, watches=watches,
                  generated=datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"))


def render_markdown(views: Sequence[RunView], compares: Sequence[CompareView] = (),
                    watches: Sequence[WatchTimeline] = ()) -> str:
    """A text-only summary: run facts, warnings, the tables, compare verdicts, change points, errors; the watched
    releases of the runs `colbench watch` measured."""
    out: list[str] = watch_markdown(watches)
    for item in compares:
        out += _markdown_compare(item, "##")
    for view in views:
        run = view.run
        out += [f"## colbench run {md_text(run.run_id)}" + (f" ({md_text(run.name)})" if run.name else ""), ""]
        out += [f"- **{md_text(key)}**: {md_text(value)}" for key, value in view.info] + [""]
        for check in view.checks:
            if not check.get("ok"):
                out.append(f"> **warning:** {md_text(check.get('message'))}")
        out += [f"> **warning** ({md_text(label)}): {md_text(text)}" for label, text in view.warnings] + [""]
        if view.claims:
            out += ["### Claims of the posts", "", markdown_table(view.claims), ""]
        for table in view.tables:
            out += [markdown_table(table), ""]
        for item in view.compares:
            out += _markdown_compare(item, "###")
        if view.histories:
            out += ["### History on this machine", ""]
            for h in view.histories:
                changes = ", ".join(f"{c.magnitude:+.1%} at run {c.index + 1} "
                                    f"({h.series.points[c.index].version})" for c in h.series.changes)
                out.append(f"- {md_text(h.series.label)}{metric_title(h.series.metric)}: {len(h.series.points)} "
                           f"runs, last {fmt_measured(h.series.points[-1].median, h.series.metric)}; "
                           f"{changes or 'no change point'}")
            out.append("")
        if view.errors:
            out += ["### Errors", ""]
            for e in view.errors:
                first = e.message.strip().splitlines()[0] if e.message.strip() else ""
                out.append(f"- **{md_text(e.kind)}** {md_text(e.label)} (process {', '.join(map(str, e.processes))}): "
                           f"{md_text(first)}")
            out.append("")
    return "\n".join(out).rstrip() + "\n"


def _markdown_compare(item: CompareView, level: str) -> list[str]:
    counts = ", ".join(f"{n} {v}" for v, n in item.counts.items())
    lines = [f"{level} {md_text(item.title)}", "", f"{counts}. {md_text(item.note)}", "",
             "| case | baseline | contender | ratio | interval | verdict |", "|---|---:|---:|---:|---:|---|"]
    for r in item.rows:
        interval = f"{_ratio(r.ci_low)} – {_ratio(r.ci_high)}" if r.ci_low is not None else "–"
        verdict = f"**{r.verdict}**" if r.verdict == "regression" else r.verdict
        lines.append(f"| {md_text(r.label)} | {fmt_measured(r.baseline_median, r.metric)} | "
                     f"{fmt_measured(r.contender_median, r.metric)} | "
                     f"{_ratio(r.ratio)} | {interval} | {verdict} |")
    return [*lines, ""]


def write_report(store: Store, run_ids: Sequence[str], output: Path, *, fmt: str = "html",
                 baseline_id: str | None = None, history: bool = True,
                 metrics: Sequence[str] | None = None) -> list[Path]:
    """Write the report of the runs (exact ids) into `output`; returns the files written.

    html: `index.html` plus `<plot>.png`/`.svg` (in `<run id>/` when there are several runs); markdown:
    `report.md` only. Compare sections: each run against `baseline_id` when given, else every run after the
    first against the first; plus the environments of a run with several. Compares and histories are of
    `metrics` ("time", "instructions"; default: every one the runs measured).
    """
    if fmt not in ("html", "markdown"):
        raise ValueError(f"unknown report format {fmt!r}")
    html = fmt == "html"
    views = [build_run_view(store, run_id, plots=html, history=history, metrics=metrics) for run_id in run_ids]
    compares = cross_run_compares(store, run_ids, baseline_id, with_plot=html, metrics=metrics)
    watched = [view.run.watch["id"] for view in views if view.run.watch]
    watches = timelines(store, watched) if watched else []
    # the output directory is the user's; below it, every level is checked (colbench.paths): a run's folder or a
    # file there that is a link leading out of it is refused, never written through
    owned_dir(output, "report directory", output)
    if not html:
        path = write_text(output / "report.md", render_markdown(views, compares, watches), "report", output)
        return [path]
    written: list[Path] = []
    files: dict[str, dict[str, tuple[str, str]]] = {}
    for view in views:
        # a run id read from a store (perhaps copied from elsewhere) becomes a directory: it must stay in `output`
        directory = inside(output, view.run.run_id, what="run id") if len(views) > 1 else output
        for plot in [*view.plots, *([view.claims_plot] if view.claims_plot else [])]:
            png, svg = plot.save(directory, root=output)
            written += [png, svg]
            files.setdefault(view.run.run_id, {})[plot.key] = (str(png.relative_to(output)),
                                                                  str(svg.relative_to(output)))
    index = write_text(output / "index.html", render_report_html(views, compares, files, watches), "report", output)
    return [index, *written]


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

