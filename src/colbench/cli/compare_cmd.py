"""`colbench compare`, and the verdicts of a run's environments: regression / improvement / no change / inconclusive."""

from __future__ import annotations

from typing import Annotated, Any

import typer
from rich.table import Table

from colbench.cli.common import StoreOption, UsageError, _store, console, finite, friendly
from colbench.model.records import Run


def parse_threshold(text: str | None) -> float | None:
    """`3%` or `0.03` → 0.03; None (not given) stays None: each metric then uses its own default."""
    if text is None:
        return None
    try:
        value = float(text.rstrip("%")) / (100 if text.endswith("%") else 1)
    except ValueError:
        raise UsageError(f"--threshold {text!r}: write e.g. 3% or 0.03") from None
    if not 0 < value < 1:
        raise UsageError(f"--threshold {text!r}: must be between 0% and 100%")
    return value


_DURATION_UNITS = {"s": 1.0, "m": 60.0, "h": 3600.0}


def parse_duration(text: str, option: str = "--budget") -> float:
    """'90s', '10m', '1h', '1h30m' or plain seconds → seconds."""
    import re

    cleaned = text.strip().lower().replace(" ", "")
    parts = re.fullmatch(r"((\d+(\.\d+)?)h)?((\d+(\.\d+)?)m)?((\d+(\.\d+)?)s?)?", cleaned)
    if not cleaned or parts is None:
        raise UsageError(f"{option} {text!r}: write e.g. 90s, 10m, 1h or 1h30m")
    hours, minutes, seconds = parts.group(2), parts.group(5), parts.group(8)
    total = float(hours or 0) * 3600 + float(minutes or 0) * 60 + float(seconds or 0)
    if total <= 0:
        raise UsageError(f"{option} {text!r}: must be more than 0 seconds")
    return total


def print_comparisons(comparisons: list[Any], fmt: str, baseline: str, contender: str, notes: list[str]) -> None:
    from colbench.render.tables import plain
    from colbench.report.compare_text import (
        TABLE_COLUMNS,
        json_report,
        markdown_report,
        summary_line,
        table_rows,
    )

    if fmt == "markdown":
        typer.echo(markdown_report(comparisons, baseline_label=baseline, contender_label=contender))
    elif fmt == "json":
        typer.echo(json_report(comparisons, baseline=baseline, contender=contender, notes=notes))
    else:
        table = Table(title=plain(f"{contender} vs {baseline}"))
        for column in TABLE_COLUMNS:
            table.add_column(column)
        styles = {"regression": "red", "improvement": "green", "no change": "", "inconclusive": "yellow"}
        for comparison, row in zip(comparisons, table_rows(comparisons), strict=True):
            table.add_row(*(plain(cell) for cell in row), style=styles.get(str(comparison.verdict), ""))
        console.print(table)
        console.print(summary_line(comparisons))
    if fmt != "json":
        for note in notes:
            typer.echo(f"note: {note}", err=True)


def compare(
    baseline: Annotated[str, typer.Argument(help="run id / name / latest, an environment of the latest run, "
                                            "or RUN:ENV")],
    contender: Annotated[str, typer.Argument(help="the same forms as BASELINE")],
    threshold: Annotated[str | None, typer.Option(help="smallest change that matters, e.g. 3% (default: each "
                                                  "metric's, 3% and 1% for instructions)")] = None,
    alpha: Annotated[float, typer.Option(min=1e-6, max=0.5, callback=finite, help="suite-wide error rate")] = 0.01,
    method: Annotated[str, typer.Option(help="multiplicity control: holm or bh")] = "holm",
    metric: Annotated[list[str] | None, typer.Option(help="time, instructions, memory, arrow_memory, file_size "
                                                     "(repeatable; default all that were measured)")] = None,
    fmt: Annotated[str, typer.Option("--format", "-f", help="table, markdown or json")] = "table",
    fail_on_inconclusive: Annotated[bool, typer.Option(help="exit 3 when any verdict is inconclusive")] = False,
    cross_machine: Annotated[bool, typer.Option(help="allow sides from different machines")] = False,
    store: StoreOption = None,
) -> None:
    """Compare two runs or environments: ratio with a confidence interval and a verdict per case.
    Exit 0: no regression; 1: regression found; 3: inconclusive (with --fail-on-inconclusive); 2: usage error."""
    from colbench.analysis.comparison import CompareSettings
    from colbench.app.compare import CompareRequest, check_metrics, compare_exit_code
    from colbench.app.compare import compare as compare_use_case
    from colbench.model.metrics import COMPARE_METRICS

    @friendly
    def body() -> int:
        if fmt not in ("table", "markdown", "json"):
            raise UsageError(f"--format {fmt!r}: choose table, markdown or json")
        if method not in ("holm", "bh"):
            raise UsageError(f"--method {method!r}: choose holm or bh")
        settings = CompareSettings(metrics=check_metrics(metric or COMPARE_METRICS),
                                   threshold=parse_threshold(threshold), alpha=alpha, method=method,  # type: ignore[arg-type]
                                   cross_machine=cross_machine)
        db = _store(store, create=False)
        result = compare_use_case(db, CompareRequest(baseline, contender, settings))
        print_comparisons(result.cases, fmt, baseline, contender, result.notes)
        return compare_exit_code(result, fail_on_inconclusive)

    raise typer.Exit(body())


def compare_run_envs(db: Any, config: Any, plan: Any, envs: list[Any], run_doc: Run | None, *,
                     threshold: float | None, alpha: float, until_decided: bool, budget_s: float,
                     max_looks: int | None) -> Any:
    """Run several environments and compare each against the first, paired by block. With `until_decided`,
    inconclusive cases get more blocks while the time budget lasts (runner/session.py)."""
    from colbench.cli.progress import RichProgress
    from colbench.render.fmt import fmt_seconds
    from colbench.runner.session import GateSettings, run_until_decided

    settings = GateSettings(threshold=threshold, alpha=alpha, budget_s=budget_s, max_looks=max_looks,
                            until_decided=until_decided)

    def on_look(look: Any, next_look: Any) -> None:
        used = f"{fmt_seconds(look.elapsed_s)} of the {fmt_seconds(budget_s)} budget"
        if next_look is None:
            if look.pending:
                console.print(f"look {look.number}: {look.pending} comparison(s) still inconclusive, {used}: "
                              "no more blocks fit")
            return
        console.print(f"look {look.number}: {look.pending} comparison(s) inconclusive, {used}; adding "
                      f"{next_look.blocks} blocks{' (last look)' if next_look.final else ''}")

    return run_until_decided(db, config, plan, envs, settings, observer=RichProgress(console), run=run_doc,
                             on_look=on_look)


def print_session(session: Any, fmt: str = "table") -> None:
    """The verdicts of every contender, then what stayed inconclusive and the smallest change it could see."""
    from colbench.render.fmt import fmt_seconds
    from colbench.report.compare_text import format_mde

    for contender, comparisons in session.comparisons.items():
        print_comparisons(comparisons, fmt, session.baseline, contender, session.notes)
    why = {"decided": "every comparison decided", "budget": "time budget spent", "looks": "most looks reached"}
    spent = sum(look.alpha for look in session.looks)
    console.print(f"{len(session.looks)} look(s) in {fmt_seconds(session.elapsed_s)}: {why[session.stopped]}; "
                  f"alpha {spent:.2g} spent over the looks")
    for c in session.inconclusive:
        console.print(f"[yellow]inconclusive[/yellow] {c.label}: {c.reason}; after {c.n_blocks} blocks it could "
                      f"have caught a slowdown of {format_mde(c)} (80% / 95% power)", highlight=False)
