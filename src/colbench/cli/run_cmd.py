"""`colbench run`: plan, environments, the run with its live view, then results, claims and verdicts."""

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
    finite,
    friendly,
    parse_size,
)
from colbench.cli.completion import complete_targets
from colbench.model.records import Run


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
    timeout: Annotated[float, typer.Option(min=0.1, max=7 * 86_400, callback=finite,
                                           help="seconds before a worker is killed (at most a week)")] = 600.0,
    memory_limit: Annotated[str | None, typer.Option(help="kill a worker past this RSS, e.g. 4GiB "
                                                     "(default 80% of RAM)")] = None,
    store: StoreOption = None,
    run_name: Annotated[str | None, typer.Option(help="a name to find this run by")] = None,
    resume: Annotated[str | None, typer.Option(help="RUN_ID: run only what that run is missing")] = None,
    commit: Annotated[str | None, typer.Option(help="git commit of the project under test")] = None,
    repo: Annotated[Path | None, typer.Option(help="read the commit of the project under test from this repo")] = None,
    machine: Annotated[str | None, typer.Option(help="a name for this machine (part of its fingerprint)")] = None,
    seed: Annotated[int, typer.Option(help="seed for data and scheduling")] = 42,
    scale: Annotated[float, typer.Option(min=0.0001, max=10_000, callback=finite, help="multiply every `rows` "
                                         "param (toward the posts' sizes on a bigger machine)")] = 1.0,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="print the plan and its time estimate only")] = False,
    env: Annotated[list[str] | None, typer.Option("--env", help="NAME=SPEC: run in a uv environment with these "
                                                  "requirements (repeatable; SPEC '@current' = this one)")] = None,
    until_decided: Annotated[bool, typer.Option("--until-decided", help="with several --env: add blocks to "
                                                "inconclusive cases until decided or --budget is spent")] = False,
    budget: Annotated[str, typer.Option(help="--until-decided: time for the whole run, e.g. 90s, 10m, 1h")] = "10m",
    max_looks: Annotated[int | None, typer.Option(min=2, help="--until-decided: most looks at the data "
                                                  "(default: as many as the budget allows)")] = None,
    threshold: Annotated[str | None, typer.Option(help="with several --env: smallest change that matters "
                                                  "(default 3%, 1% for instructions)")] = None,
    alpha: Annotated[float, typer.Option(min=1e-6, max=0.5, callback=finite,
                                         help="with several --env: suite-wide error rate")] = 0.01,
    measure: Annotated[str, typer.Option(help="wall, instructions (counted under Valgrind, Python workers), or "
                                         "wall,instructions; see docs/metrics.md")] = "wall",
    profile: Annotated[bool, typer.Option("--profile", help="also keep a callgrind profile of each case and "
                                          "environment (one more worker under Valgrind each), for `colbench "
                                          "explain`; see docs/explain.md")] = False,
) -> None:
    """Run benchmarks, each case in fresh worker processes, storing every result as it completes.

    Exit codes: 0 when the run finished (some cases may have errors, shown in the table), 2 for bad input,
    3 when every case of the run ended in an error, 1 when `--env` comparisons found a regression."""
    from colbench.cli.compare_cmd import parse_duration, parse_threshold
    from colbench.model.params import parse_param_option, split_values
    from colbench.redact import clip, printable
    from colbench.runner import env_options
    from colbench.runner.execute import RunConfig, config_from_run, git_commit
    from colbench.runner.plan import make_plan
    from colbench.store.base import resolve_run_id

    budget_s, threshold_value = parse_duration(budget), parse_threshold(threshold)
    run_doc = None
    if resume:
        given = {"targets": targets, "--param": param, "--threads": threads, "--cache": cache, "--env": env,
                 "--iterations": iterations, "--warmup": warmup, "--processes": processes,
                 "--memory-limit": memory_limit, "--run-name": run_name, "--commit": commit, "--repo": repo,
                 "--machine": machine, "--profile": profile}
        clashing = [name for name, value in given.items() if value]
        if clashing:
            raise UsageError(f"--resume cannot be combined with {', '.join(clashing)}: a resumed run keeps its own "
                             "plan; start a new run to change it")
        db = _store(store, create=False)
        run_doc = db.get_run(resolve_run_id(db, resume))
        config = config_from_run(run_doc)
        mark_resumed(run_doc)
    else:
        overrides: dict[str, list[str]] = {}
        for option in param or []:
            name, values = parse_param_option(option)
            overrides[name] = values
        if threads is not None:
            overrides["threads"] = split_values("--threads", threads)
        if cache is not None:
            overrides["cache"] = split_values("--cache", cache)
        for option, value in (("--run-name", run_name), ("--machine", machine), ("--commit", commit)):
            if value is not None and (printable(value) != value or len(value) > 200):
                raise UsageError(f"{option} {clip(printable(value), 60)!r}: a name of at most 200 characters, without "
                                 "control characters (it is shown on other people's terminals)")
        commit_info = git_commit(repo) if repo else ({"sha": commit} if commit else None)
        config = RunConfig(targets=list(targets or []), overrides=overrides, iterations=iterations, warmup=warmup,
                           processes=processes, timeout_s=timeout,
                           memory_limit_bytes=parse_memory_limit(memory_limit) if memory_limit is not None else None,
                           run_name=run_name, seed=seed, scale=scale, commit=commit_info, machine_name=machine,
                           measure=parse_measure_option(measure), profile=profile)
    plan = make_plan(config.targets, config.overrides, config.scale)
    if "instructions" in config.measure or config.profile:
        from colbench.runner.execute import counting_toolchain
        from colbench.runner.instructions import restrict_plan

        if "instructions" in config.measure:
            restrict_plan(plan, config.measure)
        if not dry_run:
            counting_toolchain(config)  # fail now, in one line, when Valgrind or a compiler is missing
    for bench, params, reason in plan.skipped:
        err_console.print(f"[yellow]skipped[/yellow] {bench} {_short(params)}: {reason}", highlight=False)
    if dry_run:
        env_options.check_envs(env or [])
        _print_plan(plan, config, store, envs=max(1, len(env or [])))
        return
    if run_doc:
        envs = env_options.envs_from_run(run_doc)
    else:
        envs = env_options.build_envs(env or [], say=lambda text: console.print(text, highlight=False))
    for bench, params, reason in fit_runtimes(plan, envs):
        err_console.print(f"[yellow]skipped[/yellow] {bench} {_short(params)}: {reason}", highlight=False)
    if len(envs) > 1 and config.processes is None:
        from colbench.model.metrics import metric as metric_named
        from colbench.runner.session import deciding_metric

        decider = metric_named(deciding_metric(config))
        if until_decided:
            config.processes = decider.first_look
            console.print(f"{len(envs)} environments: a first look after {decider.first_look} interleaved blocks per "
                          f"case ({decider.name} decides), more blocks only for the cases still undecided")
        else:
            config.processes = AB_DEFAULT_PROCESSES
            console.print(f"{len(envs)} environments: {AB_DEFAULT_PROCESSES} interleaved blocks per case "
                          "(enough for suite-wide verdicts; --processes to change)")
    if len(envs) > 1:
        from colbench.cli.compare_cmd import compare_run_envs, print_session

        db = _store(store)
        session = compare_run_envs(db, config, plan, envs, run_doc, threshold=threshold_value,
                                   alpha=alpha, until_decided=until_decided, budget_s=budget_s, max_looks=max_looks)
        _show_run(db, session.run.run_id, "table")
        _show_claims(db, session.run)
        print_session(session)
        if any(str(c.verdict) == "regression" for comps in session.comparisons.values() for c in comps):
            raise typer.Exit(1)
        return
    finished = run_and_store(_store(store), config, plan, envs, run_doc)
    db = _store(store)
    _show_run(db, finished.run_id, "table")
    _show_claims(db, finished)
    if _every_case_failed(db, finished.run_id):
        err_console.print("[red]colbench: every case of this run ended in an error[/red] (see the table above)",
                          highlight=False, soft_wrap=True)
        raise typer.Exit(ALL_FAILED_EXIT)


