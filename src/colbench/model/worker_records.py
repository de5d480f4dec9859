"""The records a worker reads and writes: `CaseSpec` (`case.json`) and `WorkerReport` (`result.json`), with the parts
they hold (docs/protocol.md; the JSON Schema is `protocol.schema.json` beside this file).

A module of their own because the Python worker imports them in every process it starts, where each millisecond is
part of every execution's overhead: the stored records (`Result`, `Run`) and what they need stay in
`colbench.model.records`, which re-exports these. Only the standard library is imported, and only syntax Python 3.8
can read at run time (`from __future__ import annotations` keeps the annotations unevaluated).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import TYPE_CHECKING, Any, TypedDict

#: the version of the worker protocol (docs/protocol.md) that case.json and result.json follow; their JSON Schema
#: is `protocol.schema.json` beside this file (model/protocol.py checks a worker's report against it)
PROTOCOL = 1

if TYPE_CHECKING:  # an alias for annotations only: `dict[str, Any]` evaluated at run time needs Python 3.9
    Json = dict[str, Any]


def known_fields(cls: type, doc: Json) -> Json:
    """The entries of `doc` that are fields of the dataclass `cls` (what a newer writer added is left out)."""
    names = {f.name for f in fields(cls)}
    return {k: v for k, v in doc.items() if k in names}


@dataclass
class CaseSpec:
    """One execution's instructions for a worker (`case.json`)."""

    benchmark: str
    case_id: str
    params: dict[str, Any]
    iterations: int
    warmup: int
    threads: int
    inputs: dict[str, InputFile] = field(default_factory=dict)
    allocator: str = "default"
    cache: str = "warm"
    seed: int = 0
    scratch_dir: str | None = None
    #: "wall", or "instructions" for a worker started under Valgrind to count them (docs/metrics.md)
    measure: str = "wall"
    #: counting: stop timing once two timed values in a row agree within this relative difference (the metric's
    #: known spread, model/metrics.py); `iterations` is then the most. None: every iteration is timed
    repeat_within: float | None = None
    #: where the worker finds a benchmark that is not in its registry (`Benchmark.source_spec`: an asv suite, a
    #: pytest file); None for a registered one
    source: dict[str, Any] | None = None
    protocol: int = PROTOCOL

    def to_json(self) -> Json:
        doc = asdict(self)
        for optional in ("scratch_dir", "repeat_within", "source"):
            if doc[optional] is None:
                del doc[optional]
        if doc["measure"] == "wall":  # the default: case.json stays as every worker has always read it
            del doc["measure"]
        return doc

    @classmethod
    def from_json(cls, doc: Json) -> CaseSpec:
        """Raises KeyError or ValueError for a spec that lacks what a worker needs."""
        spec = cls(**known_fields(cls, doc))
        spec.iterations, spec.warmup, spec.threads = int(spec.iterations), int(spec.warmup), int(spec.threads)
        spec.seed = int(spec.seed)
        if spec.repeat_within is not None:
            spec.repeat_within = float(spec.repeat_within)
        return spec


class ErrorDoc(TypedDict, total=False):
    """An error's JSON form (ErrorInfo.to_json), as result.json and the stored record hold it."""

    kind: str
    message: str
    traceback: str | None
    signal: str | None
    exit_code: int | None
    stderr_tail: str | None


@dataclass
class ErrorInfo:
    """Why an execution produced no valid sample: its kind (ERROR_KINDS), a message and what was seen."""

    kind: str
    message: str
    traceback: str | None = None
    signal: str | None = None
    exit_code: int | None = None
    stderr_tail: str | None = None

    def to_json(self) -> ErrorDoc:
        doc = ErrorDoc(kind=self.kind, message=self.message)
        for name in ("traceback", "signal", "exit_code", "stderr_tail"):
            if getattr(self, name) is not None:
                doc[name] = getattr(self, name)
        return doc

    @classmethod
    def from_json(cls, doc: ErrorDoc | Json | None) -> ErrorInfo | None:
        if doc is None:
            return None
        return cls(**known_fields(cls, {"message": "", **doc}))


class OutputSeen(TypedDict, total=False):
    """What the output check saw after the last iteration (result.json `output`)."""

    rows: int | None
    columns: int | None
    checksum: str | None
    file_size_bytes: int | None
    #: the bytes the output of the timed call held in memory, decoded (Python worker; absent for writers)
    memory_bytes: int | None


