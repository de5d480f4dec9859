"""The `colbench` command: parses, calls the layers, prints. Bad input: one line on stderr, exit code 2."""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from colbench.cli.common import (
    StoreOption,
    UsageError,
    _store,
    console,
    err_console,
    friendly,
    parse_size,
)

app = typer.Typer(no_args_is_help=True, add_completion=False, pretty_exceptions_enable=False,
                  help="colbench: how fast data gets into and out of columnar memory.")


@app.command()
@friendly
def run(
    targets: Annotated[list[str] | None, typer.Argument(help="benchmarks or suites")] = None,
    param: Annotated[list[str] | None, typer.Option("--param", "-p", help="NAME=V1,V2 (repeatable)")] = None,
    iterations: Annotated[int | None, typer.Option(min=1, help="timed iterations per process")] = None,
    warmup: Annotated[int | None, typer.Option(min=0, help="untimed warm-up iterations per process")] = None,
    processes: Annotated[int | None, typer.Option(min=1, help="fresh worker processes per case")] = None,
    threads: Annotated[str | None, typer.Option(help="thread counts, e.g. 1,2 (same as --param threads=)")] = None,
    cache: Annotated[str | None, typer.Option(help="warm or cold page cache (same as --param cache=)")] = None,
    timeout: Annotated[float, typer.Option(min=0.1, help="seconds before a worker is killed")] = 600.0,
    memory_limit: Annotated[str | None, typer.Option(help="kill a worker past this RSS, e.g. 4GiB "
                                                     "(default 80% of RAM)")] = None,
    store: StoreOption = None,
    run_name: Annotated[str | None, typer.Option(help="a name to find this run by")] = None,
    resume: Annotated[str | None, typer.Option(help="RUN_ID: run only what that run is missing")] = None,
    commit: Annotated[str | None, typer.Option(help="git commit of the project under test")] = None,
    repo: Annotated[Path | None, typer.Option(help="read the commit of the project under test from this repo")] = None,
    machine: Annotated[str | None, typer.Option(help="a name for this machine (part of its fingerprint)")] = None,
    seed: Annotated[int, typer.Option(help="seed for data and scheduling")] = 42,
    scale: Annotated[float, typer.Option(min=0.0001, help="multiply every `rows` param (toward the posts' sizes "
                                         "on a bigger machine)")] = 1.0,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="print the plan and its time estimate only")] = False,
    env: Annotated[list[str] | None, typer.Option("--env", help="NAME=SPEC: run in a uv environment with these "
                                                  "requirements (repeatable; SPEC '@current' = this one)")] = None,
    until_decided: Annotated[bool, typer.Option("--until-decided", help="with several --env: add blocks of "
                                                "processes to still-inconclusive cases")] = False,
    max_looks: Annotated[int, typer.Option(min=2, help="--until-decided: most looks at the data")] = 4,
    threshold: Annotated[str | None, typer.Option(help="with several --env: smallest change that matters "
                                                  "(default 3%, 1% for instructions)")] = None,
    alpha: Annotated[float, typer.Option(min=1e-6, max=0.5, help="with several --env: suite-wide error rate")] = 0.01,
    measure: Annotated[str, typer.Option(help="wall, instructions (counted under Valgrind, Python workers), or "
                                         "wall,instructions; see docs/metrics.md")] = "wall",
) -> None:
    """Run benchmarks, each case in fresh worker processes, storing every result as it completes."""
    from colbench.model.params import parse_param_option
    from colbench.runner.execute import RunConfig, config_from_run, git_commit
    from colbench.runner.plan import make_plan
    from colbench.store.base import resolve_run_id

    run_doc = None
    if resume:
        db = _store(store, create=False)
        run_doc = db.get_run(resolve_run_id(db, resume))
        config = config_from_run(run_doc)
    else:
        overrides: dict[str, list[str]] = {}
        for option in param or []:
            name, values = parse_param_option(option)
            overrides[name] = values
        if threads:
            overrides["threads"] = [t for t in threads.split(",") if t]
        if cache:
            overrides["cache"] = [c for c in cache.split(",") if c]
        commit_info = git_commit(repo) if repo else ({"sha": commit} if commit else None)
        config = RunConfig(targets=list(targets or []), overrides=overrides, iterations=iterations, warmup=warmup,
                           processes=processes, timeout_s=timeout,
                           memory_limit_bytes=parse_size(memory_limit) if memory_limit else None,
                           run_name=run_name, seed=seed, scale=scale, commit=commit_info, machine_name=machine,
                           measure=parse_measure_option(measure))
    plan = make_plan(config.targets, config.overrides, config.scale)
    if "instructions" in config.measure:
        from colbench.runner.execute import counting_toolchain
        from colbench.runner.instructions import restrict_plan

        restrict_plan(plan, config.measure)
        if not dry_run:
            counting_toolchain(config)  # fail now, in one line, when Valgrind or a compiler is missing
    for bench, params, reason in plan.skipped:
        err_console.print(f"[yellow]skipped[/yellow] {bench} {_short(params)}: {reason}", highlight=False)
    if dry_run:
        _print_plan(plan, config, store, envs=max(1, len(env or [])))
        return
    envs = envs_from_run(run_doc) if run_doc else build_envs(env or [])
    if len(envs) > 1 and config.processes is None:
        config.processes = AB_DEFAULT_PROCESSES
        console.print(f"{len(envs)} environments: {AB_DEFAULT_PROCESSES} interleaved blocks per case "
                      "(enough for suite-wide verdicts; --processes to change)")
    finished = run_and_store(_store(store), config, plan, envs, run_doc)
    db = _store(store)
    _show_run(db, finished["run_id"], "table")
    if len(envs) > 1:
        from colbench.cli.compare_cmd import compare_envs_of_run, parse_threshold

        compare_envs_of_run(db, finished, plan, envs, config, threshold=parse_threshold(threshold), alpha=alpha,
                            max_looks=max_looks if until_decided else 1)


