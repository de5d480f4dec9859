"""`colbench calibrate`: A/A runs that measure the noise per case and the false-positive rate."""

from __future__ import annotations

from typing import Annotated, Any

import typer
from rich.table import Table

from colbench.cli.common import StoreOption, _store, console, finite, friendly, parse_measure_option, parse_threshold
from colbench.cli.progress import LiveView
from colbench.model.params import parse_param_option
from colbench.render.fmt import fmt_seconds
from colbench.words import plural


def calibration_table(report: Any) -> Table:
    table = Table(title=f"A/A calibration at threshold {report.threshold * 100:g}%, alpha {report.alpha}")
    for column in ("case", "blocks", "basis", "CV iterations", "CV processes", "sigma per block", "verdict",
                   "ratio [CI]", "MDE 95%", f"blocks for {report.effect:.0%}"):
        table.add_column(column)
    for case in report.cases:
        needed = "-" if case.needed is None else str(case.needed)
        if case.needed_s:
            needed += f" ({fmt_seconds(case.needed_s)})"
        mde = f"{case.mde_95:.1%}" if case.mde_95 == case.mde_95 and case.mde_95 != float("inf") else "-"
        table.add_row(str(case.key), str(case.n), case.basis, f"{case.cv_iterations:.2%}", f"{case.cv_processes:.2%}",
                      f"{case.sigma_log:.2%}", str(case.verdict),
                      f"{case.ratio:.4f} [{case.ci_low:.4f}, {case.ci_high:.4f}]", mde,
                      f"[yellow]{needed}[/yellow]" if case.noisy else needed)
    return table


def summarize_calibration(report: Any) -> str:
    return (f"false-positive rate {report.false_positive_rate:.1%} ({sum(c.false_positive for c in report.cases)} of "
            f"{plural(len(report.cases), 'case')}), unadjusted p<=alpha {report.unadjusted_rejection_rate:.1%}, "
            f"no change {report.no_change_rate:.0%}, inconclusive {report.inconclusive_rate:.0%}; "
            f"{plural(len(report.noisy), 'case')} {'needs' if len(report.noisy) == 1 else 'need'} more blocks than "
            f"this run had to catch a {report.effect:.0%} slowdown with 95% power")


def calibrate(
    targets: Annotated[list[str] | None, typer.Argument(help="suite or benchmarks to calibrate")] = None,
    param: Annotated[list[str] | None, typer.Option("--param", "-p", help="NAME=V1,V2 (repeatable)")] = None,
    processes: Annotated[int, typer.Option(min=2, help="interleaved A/A blocks per case")] = 12,
    iterations: Annotated[int | None, typer.Option(min=1)] = None,
    warmup: Annotated[int | None, typer.Option(min=0)] = None,
    measure: Annotated[str, typer.Option(help="wall, instructions or wall,instructions (instructions decide when "
                                         "counted; see docs/metrics.md)")] = "wall",
    threshold: Annotated[str | None, typer.Option(help="smallest change that matters (default: the metric's)")]
    = None,
    alpha: Annotated[float, typer.Option(min=1e-6, max=0.5, callback=finite)] = 0.01,
    effect: Annotated[float, typer.Option(min=0.001, max=1.0, callback=finite,
                                          help="slowdown a gate must catch (0.05 = 5%)")] = 0.05,
    from_run: Annotated[str | None, typer.Option(help="analyse this earlier A/A run (environments A and B) "
                                                 "instead of running one")] = None,
    store: StoreOption = None,
) -> None:
    """Run the suite A-vs-A (same environment twice, interleaved) and report each case's noise, the
    false-positive rate of `compare` at these settings, the smallest slowdown each case could show (MDE), and the
    blocks a gate needs to catch --effect with 95% power."""
    from colbench.app.calibrate import CalibrateRequest
    from colbench.app.calibrate import calibrate as calibrate_use_case

    @friendly
    def body() -> None:
        overrides = dict(parse_param_option(option) for option in param or [])
        request = CalibrateRequest(targets=tuple(targets or ()), overrides=overrides, processes=processes,
                                   iterations=iterations, warmup=warmup, measure=parse_measure_option(measure),
                                   threshold=parse_threshold(threshold), alpha=alpha, effect=effect,
                                   from_run=from_run)
        db = _store(store, create=not from_run)
        progress = LiveView(console)
        try:
            done = calibrate_use_case(db, request, progress)
        finally:
            progress.close()
        console.print(calibration_table(done.report))
        console.print(summarize_calibration(done.report))

    body()
