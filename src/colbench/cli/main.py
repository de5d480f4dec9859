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
from colbench.cli.completion import complete_targets
from colbench.redact import redact

app = typer.Typer(no_args_is_help=True, add_completion=True, pretty_exceptions_enable=False,
                  help="colbench: how fast data gets into and out of columnar memory.")


def _print_version(value: bool) -> None:
    if value:
        import colbench

        typer.echo(f"colbench {colbench.__version__}")
        raise typer.Exit()


@app.callback()
def main(
    version: Annotated[bool, typer.Option("--version", callback=_print_version, is_eager=True,
                                          help="print colbench's version and exit")] = False,
) -> None:
    """colbench: how fast data gets into and out of columnar memory."""


@app.command()
@friendly
def run(
    targets: Annotated[list[str] | None, typer.Argument(help="benchmarks or suites",
                                                        autocompletion=complete_targets)] = None,
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
    """Run benchmarks, each case in fresh worker processes, storing every result as it completes.

    Exit codes: 0 when the run finished (some cases may have errors, shown in the table), 2 for bad input,
    3 when every case of the run ended in an error, 1 when `--env` comparisons found a regression."""
    from colbench.model.params import parse_param_option, split_values
    from colbench.runner.execute import RunConfig, config_from_run, git_commit
    from colbench.runner.plan import make_plan
    from colbench.store.base import resolve_run_id

    run_doc = None
    if resume:
        given = {"targets": targets, "--param": param, "--threads": threads, "--cache": cache, "--env": env,
                 "--iterations": iterations, "--warmup": warmup, "--processes": processes,
                 "--memory-limit": memory_limit, "--run-name": run_name, "--commit": commit, "--repo": repo,
                 "--machine": machine}
        clashing = [name for name, value in given.items() if value]
        if clashing:
            raise UsageError(f"--resume cannot be combined with {', '.join(clashing)}: a resumed run keeps its own "
                             "plan; start a new run to change it")
        db = _store(store, create=False)
        run_doc = db.get_run(resolve_run_id(db, resume))
        config = config_from_run(run_doc)
    else:
        overrides: dict[str, list[str]] = {}
        for option in param or []:
            name, values = parse_param_option(option)
            overrides[name] = values
        if threads is not None:
            overrides["threads"] = split_values("--threads", threads)
        if cache is not None:
            overrides["cache"] = split_values("--cache", cache)
        commit_info = git_commit(repo) if repo else ({"sha": commit} if commit else None)
        config = RunConfig(targets=list(targets or []), overrides=overrides, iterations=iterations, warmup=warmup,
                           processes=processes, timeout_s=timeout,
                           memory_limit_bytes=parse_memory_limit(memory_limit) if memory_limit is not None else None,
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
        check_envs(env or [])
        _print_plan(plan, config, store, envs=max(1, len(env or [])))
        return
    envs = envs_from_run(run_doc) if run_doc else build_envs(env or [])
    for bench, params, reason in fit_runtimes(plan, envs):
        err_console.print(f"[yellow]skipped[/yellow] {bench} {_short(params)}: {reason}", highlight=False)
    if len(envs) > 1 and config.processes is None:
        config.processes = AB_DEFAULT_PROCESSES
        console.print(f"{len(envs)} environments: {AB_DEFAULT_PROCESSES} interleaved blocks per case "
                      "(enough for suite-wide verdicts; --processes to change)")
    finished = run_and_store(_store(store), config, plan, envs, run_doc)
    db = _store(store)
    _show_run(db, finished["run_id"], "table")
    _show_claims(db, finished)
    if len(envs) > 1:
        from colbench.cli.compare_cmd import compare_envs_of_run, parse_threshold

        compare_envs_of_run(db, finished, plan, envs, config, threshold=parse_threshold(threshold), alpha=alpha,
                            max_looks=max_looks if until_decided else 1)
    if _every_case_failed(db, finished["run_id"]):
        err_console.print("[red]colbench: every case of this run ended in an error[/red] (see the table above)",
                          highlight=False, soft_wrap=True)
        raise typer.Exit(ALL_FAILED_EXIT)


AB_DEFAULT_PROCESSES = 12
#: `colbench run`'s exit code when not one case of the run succeeded (documented in README and `run --help`)
ALL_FAILED_EXIT = 3


def parse_memory_limit(text: str) -> int:
    limit = parse_size(text)
    if limit <= 0:
        raise UsageError(f"--memory-limit {text!r}: give a size above 0, e.g. 4GiB (leave it out for 80% of RAM)")
    return limit


def _every_case_failed(db: Any, run_id: str) -> bool:
    from colbench.store.base import ResultQuery

    ok_by_case: dict[str, bool] = {}
    for result in db.results(ResultQuery(run_ids=(run_id,))):
        ok_by_case[result["case_id"]] = ok_by_case.get(result["case_id"], False) or result.get("status") == "ok"
    return bool(ok_by_case) and not any(ok_by_case.values())


def check_envs(options: list[str]) -> None:
    """Everything about --env options that can be checked without building anything (--dry-run checks this too)."""
    from colbench.paths import check_name
    from colbench.runner.environments import parse_env_option
    from colbench.runner.runtime_envs import is_runtime_spec

    names = []
    for option in options:
        name, _, spec_text = option.partition("=")
        if spec_text.strip().startswith("@current"):
            names.append(current_env(name.strip(), spec_text.strip()).name)
        elif is_runtime_spec(spec_text):
            names.append(check_name(name.strip(), "--env name"))
        else:
            names.append(parse_env_option(option).name)
    if len(set(names)) != len(names):
        raise UsageError(f"--env names must differ: {', '.join(names)}")


def parse_measure_option(text: str) -> tuple[str, ...]:
    from colbench.runner.instructions import parse_measure

    try:
        return parse_measure(text)
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def build_envs(options: list[str]) -> list[Any]:
    """--env options → ready environments (built with uv and cached), in the order given."""
    from colbench.runner.environments import EnvError, colbench_project, ensure_environment, parse_env_option
    from colbench.runner.execute import EnvChoice
    from colbench.runner.runtime_envs import is_runtime_spec, runtime_env

    if not options:
        return [EnvChoice()]
    check_envs(options)
    envs = []
    project_root = None
    for option in options:
        name, _, spec_text = option.partition("=")
        if spec_text.strip().startswith("@current"):
            envs.append(current_env(name.strip(), spec_text.strip()))
            continue
        if is_runtime_spec(spec_text):  # java:arrow==V or r:pkg==V: the other workers' version matrices
            try:
                envs.append(runtime_env(option, say=console.print))
            except EnvError as exc:
                raise UsageError(str(exc)) from None
            continue
        try:
            spec = parse_env_option(option)
            console.print(f"environment {spec.name}: {redact(spec.text)} (uv, cached)", highlight=False)
            project_root = project_root or colbench_project()  # the checkout, or a tree made from the wheel
            built = ensure_environment(spec, project_root)
        except EnvError as exc:
            raise UsageError(str(exc)) from None
        # what the run record keeps of the spec: never a token of a git URL
        envs.append(EnvChoice(name=built.name, python=str(built.python), spec=redact(spec.text), key=built.key,
                              resolved=dict(built.resolved)))
    names = [e.name for e in envs]
    if len(set(names)) != len(names):
        raise UsageError(f"--env names must differ: {', '.join(names)}")
    return envs


def fit_runtimes(plan: Any, envs: list[Any]) -> list[tuple[str, Any, str]]:
    """Drop the cases the environments cannot run, build the Java worker the plan needs; returns the skipped."""
    from colbench.runner.runtime_envs import fit_plan_to_envs

    return fit_plan_to_envs(plan, envs, say=console.print)


def current_env(name: str, spec: str) -> Any:
    """`@current [KEY=VALUE ...]`: this interpreter, with extra environment variables for its workers (an A/B
    of a setting rather than of a library version)."""
    from colbench.paths import check_name
    from colbench.runner.execute import EnvChoice

    check_name(name, "--env name")
    variables = {}
    for token in spec.split()[1:]:
        key, sep, value = token.partition("=")
        if not sep or not key:
            raise UsageError(f"--env {name}: after @current give KEY=VALUE variables, not {token!r}")
        variables[key] = value
    return EnvChoice(name=name, spec=spec, variables=variables)


def envs_from_run(run_doc: dict[str, Any]) -> list[Any]:
    from colbench.redact import is_redacted
    from colbench.runner.execute import EnvChoice

    envs = [EnvChoice(**e) for e in run_doc.get("envs") or [{}]]
    for env in envs:
        secret = [k for k, v in env.variables.items() if is_redacted(v)]
        if secret:
            raise UsageError(f"run {run_doc['run_id']} cannot be resumed: environment {env.name}'s "
                             f"{', '.join(secret)} held a secret, which colbench does not store; start a new run")
    return envs


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
    from colbench.redact import redact_doc
    from colbench.report.terminal import render_text, results_table
    from colbench.store.base import ResultQuery

    run_doc = redact_doc(db.get_run(run_id))  # records stored before redaction existed may hold secrets
    summaries = summarize_cases(redact_doc(db.results(ResultQuery(run_ids=(run_id,)))))
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


def _show_claims(db: Any, run_doc: dict[str, Any]) -> None:
    """After a run of an experiment suite: the post's claims over what it measured."""
    from colbench.report.claims import claims_table, counts_line, evaluate_runs, experiments_of_run

    experiments = experiments_of_run(run_doc)
    if not experiments:
        return
    verdicts, untestable = evaluate_runs(db, [run_doc["run_id"]], experiments)
    console.print(claims_table(verdicts, untestable, cores=run_doc["machine"].get("cpu_threads")))
    console.print(f"claims: {counts_line(verdicts)} (`colbench claims {run_doc['run_id']}` to see them again)",
                  highlight=False)


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
        _show_runs(db, fmt)
        return
    _show_run(db, resolve_run_id(db, run_id), fmt)


def _show_runs(db: Any, fmt: str) -> None:
    from colbench.redact import redact_doc
    from colbench.report.terminal import render_rows

    rows = [{"run_id": r["run_id"], "name": r.get("name"), "started_at": r["started_at"], "status": r.get("status"),
             "cases": r.get("cases"), "machine": r["machine"]["name"]} for r in redact_doc(db.list_runs())]
    if fmt != "table":
        typer.echo(render_rows(rows, fmt))
        return
    table = Table(title=f"runs in {db.url}")
    for column in ("run id", "name", "started", "status", "cases", "machine"):
        table.add_column(column)
    for r in rows:
        table.add_row(r["run_id"], r["name"] or "", r["started_at"][:19], r["status"] or "", str(r["cases"] or ""),
                      r["machine"])
    console.print(table)


@app.command()
@friendly
def export(
    run_ids: Annotated[list[str] | None, typer.Argument(help="runs to export (default: all)")] = None,
    fmt: Annotated[str, typer.Option("--format", "-f", help="parquet, csv, jsonl or conbench")] = "parquet",
    output: Annotated[Path, typer.Option("--output", "-o", help="file to write")] = Path("colbench-results.parquet"),
    store: StoreOption = None,
) -> None:
    """Export results (raw samples included) for other tools."""
    from colbench.redact import redact_doc
    from colbench.store.base import ResultQuery, resolve_run_id
    from colbench.store.export import FORMATS, export_results

    if fmt not in (*FORMATS, "conbench"):
        raise UsageError(f"--format {fmt!r}: choose from {', '.join(FORMATS)}, conbench")
    if output.is_dir():
        raise UsageError(f"--output {output}: is a directory; give a file name, e.g. {output / ('results.' + fmt)}")
    db = _store(store, create=False)
    ids = tuple(resolve_run_id(db, r) for r in run_ids) if run_ids else None
    results = redact_doc(db.results(ResultQuery(run_ids=ids)))  # older records may hold secrets
    try:
        if fmt == "conbench":
            from colbench.cli.store_cmd import export_conbench

            runs = {run_id: redact_doc(db.get_run(run_id)) for run_id in {r["run_id"] for r in results}}
            count = export_conbench(results, runs, output)
        else:
            count = export_results(results, fmt, output)
    except OSError as exc:
        raise UsageError(f"cannot write {output}: {exc.strerror or exc}") from None
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
    from colbench.cli.claims_cmd import claims
    from colbench.cli.store_cmd import publish_command

    app.command("claims")(claims)
    app.command("publish")(publish_command)
    from colbench.cli.doctor_cmd import doctor

    app.command("doctor")(doctor)
    app.command("report")(report_cmd.report)
    app.command("serve")(report_cmd.serve)


_mount_sub_apps()
_register_commands()


def cli() -> None:
    """The `colbench` command. A usage error found while parsing (an unknown option, a value out of range, a missing
    argument) is one line on stderr with exit code 2, like every other bad input, rather than click's framed block."""
    from rich.markup import escape

    try:  # typer vendors its own click since 0.2x; its exceptions are the ones raised
        from typer._click import exceptions as click_errors
    except ImportError:  # pragma: no cover - an older typer on plain click
        from click import exceptions as click_errors

    try:
        code = app(standalone_mode=False)
    except click_errors.NoArgsIsHelpError as exc:  # `colbench data` alone: the help, as before
        from typer import rich_utils

        rich_utils.rich_format_error(exc)
        sys.exit(exc.exit_code)
    except click_errors.ClickException as exc:
        ctx = getattr(exc, "ctx", None)
        hint = f" (see `{ctx.command_path} --help`)" if ctx is not None else ""
        err_console.print(f"[red]colbench: error:[/red] {escape(exc.format_message())}{hint}", highlight=False,
                          soft_wrap=True)
        sys.exit(exc.exit_code)
    except click_errors.Abort:
        err_console.print("Aborted!", highlight=False)
        sys.exit(1)
    sys.exit(code if isinstance(code, int) else 0)