AB_DEFAULT_PROCESSES = 12


def parse_measure_option(text: str) -> tuple[str, ...]:
    from colbench.runner.instructions import parse_measure

    try:
        return parse_measure(text)
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def build_envs(options: list[str]) -> list[Any]:
    """--env options → ready environments (built with uv and cached), in the order given."""
    import colbench
    from colbench.runner.environments import EnvError, ensure_environment, parse_env_option
    from colbench.runner.execute import EnvChoice

    if not options:
        return [EnvChoice()]
    envs = []
    project_root = Path(colbench.__file__).resolve().parents[2]
    for option in options:
        name, _, spec_text = option.partition("=")
        if spec_text.strip().startswith("@current"):
            envs.append(current_env(name.strip(), spec_text.strip()))
            continue
        try:
            spec = parse_env_option(option)
            console.print(f"environment {spec.name}: {spec.text} (uv, cached)")
            built = ensure_environment(spec, project_root)
        except EnvError as exc:
            raise UsageError(str(exc)) from None
        envs.append(EnvChoice(name=built.name, python=str(built.python), spec=spec.text, key=built.key,
                              resolved=dict(built.resolved)))
    names = [e.name for e in envs]
    if len(set(names)) != len(names):
        raise UsageError(f"--env names must differ: {', '.join(names)}")
    return envs


def current_env(name: str, spec: str) -> Any:
    """`@current [KEY=VALUE ...]`: this interpreter, with extra environment variables for its workers (an A/B
    of a setting rather than of a library version)."""
    from colbench.runner.execute import EnvChoice

    variables = {}
    for token in spec.split()[1:]:
        key, sep, value = token.partition("=")
        if not sep or not key:
            raise UsageError(f"--env {name}: after @current give KEY=VALUE variables, not {token!r}")
        variables[key] = value
    return EnvChoice(name=name, spec=spec, variables=variables)


def envs_from_run(run_doc: dict[str, Any]) -> list[Any]:
    from colbench.runner.execute import EnvChoice

    return [EnvChoice(**e) for e in run_doc.get("envs") or [{}]]


def run_and_store(db: Any, config: Any, plan: Any, envs: list[Any], run_doc: dict[str, Any] | None = None,
                  only_cases: Any = None) -> dict[str, Any]:
    """Start (or continue) a run and execute what it is missing, with the live view."""
    from colbench.cli.progress import RichProgress
    from colbench.runner.execute import execute_run, start_run

    if run_doc is None:
        run_doc = start_run(db, config, plan, envs, sys.argv)
    return execute_run(db, run_doc, plan, envs, config, RichProgress(console), only_cases=only_cases)


def _short(params: dict[str, Any]) -> str:
    hidden = (("allocator", "default"), ("cache", "warm"))
    return " ".join(f"{k}={v}" for k, v in params.items() if (k, v) not in hidden)


