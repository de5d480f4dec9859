"""`colbench claims`: does each post's claim hold on this machine, with which ratio and interval."""

from __future__ import annotations

from typing import Annotated

import typer

from colbench.cli.common import FormatOption, StoreOption, _store, console, friendly


@friendly
def claims(
    refs: Annotated[list[str] | None, typer.Argument(help="runs (id, prefix, name, latest) and/or experiment "
                                                     "suites (e1 … e5): the latest run of each suite")] = None,
    fmt: FormatOption = "table",
    store: StoreOption = None,
) -> None:
    """Evaluate the reference posts' claims over stored runs: holds / does not hold / inconclusive."""
    from colbench.app.claims import evaluate
    from colbench.report.claims import claims_json, claims_table, counts_line
    from colbench.report.tables import markdown_table, table_view

    answer = evaluate(_store(store, create=False), refs or ["latest"])
    if fmt == "json":
        typer.echo(claims_json(answer.verdicts, answer.untestable))
        return
    table = claims_table(answer.verdicts, answer.untestable, cores=answer.cores)
    if fmt == "markdown":
        typer.echo(markdown_table(table_view(table)))
    else:
        console.print(table)
    console.print(f"runs: {', '.join(answer.run_ids)}; {counts_line(answer.verdicts)}", highlight=False)
