"""`colbench claims`: does each post's claim hold on this machine, with which ratio and interval."""

from __future__ import annotations

from typing import Annotated

import typer

from colbench.cli.common import StoreOption, UsageError, _store, console, friendly


@friendly
def claims(
    refs: Annotated[list[str] | None, typer.Argument(help="runs (id, prefix, name, latest) and/or experiment "
                                                     "suites (e1 … e5): the latest run of each suite")] = None,
    fmt: Annotated[str, typer.Option("--format", "-f", help="table, markdown or json")] = "table",
    store: StoreOption = None,
) -> None:
    """Evaluate the reference posts' claims over stored runs: holds / does not hold / inconclusive."""
    from colbench.experiments.registry import EXPERIMENTS, all_suites
    from colbench.report.claims import claims_json, claims_table, counts_line, evaluate_runs, experiments_of_run
    from colbench.report.html import markdown_table, table_view
    from colbench.store.base import resolve_run_id
    from colbench.store.selection import latest_run_of_suite

    if fmt not in ("table", "markdown", "json"):
        raise UsageError(f"--format {fmt!r}: choose table, markdown or json")
    db = _store(store, create=False)
    run_ids: list[str] = []
    experiments: list[str] = []
    suites = all_suites()
    for ref in refs or ["latest"]:
        if ref in suites:
            run_ids.append(latest_run_of_suite(db, ref))
            experiments.extend(e.key for e in EXPERIMENTS if any(s.name == ref for s in e.suites))
        else:
            run_ids.append(resolve_run_id(db, ref))
    run_ids = list(dict.fromkeys(run_ids))
    if not experiments:
        for run_id in run_ids:
            experiments.extend(experiments_of_run(db.get_run(run_id)))
    verdicts, untestable = evaluate_runs(db, run_ids, sorted(set(experiments)))
    if fmt == "json":
        typer.echo(claims_json(verdicts, untestable))
        return
    cores = db.get_run(run_ids[0])["machine"].get("cpu_threads")
    table = claims_table(verdicts, untestable, cores=cores)
    if fmt == "markdown":
        typer.echo(markdown_table(table_view(table)))
    else:
        console.print(table)
    console.print(f"runs: {', '.join(run_ids)}; {counts_line(verdicts)}", highlight=False)
