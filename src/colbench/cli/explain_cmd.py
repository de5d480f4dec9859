"""`colbench explain A B`: the functions whose cost changed between two sides, and a differential flame graph."""

from __future__ import annotations

from typing import Annotated, Any

import typer
from rich.table import Table

from colbench.cli.common import (
    FormatOption,
    StoreOption,
    UsageError,
    _store,
    console,
    err_console,
    friendly,
    output_format,
)
from colbench.words import plural


def explain(
    baseline: Annotated[str, typer.Argument(help="run id / name / latest, an environment of the latest run, "
                                            "or RUN:ENV (as `compare` takes them)")],
    contender: Annotated[str, typer.Argument(help="the same forms as BASELINE")],
    case: Annotated[list[str] | None, typer.Option("--case", help="a case id prefix, a case label or a benchmark "
                                                   "(repeatable; default every case both sides have)")] = None,
    profiler: Annotated[str, typer.Option(help="callgrind (Valgrind: exact instruction counts, one thread at a "
                                          "time) or perf (samples of real CPU time, every thread, kernel "
                                          "included)")]
    = "callgrind",
    metric: Annotated[str, typer.Option(help="instructions (where the instructions, or with --profiler perf the CPU "
                                        "time, went) or memory (who owns each side's peak: heaptrack, Arrow's "
                                        "pools included)")] = "instructions",
    top: Annotated[int, typer.Option(min=1, max=1000, help="functions to list per case")] = 15,
    rerun: Annotated[bool, typer.Option("--rerun", help="profile again even where `run --profile` kept "
                                        "profiles")] = False,
    fmt: FormatOption = "table",
    dry_run: Annotated[bool, typer.Option("--dry-run", help="say which profiles it would take and how long they "
                                          "should take (from measured costs); profile and write nothing")] = False,
    store: StoreOption = None,
) -> None:
    """Say where the instructions went: profile each case on both sides under callgrind (fresh workers, or the
    profiles `run --profile` kept), list the functions whose cost changed most with their share of the change,
    and draw a differential flame graph. With --metric memory: who owns each side's peak instead (heaptrack,
    or the profiles `run --profile-memory` kept), in bytes, with the churn. Exit 0; 2 on bad input or when no case
    could be explained."""
    from colbench.app.explain import METRICS, ExplainRequest, plan_explain
    from colbench.app.explain import explain as explain_instructions
    from colbench.app.explain_memory import explain_memory
    from colbench.cli.progress import LiveView

    @friendly
    def body() -> int:
        if metric not in METRICS:
            raise UsageError(f"--metric {metric!r}: choose {' or '.join(METRICS)}")
        explain_use_case = explain_memory if metric == "memory" else explain_instructions
        db = _store(store, create=False)
        request = ExplainRequest(baseline, contender, tuple(case or ()), profiler, top, rerun, metric)
        if dry_run:
            with output_format(fmt):
                _print_plan(plan_explain(db, request))
            return 0
        # each step is said on stderr, and while one runs (a profile under Valgrind takes minutes) a line every 10 s
        progress = LiveView(err_console, mode="explain")
        try:
            result = explain_use_case(db, request, say=progress.doing)
        finally:
            progress.close()
        with output_format(fmt):
            _print(result, fmt)
        return 0 if any(c.diff is not None for c in result.cases) else 2

    raise typer.Exit(body())


def _print(result: Any, fmt: str) -> None:
    from colbench.redact import redact
    from colbench.render.fmt import fmt_seconds
    from colbench.render.tables import plain
    from colbench.report.explain_memory_text import MEMORY_COLUMNS, memory_document, memory_lines
    from colbench.report.explain_text import TABLE_COLUMNS, explanation_document, summary_lines, table_rows, to_json

    if fmt == "json":
        document = explanation_document(result)
        document["cases"] = [memory_document(c) if hasattr(c, "memory") else d
                             for c, d in zip(result.cases, document["cases"], strict=True)]
        typer.echo(to_json(document))
        return
    for case in result.cases:
        if case.diff is None:
            console.print(plain(f"{case.label}: error: {case.error}"), style="red")
            continue
        table = Table(title=plain(f"{case.label}: {result.contender} vs {result.baseline}"), title_justify="left")
        for column in MEMORY_COLUMNS if hasattr(case, "memory") else TABLE_COLUMNS:
            table.add_column(column, justify="left" if column in ("function", "library") else "right",
                             overflow="fold")
        for row in table_rows(case.diff):
            table.add_row(*(plain(cell) for cell in row))
        console.print(table)
        lines = memory_lines(case, case.memory) if hasattr(case, "memory") else summary_lines(case)
        for line in lines:
            console.print(plain(line))
        if case.flamegraph:
            console.print(plain(f"flame graph: {redact(str(case.flamegraph))}"))
    explained = sum(c.diff is not None for c in result.cases)
    cases = plural(len(result.cases), "case")
    console.print(plain(f"explained {explained} of {cases} in {fmt_seconds(result.seconds)}"))
    for note in result.notes:
        err_console.print(plain(f"note: {note}"))


def _print_plan(plan: Any) -> None:
    """The dry run: per case the profiles to take again and those kept, then the time and how the load moves it."""
    from colbench.render.fmt import fmt_duration
    from colbench.render.tables import plain

    tool = "heaptrack" if plan.metric == "memory" else plan.profiler
    for case in plan.cases:
        fresh = f"profile {', '.join(case.fresh)} again under {tool}" if case.fresh else "nothing to profile"
        kept = f"; kept profiles of {', '.join(case.kept)}" if case.kept else ""
        cost = (f" ({fmt_duration(case.idle_s)} idle, from {case.source})" if case.idle_s and case.source
                else " (no measured cost)" if case.fresh and case.idle_s is None else "")
        console.print(plain(f"{case.label}: {fresh}{kept}{cost}"))
    profiles = sum(len(c.fresh) for c in plan.cases)
    total = f"{'at least ' if plan.unknown else ''}{fmt_duration(plan.seconds)}"
    line = (f"estimated time: {total} for {plural(profiles, 'fresh profile')} of "
            f"{plural(len(plan.cases), 'case')} ({plan.contender} vs {plan.baseline}), the command's own "
            f"{fmt_duration(plan.command_s)} included")
    if plan.load_factor > 1.0 and plan.load_average is not None:
        line += (f"; the machine is busy (load {plan.load_average:.1f}): processes counted {plan.load_factor:.1f}x "
                 f"as long as idle ({fmt_duration(plan.idle_s)})")
    console.print(plain(line))
    if plan.unknown:
        console.print(plain(f"{plural(plan.unknown, 'case')} without a measured cost: the total leaves "
                            f"{'it' if plan.unknown == 1 else 'them'} out"))
