"""The live view of a run (`app.run.RunObserver`): a progress bar over cases with ETA, a line per finished case, and
the run's other events (a case skipped, an environment built, the blocks chosen, a look at the verdicts).

It redraws on events only (a case starts, a process ends), never on a timer: while a worker runs the
orchestrator sleeps, so it does not take CPU from what is measured. The elapsed time and ETA therefore move
when something happens, not every second.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from colbench.analysis.aggregate import summarize_cases
from colbench.app.run import RunObserver
from colbench.experiments.e3_ipc_bandwidth.bandwidth import MachineBandwidth
from colbench.model.records import Result, Run
from colbench.render.fmt import fmt_bytes, fmt_seconds, instructions_cell, spread
from colbench.report.terminal import throughput_cell

if TYPE_CHECKING:
    from colbench.analysis.sequential import LookPlan
    from colbench.runner.execute import Execution
    from colbench.runner.plan import PlannedCase
    from colbench.runner.session import Look


def _label(case: PlannedCase) -> str:
    shown = {k: v for k, v in case.params.items() if k not in ("allocator", "cache") or v not in ("default", "warm")}
    return f"{case.benchmark.name} " + " ".join(f"{k}={v}" for k, v in shown.items())


def _short(params: Mapping[str, Any]) -> str:
    hidden = (("allocator", "default"), ("cache", "warm"))
    return " ".join(f"{k}={v}" for k, v in params.items() if (k, v) not in hidden)


class RichProgress(RunObserver):
    """`err`: where skipped cases are said (stderr for `run`); the rest goes to `console`."""

    def __init__(self, console: Console, err: Console | None = None) -> None:
        self.console = console
        self.err = err or console
        self.progress = Progress(
            TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(), TextColumn("cases"),
            TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(), console=console, transient=True,
            auto_refresh=False,
        )
        self.task: Any = None
        self.bandwidth = MachineBandwidth()

    def start(self, run: Run, cases: int, executions: int) -> None:
        self.bandwidth = MachineBandwidth.of(run)
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
                rate = throughput_cell(summary, self.bandwidth)
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

    def skipped(self, benchmark: str, params: Mapping[str, Any], reason: str) -> None:
        self.err.print(f"[yellow]skipped[/yellow] {benchmark} {_short(params)}: {reason}", highlight=False)

    def said(self, text: str) -> None:
        self.console.print(text, highlight=False)

    def blocks_chosen(self, envs: int, blocks: int, decider: str | None) -> None:
        if decider is not None:
            self.console.print(f"{envs} environments: a first look after {blocks} interleaved blocks per case "
                               f"({decider} decides), more blocks only for the cases still undecided")
        else:
            self.console.print(f"{envs} environments: {blocks} interleaved blocks per case "
                               "(enough for suite-wide verdicts; --processes to change)")

    def looked(self, look: Look, next_look: LookPlan | None, budget_s: float) -> None:
        used = f"{fmt_seconds(look.elapsed_s)} of the {fmt_seconds(budget_s)} budget"
        if next_look is None:
            if look.pending:
                self.console.print(f"look {look.number}: {look.pending} comparison(s) still inconclusive, {used}: "
                                   "no more blocks fit")
            return
        self.console.print(f"look {look.number}: {look.pending} comparison(s) inconclusive, {used}; adding "
                           f"{next_look.blocks} blocks{' (last look)' if next_look.final else ''}")