class WorkDone(TypedDict):
    """Units one iteration processes, for throughput (result.json `work`)."""

    bytes: int | None
    rows: int | None


class MemoryUse(TypedDict, total=False):
    """The worker process's memory and scheduling figures (result.json `memory`)."""

    peak_rss_bytes: int | None
    engine_peak_bytes: int | None
    engine_memory: str | None
    page_faults_minor: int
    page_faults_major: int
    ctx_switches_voluntary: int
    ctx_switches_involuntary: int


class ThreadsUsed(TypedDict, total=False):
    """The thread count asked for, and what each engine applied (engine → its setting)."""

    requested: int | None
    applied: dict[str, object]


class AllocatorUsed(TypedDict, total=False):
    requested: str | None
    actual: str | None
    #: a memory profile only, where heaptrack cannot see the `actual` pool: the pool the traced call used instead
    traced: str | None


class CacheState(TypedDict, total=False):
    requested: str | None
    achieved: str | None


class RuntimeInfo(TypedDict, total=False):
    name: str
    version: str
    executable: str


class MeasureInfo(TypedDict, total=False):
    """Which metrics a record holds, and for instructions how they were counted (runner/instructions.py)."""

    metrics: list[str]
    instructions: dict[str, object]


class InputFile(TypedDict, total=False):
    """One input of a case as case.json hands it to a worker and the result keeps it: the materialised file
    (data/cache.py `CachedFile`) and the request it answers."""

    path: str
    size_bytes: int
    rows: int
    columns: int
    dataset: str
    format: str
    codec: str | None
    sha256: str
    delimiter: str | None
    header: bool | None
    line_terminator: str | None
    blank_line_after_header: bool | None
    column_names: list[str] | None
    synthetic: bool
    seed: int | None
    options: dict[str, object]
    lineage: dict[str, object] | None
    request: dict[str, object]


@dataclass
class WorkerReport:
    """What one worker process measured (`result.json`)."""

    status: str = "ok"
    samples: dict[str, list[float | None]] = field(default_factory=dict)
    warmup_samples: dict[str, list[float | None]] = field(default_factory=dict)
    first_iteration: dict[str, float] | None = None
    output: OutputSeen | None = None
    work: WorkDone | None = None
    memory: MemoryUse = field(default_factory=lambda: MemoryUse())
    threads: ThreadsUsed = field(default_factory=lambda: ThreadsUsed())
    allocator: AllocatorUsed = field(default_factory=lambda: AllocatorUsed())
    cache: CacheState = field(default_factory=lambda: CacheState())
    versions: dict[str, str] = field(default_factory=dict)
    runtime: RuntimeInfo = field(default_factory=lambda: RuntimeInfo())
    units: dict[str, str] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    error: ErrorInfo | None = None
    #: set by the orchestrator (runner/instructions.py): which metrics this report holds and how they were taken
    measure: MeasureInfo | None = None
    #: a counting worker's CPU seconds per phase (start, setup, warm-up, counting): where Valgrind's time goes
    phases: dict[str, float] | None = None
    protocol: int = PROTOCOL

    @classmethod
    def failure(cls, kind: str, message: str, **seen: Any) -> WorkerReport:
        """The report of an execution that produced none of its own (crash, timeout, OOM, unreadable file)."""
        return cls(status="error", error=ErrorInfo(kind, message, **seen))

    def fail(self, kind: str, message: str, traceback: str | None = None) -> None:
        self.status = "error"
        self.error = ErrorInfo(kind, message, traceback=traceback)

    def warn(self, message: str) -> None:
        if message not in self.warnings:
            self.warnings.append(message)

    def to_json(self) -> Json:
        doc = asdict(self)
        doc["error"] = self.error.to_json() if self.error else None
        for optional in ("measure", "phases"):  # the orchestrator's, and a counting worker's only
            if doc[optional] is None:
                del doc[optional]
        return doc

    @classmethod
    def from_json(cls, doc: Json) -> WorkerReport:
        report = cls(**{**known_fields(cls, doc), "error": None})
        report.error = ErrorInfo.from_json(doc.get("error"))
        for name in ("samples", "warmup_samples", "memory", "threads", "allocator", "cache", "versions",
                     "runtime", "units"):
            if getattr(report, name) is None:
                setattr(report, name, {})
        report.warnings = list(report.warnings or [])
        return report