AB_DEFAULT_PROCESSES = 12


def mark_resumed(run_doc: Run) -> None:
    """A run continued with --resume keeps the trace of how it had stopped (reports show it as resumed)."""
    from datetime import UTC, datetime

    entry: dict[str, Any] = {"at": datetime.now(UTC).isoformat(), "status": run_doc.status}
    if run_doc.stopped:
        entry["stopped"], run_doc.stopped = run_doc.stopped, None
    run_doc.resumes.append(entry)


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
        ok_by_case[result.case_id] = ok_by_case.get(result.case_id, False) or result.ok
    return bool(ok_by_case) and not any(ok_by_case.values())


def parse_measure_option(text: str) -> tuple[str, ...]:
    from colbench.runner.instructions import parse_measure

    try:
        return parse_measure(text)
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def fit_runtimes(plan: Any, envs: list[Any]) -> list[tuple[str, Any, str]]:
    """Drop the cases the environments cannot run, build the Java worker the plan needs; returns the skipped."""
    from colbench.runner.runtime_envs import fit_plan_to_envs

    return fit_plan_to_envs(plan, envs, say=console.print)


def run_and_store(db: Any, config: Any, plan: Any, envs: list[Any], run_doc: Run | None = None,
                  only_cases: Any = None) -> Run:
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
    from colbench.data.cache import plan_prepare
    from colbench.machine.facts import machine_info
    from colbench.paths import data_dir
    from colbench.render.fmt import fmt_bytes, fmt_seconds
    from colbench.runner.estimate import Costs, build_rates, estimate_plan, history_costs, local_manifests
    from colbench.store.base import StoreError

    iterations, warmup, processes = config.resolved(plan)
    try:
        history = history_costs(_store(store_url, create=False), plan, machine_info()["machine_id"])
    except StoreError:
        history = Costs()

    def processes_of(case: Any) -> int:  # suite entries may ask more for some cases (those a claim decides on)
        return config.processes_of(case, processes)

    requests = list({json.dumps(r.to_json(), sort_keys=True): r for c in plan.cases for r in c.inputs.values()}
                    .values())
    try:
        files = plan_prepare(requests).files if requests else []
    except Exception as exc:  # an estimate is advice: a data set that cannot be planned is said, not fatal
        files = []
        console.print(f"[dim]data not estimated: {exc}[/dim]", highlight=False)
    missing = [f for f in files if not f.present]
    downloads = [f for f in missing if f.format == "download"]
    est = estimate_plan(plan, iterations, warmup, processes_of, history, envs=envs,
                        new_data=[(f.format, f.size_bytes) for f in missing if f.format != "download"],
                        build_rates_here=build_rates(local_manifests(data_dir())))
    processes_text = " or ".join(str(n) for n in sorted({processes_of(c) for c in plan.cases}))
    table = Table(title=f"plan: {len(plan.cases)} cases × {processes_text} processes × ({warmup} warm-up + "
                  f"{iterations} timed iterations)")
    for column in ("benchmark", "params", "runtime", "est. per iteration", "est. per process", "from"):
        table.add_column(column)
    for case in est.cases:
        table.add_row(case.case.benchmark.name, " ".join(f"{k}={v}" for k, v in case.case.params.items()),
                      case.case.runtime, fmt_seconds(case.iteration_s) if case.iteration_s is not None else "unknown",
                      fmt_seconds(case.process_s) if case.process_s is not None else "unknown", case.source)
    console.print(table)
    reasons = Counter(f"{bench}: {reason}" for bench, _, reason in plan.dropped)
    for reason, count in reasons.items():
        console.print(f"[dim]dropped {count} invalid combination(s) of {reason}[/dim]", highlight=False)
    sources = ", ".join(f"{n} from {source}" for source, n in sorted(est.sources().items()))
    notes = [f"cases: {sources}",
             f"data to build first: {len(missing) - len(downloads)} file(s), {fmt_bytes(est.data_bytes)}, about "
             f"{fmt_seconds(est.data_seconds)}" if missing else "",
             f"downloads not in the estimate: {', '.join(f.label for f in downloads)}" if downloads else "",
             f"{est.unknown_cases} of {len(plan.cases)} cases have no estimate (no history, no model of their "
             "benchmark): the total leaves their run time out" if est.unknown_cases else "",
             "instructions are counted under Valgrind, 20–50× slower than the times above: not in this estimate"
             if "instructions" in config.measure else ""]
    total = f"{est.seconds / 60:.0f} min" if est.seconds >= 120 else fmt_seconds(est.seconds)
    console.print(f"estimated time: {'at least ' if est.unknown_cases else ''}{total} (from measured costs: README, "
                  "'How long a suite takes', says how close they come)")
    for note in filter(None, notes):
        console.print(f"[dim]{note}[/dim]", highlight=False)


