"""`colbench compare`, `history`, `calibrate` and `env`: verdicts a maintainer can act on."""

from __future__ import annotations

import json
from collections import defaultdict
from typing import Annotated, Any

import typer
from rich.table import Table

from colbench.cli.common import StoreOption, UsageError, _store, console, friendly

env_app = typer.Typer(help="uv environments for comparing library versions.", no_args_is_help=True)


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


METRIC_SUFFIX = " [{}]"


def metric_cases(base: Any, cont: Any, metrics: list[str], threshold: float | None,
                 cross_machine: bool = False) -> tuple[dict[str, Any], list[str]]:
    """CaseInputs of every metric, keyed `label` for time and `label [metric]` for the others. Without an
    explicit threshold each metric gets its own default (3%, instructions 1%)."""
    from dataclasses import replace

    from colbench.analysis.compare import default_threshold
    from colbench.analysis.sides import case_inputs

    cases: dict[str, Any] = {}
    notes: list[str] = []
    for metric in metrics:
        inputs, metric_notes = case_inputs(base, cont, metric, allow_cross_machine=cross_machine)
        notes.extend(metric_notes)
        for label, case in inputs.items():
            if threshold is None:
                case = replace(case, threshold=default_threshold(metric))
            cases[label if metric == "time" else label + METRIC_SUFFIX.format(metric)] = case
    return cases, notes


def compare_sides(store: Any, baseline: str, contender: str, *, threshold: float | None, alpha: float, method: str,
                  metrics: list[str], cross_machine: bool = False) -> tuple[list[Any], list[str]]:
    from colbench.analysis.compare import DEFAULT_THRESHOLD, compare_suite
    from colbench.store.selection import resolve_side

    base, cont = resolve_side(store, baseline), resolve_side(store, contender)
    if base.run_id == cont.run_id and base.env_name == cont.env_name:
        raise UsageError("baseline and contender are the same results: name two runs or two environments")
    cases, notes = metric_cases(base, cont, metrics, threshold, cross_machine)
    if not cases:
        raise UsageError("no case ran successfully on both sides: nothing to compare")
    return compare_suite(cases, threshold=threshold or DEFAULT_THRESHOLD, alpha=alpha, method=method), notes


