"""E4 (Arrow.jl vs CSV.jl): a 10 × Int64 frame written and read as Arrow IPC and as CSV; memory-mapped, streamed
into memory, and copied into owned mutable columns. The first iteration of each fresh process is reported beside
the warm ones: imports and first-call costs are what a user feels first."""

from __future__ import annotations

from typing import Any, ClassVar

from colbench.benchmarks.common import check_shape, remove_output, rows_param, threads_param
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

OPERATIONS = ("write_arrow", "write_csv", "read_mmap", "read_stream", "read_copy", "read_csv")


class MmapRead(Benchmark):
    name = "mmap-read"
    throughput_of = "the frame's values in memory (rows x 10 columns x 8 bytes)"
    work_basis = "memory"
    description = "E4: 10 × Int64 frame — Arrow IPC mmap / stream / owned copy vs CSV, writes and reads"
    engine = "pyarrow"
    grid: ClassVar[Grid] = Grid((
        Param("operation", default=OPERATIONS, choices=OPERATIONS),
        rows_param(2_000_000),
        threads_param(2),
    ))

    def inputs(self, params: Params) -> dict[str, DataRequest]:
        fmt = "csv" if str_param(params, "operation") == "read_csv" else "feather"
        return {"data": DataRequest("int64_frame", fmt, None if fmt == "csv" else "uncompressed",
                                    rows=int_param(params, "rows"))}

    def setup(self, ctx: Context) -> None:
        from colbench.engines.pyarrow_engine import read_arrow_table, set_arrow_threads

        set_arrow_threads(ctx.threads)
        op = ctx.param_str("operation")
        if op.startswith("write"):
            ctx.state["table"] = read_arrow_table(ctx.inputs["data"], "feather", False).combine_chunks()
            ctx.state["target"] = ctx.scratch / ("out.arrow" if op == "write_arrow" else "out.csv")

    def before_each(self, ctx: Context) -> None:
        if "target" in ctx.state:
            remove_output(ctx.state["target"], ctx.scratch)

    def run(self, ctx: Context) -> Any:
        import pyarrow as pa
        import pyarrow.csv as pacsv
        import pyarrow.feather as feather

        op, path = ctx.param_str("operation"), str(ctx.inputs["data"])
        if op == "write_arrow":
            feather.write_feather(ctx.state["table"], ctx.state["target"], compression="uncompressed")
            return ctx.state["target"]
        if op == "write_csv":
            pacsv.write_csv(ctx.state["table"], ctx.state["target"])
            return ctx.state["target"]
        if op == "read_mmap":  # lazy, read-only: columns point into the mapped file
            return pa.ipc.open_file(pa.memory_map(path)).read_all()
        if op == "read_stream":  # into memory Arrow owns (immutable buffers)
            with pa.OSFile(path) as source:
                return pa.ipc.open_file(source).read_all()
        if op == "read_copy":  # fully owned, mutable numpy columns (Julia's copy to owned vectors)
            with pa.OSFile(path) as source:
                table = pa.ipc.open_file(source).read_all()
            return {name: col.to_numpy().copy() for name, col in zip(table.column_names, table.columns)}
        return pacsv.read_csv(path)

    def after_each(self, ctx: Context, output: Any) -> OutputCheck:
        op = ctx.param_str("operation")
        if op.startswith("write"):
            import pyarrow as pa
            import pyarrow.csv as pacsv

            ctx.output_file_size = output.stat().st_size
            back = pa.ipc.open_file(pa.memory_map(str(output))).read_all() if op == "write_arrow" else \
                pacsv.read_csv(output)
            if back.num_rows != ctx.state["table"].num_rows:
                raise CheckFailed(f"wrote {back.num_rows} rows, expected {ctx.state['table'].num_rows}")
            return OutputCheck(rows=back.num_rows, columns=back.num_columns)
        if op == "read_copy":
            if not all(col.flags.writeable and col.flags.owndata for col in output.values()):
                raise CheckFailed("read_copy must give owned, writable columns")
            rows = {len(col) for col in output.values()}
            if rows != {ctx.param_int("rows")} or len(output) != 10:
                raise CheckFailed(f"read_copy gave {len(output)} columns of {rows} rows")
            return OutputCheck(rows=ctx.param_int("rows"), columns=len(output))
        return check_shape(ctx, output)

    def work(self, ctx: Context) -> Work:
        rows = ctx.param_int("rows")
        return Work(bytes=rows * 10 * 8, rows=rows)
