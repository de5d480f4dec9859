"""The run view: one run's facts, machine, checks, versions, tables, plots, errors, environments compared, histories
and claims — a section of the report and the dashboard's run page."""

from __future__ import annotations

import sys
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypedDict

from colbench.analysis.aggregate import CaseSummary, summarize_cases
from colbench.engines import PYTHON_LIBRARIES
from colbench.experiments.registry import experiment_tables
from colbench.model.records import EnvironmentCheck, Run
from colbench.model.run_parts import MachineBandwidth
from colbench.redact import redact_argv
from colbench.render.figures import Plot
from colbench.render.fmt import fmt_bytes, params_label, varying_params
from colbench.report.claims import claims_table, evaluate_results, experiments_of_run
from colbench.report.claims_figure import claims_figure
from colbench.report.compare_page import CompareView, env_compares
from colbench.report.history_page import HistoryView, run_histories
from colbench.report.plots import make_plots
from colbench.report.tables import TableView, table_view
from colbench.report.terminal import ErrorView, error_views, every_case_note, results_table
from colbench.store.base import ResultQuery, Store
from colbench.words import plural

LIBRARY_ORDER = ("python", "colbench", *PYTHON_LIBRARIES)


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
