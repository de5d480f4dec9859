"""`colbench compare`, `history`, `calibrate` and `env`: verdicts a maintainer can act on."""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from typing import Annotated, Any

import typer
from rich.table import Table

from colbench.cli.common import StoreOption, UsageError, _store, console, friendly

env_app = typer.Typer(help="uv environments for comparing library versions.", no_args_is_help=True)


def parse_threshold(text: str) -> float:
    try:
        value = float(text.rstrip("%")) / (100 if text.endswith("%") else 1)
    except ValueError:
        raise UsageError(f"--threshold {text!r}: write e.g. 3% or 0.03") from None
    if not 0 < value < 1:
        raise UsageError(f"--threshold {text!r}: must be between 0% and 100%")
    return value


def print_comparisons(comparisons: list[Any], fmt: str, baseline: str, contender: str, notes: list[str]) -> None:
    from colbench.analysis.compare_format import TABLE_COLUMNS, json_report, markdown_report, summary_line, table_rows

    if fmt == "markdown":
        typer.echo(markdown_report(comparisons, baseline_label=baseline, contender_label=contender))
    elif fmt == "json":
        typer.echo(json_report(comparisons, baseline=baseline, contender=contender, notes=notes))
    else:
        table = Table(title=f"{contender} vs {baseline}")
        for column in TABLE_COLUMNS:
            table.add_column(column)
        styles = {"regression": "red", "improvement": "green", "no change": "", "inconclusive": "yellow"}
        for comparison, row in zip(comparisons, table_rows(comparisons), strict=True):
            table.add_row(*row, style=styles.get(str(comparison.verdict), ""))
        console.print(table)
        console.print(summary_line(comparisons))
    if fmt != "json":
        for note in notes:
            typer.echo(f"note: {note}", err=True)


def compare_sides(store: Any, baseline: str, contender: str, *, threshold: float, alpha: float, method: str,
                  metrics: list[str], cross_machine: bool = False) -> tuple[list[Any], list[str]]:
    from colbench.analysis.compare import compare_suite
    from colbench.analysis.sides import case_inputs
    from colbench.runner.session import replay
    from colbench.store.selection import resolve_side

    base, cont = resolve_side(store, baseline), resolve_side(store, contender)
    if base.run_id == cont.run_id and base.env_name == cont.env_name:
        raise UsageError("baseline and contender are the same results: name two runs or two environments")
    replayed = None
    if base.run_id == cont.run_id and "time" in metrics:
        replayed = replay(store, store.get_run(base.run_id), base.env_name, cont.env_name, threshold=threshold)
    cases: dict[Any, Any] = {}
    notes: list[str] = []
    for metric in metrics:
        if metric == "time" and replayed is not None:
            continue
        inputs, metric_notes = case_inputs(base, cont, metric, allow_cross_machine=cross_machine)
        notes.extend(metric_notes)
        for label, case in inputs.items():
            cases[label if metric == "time" else f"{label} [{metric}]"] = case
    if replayed is not None:
        notes.append("time verdicts as the run's --until-decided looks reached them (each case at the alpha of "
                     "its last look); other metrics compared as their own family")
    elif not cases:
        raise UsageError("no case ran successfully on both sides: nothing to compare")
    others = compare_suite(cases, threshold=threshold, alpha=alpha, method=method) if cases else []
    return [*(replayed or []), *others], notes


def compare(
    baseline: Annotated[str, typer.Argument(help="run id / name / latest, an environment of the latest run, "
                                            "or RUN:ENV")],
    contender: Annotated[str, typer.Argument(help="the same forms as BASELINE")],
    threshold: Annotated[str, typer.Option(help="smallest change that matters, e.g. 3%")] = "3%",
    alpha: Annotated[float, typer.Option(min=1e-6, max=0.5, help="suite-wide error rate")] = 0.01,
    method: Annotated[str, typer.Option(help="multiplicity control: holm or bh")] = "holm",
    metric: Annotated[list[str] | None, typer.Option(help="time, memory, file_size (repeatable; default all)")] = None,
    fmt: Annotated[str, typer.Option("--format", "-f", help="table, markdown or json")] = "table",
    fail_on_inconclusive: Annotated[bool, typer.Option(help="exit 3 when any verdict is inconclusive")] = False,
    cross_machine: Annotated[bool, typer.Option(help="allow sides from different machines")] = False,
    store: StoreOption = None,
) -> None:
    """Compare two runs or environments: ratio with a confidence interval and a verdict per case.
    Exit 0: no regression; 1: regression found; 3: inconclusive (with --fail-on-inconclusive); 2: usage error."""
    from colbench.analysis.compare import exit_code

    @friendly
    def body() -> int:
        if fmt not in ("table", "markdown", "json"):
            raise UsageError(f"--format {fmt!r}: choose table, markdown or json")
        if method not in ("holm", "bh"):
            raise UsageError(f"--method {method!r}: choose holm or bh")
        metrics = metric or ["time", "memory", "file_size"]
        unknown = [m for m in metrics if m not in ("time", "memory", "file_size")]
        if unknown:
            raise UsageError(f"--metric {unknown[0]!r}: choose time, memory or file_size")
        db = _store(store, create=False)
        comparisons, notes = compare_sides(db, baseline, contender, threshold=parse_threshold(threshold),
                                           alpha=alpha, method=method, metrics=metrics,
                                           cross_machine=cross_machine)
        print_comparisons(comparisons, fmt, baseline, contender, notes)
        return exit_code(comparisons, fail_on_inconclusive=fail_on_inconclusive)

    raise typer.Exit(body())


