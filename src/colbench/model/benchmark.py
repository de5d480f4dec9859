"""The Benchmark definition: a grid of params plus the per-process life cycle the worker drives.

The orchestrator only calls the declarative side (`grid`, `valid`, `inputs`, `runtime`); the worker process
calls `setup`, `before_each`, `run` (the only timed part), `after_each` and `teardown`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Dict

from colbench.model.params import Grid, Param, ParamError, ParamValue, positive
from colbench.model.worker_records import InputFile

Params = Dict[str, ParamValue]  # typing's: the worker runs on Python 3.8 too

ALLOCATORS = ("default", "jemalloc", "mimalloc", "system")
CACHE_STATES = ("warm", "cold")


class ParamTypeError(ParamError, TypeError):
    """A param's value is not of the type the benchmark reads it as (a suite or case.json gave another): the
    message names the param, the value and the type expected."""

    def __init__(self, name: str, value: ParamValue, expected: str) -> None:
        super().__init__(f"param {name}={value!r} is not {expected}: give it as {expected} in the suite or --param")


def str_param(params: Params, name: str) -> str:
    """A param that the grid declares with text values (an engine, a format …), typed as one."""
    value = params[name]
    if not isinstance(value, str):
        raise ParamTypeError(name, value, "a string")
    return value


def int_param(params: Params, name: str) -> int:
    """A param that the grid declares as an integer (threads, rows …), typed as one."""
    value = params[name]
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise ParamTypeError(name, value, "a number")
    try:
        return int(value)
    except ValueError:  # a string that is no integer
        raise ParamTypeError(name, value, "a number") from None


def float_param(params: Params, name: str) -> float:
    """A param that the grid declares as a number of any kind (a duration …), typed as a float."""
    value = params[name]
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ParamTypeError(name, value, "a number")
    return float(value)


def bool_param(params: Params, name: str) -> bool:
    """A param that the grid declares as a switch (true / false), typed as one."""
    value = params[name]
    if not isinstance(value, bool):
        raise ParamTypeError(name, value, "true or false")
    return value


def default_threads() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def framework_params() -> tuple[Param, ...]:
    """Params every case carries, whether or not the benchmark cares: they change how the worker is started."""
    return (
        Param("threads", default=(default_threads(),), type=int, check=positive,
              help="threads for every engine in the worker; the worker is pinned to this many CPUs"),
        Param("allocator", default=("default",), choices=ALLOCATORS,
              help="Arrow memory pool (ARROW_DEFAULT_MEMORY_POOL); 'default' leaves Arrow's choice"),
        Param("cache", default=("warm",), choices=CACHE_STATES,
              help="page-cache state of input files before each iteration"),
    )


@dataclass(frozen=True)
class DataRequest:
    """A data set in a given format, as a benchmark asks for it; the data cache turns it into a file."""

    dataset: str
    format: str
    codec: str | None = None
    rows: int | None = None
    seed: int = 0
    options: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"dataset": self.dataset, "format": self.format, "codec": self.codec, "rows": self.rows,
                "seed": self.seed, "options": dict(self.options)}

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> DataRequest:
        return cls(doc["dataset"], doc["format"], doc.get("codec"), doc.get("rows"), doc.get("seed", 0),
                   dict(doc.get("options") or {}))


@dataclass
class OutputCheck:
    """What `after_each` saw of the output: its shape, and a checksum where one is cheap."""

    rows: int | None = None
    columns: int | None = None
    checksum: str | None = None


@dataclass
class Work:
    """Units of work one iteration processes, for throughput."""

    bytes: int | None = None
    rows: int | None = None


@dataclass
class Context:
    """Everything a benchmark's life-cycle methods see inside the worker."""

    params: Params
    inputs: dict[str, Path]
    threads: int
    seed: int
    scratch: Path
    state: dict[str, Any] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    output_file_size: int | None = None
    #: what the data cache knows of each input (delimiter, header, size …), by input name
    input_info: dict[str, InputFile] = field(default_factory=dict)
    #: units of the benchmark's own metrics (e.g. gbps → Gbit/s)
    units: dict[str, str] = field(default_factory=dict)
    #: the benchmark's own metrics for the iteration that just ran (e.g. gbps); the worker files them as samples
    iteration_metrics: dict[str, float] = field(default_factory=dict)
    #: "wall", or "instructions" when the worker counts under Valgrind (a benchmark may refuse what it cannot count)
    measure: str = "wall"
    #: calls of the workload one timed iteration makes (an asv benchmark's `number`): the worker divides by it
    calls: int = 1
    #: a time the benchmark measured itself for the iteration that just ran (asv's `timeraw_*`, timed in a child
    #: interpreter): the worker files it as the wall time in place of its own clock's
    timed_s: float | None = None

    # Typed reads of `params`: a value of the wrong type raises ParamTypeError, which names the param.
    def param_str(self, name: str) -> str:
        return str_param(self.params, name)

    def param_int(self, name: str) -> int:
        return int_param(self.params, name)

    def param_float(self, name: str) -> float:
        return float_param(self.params, name)

    def param_bool(self, name: str) -> bool:
        return bool_param(self.params, name)

    def warn(self, message: str) -> None:
        if message not in self.warnings:
            self.warnings.append(message)