def _print_plan(plan: Any, config: Any, store_url: str | None, envs: int = 1) -> None:
    from colbench.render.fmt import fmt_seconds
    from colbench.runner.estimate import History, estimate_plan, plan_history
    from colbench.runner.machine import machine_info
    from colbench.store.base import StoreError

    iterations, warmup, processes = config.resolved(plan)
    try:
        history = plan_history(_store(store_url, create=False), plan, machine_info()["machine_id"])
    except StoreError:
        history = History()
    table = Table(title=f"plan: {len(plan.cases)} cases × {processes} processes × ({warmup} warm-up + "
                  f"{iterations} timed iterations)")
    for column in ("benchmark", "params", "runtime", "est. per iteration"):
        table.add_column(column)
    for case in plan.cases:
        estimate = history.per_iteration_s.get(case.case_id, case.benchmark.estimate_seconds(case.params))
        table.add_row(case.benchmark.name, " ".join(f"{k}={v}" for k, v in case.params.items()), case.runtime,
                      fmt_seconds(estimate) if estimate is not None else "unknown")
    console.print(table)
    reasons = Counter(f"{bench}: {reason}" for bench, _, reason in plan.dropped)
    for reason, count in reasons.items():
        console.print(f"[dim]dropped {count} invalid combination(s) of {reason}[/dim]", highlight=False)
    est = estimate_plan(plan, iterations, warmup, processes, history, envs=envs)
    startup = ", ".join(f"{rt} {fmt_seconds(s)}" for rt, s in sorted(history.startup_s.items()))
    notes = [f"process start-up measured here: {startup}" if startup else "",
             f"start-up assumed for {', '.join(est.assumed_startup)} (never run on this machine)"
             if est.assumed_startup else "",
             f"{est.unknown_cases} of {len(plan.cases)} cases have no estimate (no history on this machine): "
             "the total leaves their run time out" if est.unknown_cases else "",
             "instructions are counted under Valgrind, 20–50× slower than the times above: not in this estimate"
             if "instructions" in config.measure else ""]
    console.print(f"estimated time: {'at least ' if est.unknown_cases else ''}{fmt_seconds(est.seconds)}")
    for note in filter(None, notes):
        console.print(f"[dim]{note}[/dim]", highlight=False)


def _show_run(db: Any, run_id: str, fmt: str) -> None:
    from colbench.analysis.aggregate import summarize_cases
    from colbench.experiments.registry import experiment_tables
    from colbench.report.terminal import render_text, results_table
    from colbench.store.base import ResultQuery

    run_doc = db.get_run(run_id)
    summaries = summarize_cases(db.results(ResultQuery(run_ids=(run_id,))))
    if fmt == "table":
        title = f"run {run_id}" + (f" ({run_doc['name']})" if run_doc.get("name") else "") + \
            f" on {run_doc['machine']['name']} — {run_doc.get('status')}"
        console.print(results_table(summaries, title=title, calibration=run_doc.get("calibration")))
        for table in experiment_tables(summaries, run_doc):
            console.print(table)
        for check in run_doc.get("checks") or []:
            if not check["ok"]:
                console.print(f"[yellow]warning:[/yellow] {check['message']}")
    else:
        typer.echo(render_text(summaries, fmt))


@app.command()
@friendly
def show(
    run_id: Annotated[str, typer.Argument(help="run id, a prefix, a run name, or 'latest'")] = "latest",
    fmt: Annotated[str, typer.Option("--format", "-f", help="table, json, csv or markdown")] = "table",
    store: StoreOption = None,
    runs: Annotated[bool, typer.Option("--runs", help="list the runs in the store instead")] = False,
) -> None:
    """Show a run's results, one row per case (processes pooled), or list the runs."""
    from colbench.store.base import resolve_run_id

    if fmt not in ("table", "json", "csv", "markdown"):
        raise UsageError(f"--format {fmt!r}: choose table, json, csv or markdown")
    db = _store(store, create=False)
    if runs:
        table = Table(title=f"runs in {db.url}")
        for column in ("run id", "name", "started", "status", "cases", "machine"):
            table.add_column(column)
        for r in db.list_runs():
            table.add_row(r["run_id"], r.get("name") or "", r["started_at"][:19], r.get("status") or "",
                          str(r.get("cases", "")), r["machine"]["name"])
        console.print(table)
        return
    _show_run(db, resolve_run_id(db, run_id), fmt)


