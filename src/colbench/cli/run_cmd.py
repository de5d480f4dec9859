"""`colbench run`: plan, environments, the run with its live view, then results, claims and verdicts."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from colbench.app.catalog import select_benches
from colbench.app.cluster import cluster_session
from colbench.app.run import RunEstimate, RunRequest, estimate
from colbench.app.run import run as run_use_case
from colbench.cli.common import (
    BenchOption,
    ClusterOption,
    StoreOption,
    UsageError,
    _store,
    complete_targets,
    console,
    err_console,
    finite,
    friendly,
    parse_duration,
    parse_measure_option,
    parse_size,
    parse_threshold,
    print_comparisons,
    show_claims,
    show_run,
)
from colbench.cli.progress import LiveView
from colbench.model.env_request import Versions, parse_envs, parse_versions
from colbench.model.params import parse_param_option, split_values
from colbench.model.run_config import RunConfig
from colbench.render.fmt import fmt_bytes, fmt_duration, fmt_seconds, threshold_defaults
from colbench.words import plural


@friendly
def run(
    targets: Annotated[list[str] | None, typer.Argument(help="benchmarks or suites",
                                                        autocompletion=complete_targets)] = None,
    param: Annotated[list[str] | None, typer.Option("--param", "-p", help="NAME=V1,V2 (repeatable)")] = None,
    bench: BenchOption = None,
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
    versions: Annotated[str | None, typer.Option("--versions", help="a sweep over a package's releases, one "
                                                 "environment each on the newest installed Python its wheels "
                                                 "support: pyarrow==0.17.1,1.0.1 or 'pyarrow>=0.17' (see "
                                                 "docs/history.md)")] = None,
    every: Annotated[str | None, typer.Option(help="with a --versions range: minor or major (the newest release "
                                              "of each), or release (all)")] = None,
    with_requirements: Annotated[list[str] | None, typer.Option("--with", help="with --versions: a requirement "
                                                                "for every release's environment (repeatable)")] = None,
    until_decided: Annotated[bool | None, typer.Option("--until-decided/--no-until-decided", help="with several "
                                                       "--env or --versions: add blocks to inconclusive cases until "
                                                       "decided or --budget is spent (the default, unless "
                                                       "--processes fixes the count), or take one look")] = None,
    budget: Annotated[str | None, typer.Option(help="time for the whole run when it stops once decided, e.g. 90s, "
                                               "10m, 1h (default: what the deciding metric's blocks cost here, "
                                               "see docs/gating.md)")] = None,
    max_looks: Annotated[int | None, typer.Option(min=2, help="--until-decided: most looks at the data "
                                                  "(default: as many as the budget allows)")] = None,
    threshold: Annotated[str | None, typer.Option(help="with several --env: smallest change that matters "
                                                  f"(default: the deciding metric's, {threshold_defaults()})")]
    = None,
    alpha: Annotated[float, typer.Option(min=1e-6, max=0.5, callback=finite,
                                         help="with several --env: suite-wide error rate")] = 0.01,
    measure: Annotated[str, typer.Option(help="wall, instructions (counted under Valgrind, Python workers), or "
                                         "wall,instructions; see docs/metrics.md")] = "wall",
    profile: Annotated[bool, typer.Option("--profile", help="also keep a callgrind profile of each case and "
                                          "environment (one more worker under Valgrind each), for `colbench "
                                          "explain`; see docs/explain.md")] = False,
    profile_memory: Annotated[bool, typer.Option("--profile-memory", help="also keep a memory profile (heaptrack: "
                                                 "who owns the timed call's peak) of each case and environment, "
                                                 "for `colbench explain --metric memory`")] = False,
    counting_server: Annotated[bool | None, typer.Option(
        "--counting-server/--fresh-counts", help="count instructions in processes forked from set-up interpreters "
        "under Valgrind, one process of a case and side each (for three cases or more, one per suite, side "
        "and process index; for fewer, a case each), or in fresh ones (default: suite servers for a run of three "
        "cases or more, fresh ones for fewer; see docs/metrics.md)")] = None,
    jobs: Annotated[int | None, typer.Option(
        min=1, help="counting processes run at once on this machine, for --measure instructions only (default: "
        "one at a time); the counts of multi-threaded cases shift by up to 0.3% beside another counting process, "
        "so compare runs counted with the same --jobs (see docs/metrics.md)")] = None,
    cluster: ClusterOption = None,
) -> None:
    """Run benchmarks, each case in fresh worker processes, storing every result as it completes.

    Exit codes: 0 when the run finished (some cases may have errors, shown in the table), 2 for bad input,
    3 when every case of the run ended in an error, 1 when `--env` comparisons found a regression."""
    if jobs is not None and cluster:
        raise UsageError(f"--jobs {jobs} is how many processes this machine runs at once; with --cluster the "
                         "cluster's workers run them: leave one of the two out")
    overrides: dict[str, list[str]] = {}
    for option in param or []:
        name, values = parse_param_option(option)
        overrides[name] = values
    config = RunConfig(
        targets=select_benches(list(targets or ()), bench), overrides=dict(overrides), iterations=iterations,
        warmup=warmup,
        processes=processes, timeout_s=timeout,
        memory_limit_bytes=parse_memory_limit(memory_limit) if memory_limit is not None else None,
        run_name=run_name, machine_name=machine, seed=seed, scale=scale, measure=parse_measure_option(measure),
        profile=profile, profile_memory=profile_memory, counting_server=counting_server, jobs=jobs)
    request = RunRequest(
        config=config,
        threads=tuple(split_values("--threads", threads)) if threads is not None else None,
        cache=tuple(split_values("--cache", cache)) if cache is not None else None,
        commit=commit, repo=repo,
        envs=parse_envs(env or ()), versions=_versions(versions, every),
        with_requirements=tuple(with_requirements or ()),
        store=store, resume=resume, until_decided=until_decided,
        budget_s=parse_duration(budget) if budget is not None else None, max_looks=max_looks,
        threshold=parse_threshold(threshold), alpha=alpha)
    progress = LiveView(console, err=err_console)
    if dry_run:
        _print_plan(estimate(request, progress))
        return
    try:
        with cluster_session(cluster, say=progress.said):
            outcome = run_use_case(request, progress)
    finally:
        progress.close()
    db = _store(store)
    show_run(db, outcome.run_id, "table")
    show_claims(db, outcome.run)
    _say_busy_cpus(db, outcome.run_id)
    if outcome.session is not None:
        print_session(outcome.session)
        if outcome.regression:
            raise typer.Exit(1)
    if outcome.all_failed:  # with --env sides too: no comparison at all is not a finished run
        err_console.print("[red]colbench: every case of this run ended in an error[/red] (see the table above)",
                          highlight=False, soft_wrap=True)
        raise typer.Exit(ALL_FAILED_EXIT)


#: `colbench run`'s exit code when not one case of the run succeeded (documented in README and `run --help`)
ALL_FAILED_EXIT = 3


def _versions(text: str | None, every: str | None) -> Versions | None:
    """`--versions` with its `--every`, parsed (None without it)."""
    if text is None:
        if every:
            raise UsageError("--every and --with go with --versions (a sweep over a package's releases)")
        return None
    return parse_versions(text, every)


def parse_memory_limit(text: str) -> int:
    limit = parse_size(text)
    if limit <= 0:
        raise UsageError(f"--memory-limit {text!r}: give a size above 0, e.g. 4GiB (leave it out for 80% of RAM)")
    return limit


def _print_plan(planned: RunEstimate) -> None:
    plan, est = planned.plan, planned.estimate
    if planned.data_error is not None:
        console.print(f"[dim]data not estimated: {planned.data_error}[/dim]", highlight=False)
    processes_text = " or ".join(str(n) for n in planned.processes)
    processes_word = "process" if tuple(planned.processes) == (1,) else "processes"
    if planned.releases:  # a sweep: the releases the index lists that it would measure (a range too)
        skipped = "".join(f"; {v} skipped: {why}" for v, why in planned.skipped.items())
        console.print(f"sweep over {plural(len(planned.releases), 'release')}: {', '.join(planned.releases)}{skipped}",
                      highlight=False, soft_wrap=True)
    sides = f" × {planned.envs} environments" if planned.envs > 1 else ""
    look = " (the first look)" if planned.first_look else ""
    table = Table(title=f"plan: {plural(len(plan.cases), 'case')}{sides} × {processes_text} {processes_word}{look} × "
                  f"({planned.warmup} warm-up + {plural(planned.iterations, 'timed iteration')})")
    columns = ["benchmark", "params", "runtime", "est. per iteration", "est. per process", "from"]
    if planned.counts_instructions:
        columns += ["est. counting process", "counting from"]
    for column in columns:
        table.add_column(column)
    for case in est.cases:
        row = [case.case.benchmark.name, " ".join(f"{k}={v}" for k, v in case.case.params.items()),
               case.case.runtime, fmt_seconds(case.iteration_s) if case.iteration_s is not None else "unknown",
               fmt_seconds(case.process_s) if case.process_s is not None else "unknown", case.source]
        if planned.counts_instructions:
            row += [fmt_seconds(case.counting_s) if case.counting_s is not None else "unknown",
                    case.counting_source or "-"]
        table.add_row(*row)
    console.print(table)
    reasons = Counter(f"{bench}: {reason}" for bench, _, reason in plan.dropped)
    for reason, count in reasons.items():
        console.print(f"[dim]dropped {plural(count, 'invalid combination')} of {reason}[/dim]", highlight=False)
    for line in plan_lines(planned):
        console.print(f"[dim]{line}[/dim]" if not line.startswith("estimated time") else line, highlight=False)


def plan_lines(planned: RunEstimate) -> list[str]:
    """The estimate in words: the total, then what it is made of (every process of every environment, what is built
    first, the machine's load) and what it leaves out."""
    est = planned.estimate
    total = fmt_duration(est.seconds)
    lines = [f"estimated time: {'at least ' if est.unknown_cases else ''}{total}"
             + (f" for {planned.expected_blocks} blocks a case, what a real change typically takes to decide here"
                if planned.expected_blocks else "")
             + " (from measured costs: README, 'How long a suite takes', says how close they come)"]
    lines.append("made of: " + "; ".join(_estimate_parts(planned)))
    sources = ", ".join(f"{n} from {source}" for source, n in sorted(est.sources().items()))
    lines.append(f"cases: {sources}")
    if planned.counts_instructions:
        counting = ", ".join(f"{n} from {source}" for source, n in sorted(est.counting_sources().items()))
        lines.append(f"counting processes: {counting or 'no estimate (no measured case, no factor)'}")
    if planned.first_look and planned.budget_s:
        budget = fmt_duration(planned.budget_s)
        if planned.estimate.rough and planned.budget_given is None:
            budget = f"{planned.budget_per_first_look:g}x the first look's time (what a case costs is not known yet)"
        lines.append(f"the first look takes {planned.processes[0]} blocks a case; cases still undecided get more, "
                     f"within a budget of {budget} for the whole run (--budget; --no-until-decided for one look)")
    return lines + _estimate_caveats(planned)


def _estimate_parts(planned: RunEstimate) -> list[str]:
    """What the estimated time is made of: the worker processes, what is built first, the command itself."""
    est = planned.estimate
    kind = "counting (Valgrind) " if planned.counts_instructions and "wall" not in (planned.measure or ()) else ""
    at_once = f" ({est.jobs} at once)" if est.jobs > 1 else ""
    parts = [f"{plural(est.processes, kind + 'worker process')}{at_once} {fmt_duration(est.process_seconds)}"]
    if est.envs_fresh or est.envs_cached:
        parts.append(f"uv environments {fmt_duration(est.env_seconds)} ({est.envs_fresh} to build, "
                     f"{est.envs_cached} cached)")
    if est.worker_builds:
        parts.append(f"the Java worker's Maven build {fmt_duration(est.worker_build_seconds)}")
    if planned.data_files_to_build:
        parts.append(f"data to build first {fmt_duration(est.data_seconds)} "
                     f"({plural(planned.data_files_to_build, 'file')}, {fmt_bytes(est.data_bytes)})")
    parts.append(f"the command's own start and tables {fmt_duration(est.run_seconds)}")
    return parts


def _estimate_caveats(planned: RunEstimate) -> list[str]:
    """What stretches the estimate (a busy machine) and what it leaves out (downloads, cases without one)."""
    est = planned.estimate
    lines = []
    if est.load_factor > 1.0 and planned.load_average is not None:
        lines.append(f"the machine is busy (load {planned.load_average:.1f} on {_cpus()} CPUs): processes are "
                     f"counted {est.load_factor:.1f}x as long as on an idle machine (measured now: the share of a "
                     "CPU a new process gets)")
    if planned.downloads:
        lines.append(f"downloads not in the estimate: {', '.join(planned.downloads)}")
    if est.unknown_cases:
        lines.append(f"{est.unknown_cases} of {plural(len(planned.plan.cases), 'case')} "
                     f"{'has' if est.unknown_cases == 1 else 'have'} no estimate (no history, no model of their "
                     "benchmark): the total leaves their run time out")
    if est.typical_cases:
        lines.append(f"{est.typical_cases} of {plural(len(planned.plan.cases), 'case')} never counted here "
                     f"{'is' if est.typical_cases == 1 else 'are'} taken at a typical counting process (the median "
                     "of the cases counted here, else of pyarrow's asv suite on the reference VM): a rough figure, "
                     "which their first processes replace")
    return lines


def _cpus() -> int:
    import os

    return os.cpu_count() or 1


def _say_busy_cpus(db: Any, run_id: str) -> None:
    """The run's wall-time processes that started with no quiet CPU (other work held every one): their times
    include that contention."""
    from colbench.app.run import busy_cpu_starts

    busy, pinned, worst = busy_cpu_starts(db, run_id)
    if busy:
        console.print(f"[yellow]{busy} of {plural(pinned, 'wall-time process')} started with no quiet CPU[/yellow] "
                      f"(other work used up to {worst:.0%} of the quietest one): their times include waiting for it",
                      highlight=False)


def print_session(session: Any, fmt: str = "table") -> None:
    """The verdicts of every contender, then what stayed inconclusive and the smallest change it could see."""
    from colbench.report.compare_text import format_mde

    for contender, comparisons in session.comparisons.items():
        print_comparisons(comparisons, fmt, session.baseline, contender, session.notes)
    why = {"decided": "every comparison decided", "budget": "time budget spent", "looks": "most looks reached",
           "fixed": "one look of the planned blocks (--no-until-decided)",
           "none": "nothing to compare: no case has results on both sides (see the errors above)"}
    spent = sum(look.alpha for look in session.looks)
    console.print(f"{plural(len(session.looks), 'look')} in {fmt_seconds(session.elapsed_s)}: {why[session.stopped]}; "
                  f"alpha {spent:.2g} spent over the looks")
    several = len(session.comparisons) > 1  # a sweep: say which pair each line is about
    for contender, comparisons in session.comparisons.items():
        pair = f" ({contender} vs {session.baseline})" if several else ""
        for c in (c for c in comparisons if str(c.verdict) == "inconclusive"):
            # paired blocks for times; processes a side for counts (unpaired: n_blocks is 0 there)
            after = plural(c.n_blocks, "block") if c.paired else \
                f"{c.n_baseline} and {c.n_contender} processes"
            console.print(f"[yellow]inconclusive[/yellow] {c.label}{pair}: {c.reason}; after {after} it could have "
                          f"caught a slowdown of {format_mde(c)} (80% / 95% power)", highlight=False)
