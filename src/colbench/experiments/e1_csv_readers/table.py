"""The table of E1 — arrowbench CSV readers (R, 2021): what this machine measured beside the published figures."""

from __future__ import annotations

from collections.abc import Sequence

from rich.table import Table

from colbench.analysis.aggregate import CaseSummary
from colbench.experiments.case_params import param_text
from colbench.experiments.e1_csv_readers.published import E1_SECONDS
from colbench.model.records import Run
from colbench.render.tables import cell, published_cell, row_for


def build_table(summaries: Sequence[CaseSummary], run: Run) -> Table | None:
    rows = [s for s in summaries if s.benchmark == "csv-read"]
    if not rows:
        return None
    sources = sorted({param_text(s, "source") for s in rows})
    comps = sorted({param_text(s, "compression") for s in rows})
    table = Table(title="E1 — CSV read (median, most threads); published: 8 cores, full files, to data.frame")
    table.add_column("reader → output")
    for source in sources:
        for comp in comps:
            table.add_column(f"{source} {comp}", justify="right")
        table.add_column(f"{source} published", justify="right", style="dim")
    for reader, output in sorted({(param_text(s, "reader"), param_text(s, "output")) for s in rows}):
        cells = [f"{reader} → {output}"]
        for source in sources:
            for comp in comps:
                cells.append(cell(row_for(rows, reader=reader, output=output, source=source, compression=comp)))
            key = (source, "pyarrow" if reader == "pyarrow" else reader)
            cells.append(published_cell(E1_SECONDS.get(key)) if output == "dataframe" else "")
        table.add_row(*cells)
    return table