def _show_run(db: Any, run_id: str, fmt: str) -> None:
    from colbench.analysis.aggregate import summarize_cases
    from colbench.experiments.registry import experiment_tables
    from colbench.render.tables import plain
    from colbench.report.terminal import render_text, results_table
    from colbench.store.base import ResultQuery

    run_doc = db.get_run(run_id).redacted()  # records stored before redaction existed may hold secrets
    summaries = summarize_cases([r.redacted() for r in db.results(ResultQuery(run_ids=(run_id,)))])
    if fmt == "table":
        title = plain(f"run {run_id}" + (f" ({run_doc.name})" if run_doc.name else "") +
                      f" on {run_doc.machine['name']} — {run_doc.status}")
        console.print(results_table(summaries, title=title, calibration=run_doc.calibration))
        for table in experiment_tables(summaries, run_doc):
            console.print(table)
        for check in run_doc.checks:
            if not check["ok"]:
                console.print(f"[yellow]warning:[/yellow] {check['message']}")
        _show_profiles(db, run_id)
    else:
        typer.echo(render_text(summaries, fmt))


def _show_profiles(db: Any, run_id: str) -> None:
    """The profiles `run --profile` kept for the run, and how to use them."""
    from colbench.render.fmt import fmt_bytes
    from colbench.store.profiles import run_folder, run_profiles

    kept = run_profiles(db, run_id)
    if not kept:
        return
    envs = sorted({p.env_name for p in kept})
    size = sum(p.size_bytes for p in kept)
    console.print(f"profiles: {len(kept)} (case × environment: {', '.join(envs)}), {fmt_bytes(size)} in "
                  f"{run_folder(db, run_id)}; `colbench explain {run_id}:{envs[0]} OTHER` diffs them without "
                  "running again", highlight=False, soft_wrap=True)


def _show_claims(db: Any, run_doc: Run) -> None:
    """After a run of an experiment suite: the post's claims over what it measured."""
    from colbench.report.claims import claims_table, counts_line, evaluate_runs, experiments_of_run

    experiments = experiments_of_run(run_doc)
    if not experiments:
        return
    verdicts, untestable = evaluate_runs(db, [run_doc.run_id], experiments)
    console.print(claims_table(verdicts, untestable, cores=run_doc.machine.get("cpu_threads")))
    console.print(f"claims: {counts_line(verdicts)} (`colbench claims {run_doc.run_id}` to see them again)",
                  highlight=False)
