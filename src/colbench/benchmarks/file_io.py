"""E5 (Feather V2 post): read and write Parquet and Feather, to and from Arrow tables and data frames."""

from __future__ import annotations

from typing import Any, ClassVar

from colbench.benchmarks.common import (
    FANNIE,
    TAXI_2010,
    check_shape,
    engine_missing,
    remove_output,
    rows_param,
    threads_param,
)
from colbench.engines import ENGINES, LIBRARY_OF, get_engine, shape
from colbench.model.benchmark import (
    Benchmark,
    CheckFailed,
    Context,
    DataRequest,
    OutputCheck,
    Params,
    Unsupported,
    Work,
    int_param,
    str_param,
)
from colbench.model.params import Grid, Param

#: the engines that read and write files: each library's own (pandas-pyarrow reads CSV only)
FILE_ENGINES = tuple(name for name in ENGINES if LIBRARY_OF[name] == name)
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
    grid: ClassVar[Grid] = Grid(_common_params(FILE_ENGINES) + (
        Param("output", default=("arrow_table", "dataframe"), choices=("arrow_table", "dataframe")),
        Param("memory_map", default=(False,), type=bool, help="memory-map the file (off in the post)"),
    ))

    def valid(self, params: Params) -> str | None:
        fmt, codec = str_param(params, "format"), str_param(params, "codec")
        name, output = str_param(params, "engine"), str_param(params, "output")
        if fmt == "feather" and codec not in POST_CODECS["feather"]:
            return f"Feather V2 has no {codec} codec"
        if fmt in ("feather_v1",) and codec != "uncompressed":
            return "Feather V1 is uncompressed"
        if fmt == "ipc_stream" and codec not in POST_CODECS["ipc_stream"]:
            return f"Arrow IPC has no {codec} codec"
        engine = get_engine(name)
        if name in ("pandas", "fastparquet", "polars") and output == "arrow_table":
            return f"{name} reads into its data frame"
        return engine.can_read(fmt, output)

    def unavailable(self, params: Params) -> str | None:
        return engine_missing(str_param(params, "engine"))

    def engine_for(self, params: Params) -> str:
        return str_param(params, "engine")

    def inputs(self, params: Params) -> dict[str, DataRequest]:
        return {"data": DataRequest(str_param(params, "source"), str_param(params, "format"),
                                    str_param(params, "codec"), rows=int_param(params, "rows"))}

    def setup(self, ctx: Context) -> None:
        ctx.state["engine"] = engine = get_engine(ctx.param_str("engine"))
        lacks = engine.read_unsupported(ctx.param_str("format"), ctx.param_str("codec"))
        if lacks:
            raise Unsupported(lacks)
        engine.configure(ctx.threads)
        engine.prepare(ctx.param_str("output"))

    def run(self, ctx: Context) -> Any:
        return ctx.state["engine"].read(ctx.inputs["data"], ctx.param_str("format"), ctx.param_str("output"),
                                        ctx.param_bool("memory_map"))

    def after_each(self, ctx: Context, output: Any) -> OutputCheck:
        return check_shape(ctx, output)


class FileWrite(Benchmark):
    name = "file-write"
    throughput_of = "the bytes of the Parquet file the data came from (the file written is under file size)"
    description = "E5: write an Arrow table or a data frame to Parquet / Feather; records the file size"
    grid: ClassVar[Grid] = Grid(_common_params(FILE_ENGINES) + (
        Param("input", default=("arrow_table", "dataframe"), choices=("arrow_table", "dataframe")),
    ))

    def valid(self, params: Params) -> str | None:
        fmt, codec = str_param(params, "format"), str_param(params, "codec")
        name, given = str_param(params, "engine"), str_param(params, "input")
        engine = get_engine(name)
        if fmt == "feather" and codec not in POST_CODECS["feather"]:
            return f"Feather V2 has no {codec} codec"
        if fmt == "feather_v1" and codec != "uncompressed":
            return "Feather V1 is uncompressed"
        if given == "arrow_table" and name not in ("pyarrow", "duckdb"):
            return f"{name} writes from its data frame"
        if given == "dataframe" and name == "duckdb":
            return "duckdb writes from Arrow here"
        return engine.can_write(fmt, codec)

    def unavailable(self, params: Params) -> str | None:
        return engine_missing(str_param(params, "engine"))

    def engine_for(self, params: Params) -> str:
        return str_param(params, "engine")

    def inputs(self, params: Params) -> dict[str, DataRequest]:
        # the data to write comes from an uncompressed Parquet file of the same source (untimed load)
        return {"data": DataRequest(str_param(params, "source"), "parquet", "uncompressed",
                                    rows=int_param(params, "rows"))}

    def setup(self, ctx: Context) -> None:
        name = ctx.param_str("engine")
        ctx.state["engine"] = engine = get_engine(name)
        engine.configure(ctx.threads)
        data = engine.load_for_write(ctx.inputs["data"], "parquet")
        if name == "pyarrow" and ctx.param_str("input") == "dataframe":
            data = data.to_pandas()
        ctx.state["data"] = data
        ctx.state["target"] = ctx.scratch / f"out.{ctx.param_str('format')}"

    def before_each(self, ctx: Context) -> None:
        remove_output(ctx.state["target"], ctx.scratch)

    def run(self, ctx: Context) -> Any:
        ctx.state["engine"].write(ctx.state["data"], ctx.state["target"], ctx.param_str("format"),
                                  ctx.param_str("codec"))
        return ctx.state["target"]

    def after_each(self, ctx: Context, output: Any) -> OutputCheck:
        from colbench.engines.pyarrow_engine import read_arrow_table

        # Read back what was written with pyarrow: the right format, the right shape (the 2020 scripts
        # once wrote Parquet where they meant Feather; this would catch it).
        written = read_arrow_table(output, ctx.param_str("format"), memory_map=True)
        ctx.output_file_size = output.stat().st_size
        check = check_shape(ctx, written)
        if written.num_rows == 0:
            raise CheckFailed("wrote an empty file")
        return check

    def work(self, ctx: Context) -> Work:
        rows, _ = shape(ctx.state["data"])
        size = ctx.inputs["data"].stat().st_size
        return Work(bytes=size, rows=rows)