class Unsupported(Exception):  # noqa: N818 - a case's state, named as the result shows it
    """The library release this case runs with lacks what the case needs (pyarrow 0.17 cannot read a compressed
    Feather file of the 1.0 format): the result is an invalid case, not an error of the library."""


class CheckFailed(AssertionError):
    """The output of `run` is not what the benchmark expects: the result is an error, not a timing."""


class Benchmark:
    """Subclass and set `name`, `grid`; override the life-cycle methods you need."""

    name: ClassVar[str] = ""
    description: ClassVar[str] = ""
    grid: ClassVar[Grid] = Grid()
    #: what the benchmark measures through; `engine_for` can refine it per case
    engine: ClassVar[str] = "python"
    #: "bytes" or "rows": the unit throughput is reported in
    work_unit: ClassVar[str] = "bytes"
    #: what the report's throughput divides by the median time, in words (reports define it where it appears)
    throughput_of: ClassVar[str] = "the bytes of its input files on disk"
    #: what `work(ctx).bytes` counts, in one word for a table cell: "file" (bytes of files on disk), "memory" (bytes
    #: of data in memory) or "rows" (no bytes: rows). A case whose output is data in memory is shown by the bytes
    #: it decoded instead (the worker's `output.memory_bytes`), whatever this says
    work_basis: ClassVar[str] = "file"
    #: machine figures the run measures once to judge this benchmark's results ("memcpy")
    calibrations: ClassVar[tuple[str, ...]] = ()

    # --- declarative side (orchestrator) ---
    def full_grid(self) -> Grid:
        own = {p.name for p in self.grid.params}
        return Grid(self.grid.params + tuple(p for p in framework_params() if p.name not in own))

    def valid(self, params: Params) -> str | None:
        """Return a reason when this combination makes no sense; None keeps it."""
        return None

    def unavailable(self, params: Params) -> str | None:
        """Why this case cannot run on this machine (a library or runtime not installed); it is skipped with
        that note, never crashed."""
        return None

    def inputs(self, params: Params) -> dict[str, DataRequest]:
        return {}

    def runtime(self, params: Params) -> str:
        """Which worker runs the case: 'python', 'r', 'java' …"""
        return "python"

    def engine_for(self, params: Params) -> str:
        return self.engine

    def source_spec(self) -> dict[str, Any] | None:
        """Where a worker finds this benchmark when it is not in the registry (an asv suite folder, a pytest file):
        handed to it in case.json as `source` (benchmarks/sources.py); None for a registered benchmark."""
        return None

    def estimate_seconds(self, params: Params) -> float | None:
        """A rough time of one iteration, for `--dry-run` when the store has no history of the case."""
        return None

    # --- life cycle (worker) ---
    def setup(self, ctx: Context) -> None:
        """Untimed, once per process."""

    def before_each(self, ctx: Context) -> None:
        """Untimed, before every iteration (warm-ups included)."""

    def sets_up_each_call(self, ctx: Context) -> bool:
        """Whether `before_each` does real work (an asv benchmark's setup re-run between calls): a counting worker then
        runs it with Valgrind's instrumentation off, which costs a new translation of the counted code but spares an
        instrumented setup (20-50x slower) before every counted call."""
        return False

    def run(self, ctx: Context) -> Any:
        """The timed part."""
        raise NotImplementedError

    def after_each(self, ctx: Context, output: Any) -> OutputCheck | None:
        """Untimed: check the output (raise CheckFailed when wrong) and describe it."""
        return None

    def teardown(self, ctx: Context) -> None:
        """Untimed, once per process."""

    def work(self, ctx: Context) -> Work:
        """Units one iteration processes; by default the total size of the input files."""
        size = sum(p.stat().st_size for p in ctx.inputs.values() if p.exists())
        return Work(bytes=size or None)


def __getattr__(name: str) -> Any:
    """`Suite` and `SuiteEntry` moved to `colbench.model.suite` (the worker imports this module and needs neither);
    a plugin that still imports them from here gets them, loaded on first use."""
    if name in ("Suite", "SuiteEntry"):
        from colbench.model import suite

        return getattr(suite, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
