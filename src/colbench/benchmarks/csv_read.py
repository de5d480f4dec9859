"""E1 (arrowbench): read a CSV into an Arrow table or a data frame, types inferred, only the delimiter given."""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar

from colbench.benchmarks.common import (
    FANNIE,
    R_READERS,
    TAXI_2010,
    check_shape,
    csv_layout,
    engine_missing,
    rows_param,
    threads_param,
)
from colbench.engines import get_engine
from colbench.model.benchmark import (
    Benchmark,
    Context,
    DataRequest,
    OutputCheck,
    Params,
    Unsupported,
    int_param,
    str_param,
)
from colbench.model.params import Grid, Param

PY_READERS = ("pyarrow", "pandas", "pandas-pyarrow", "polars", "duckdb")


class CsvRead(Benchmark):
    name = "csv-read"
    description = "E1: read CSV (plain or gzip) into an Arrow table or a data frame, types inferred"
    work_unit = "bytes"
    throughput_of = "the CSV file's bytes on disk (compressed, for gzip)"
    grid: ClassVar[Grid] = Grid((
        Param("reader", default=PY_READERS + R_READERS, choices=PY_READERS + R_READERS),
        Param("source", default=(TAXI_2010, FANNIE), choices=(TAXI_2010, FANNIE)),
        Param("compression", default=("none", "gzip"), choices=("none", "gzip")),
        Param("output", default=("arrow_table", "dataframe"), choices=("arrow_table", "dataframe")),
        Param("inference", default=("default",), choices=("default", "full"),
              help="type inference from the reader's default sample, or from every row (polars, duckdb)"),
        rows_param(300_000),
        threads_param(1, 2),
    ))

    def valid(self, params: Params) -> str | None:
        reader, output = str_param(params, "reader"), str_param(params, "output")
        if output == "arrow_table" and reader != "pyarrow":
            return "only arrow reads CSV into an Arrow table (as in the post)"
        if reader == "readr" and int_param(params, "threads") != 1:
            return "readr is single-threaded only"
        if reader == "pandas" and int_param(params, "threads") != 1:
            return "pandas' C parser is single-threaded"
        if str_param(params, "inference") == "full" and reader not in ("polars", "duckdb"):
            return f"{reader} infers types from all rows already"
        return None

    def unavailable(self, params: Params) -> str | None:
        return engine_missing(str_param(params, "reader"))

    def runtime(self, params: Params) -> str:
        return "r" if str_param(params, "reader") in R_READERS else "python"

    def engine_for(self, params: Params) -> str:
        return str_param(params, "reader")

    def inputs(self, params: Params) -> dict[str, DataRequest]:
        codec = "gzip" if str_param(params, "compression") == "gzip" else None
        return {"data": DataRequest(str_param(params, "source"), "csv", codec, rows=int_param(params, "rows"))}

    def setup(self, ctx: Context) -> None:
        ctx.state["engine"] = engine = get_engine(ctx.param_str("reader"))
        lacks = engine.csv_unsupported()
        if lacks:
            raise Unsupported(lacks)
        ctx.state["applied"] = engine.configure(ctx.threads)
        engine.prepare(ctx.param_str("output"))
        layout = csv_layout(ctx)
        ctx.state["layout"] = dataclasses.replace(layout, full_inference=ctx.param_str("inference") == "full")

    def run(self, ctx: Context) -> Any:
        return ctx.state["engine"].read_csv(ctx.inputs["data"], ctx.state["layout"], ctx.param_str("output"))

    def after_each(self, ctx: Context, output: Any) -> OutputCheck:
        return check_shape(ctx, output)