def history(
    benchmark: Annotated[str, typer.Argument(help="benchmark name")],
    param: Annotated[list[str] | None, typer.Option("--param", "-p", help="NAME=VALUE filter (repeatable)")] = None,
    machine: Annotated[str | None, typer.Option(help="machine name or id (default: this machine)")] = None,
    min_size: Annotated[int, typer.Option(min=2, help="minimum points between change points")] = 5,
    fmt: Annotated[str, typer.Option("--format", "-f", help="table or json")] = "table",
    store: StoreOption = None,
) -> None:
    """A case's results over time (commits, versions or dates), with change points (e-divisive means)."""
    from colbench.analysis.history import case_histories
    from colbench.runner.machine import machine_info
    from colbench.store.selection import history_results, pick_machine

    @friendly
    def body() -> None:
        filters = {}
        for option in param or []:
            name, sep, value = option.partition("=")
            if not sep:
                raise UsageError(f"--param {option!r}: write NAME=VALUE")
            filters[name] = value
        db = _store(store, create=False)
        machine_id = pick_machine(db, benchmark, machine, here=machine_info()["machine_id"])
        histories = case_histories(history_results(db, benchmark, machine_id), machine_id, filters,
                                   min_size=min_size)
        if not histories:
            raise UsageError(f"no successful results of {benchmark} on machine {machine_id} match those params")
        if fmt == "json":
            typer.echo(json.dumps([h.to_dict() for h in histories], indent=2, default=str))
            return
        for h in histories:
            table = Table(title=f"{h.label} on {h.machine_name} ({h.machine_id}): {len(h.points)} points")
            for column in ("when", "commit / version", "median", "spread (CV)", "processes", "change"):
                table.add_column(column)
            changes = {cp.index: cp for cp in h.change_points}
            for i, point in enumerate(h.points):
                cp = changes.get(i)
                mark = f"[bold]{cp.magnitude:+.1%}[/bold] (p={cp.p_value:.3f})" if cp else ""
                table.add_row(point.when[:19], point.label, f"{point.median * 1e3:.3f} ms", f"±{point.cv:.1%}"
                              if point.cv == point.cv else "-", str(point.processes), mark)
            console.print(table)
            if not h.change_points:
                console.print(h.note or "no change point")
            for cp in h.change_points:
                console.print(f"change point at {h.points[cp.index].label} ({h.points[cp.index].when[:10]}): "
                              f"{cp.magnitude:+.1%}, median {cp.before_median * 1e3:.3f} → "
                              f"{cp.after_median * 1e3:.3f} ms, p={cp.p_value:.3f}")

    body()


@env_app.command("list")
@friendly
def env_list() -> None:
    """Environments built for --env, with their resolved versions and size."""
    from colbench.runner.environments import environment_size, list_environments

    table = Table(title="colbench environments")
    for column in ("key", "name", "python", "key packages", "size", "path"):
        table.add_column(column)
    for env in list_environments():
        key_packages = ", ".join(f"{k}=={v}" for k, v in env.resolved.items()
                                 if k in ("pyarrow", "pandas", "polars", "duckdb", "numpy"))
        table.add_row(env.key[:12], env.name, env.python_version, key_packages,
                      f"{environment_size(env) / 2**20:.0f} MiB", str(env.path))
    console.print(table)


@env_app.command("clean")
@friendly
def env_clean(keys: Annotated[list[str] | None, typer.Argument(help="keys (or prefixes); default all")] = None) -> None:
    """Delete environments."""
    from colbench.runner.environments import clean_environments

    removed = clean_environments(keys or None)
    console.print(f"removed {len(removed)} environment(s)")


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


def compare_run_envs(db: Any, config: Any, plan: Any, envs: list[Any], run_doc: dict[str, Any] | None, *,
                     threshold: float, alpha: float, until_decided: bool, budget_s: float,
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
                              "no time for more blocks")
            return
        console.print(f"look {look.number}: {look.pending} comparison(s) inconclusive, {used}; adding "
                      f"{next_look.blocks} blocks{' (last look)' if next_look.final else ''}")

    return run_until_decided(db, config, plan, envs, settings, observer=RichProgress(console), run=run_doc,
                             on_look=on_look)


def print_session(session: Any, fmt: str = "table") -> None:
    """The verdicts of every contender, then what stayed inconclusive and the smallest change it could see."""
    from colbench.analysis.compare_format import format_mde
    from colbench.render.fmt import fmt_seconds

    for contender, comparisons in session.comparisons.items():
        print_comparisons(comparisons, fmt, session.baseline, contender, session.notes)
    why = {"decided": "every comparison decided", "budget": "time budget spent", "looks": "most looks reached"}
    spent = sum(look.alpha for look in session.looks)
    console.print(f"{len(session.looks)} look(s) in {fmt_seconds(session.elapsed_s)}: {why[session.stopped]}; "
                  f"alpha {spent:.2g} spent over the looks")
    for c in session.inconclusive:
        console.print(f"[yellow]inconclusive[/yellow] {c.label}: {c.reason}; after {c.n_blocks} blocks it could "
                      f"have caught a slowdown of {format_mde(c)} (80% / 95% power)", highlight=False)


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
