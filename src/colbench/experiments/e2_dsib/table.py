"""The table of E2 — Data Science I/O baseline (2019): what this machine measured beside the published figures."""

from __future__ import annotations

from collections.abc import Sequence

from rich.table import Table

from colbench.analysis.aggregate import CaseSummary
from colbench.experiments.e2_dsib.published import E2_LABELS, E2_SECONDS
from colbench.model.records import Run
from colbench.render.tables import cell, median_s, row_for


def build_table(summaries: Sequence[CaseSummary], run: Run) -> Table | None:
    rows = [s for s in summaries if s.benchmark == "dsib"]
    if not rows:
        return None
    table = Table(title="E2 — Data Science I/O baseline (pandas): Parquet vs CSV")
    for column in ("case", "Parquet", "CSV", "Parquet speedup", "published P / CSV", "published speedup"):
        table.add_column(column, justify="right" if column != "case" else "left")
    for (operation, variant), label in E2_LABELS.items():
        parquet = row_for(rows, operation=operation, variant=variant, format="parquet")
        csv = row_for(rows, operation=operation, variant=variant, format="csv")
        if parquet is None and csv is None:
            continue
        p, c = median_s(parquet), median_s(csv)
        speedup = f"{c / p:.1f}×" if p and c else "-"
        published = E2_SECONDS[(operation, variant)]
        table.add_row(f"{label} {operation} {variant}", cell(parquet), cell(csv), speedup,
                      f"{published[0]:g} / {published[1]:g} s", f"{published[1] / published[0]:.0f}×")
    return table
