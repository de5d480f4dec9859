"""E3 (Arrow Java in-memory study): how fast Arrow IPC data can be read back from memory, and what 'reading'
means — loading batches, reading offsets, scanning every byte, or making one object per value.

Bandwidth counts value bytes only (4/8 per int32/int64, payload bytes for binary), as the post did. A
speed above this machine's memory bandwidth is impossible for a case that touches its bytes; reports flag
such cases as "bytes not touched" (see colbench.machine.bandwidth).
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from colbench.benchmarks.common import threads_param
from colbench.model.benchmark import Benchmark, CheckFailed, Context, OutputCheck, Params, Work, int_param, str_param
from colbench.model.params import Grid, Param, positive

TYPES = ("binary", "int32", "int64")
ACCESS = ("lazy", "offsets", "scan", "materialize")
TOUCHES_BYTES = ("scan", "materialize")


def make_column(kind: str, rows: int, value_size: int, seed: int) -> Any:
    """Deterministic values: a test can recompute the checksum from (kind, rows, value_size, seed)."""
    import pyarrow as pa

    if kind == "int32":
        return pa.array((np.arange(rows, dtype=np.int64) * 7 + seed).astype(np.int32))
    if kind == "int64":
        return pa.array(np.arange(rows, dtype=np.int64) * 1_000_003 + seed)
    rng = np.random.default_rng(seed)
    payload = rng.integers(0, 256, size=rows * value_size, dtype=np.uint8)
    offsets = np.arange(0, (rows + 1) * value_size, value_size, dtype=np.int32)
    return pa.Array.from_buffers(pa.binary(), rows, [None, pa.py_buffer(offsets), pa.py_buffer(payload)])


def write_ipc_file(column: Any, batch_rows: int) -> Any:
    """Untimed: the column in the Arrow *file* format, in memory, cut into batches of `batch_rows`."""
    import pyarrow as pa

    table = pa.table({"value": column})
    sink = pa.BufferOutputStream()
    with pa.ipc.new_file(sink, table.schema) as writer:
        writer.write_table(table, max_chunksize=batch_rows)
    return sink.getvalue()


def xor_bytes(buffer: Any, start: int, stop: int) -> int:
    """Read every byte of buffer[start:stop] in place (vectorised), folded into one 64-bit value."""
    view = np.frombuffer(buffer, dtype=np.uint8, count=stop - start, offset=start)
    head = (len(view) // 8) * 8
    folded = int(np.bitwise_xor.reduce(view[:head].view(np.uint64))) if head else 0
    for index, byte in enumerate(view[head:].tolist()):
        folded ^= byte << (8 * index)
    return folded


def consume(reader: Any, kind: str, access: str) -> tuple[int, int]:
    """Read every batch; returns (value bytes consumed, checksum)."""
    total_bytes, checksum = 0, 0
    for index in range(reader.num_record_batches):
        array = reader.get_batch(index).column(0)
        rows = len(array)
        if access == "lazy":
            total_bytes += _value_bytes(array, kind)
            continue
        if kind == "binary":
            offsets = np.frombuffer(array.buffers()[1], dtype=np.int32, count=rows + 1, offset=array.offset * 4)
            if access == "offsets":
                lengths = offsets[1:] - offsets[:-1]
                total_bytes += int(lengths.sum())
                checksum ^= int(np.bitwise_xor.reduce(lengths.astype(np.uint64))) if rows else 0
            elif access == "scan":
                start, stop = int(offsets[0]), int(offsets[-1])
                checksum ^= xor_bytes(array.buffers()[2], start, stop)
                total_bytes += stop - start
            else:  # one Python bytes object per value, as Java's get() made one byte[] per value
                values = array.to_pylist()
                total_bytes += sum(len(v) for v in values)
                checksum ^= len(values)
        else:
            width = 4 if kind == "int32" else 8
            if access == "materialize":
                values = array.to_pylist()
                total_bytes += len(values) * width
                checksum ^= sum(values) & 0xFFFFFFFFFFFFFFFF
            else:  # offsets (no offsets for fixed width: the holder read the value) and scan alike
                data = np.frombuffer(array.buffers()[1], dtype=np.int32 if width == 4 else np.int64, count=rows,
                                     offset=array.offset * width)
                total_bytes += rows * width
                checksum ^= int(data.sum(dtype=np.int64)) & 0xFFFFFFFFFFFFFFFF
    return total_bytes, checksum


def _value_bytes(array: Any, kind: str) -> int:
    valid = len(array) - int(array.null_count)
    if kind == "binary":
        offsets = np.frombuffer(array.buffers()[1], dtype=np.int32, count=len(array) + 1, offset=array.offset * 4)
        return int(offsets[-1] - offsets[0])
    return valid * (4 if kind == "int32" else 8)


def open_reader(data: Any, source: str) -> Any:
    """`buffer`: zero-copy, batches point into the Arrow buffer. `stream`: `data` is bytes behind a Python
    file object, so every read copies bytes out of it, as the post's channel did. Each of those reads runs Python
    code under the GIL, so threads reading from `stream` take turns (E3's thread claim, docs/claims.md)."""
    import io

    import pyarrow as pa

    if source == "buffer":
        return pa.ipc.open_file(pa.BufferReader(data))
    return pa.ipc.open_file(pa.PythonFile(io.BytesIO(data), mode="r"))  # BytesIO(bytes) itself shares, not copies


@dataclass(frozen=True)
class IpcCase:
    """The params of one ipc-bandwidth case, typed (a wrong type raises ParamTypeError naming the param)."""

    type: str
    value_size: int
    rows: int
    batch_rows: int
    source: str
    access: str

    @classmethod
    def of(cls, params: Params) -> IpcCase:
        return cls(type=str_param(params, "type"), value_size=int_param(params, "value_size"),
                   rows=int_param(params, "rows"), batch_rows=int_param(params, "batch_rows"),
                   source=str_param(params, "source"), access=str_param(params, "access"))

    @property
    def width(self) -> int:
        """Value bytes per row: the binary value's size, else the integer's."""
        return self.value_size if self.type == "binary" else (4 if self.type == "int32" else 8)


class IpcBandwidth(Benchmark):
    name = "ipc-bandwidth"
    throughput_of = "value bytes touched, as Gbit/s (E3)"
    work_basis = "memory"
    description = "E3: read Arrow IPC file data back from memory; Gbps of value bytes per access mode"
    engine = "pyarrow"
    calibrations = ("memcpy",)
    grid: ClassVar[Grid] = Grid((
        Param("type", default=("binary",), choices=TYPES),
        Param("value_size", default=(1024,), type=int, check=positive, help="bytes per binary value"),
        Param("rows", default=(200_000,), type=int, check=positive, help="rows per thread"),
        Param("batch_rows", default=(1_000, 10_000, 100_000), type=int, check=positive),
        threads_param(1, 2),
        Param("source", default=("buffer",), choices=("buffer", "stream"),
              help="buffer: zero-copy reads; stream: every read copies"),
        Param("access", default=ACCESS, choices=ACCESS),
        Param("runtime", default=("python",), choices=("python", "java")),
    ))

    def valid(self, params: Params) -> str | None:
        if str_param(params, "type") != "binary" and str_param(params, "access") == "offsets":
            return "fixed-width columns have no offsets"
        return None

    def unavailable(self, params: Params) -> str | None:
        from colbench.runtimes import get_runtime

        return get_runtime(str_param(params, "runtime")).unavailable()

    def runtime(self, params: Params) -> str:
        return str_param(params, "runtime")

    def engine_for(self, params: Params) -> str:
        return "arrow-java" if str_param(params, "runtime") == "java" else "pyarrow"

    def setup(self, ctx: Context) -> None:
        import pyarrow as pa

        p = IpcCase.of(ctx.params)
        pa.set_cpu_count(ctx.threads)
        buffers = [write_ipc_file(make_column(p.type, p.rows, p.value_size, ctx.seed + t), p.batch_rows)
                   for t in range(ctx.threads)]
        # for the copying stream, the file's bytes as a Python object, made once, untimed
        ctx.state["buffers"] = buffers if p.source == "buffer" else [b.to_pybytes() for b in buffers]
        ctx.units["gbps"] = "Gbit/s"

    def run(self, ctx: Context) -> Any:
        p = IpcCase.of(ctx.params)
        results: list[tuple[int, int] | BaseException] = [(0, 0)] * ctx.threads
        barrier = threading.Barrier(ctx.threads)

        def read(index: int) -> None:
            try:
                barrier.wait()
                reader = open_reader(ctx.state["buffers"][index], p.source)
                results[index] = consume(reader, p.type, p.access)
            except BaseException as exc:  # surfaced below: a thread's failure is the case's failure
                results[index] = exc

        started = time.perf_counter_ns()
        workers = [threading.Thread(target=read, args=(i,)) for i in range(ctx.threads)]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()
        elapsed = (time.perf_counter_ns() - started) / 1e9
        done: list[tuple[int, int]] = []
        for r in results:
            if isinstance(r, BaseException):
                raise r
            done.append(r)
        total = sum(consumed for consumed, _ in done)
        ctx.iteration_metrics["gbps"] = total * 8 / elapsed / 1e9
        return done

    def after_each(self, ctx: Context, output: Any) -> OutputCheck:
        p = IpcCase.of(ctx.params)
        per_thread = p.rows * p.width
        for consumed, _ in output:
            if consumed != per_thread:
                raise CheckFailed(f"counted {consumed} value bytes, expected {per_thread}")
        checksum = 0
        for _, c in output:
            checksum ^= c
        return OutputCheck(rows=p.rows * ctx.threads, columns=1,
                           checksum=None if p.access == "lazy" else f"{checksum:016x}")

    def work(self, ctx: Context) -> Work:
        p = IpcCase.of(ctx.params)
        return Work(bytes=p.rows * p.width * ctx.threads, rows=p.rows * ctx.threads)
