"""Where E1 and E5 found the time goes: converting an Arrow table to a pandas data frame and back."""

from __future__ import annotations

from typing import Any, ClassVar

from colbench.benchmarks.common import FANNIE, TAXI_2010, check_shape, engine_missing, rows_param, threads_param
from colbench.engines import shape
from colbench.model.benchmark import Benchmark, Context, DataRequest, OutputCheck, Params, Work, int_param, str_param
from colbench.model.params import Grid, Param


class DataFrameConversion(Benchmark):
    name = "dataframe-conversion"
    throughput_of = "the bytes of the data in memory (Arrow buffers, or the frame's columns)"
    work_basis = "memory"
    description = "Arrow table → pandas data frame (to_pandas) and back (from_pandas)"
    engine = "pyarrow"
    grid: ClassVar[Grid] = Grid((
        Param("direction", default=("to_pandas", "from_pandas"), choices=("to_pandas", "from_pandas")),
        Param("source", default=(FANNIE, TAXI_2010), choices=(FANNIE, TAXI_2010)),
        rows_param(300_000),
        threads_param(1, 2),
    ))

    def unavailable(self, params: Params) -> str | None:
        return engine_missing("pandas")

    def inputs(self, params: Params) -> dict[str, DataRequest]:
        return {"data": DataRequest(str_param(params, "source"), "parquet", "uncompressed",
                                    rows=int_param(params, "rows"))}

    def setup(self, ctx: Context) -> None:
        from colbench.engines.pyarrow_engine import PyArrowEngine, read_arrow_table

        PyArrowEngine().configure(ctx.threads)
        table = read_arrow_table(ctx.inputs["data"], "parquet", False)
        ctx.state["data"] = table if ctx.param_str("direction") == "to_pandas" else table.to_pandas()

    def run(self, ctx: Context) -> Any:
        import pyarrow as pa

        data = ctx.state["data"]
        if ctx.param_str("direction") == "to_pandas":
            return data.to_pandas()
        return pa.Table.from_pandas(data, preserve_index=False)

    def after_each(self, ctx: Context, output: Any) -> OutputCheck:
        return check_shape(ctx, output)

    def work(self, ctx: Context) -> Work:
        data = ctx.state["data"]
        size = data.nbytes if hasattr(data, "nbytes") and not callable(data.nbytes) else None
        if size is None:
            size = int(data.memory_usage(deep=False).sum())
        return Work(bytes=int(size), rows=shape(data)[0])