def compare(
    baseline: Annotated[str, typer.Argument(help="run id / name / latest, an environment of the latest run, "
                                            "or RUN:ENV")],
    contender: Annotated[str, typer.Argument(help="the same forms as BASELINE")],
    threshold: Annotated[str | None, typer.Option(help="smallest change that matters, e.g. 3% (default 3%, "
                                                  "1% for instructions)")] = None,
    alpha: Annotated[float, typer.Option(min=1e-6, max=0.5, help="suite-wide error rate")] = 0.01,
    method: Annotated[str, typer.Option(help="multiplicity control: holm or bh")] = "holm",
    metric: Annotated[list[str] | None, typer.Option(help="time, memory, file_size, instructions (repeatable; "
                                                     "default all that were measured)")] = None,
    fmt: Annotated[str, typer.Option("--format", "-f", help="table, markdown or json")] = "table",
    fail_on_inconclusive: Annotated[bool, typer.Option(help="exit 3 when any verdict is inconclusive")] = False,
    cross_machine: Annotated[bool, typer.Option(help="allow sides from different machines")] = False,
    store: StoreOption = None,
) -> None:
    """Compare two runs or environments: ratio with a confidence interval and a verdict per case.
    Exit 0: no regression; 1: regression found; 3: inconclusive (with --fail-on-inconclusive); 2: usage error."""
    from colbench.analysis.compare import exit_code
    from colbench.analysis.sides import METRICS

    @friendly
    def body() -> int:
        if fmt not in ("table", "markdown", "json"):
            raise UsageError(f"--format {fmt!r}: choose table, markdown or json")
        if method not in ("holm", "bh"):
            raise UsageError(f"--method {method!r}: choose holm or bh")
        metrics = metric or list(METRICS)
        unknown = [m for m in metrics if m not in METRICS]
        if unknown:
            raise UsageError(f"--metric {unknown[0]!r}: choose {', '.join(METRICS)}")
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
    metric: Annotated[str, typer.Option(help="time (wall seconds) or instructions")] = "time",
    store: StoreOption = None,
) -> None:
    """A case's results over time (commits, versions or dates), with change points (e-divisive means)."""
    from colbench.analysis.history import case_histories
    from colbench.model.result import METRIC_SERIES
    from colbench.render.fmt import fmt_instructions
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
        if metric not in METRIC_SERIES:
            raise UsageError(f"--metric {metric!r}: choose {' or '.join(METRIC_SERIES)}")
        db = _store(store, create=False)
        machine_id = pick_machine(db, benchmark, machine, here=machine_info()["machine_id"])
        histories = case_histories(history_results(db, benchmark, machine_id), machine_id, filters,
                                   min_size=min_size, metric=metric)
        if not histories:
            measured = "" if metric == "time" else f" with {metric} measured (`run --measure {metric}`)"
            raise UsageError(f"no successful results of {benchmark} on machine {machine_id} match those "
                             f"params{measured}")
        show = (lambda v: f"{v * 1e3:.3f} ms") if metric == "time" else (lambda v: fmt_instructions(v) + " instr")
        digits = 1 if metric == "time" else 3  # instruction counts repeat to hundredths of a percent
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
                table.add_row(point.when[:19], point.label, show(point.median), f"±{point.cv:.{digits}%}"
                              if point.cv == point.cv else "-", str(point.processes), mark)
            console.print(table)
            if not h.change_points:
                console.print(h.note or "no change point")
            for cp in h.change_points:
                console.print(f"change point at {h.points[cp.index].label} ({h.points[cp.index].when[:10]}): "
                              f"{cp.magnitude:+.1%}, median {show(cp.before_median)} → "
                              f"{show(cp.after_median)}, p={cp.p_value:.3f}")

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
    table = Table(title=f"A/A calibration at threshold {report.threshold:.0%}, alpha {report.alpha}")
    for column in ("case", "blocks", "CV iterations", "CV processes", "verdict", "ratio [CI]", "processes needed"):
        table.add_column(column)
    for case in report.cases:
        table.add_row(str(case.key), str(case.n), f"{case.cv_iterations:.2%}", f"{case.cv_processes:.2%}",
                      str(case.verdict), f"{case.ratio:.4f} [{case.ci_low:.4f}, {case.ci_high:.4f}]",
                      f"[yellow]{case.needed} (noisy)[/yellow]" if case.noisy else str(case.needed))
    return table


def summarize_calibration(report: Any) -> str:
    return (f"false-positive rate {report.false_positive_rate:.1%} ({sum(c.false_positive for c in report.cases)} of "
            f"{len(report.cases)} cases), unadjusted p<=alpha {report.unadjusted_rejection_rate:.1%}, "
            f"no change {report.no_change_rate:.0%}, inconclusive {report.inconclusive_rate:.0%}; "
            f"{len(report.noisy)} case(s) too noisy for this many processes")


def aa_inputs(results: list[dict[str, Any]]) -> dict[str, Any]:
    from colbench.analysis.compare import CaseInput
    from colbench.analysis.sides import case_label

    grouped: dict[str, dict[str, list[dict[str, Any]]]] = defaultdict(lambda: defaultdict(list))
    for r in results:
        if r["status"] == "ok":
            grouped[case_label(r)][r["env_name"]].append(r)
    cases = {}
    for label, sides in grouped.items():
        a, b = sides.get("A", []), sides.get("B", [])
        if a and b:
            cases[label] = CaseInput(baseline=[r["samples"]["wall_s"] for r in a],
                                     contender=[r["samples"]["wall_s"] for r in b],
                                     baseline_blocks=[r["block"] for r in a], contender_blocks=[r["block"] for r in b])
    return cases


