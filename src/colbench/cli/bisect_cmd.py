"""`colbench bisect`: which release, wheel or commit made a case slower (or faster)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, cast

import typer
from rich.markup import escape
from rich.table import Table

from colbench.app.catalog import select_benches
from colbench.cli.common import (
    BenchOption,
    ClusterOption,
    FormatOption,
    IndexOption,
    NetDeadlineOption,
    ParamOption,
    StoreOption,
    UsageError,
    VarOption,
    WithOption,
    _store,
    complete_targets,
    console,
    err_console,
    finite,
    friendly,
    net_deadline,
    output_format,
    parse_duration,
    parse_measure_option,
    parse_params,
    parse_threshold,
    parse_variables,
)
from colbench.model.metrics import metric
from colbench.render.tables import plain

if TYPE_CHECKING:  # the use case and its statistics are imported when a search starts, not with every command
    from colbench.app.bisect import BisectObserver, BisectReport, Direction

DIRECTIONS: dict[str, Direction] = {"slower": "slower", "faster": "faster"}


@friendly
def bisect(
    good: Annotated[str, typer.Option(help="the older version (commit, wheel) where the case is as expected")],
    bad: Annotated[str, typer.Option(help="the newer version (commit, wheel) where it changed")],
    benchmark: Annotated[str | None, typer.Argument(help="the benchmark (one case: fix its params with --param, or "
                                                    "name a stored case with --case)",
                                                    autocompletion=complete_targets)] = None,
    param: ParamOption = None,
    case: Annotated[str | None, typer.Option("--case", help="a stored case's id (or a unique prefix: `show --format "
                                             "json` lists them): its benchmark and every param, --param overriding "
                                             "one")] = None,
    bench: BenchOption = None,
    package: Annotated[str | None, typer.Option(help="the library: its releases on the package index, or "
                                                "java:arrow for Arrow Java on Maven Central; with --git or "
                                                "--wheels, the distribution")] = None,
    wheels: Annotated[Path | None, typer.Option(help="a directory of wheels (ordered by version) or a file "
                                                "listing wheels one a line, oldest first")] = None,
    git: Annotated[str | None, typer.Option(help="a git repository (path or URL) of a Python package that builds "
                                            "from source: --good and --bad are commits")] = None,
    with_: WithOption = None,
    var: VarOption = None,
    index: IndexOption = None,
    threshold: Annotated[str, typer.Option(help="the smallest change that counts, e.g. 5%")] = "5%",
    direction: Annotated[str, typer.Option(help="slower (a regression) or faster (an improvement)")] = "slower",
    pre: Annotated[bool, typer.Option("--pre", help="include pre-releases between good and bad")] = False,
    budget: Annotated[str | None, typer.Option(help="time for the whole search, e.g. 30m, 1h (default: twice what "
                                               "it is expected to take here, which it says at the start)")]
    = None,
    processes: Annotated[int | None, typer.Option(min=2, help="processes a point at a step's first look (default "
                                                  f"{metric('time').bisect_first_look} for time, "
                                                  f"{metric('instructions').bisect_first_look} for instructions; "
                                                  "each further look doubles them)")] = None,
    iterations: Annotated[int | None, typer.Option(min=1, help="timed iterations per process")] = None,
    warmup: Annotated[int | None, typer.Option(min=0, help="untimed warm-up iterations per process")] = None,
    measure: Annotated[str | None, typer.Option(help="wall or instructions (see docs/metrics.md; default: "
                                                "instructions where Valgrind runs and the case is a single-threaded "
                                                "Python one, else wall)")] = None,
    timeout: Annotated[float, typer.Option(min=0.1, max=7 * 86_400, callback=finite,
                                           help="seconds before a worker is killed")] = 600.0,
    alpha: Annotated[float, typer.Option(min=1e-6, max=0.5, callback=finite,
                                         help="error rate of one step")] = 0.01,
    resume: Annotated[bool, typer.Option("--resume", help="continue the last search with these settings, "
                                         "re-using the steps in the store")] = False,
    machine: Annotated[str | None, typer.Option(help="a name for this machine (part of its fingerprint)")] = None,
    fmt: FormatOption = "table",
    dry_run: Annotated[bool, typer.Option("--dry-run", help="list the points and say what the search expects to "
                                          "take here (from measured costs); build and measure nothing")] = False,
    store: StoreOption = None,
    deadline: NetDeadlineOption = None,
    cluster: ClusterOption = None,
) -> None:
    """Find the release (wheel, commit) between --good and --bad where a case got slower (or faster).

    Each step is an ordinary run in the store (`show`, `compare`, `report` read it), judged against the last good and
    the first bad with the statistics of `compare`. Exit codes: 0 a step was found, 1 none (good and bad alike,
    undecided, or the budget ended first), 2 bad input."""
    from colbench.app.bisect import BisectRequest, plan_bisect, run_bisect
    from colbench.app.cluster import cluster_session
    from colbench.cli.progress import LiveView
    from colbench.report.bisect_text import json_document

    chosen = DIRECTIONS.get(direction)
    if chosen is None:
        raise UsageError(f"--direction {direction!r}: choose slower or faster")
    overrides = parse_params(param, one_value="bisect")
    if case is not None:
        from colbench.app.stores import stored_case

        named, params = stored_case(store, case)
        if benchmark not in (None, named):
            raise UsageError(f"--case {case} is a case of {named}, not of {benchmark}")
        benchmark, overrides = named, {**params, **overrides}
    if benchmark is None:
        raise UsageError("name the case: a benchmark with its --param values, or --case ID of a stored case")
    variables = parse_variables(var)
    request = BisectRequest(
        benchmark=select_benches([benchmark], bench)[0], good=good, bad=bad, overrides=overrides, package=package,
        wheels=wheels, git=git,
        with_requirements=tuple(with_ or ()), variables=variables, threshold=parse_threshold(threshold) or 0.05,
        direction=chosen,
        pre=pre, budget_s=parse_duration(budget) if budget is not None else None, processes=processes,
        iterations=iterations, warmup=warmup, measure=parse_measure_option(measure) if measure is not None else None,
        timeout_s=timeout, alpha=alpha, resume=resume, machine_name=machine, index=index,
        net_deadline_s=net_deadline(deadline))
    # JSON on stdout stays clean; the view has every method of a BisectObserver (tests/cli/test_progress.py)
    view = LiveView(console if fmt == "table" else err_console, mode="bisect")  # Markdown, JSON: stdout clean
    progress = cast("BisectObserver", view)
    if dry_run:
        try:
            plan = plan_bisect(store, request, progress)
        finally:
            view.close()
        if fmt == "json":
            typer.echo(json.dumps({**dataclasses.asdict(plan), "dry_run": True}, indent=2))
        else:
            with output_format(fmt):
                console.print("dry run: nothing built or measured", highlight=False)
        raise typer.Exit(0)
    try:
        with cluster_session(cluster, say=progress.say):
            report = run_bisect(_store(store), request, progress)
    finally:
        view.close()
    outcome = report.outcome
    if fmt == "json":
        typer.echo(json_document(outcome, bisect_id=report.bisect_id, benchmark=benchmark, params=overrides,
                                 source=report.points.source, package=report.points.package,
                                 direction=direction, threshold=request.threshold, metric=report.metric,
                                 not_tested=report.points.excluded, resumed=report.resumed, notes=report.notes,
                                 budget_s=report.plan.budget_s if report.plan else request.budget_s,
                                 expected_s=round(report.plan.expected_s, 1) if report.plan else None,
                                 total_s=round(report.total_s, 3), ahead_build_s=round(report.ahead_s, 3)))
    else:
        with output_format(fmt):
            _print_table(report)
    raise typer.Exit(report.exit_code)


def _print_table(report: BisectReport) -> None:
    from colbench.report.bisect_text import STEP_COLUMNS, answer_lines, step_rows

    outcome = report.outcome
    table = Table(title=plain(f"bisect {report.bisect_id}: {report.request.benchmark} "
                              f"{' '.join(f'{k}={v[0]}' for k, v in report.request.overrides.items())} "
                              f"({report.request.direction}, threshold {report.request.threshold:.0%})"))
    for column in STEP_COLUMNS:
        table.add_column(column)
    styles = {"good": "green", "bad": "red", "differs": "red", "skipped": "yellow", "undecided": "yellow"}
    for step, row in zip(outcome.steps, step_rows(outcome), strict=True):
        table.add_row(*(plain(cell) for cell in row), style=styles.get(step.verdict, ""))
    console.print(table)
    style = "green" if outcome.found else "yellow"
    lines = answer_lines(outcome, report.metric, report.points.excluded, report.ahead_s, report.earlier_s)
    for i, line in enumerate([*lines[:-1], *(f"note: {n}" for n in report.notes), lines[-1]]):
        console.print(f"[{style}]{escape(line)}[/{style}]" if i == 0 else escape(line), highlight=False,
                      soft_wrap=True)
