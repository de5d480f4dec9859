"""The live view of a run: a progress bar over cases with ETA, and a line per finished case.

It redraws on events only (a case starts, a process ends), never on a timer: while a worker runs the
orchestrator sleeps, so it does not take CPU from what is measured. The elapsed time and ETA therefore move
when something happens, not every second.
"""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from colbench.analysis.aggregate import summarize_cases
from colbench.model.records import Json, Result, Run
from colbench.render.fmt import fmt_bytes, fmt_seconds, instructions_cell, spread
from colbench.report.terminal import throughput_cell
from colbench.runner.execute import Execution, PlannedCase, RunObserver


def _label(case: PlannedCase) -> str:
    shown = {k: v for k, v in case.params.items() if k not in ("allocator", "cache") or v not in ("default", "warm")}
    return f"{case.benchmark.name} " + " ".join(f"{k}={v}" for k, v in shown.items())


class RichProgress(RunObserver):
    def __init__(self, console: Console) -> None:
        self.console = console
        self.progress = Progress(
            TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(), TextColumn("cases"),
            TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(), console=console, transient=True,
            auto_refresh=False,
        )
        self.task: Any = None
        self.calibration: Json | None = None

    def start(self, run: Run, cases: int, executions: int) -> None:
        self.calibration = run.calibration
        self.console.print(f"run [bold]{run.run_id}[/bold]: {cases} cases, {executions} worker processes")
        self.progress.start()
        self.task = self.progress.add_task("running", total=cases)

    def case_started(self, case: PlannedCase) -> None:
        self.progress.update(self.task, description=_label(case)[:60], refresh=True)

    def execution_done(self, execution: Execution, result: Result) -> None:
        self.progress.refresh()

    def case_done(self, case: PlannedCase, results: list[Result]) -> None:
        for summary in summarize_cases(results):
            env = escape(f" [{summary.env_name}]") if summary.env_name != "default" else ""
            if summary.ok and not summary.wall.get("n"):  # instructions only
                self.console.print(f"[green]✓[/green] {_label(case)}{env}: {instructions_cell(summary)} "
                                   "instructions per iteration")
            elif summary.ok:
                rate = throughput_cell(summary, self.calibration)
                rate = f"  {rate}" if rate != "-" else ""
                counted = instructions_cell(summary)
                counted = f"  {counted} instructions" if counted != "-" else ""
                self.console.print(
                    f"[green]✓[/green] {_label(case)}{env}: {fmt_seconds(summary.wall['median'])} "
                    f"{spread(summary)} (n={summary.wall['n']}){rate}  peak {fmt_bytes(summary.peak_rss_bytes)}"
                    f"{counted}"
                )
            else:
                error = summary.errors[0] if summary.errors else {"kind": "invalid",
                                                                   "message": "no valid sample in any process"}
                self.console.print(f"[red]✗[/red] {_label(case)}{env}: {error.get('kind')}: "
                                   f"{(error.get('message') or '').splitlines()[0][:140]}")
        self.progress.advance(self.task)
        self.progress.refresh()

    def finish(self, run: Run) -> None:
        self.progress.stop()