def compare_envs_of_run(db: Any, run_doc: dict[str, Any], plan: Any, envs: list[Any], config: Any, *,
                        threshold: float | None, alpha: float, max_looks: int = 1) -> None:
    """After a run with several environments: each against the first, paired by block, on every metric the run
    measured. With max_looks > 1 (`--until-decided`), inconclusive cases get more blocks, with alpha spent over
    the looks."""
    from colbench.analysis.compare import DEFAULT_THRESHOLD
    from colbench.analysis.sequential import SequentialCompare
    from colbench.analysis.sides import short_labels
    from colbench.cli.main import run_and_store
    from colbench.model.records import Side
    from colbench.store.base import ResultQuery

    run_id = run_doc["run_id"]
    baseline = envs[0].name
    step = config.processes
    measured = config.measure
    metrics = [m for m, asked in (("time", "wall"), ("instructions", "instructions")) if asked in measured]
    suffixes = [METRIC_SUFFIX.format(m) for m in metrics if m != "time"]
    for contender in envs[1:]:
        sequential = SequentialCompare(alpha=alpha, threshold=threshold or DEFAULT_THRESHOLD, max_looks=max_looks)
        while True:
            results = db.results(ResultQuery(run_ids=(run_id,)))
            sides = [Side(name, run_id, name, [r for r in results if r["env_name"] == name])
                     for name in (baseline, contender.name)]
            inputs, notes = metric_cases(*sides, metrics, threshold)
            outcome = sequential.look(inputs)
            if not sequential.pending or sequential.exhausted:
                break
            pending = {_without_suffix(str(key), suffixes) for key in sequential.pending}
            ids = {case_id for case_id, label in short_labels(results).items() if label in pending}
            config.processes += step
            run_doc["config"]["processes"] = config.processes
            console.print(f"look {sequential.looks_done}/{max_looks}: {len(pending)} case(s) inconclusive, "
                          f"adding {step} blocks")
            run_doc = run_and_store(db, config, plan, [envs[0], contender], run_doc,
                                    only_cases=lambda case, ids=ids: case.case_id in ids)
        print_comparisons(list(outcome.values()), "table", baseline, contender.name, notes)


def _without_suffix(label: str, suffixes: list[str]) -> str:
    for suffix in suffixes:
        label = label.removesuffix(suffix)
    return label


def calibrate(
    targets: Annotated[list[str], typer.Argument(help="suite or benchmarks to calibrate")],
    param: Annotated[list[str] | None, typer.Option("--param", "-p", help="NAME=V1,V2 (repeatable)")] = None,
    processes: Annotated[int, typer.Option(min=2, help="interleaved A/A blocks per case")] = 12,
    iterations: Annotated[int | None, typer.Option(min=1)] = None,
    warmup: Annotated[int | None, typer.Option(min=0)] = None,
    threshold: Annotated[str, typer.Option(help="smallest change that matters")] = "3%",
    alpha: Annotated[float, typer.Option(min=1e-6, max=0.5)] = 0.01,
    store: StoreOption = None,
) -> None:
    """Run the suite A-vs-A (same environment twice, interleaved) and report each case's noise, the
    false-positive rate of `compare` at these settings, and the processes noisy cases would need."""
    from colbench.analysis.calibrate import calibrate_suite
    from colbench.cli.main import run_and_store
    from colbench.model.params import parse_param_option
    from colbench.runner.execute import EnvChoice, RunConfig
    from colbench.runner.plan import make_plan
    from colbench.store.base import ResultQuery

    @friendly
    def body() -> None:
        overrides = dict(parse_param_option(option) for option in param or [])
        config = RunConfig(targets=list(targets), overrides=overrides, iterations=iterations, warmup=warmup,
                           processes=processes, run_name="calibration")
        plan = make_plan(config.targets, config.overrides)
        db = _store(store)
        run_doc = run_and_store(db, config, plan, [EnvChoice(name="A", spec="@current"),
                                                   EnvChoice(name="B", spec="@current")])
        results = db.results(ResultQuery(run_ids=(run_doc["run_id"],)))
        report = calibrate_suite(aa_inputs(results), threshold=parse_threshold(threshold), alpha=alpha)
        console.print(calibration_table(report))
        console.print(summarize_calibration(report))

    body()
