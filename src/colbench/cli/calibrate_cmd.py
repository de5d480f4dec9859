"""`colbench calibrate`: A/A runs that measure the noise per case and the false-positive rate."""

from __future__ import annotations

import sys
from collections import defaultdict
from typing import Annotated, Any

import typer
from rich.table import Table

from colbench.cli.common import StoreOption, UsageError, _store, console, friendly
from colbench.cli.compare_cmd import parse_threshold


def calibration_table(report: Any) -> Table:
    from colbench.render.fmt import fmt_seconds

    table = Table(title=f"A/A calibration at threshold {report.threshold:.0%}, alpha {report.alpha}")
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
            f"{len(report.cases)} cases), unadjusted p<=alpha {report.unadjusted_rejection_rate:.1%}, "
            f"no change {report.no_change_rate:.0%}, inconclusive {report.inconclusive_rate:.0%}; "
            f"{len(report.noisy)} case(s) need more blocks than this run had to catch a {report.effect:.0%} "
            "slowdown with 95% power")


def aa_inputs(results: list[dict[str, Any]]) -> tuple[dict[str, Any], dict[str, float]]:
    """The A/A comparisons of a calibration run (time, on the basis the verdict rule picks) and the seconds
    one block of each case took."""
    from colbench.analysis.sides import case_inputs, short_labels
    from colbench.model.records import Side

    run_id = results[0]["run_id"] if results else ""
    sides = [Side(env, run_id, env, [r for r in results if r["env_name"] == env]) for env in ("A", "B")]
    cases, _ = case_inputs(*sides, metric="time")
    labels = short_labels(results)
    seconds: dict[str, float] = defaultdict(float)
    blocks: dict[str, set[int]] = defaultdict(set)
    for r in results:
        span = (r.get("process") or {}).get("spawn_to_result_s")
        if span:
            seconds[labels[r["case_id"]]] += float(span)
            blocks[labels[r["case_id"]]].add(r["block"])
    per_block = {label: seconds[label] / len(blocks[label]) for label in seconds if blocks[label]}
    return cases, per_block


def calibrate(
    targets: Annotated[list[str] | None, typer.Argument(help="suite or benchmarks to calibrate")] = None,
    param: Annotated[list[str] | None, typer.Option("--param", "-p", help="NAME=V1,V2 (repeatable)")] = None,
    processes: Annotated[int, typer.Option(min=2, help="interleaved A/A blocks per case")] = 12,
    iterations: Annotated[int | None, typer.Option(min=1)] = None,
    warmup: Annotated[int | None, typer.Option(min=0)] = None,
    threshold: Annotated[str, typer.Option(help="smallest change that matters")] = "3%",
    alpha: Annotated[float, typer.Option(min=1e-6, max=0.5)] = 0.01,
    effect: Annotated[float, typer.Option(min=0.001, max=1.0, help="slowdown a gate must catch (0.05 = 5%)")] = 0.05,
    from_run: Annotated[str | None, typer.Option(help="analyse this earlier A/A run (environments A and B) "
                                                 "instead of running one")] = None,
    store: StoreOption = None,
) -> None:
    """Run the suite A-vs-A (same environment twice, interleaved) and report each case's noise, the
    false-positive rate of `compare` at these settings, the smallest slowdown each case could show (MDE), and the
    blocks a gate needs to catch --effect with 95% power."""
    from colbench.analysis.calibrate import calibrate_suite
    from colbench.cli.progress import RichProgress
    from colbench.model.params import parse_param_option
    from colbench.runner.execute import EnvChoice, RunConfig, execute_run, start_run
    from colbench.runner.plan import make_plan
    from colbench.store.base import ResultQuery, resolve_run_id

    @friendly
    def body() -> None:
        if from_run:
            db = _store(store, create=False)
            run_id = resolve_run_id(db, from_run)
        else:
            if not targets:
                raise UsageError("name a suite or benchmarks to calibrate (or --from-run RUN)")
            overrides = dict(parse_param_option(option) for option in param or [])
            config = RunConfig(targets=list(targets), overrides=overrides, iterations=iterations, warmup=warmup,
                               processes=processes, run_name="calibration")
            plan = make_plan(config.targets, config.overrides)
            db = _store(store)
            envs = [EnvChoice(name="A", spec="@current"), EnvChoice(name="B", spec="@current")]
            run = start_run(db, config, plan, envs, sys.argv)
            run_id = execute_run(db, run, plan, envs, config, RichProgress(console))["run_id"]
        results = db.results(ResultQuery(run_ids=(run_id,)))
        if {r["env_name"] for r in results} != {"A", "B"}:
            raise UsageError(f"run {run_id} is not an A/A run with environments A and B")
        cases, per_block = aa_inputs(results)
        report = calibrate_suite(cases, threshold=parse_threshold(threshold), alpha=alpha, effect=effect,
                                 seconds_per_block=per_block)
        console.print(calibration_table(report))
        console.print(summarize_calibration(report))

    body()
