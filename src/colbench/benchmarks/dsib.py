"""E2 (Data Science I/O baseline, 2019): pandas with Parquet vs CSV, from and to memory, as the post did it."""

from __future__ import annotations

import io
from typing import Any, ClassVar

from colbench.benchmarks.common import TAXI_2016, check_shape, engine_missing, rows_param, threads_param
from colbench.model.benchmark import (
    Benchmark,
    CheckFailed,
    Context,
    DataRequest,
    OutputCheck,
    Params,
    Work,
    int_param,
    str_param,
)
from colbench.model.params import Grid, Param

MONTHS = tuple(f"nyctaxi_2016-{m:02d}" for m in range(1, 7))
DATE_COLUMNS = ["tpep_pickup_datetime", "tpep_dropoff_datetime"]


class Dsib(Benchmark):
    name = "dsib"
    throughput_of = "the bytes of the files read, on disk"
    description = "E2: pandas reads/writes the 2016 taxi month as Parquet vs CSV (plain, str, cat variants)"
    engine = "pandas"
    grid: ClassVar[Grid] = Grid((
        Param("variant", default=("plain", "str", "cat"), choices=("plain", "str", "cat"),
              help="plain; str = sha256 hex column; cat = 'a-b-c' column read as a category"),
        Param("format", default=("parquet", "csv"), choices=("parquet", "csv")),
        Param("operation", default=("read", "write", "continuous_read"), choices=("read", "write", "continuous_read"),
              help="read from bytes in memory; write to memory; read six monthly files in turn"),
        rows_param(200_000, "rows per monthly file"),
        threads_param(2),
    ))

    def valid(self, params: Params) -> str | None:
        if str_param(params, "operation") == "continuous_read" and str_param(params, "variant") != "plain":
            return "the post's continuous read used the plain files"
        return None

    def unavailable(self, params: Params) -> str | None:
        return engine_missing("pandas")

    def inputs(self, params: Params) -> dict[str, DataRequest]:
        fmt, rows, name = str_param(params, "format"), int_param(params, "rows"), str_param(params, "variant")
        # Parquet with the post's defaults: snappy, one row group
        codec, options = ("snappy", {"row_group_size": rows}) if fmt == "parquet" else (None, {})
        variant = {"variant": name} if name != "plain" else {}
        months = MONTHS if str_param(params, "operation") == "continuous_read" else (TAXI_2016,)
        return {f"month_{i + 1}": DataRequest(m, fmt, codec, rows=rows, options={**options, **variant})
                for i, m in enumerate(months)}

    def setup(self, ctx: Context) -> None:
        import pyarrow as pa

        pa.set_cpu_count(ctx.threads)
        op = ctx.param_str("operation")
        if op == "read":
            ctx.state["bytes"] = ctx.inputs["month_1"].read_bytes()
        elif op == "write":
            ctx.state["frame"] = self._read(ctx, ctx.inputs["month_1"].read_bytes())

    def _read(self, ctx: Context, data: bytes | Any) -> Any:
        import pandas as pd
        import pyarrow as pa
        import pyarrow.parquet as pq

        cat = ctx.param_str("variant") == "cat"
        if ctx.param_str("format") == "parquet":
            source = pa.BufferReader(data) if isinstance(data, bytes) else data
            return pq.read_table(source).to_pandas(categories=["str"] if cat else None)
        source = io.BytesIO(data) if isinstance(data, bytes) else data
        return pd.read_csv(source, parse_dates=DATE_COLUMNS, dtype={"str": "category"} if cat else None)

    def run(self, ctx: Context) -> Any:
        op = ctx.param_str("operation")
        if op == "read":
            return self._read(ctx, ctx.state["bytes"])
        if op == "continuous_read":
            frames = [self._read(ctx, path) for path in ctx.inputs.values()]
            return frames
        frame = ctx.state["frame"]
        if ctx.param_str("format") == "parquet":
            sink = io.BytesIO()
            frame.to_parquet(sink)
            return sink.getvalue()
        return frame.to_csv()

    def after_each(self, ctx: Context, output: Any) -> OutputCheck:
        op = ctx.param_str("operation")
        if op == "read":
            return check_shape(ctx, output, "month_1")
        if op == "continuous_read":
            for i, frame in enumerate(output):
                check_shape(ctx, frame, f"month_{i + 1}")
            return OutputCheck(rows=sum(len(f) for f in output), columns=output[0].shape[1])
        ctx.output_file_size = len(output)
        frame = ctx.state["frame"]
        if ctx.param_str("format") == "parquet":
            import pyarrow as pa
            import pyarrow.parquet as pq

            back = pq.read_table(pa.BufferReader(output))
            return check_shape(ctx, back.drop_columns([c for c in back.column_names if c.startswith("__index")]),
                               "month_1")
        lines = output.count("\n")
        if lines != len(frame) + 1:
            raise CheckFailed(f"CSV has {lines} lines for {len(frame)} rows")
        return OutputCheck(rows=len(frame), columns=frame.shape[1])

    def work(self, ctx: Context) -> Work:
        sizes = [p.stat().st_size for p in ctx.inputs.values()]
        return Work(bytes=sum(sizes), rows=ctx.param_int("rows") * len(sizes))