@app.command()
@friendly
def export(
    run_ids: Annotated[list[str] | None, typer.Argument(help="runs to export (default: all)")] = None,
    fmt: Annotated[str, typer.Option("--format", "-f", help="parquet, csv, jsonl or conbench")] = "parquet",
    output: Annotated[Path, typer.Option("--output", "-o", help="file to write")] = Path("colbench-results.parquet"),
    store: StoreOption = None,
) -> None:
    """Export results (raw samples included) for other tools."""
    from colbench.store.base import ResultQuery, resolve_run_id
    from colbench.store.export import FORMATS, export_results

    if fmt not in (*FORMATS, "conbench"):
        raise UsageError(f"--format {fmt!r}: choose from {', '.join(FORMATS)}, conbench")
    db = _store(store, create=False)
    ids = tuple(resolve_run_id(db, r) for r in run_ids) if run_ids else None
    results = db.results(ResultQuery(run_ids=ids))
    if fmt == "conbench":
        from colbench.cli.store_cmd import export_conbench

        runs = {run_id: db.get_run(run_id) for run_id in {r["run_id"] for r in results}}
        count = export_conbench(results, runs, output)
    else:
        count = export_results(results, fmt, output)
    console.print(f"wrote {count} rows to {output}")


@app.command("list")
@friendly
def list_benchmarks(
    fmt: Annotated[str, typer.Option("--format", "-f", help="table or json")] = "table",
) -> None:
    """Benchmarks with their params and defaults, and the suites."""
    from colbench.benchmarks.registry import all_benchmarks
    from colbench.experiments.registry import all_suites

    benches = all_benchmarks()
    suites = all_suites()
    if fmt == "json":
        typer.echo(json.dumps({
            "benchmarks": {n: {"description": b.description, "params": {
                p.name: {"default": list(p.default), "choices": list(p.choices) if p.choices else None,
                         "help": p.help} for p in b.full_grid().params}} for n, b in benches.items()},
            "suites": {n: {"description": s.description, "benchmarks": [e.benchmark for e in s.entries]}
                       for n, s in suites.items()},
        }, indent=2, default=str))
        return
    table = Table(title="benchmarks", show_lines=True)
    for column in ("name", "description", "params (default; choices)"):
        table.add_column(column)
    for name, bench in benches.items():
        lines = []
        for p in bench.full_grid().params:
            default = ",".join(map(str, p.default))
            choices = f"; {p.describe_choices()}" if p.choices else ""
            lines.append(f"{p.name} = {default}{choices}")
        table.add_row(name, bench.description, "\n".join(lines))
    console.print(table)
    if suites:
        suite_table = Table(title="suites")
        for column in ("name", "description", "benchmarks"):
            suite_table.add_column(column)
        for name, suite in suites.items():
            suite_table.add_row(name, suite.description, ", ".join(dict.fromkeys(e.benchmark for e in suite.entries)))
        console.print(suite_table)


@app.command()
@friendly
def machine(
    fmt: Annotated[str, typer.Option("--format", "-f", help="table or json")] = "table",
    name: Annotated[str | None, typer.Option(help="machine name (part of the fingerprint)")] = None,
) -> None:
    """Machine info and the checks that tell how noisy timings will be here."""
    from colbench.runner.machine import checks_as_json, environment_checks, machine_info

    info = machine_info(name)
    checks = environment_checks(info)
    if fmt == "json":
        typer.echo(json.dumps({"machine": info, "checks": checks_as_json(checks)}, indent=2))
        return
    table = Table(title=f"machine {info['name']} ({info['machine_id']})", show_header=False)
    for key, value in info.items():
        table.add_row(key, ", ".join(f"{k} {v}" for k, v in value.items()) if isinstance(value, dict) else str(value))
    console.print(table)
    for check in checks:
        mark = "[green]ok[/green]" if check.ok else "[yellow]warning[/yellow]"
        console.print(f"{mark}  {check.message}")


def _mount_sub_apps() -> None:
    """Sub-commands that live in their own modules; one still being written (absent) is left out."""
    import importlib

    for module, attr, name in (("colbench.cli.data_cmd", "data_app", "data"),
                               ("colbench.cli.setup_cmd", "setup_app", "setup"),
                               ("colbench.cli.compare_cmd", "env_app", "env"),
                               ("colbench.cli.store_cmd", "store_app", "store")):
        try:
            sub = getattr(importlib.import_module(module), attr)
        except ModuleNotFoundError as exc:
            if exc.name != module:
                raise
            continue
        app.add_typer(sub, name=name)


def _register_commands() -> None:
    from colbench.cli import compare_cmd

    app.command("compare")(compare_cmd.compare)
    app.command("history")(compare_cmd.history)
    app.command("calibrate")(compare_cmd.calibrate)
    from colbench.cli import report_cmd
    from colbench.cli.store_cmd import publish_command

    app.command("publish")(publish_command)
    app.command("report")(report_cmd.report)
    app.command("serve")(report_cmd.serve)


_mount_sub_apps()
_register_commands()
