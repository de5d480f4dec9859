"""The table of E5 — Feather V2 vs Parquet (2020): what this machine measured beside the published figures."""

from __future__ import annotations

from collections.abc import Sequence

from rich.table import Table

from colbench.analysis.aggregate import CaseSummary
from colbench.experiments.case_params import param_text
from colbench.experiments.e5_feather_v2.published import E5_READ_SECONDS, E5_SIZE_MIB
from colbench.model.records import Run
from colbench.render.fmt import fmt_bytes
from colbench.render.tables import cell, published_cell, row_for


def build_table(summaries: Sequence[CaseSummary], run: Run) -> Table | None:
    reads = [s for s in summaries if s.benchmark == "file-read"]
    writes = [s for s in summaries if s.benchmark == "file-write"]
    if not reads and not writes:
        return None
    table = Table(title="E5 — Feather V2 vs Parquet (pyarrow; most threads); published: 4 threads, full files")
    for column in ("source", "format", "codec", "read → table", "read → data frame", "write", "file size",
                   "published → table / → df", "published size"):
        table.add_column(column, justify="left" if column in ("source", "format", "codec") else "right")
    keys = sorted({(param_text(s, "source"), param_text(s, "format"), param_text(s, "codec")) for s in reads + writes})
    for source, fmt, codec in keys:
        to_table = row_for(reads, source=source, format=fmt, codec=codec, engine="pyarrow", output="arrow_table")
        to_df = row_for(reads, source=source, format=fmt, codec=codec, engine="pyarrow", output="dataframe")
        write = row_for(writes, source=source, format=fmt, codec=codec, engine="pyarrow", input="arrow_table")
        size = write.file_size_bytes if write else None
        if size is None:
            size = next((s.input_size_bytes for s in (to_table, to_df) if s is not None), None)
        pt = E5_READ_SECONDS.get((source, fmt, codec, "arrow_table"))
        pd_ = E5_READ_SECONDS.get((source, fmt, codec, "dataframe"))
        psize = E5_SIZE_MIB.get((source, fmt, codec))
        table.add_row(source, fmt, codec, cell(to_table), cell(to_df), cell(write), fmt_bytes(size),
                      f"{published_cell(pt) or '-'} / {published_cell(pd_) or '-'}" if pt or pd_ else "",
                      f"{psize} MiB" if psize else "")
    return table
