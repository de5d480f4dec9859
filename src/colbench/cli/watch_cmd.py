"""`colbench watch`: one pass over the new releases of the libraries a suite depends on (app/watch.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, cast

import typer

from colbench.app.catalog import select_benches
from colbench.cli.common import (
    BenchOption,
    ClusterOption,
    FormatOption,
    IndexOption,
    NetDeadlineOption,
    ParamOption,
    StoreOption,
    VarOption,
    WithOption,
    _store,
    complete_targets,
    console,
    err_console,
    finite,
    friendly,
    net_deadline,
    parse_duration,
    parse_measure_option,
    parse_params,
    parse_threshold,
    parse_variables,
)
from colbench.paths import append_output, check_output_file
from colbench.words import plural

if TYPE_CHECKING:  # the use case (runner, statistics) is imported when a pass starts, not with every command
    from colbench.app.notify import Delivery
    from colbench.app.watch import WatchObserver, WatchOutcome


@friendly
def watch(
    targets: Annotated[list[str], typer.Argument(help="suites or benchmarks to measure each new release with",
                                                 autocompletion=complete_targets)],
    package: Annotated[list[str], typer.Option("--package", help="a library to watch on the package index "
                                               "(repeatable)")],
    param: ParamOption = None,
    bench: BenchOption = None,
    index: IndexOption = None,
    pre: Annotated[bool, typer.Option("--pre", help="watch pre-releases too")] = False,
    since: Annotated[str | None, typer.Option(help="the first pass starts from this release (default: the newest "
                                              "against the one before it)")] = None,
    with_: WithOption = None,
    var: VarOption = None,
    measure: Annotated[str | None, typer.Option(help="wall or instructions (default: instructions where Valgrind "
                                                "counts them here, else wall; see docs/metrics.md)")] = None,
    threshold: Annotated[str | None, typer.Option(help="the smallest change that counts, e.g. 5% (default: the "
                                                  "metric's own)")] = None,
    alpha: Annotated[float, typer.Option(min=1e-6, max=0.5, callback=finite,
                                         help="error rate of each release's verdicts")] = 0.01,
    budget: Annotated[str, typer.Option(help="time for the whole pass, e.g. 1h; what is left waits for the next "
                                        "pass")] = "1h",
    processes: Annotated[int | None, typer.Option(min=2, help="processes a release at the first look (default: the "
                                                  "metric's own)")] = None,
    iterations: Annotated[int | None, typer.Option(min=1, help="timed iterations per process")] = None,
    warmup: Annotated[int | None, typer.Option(min=0, help="untimed warm-up iterations per process")] = None,
    timeout: Annotated[float, typer.Option(min=0.1, max=7 * 86_400, callback=finite,
                                           help="seconds before a worker is killed")] = 600.0,
    machine: Annotated[str | None, typer.Option(help="a name for this machine")] = None,
    notify: Annotated[str | None, typer.Option(help="a webhook to POST each alert to (default "
                                               "$COLBENCH_WATCH_WEBHOOK)")] = None,
    conbench: Annotated[str | None, typer.Option("--conbench", envvar="CONBENCH_URL",
                                                 help="publish the pass's runs to this Conbench server (login: "
                                                      "$CONBENCH_EMAIL, $CONBENCH_PASSWORD)")] = None,
    explain: Annotated[bool, typer.Option("--explain/--no-explain", help="explain each regressed case "
                                          "(callgrind profiles)")] = True,
    summary: Annotated[Path | None, typer.Option(help="append the pass's Markdown summary to this file (e.g. "
                                                 "$GITHUB_STEP_SUMMARY)")] = None,
    fmt: FormatOption = "table",
    dry_run: Annotated[bool, typer.Option("--dry-run", help="say which releases a pass would measure and its "
                                          "estimated time; measure nothing")] = False,
    deadline: NetDeadlineOption = None,
    store: StoreOption = None,
    cluster: ClusterOption = None,
) -> None:
    """One pass: measure every release of --package newer than the last one watched (for these targets and this
    machine) against it, decide, find the first bad release, explain why, and tell someone.

    Made for cron, a systemd timer or a scheduled CI job (docs/watch.md). Exit codes: 0 nothing regressed (or
    another pass is going on), 1 a regression, 2 bad input (an index that cannot be read included)."""
    from colbench.app.cluster import cluster_session
    from colbench.app.watch import WatchRequest, run_watch
    from colbench.cli.progress import LiveView

    request = WatchRequest(
        targets=tuple(select_benches(list(targets), bench)), packages=tuple(package), overrides=parse_params(param),
        index=index, pre=pre,
        since=since, with_requirements=tuple(with_ or ()), variables=parse_variables(var),
        measure=parse_measure_option(measure) if measure else None, threshold=parse_threshold(threshold),
        alpha=alpha, budget_s=parse_duration(budget), processes=processes, iterations=iterations, warmup=warmup,
        timeout_s=timeout, machine_name=machine, notify=notify, conbench=conbench, explain=explain,
        dry_run=dry_run, net_deadline_s=net_deadline(deadline))
    if summary is not None:  # a directory, a FIFO or a device: refused before the pass measures anything
        check_output_file(summary, "--summary")
    # Markdown and JSON on stdout stay clean; the view has every method of a WatchObserver (tests/cli/test_progress.py)
    view = LiveView(console if fmt == "table" else err_console, mode="watch")
    progress = cast("WatchObserver", view)
    try:
        if dry_run:  # reads the store as it is (or none): no new file, no schema upgrade
            from colbench.app.stores import store_to_plan

            outcome = run_watch(store_to_plan(store), request, progress)
        else:
            with cluster_session(cluster, say=progress.say):
                outcome = run_watch(_store(store), request, progress)
    finally:
        view.close()
    _print(outcome, fmt)
    if summary is not None and outcome.markdown:
        append_output(summary, outcome.markdown, "--summary")
    raise typer.Exit(outcome.exit_code)


def _print(outcome: WatchOutcome, fmt: str) -> None:
    from colbench.app.watch import outcome_document

    if fmt == "json":
        typer.echo(json.dumps(outcome_document(outcome), indent=2, default=str))
        return
    if fmt == "markdown":
        typer.echo(outcome.markdown, nl=False)
    out = console if fmt == "table" else err_console
    for line in outcome_lines(outcome):
        out.print(line, highlight=False, soft_wrap=True, markup=False)


def outcome_lines(outcome: WatchOutcome) -> list[str]:
    """The end of a pass in words: per package what happened, then where the alerts went."""
    lines = []
    for done in outcome.passes:
        plan = done.plan
        if done.busy is not None:
            lines.append(f"{plan.package}: another pass of this watch is going on (process {done.busy['pid']} on "
                         f"{done.busy['host']}); this one leaves it alone")
        elif outcome.dry_run:
            lines.append(f"{plan.package}: would measure {', '.join(plan.candidates) or 'nothing'}")
        elif not done.releases and not done.stopped:
            last = plan.watched[-1].version if plan.watched else plan.baseline
            lines.append(f"{plan.package}: nothing new on {plan.index} since {last}")
        if done.stopped:
            lines.append(f"{plan.package}: stopped: {done.stopped}")
    lines += [f"note: {note}" for note in outcome.notes]
    if not outcome.dry_run:
        lines += _webhook_lines(outcome.delivery)
    if not outcome.dry_run:
        watched = plural(len(outcome.releases), "release")
        lines.append(f"watch pass done in {outcome.elapsed_s:.1f} s: {watched} watched, "
                     f"{plural(len(outcome.regressions), 'regression')}")
    return lines


def _webhook_lines(delivery: Delivery) -> list[str]:
    """What became of the webhook, also when nothing was sent (and why)."""
    if not delivery.destination:
        return ["webhook: none configured (--notify URL or $COLBENCH_WATCH_WEBHOOK)"
                + (": nothing sent, though this pass had something to tell (--format markdown or --summary FILE "
                   "gives its Markdown)" if delivery.told else ": nothing sent (and nothing to tell)")]
    lines = [f"webhook: sent {plural(len(delivery.sent), 'alert')} to {delivery.destination}"] if delivery.sent else []
    lines += [f"webhook: alert {alert_id} kept for the next pass: {why}" for alert_id, why in delivery.kept.items()]
    if not delivery.told and not delivery.sent and not delivery.kept:
        lines.append(f"webhook: nothing sent to {delivery.destination}: nothing to tell (no regression, improvement "
                     "or release that could not be measured)")
    return lines
