"""The table of E4 — Arrow.jl vs CSV.jl (2020): what this machine measured beside the published figures."""

from __future__ import annotations

from collections.abc import Sequence

from rich.table import Table

from colbench.analysis.aggregate import CaseSummary
from colbench.experiments.case_params import param_text
from colbench.experiments.e4_arrow_jl.published import E4_FIRST_RUN_SECONDS, E4_SECONDS
from colbench.model.records import Run
from colbench.render.fmt import fmt_seconds
from colbench.render.tables import cell, published_cell


def build_table(summaries: Sequence[CaseSummary], run: Run) -> Table | None:
    rows = [s for s in summaries if s.benchmark == "mmap-read"]
    if not rows:
        return None
    table = Table(title="E4 — 10 × Int64 frame: Arrow IPC vs CSV; first run in a fresh process vs warm")
    for column in ("operation", "rows", "warm median", "first run", "published warm", "published first"):
        table.add_column(column, justify="left" if column == "operation" else "right")
    for s in sorted(rows, key=lambda s: list(E4_SECONDS).index(param_text(s, "operation"))):
        op = param_text(s, "operation")
        table.add_row(op, f"{s.params['rows']:,}", cell(s), fmt_seconds(s.first_iteration.get("median")),
                      published_cell(E4_SECONDS.get(op)), published_cell(E4_FIRST_RUN_SECONDS.get(op)))
    return table
