"""E5 (Feather V2 post): read and write Parquet and Feather, to and from Arrow tables and data frames."""

from __future__ import annotations

from typing import Any, ClassVar

from colbench.benchmarks.common import FANNIE, TAXI_2010, check_shape, engine_missing, rows_param, threads_param
from colbench.engines import get_engine, shape
from colbench.model.benchmark import Benchmark, CheckFailed, Context, DataRequest, OutputCheck, Params, Work
from colbench.model.params import Grid, Param
from colbench.paths import remove

FILE_ENGINES = ("pyarrow", "pandas", "polars", "duckdb", "fastparquet")
FORMATS = ("parquet", "feather", "feather_v1", "ipc_stream")
CODECS = ("uncompressed", "snappy", "lz4", "zstd", "gzip", "brotli")
# The post's grid: Parquet {uncompressed, snappy}; Feather V2 {uncompressed, lz4, zstd}
POST_CODECS = {"parquet": ("uncompressed", "snappy"), "feather": ("uncompressed", "lz4", "zstd"),
               "feather_v1": ("uncompressed",), "ipc_stream": ("uncompressed", "lz4", "zstd")}


def _common_params(default_engines: tuple[str, ...]) -> tuple[Param, ...]:
    return (
        Param("format", default=("parquet", "feather"), choices=FORMATS),
        Param("codec", default=("uncompressed", "snappy", "lz4", "zstd"), choices=CODECS),
        Param("engine", default=default_engines, choices=FILE_ENGINES),
        Param("source", default=(FANNIE, TAXI_2010), choices=(FANNIE, TAXI_2010)),
        rows_param(300_000),
        threads_param(1, 2),
    )


class FileRead(Benchmark):
    name = "file-read"
    throughput_of = "the file's bytes on disk (after compression)"
    description = "E5: read Parquet / Feather files into an Arrow table or a data frame (memory-mapping off)"
    grid: ClassVar[Grid] = Grid(_common_params(("pyarrow", "pandas", "polars", "duckdb", "fastparquet")) + (
        Param("output", default=("arrow_table", "dataframe"), choices=("arrow_table", "dataframe")),
        Param("memory_map", default=(False,), type=bool, help="memory-map the file (off in the post)"),
    ))

    def valid(self, params: Params) -> str | None:
        if params["format"] == "feather" and params["codec"] not in POST_CODECS["feather"]:
            return f"Feather V2 has no {params['codec']} codec"
        if params["format"] in ("feather_v1",) and params["codec"] != "uncompressed":
            return "Feather V1 is uncompressed"
        if params["format"] == "ipc_stream" and params["codec"] not in POST_CODECS["ipc_stream"]:
            return f"Arrow IPC has no {params['codec']} codec"
        engine = get_engine(params["engine"])
        if params["engine"] in ("pandas", "fastparquet", "polars") and params["output"] == "arrow_table":
            return f"{params['engine']} reads into its data frame"
        return engine.can_read(params["format"], params["output"])

    def unavailable(self, params: Params) -> str | None:
        return engine_missing(params["engine"])

    def engine_for(self, params: Params) -> str:
        return params["engine"]

    def inputs(self, params: Params) -> dict[str, DataRequest]:
        return {"data": DataRequest(params["source"], params["format"], params["codec"], rows=params["rows"])}

    def setup(self, ctx: Context) -> None:
        ctx.state["engine"] = engine = get_engine(ctx.params["engine"])
        engine.configure(ctx.threads)
        engine.prepare(ctx.params["output"])

    def run(self, ctx: Context) -> Any:
        p = ctx.params
        return ctx.state["engine"].read(ctx.inputs["data"], p["format"], p["output"], bool(p["memory_map"]))

    def after_each(self, ctx: Context, output: Any) -> OutputCheck:
        return check_shape(ctx, output)


class FileWrite(Benchmark):
    name = "file-write"
    throughput_of = "the bytes of the Parquet file the data came from (the file written is under file size)"
    description = "E5: write an Arrow table or a data frame to Parquet / Feather; records the file size"
    grid: ClassVar[Grid] = Grid(_common_params(("pyarrow", "pandas", "polars", "duckdb", "fastparquet")) + (
        Param("input", default=("arrow_table", "dataframe"), choices=("arrow_table", "dataframe")),
    ))

    def valid(self, params: Params) -> str | None:
        engine = get_engine(params["engine"])
        if params["format"] == "feather" and params["codec"] not in POST_CODECS["feather"]:
            return f"Feather V2 has no {params['codec']} codec"
        if params["format"] == "feather_v1" and params["codec"] != "uncompressed":
            return "Feather V1 is uncompressed"
        if params["input"] == "arrow_table" and params["engine"] not in ("pyarrow", "duckdb"):
            return f"{params['engine']} writes from its data frame"
        if params["input"] == "dataframe" and params["engine"] == "duckdb":
            return "duckdb writes from Arrow here"
        return engine.can_write(params["format"], params["codec"])

    def unavailable(self, params: Params) -> str | None:
        return engine_missing(params["engine"])

    def engine_for(self, params: Params) -> str:
        return params["engine"]

    def inputs(self, params: Params) -> dict[str, DataRequest]:
        # the data to write comes from an uncompressed Parquet file of the same source (untimed load)
        return {"data": DataRequest(params["source"], "parquet", "uncompressed", rows=params["rows"])}

    def setup(self, ctx: Context) -> None:
        p = ctx.params
        ctx.state["engine"] = engine = get_engine(p["engine"])
        engine.configure(ctx.threads)
        data = engine.load_for_write(ctx.inputs["data"], "parquet")
        if p["engine"] == "pyarrow" and p["input"] == "dataframe":
            data = data.to_pandas()
        ctx.state["data"] = data
        ctx.state["target"] = ctx.scratch / f"out.{p['format']}"

    def before_each(self, ctx: Context) -> None:
        remove(ctx.state["target"], within=ctx.scratch, own_temp=True)  # the worker's own scratch

    def run(self, ctx: Context) -> Any:
        p = ctx.params
        ctx.state["engine"].write(ctx.state["data"], ctx.state["target"], p["format"], p["codec"])
        return ctx.state["target"]

    def after_each(self, ctx: Context, output: Any) -> OutputCheck:
        from colbench.engines.pyarrow_engine import read_arrow_table

        # Read back what was written with pyarrow: the right format, the right shape (the 2020 scripts
        # once wrote Parquet where they meant Feather; this would catch it).
        written = read_arrow_table(output, ctx.params["format"], memory_map=True)
        ctx.output_file_size = output.stat().st_size
        check = check_shape(ctx, written)
        if written.num_rows == 0:
            raise CheckFailed("wrote an empty file")
        return check

    def work(self, ctx: Context) -> Work:
        rows, _ = shape(ctx.state["data"])
        size = ctx.inputs["data"].stat().st_size
        return Work(bytes=size, rows=rows)
