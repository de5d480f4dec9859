"""The typed records that travel between colbench's layers, each with one JSON form.

- `CaseSpec`: what the orchestrator hands a worker (`case.json`, docs/protocol.md); the R and Java workers read
  the same JSON.
- `WorkerReport`: what a worker writes back (`result.json`), or what the orchestrator writes in its place when the
  worker crashed, hung or ran out of memory (`WorkerReport.failure`).
- `Result`: the stored record, one per (case, environment, worker process); its JSON is checked against
  `result.schema.json` (docs/results.md).
- `Run`: one `colbench run`: its config, machine, environments and status.

Stores take and give `Result` and `Run` (store/base.py); only the JSON and SQL edges (stores, the spool, exports,
Conbench documents) turn them into documents and back.
- `Side`: the results on one side of a comparison.

JSON in, JSON out: `from_json` accepts what older colbench versions and the other workers wrote (missing keys
take their defaults); `to_json` writes every key, so a stored record always has the schema's shape.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import TYPE_CHECKING, Any, ClassVar, Dict, TypedDict, Union

from colbench.model.params import ParamValue
from colbench.model.result import SCHEMA_VERSION
from colbench.redact import redact_doc

if TYPE_CHECKING:  # a run's annotation only: the worker, which loads this module on Python 3.8 too, needs none of it
    from colbench.model.watch import WatchTag

#: the version of the worker protocol (docs/protocol.md) that case.json and result.json follow; their JSON Schema
#: is `protocol.schema.json` beside this file (model/protocol.py checks a worker's report against it)
PROTOCOL = 1

Json = Dict[str, Any]  # typing's aliases here: the worker loads this module on Python 3.8 too


def _known(cls: type, doc: Json) -> Json:
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
    protocol: int = PROTOCOL

    def to_json(self) -> Json:
        doc = asdict(self)
        if doc["scratch_dir"] is None:
            del doc["scratch_dir"]
        if doc["measure"] == "wall":  # the default: case.json stays as every worker has always read it
            del doc["measure"]
        return doc

    @classmethod
    def from_json(cls, doc: Json) -> CaseSpec:
        """Raises KeyError or ValueError for a spec that lacks what a worker needs."""
        spec = cls(**_known(cls, doc))
        spec.iterations, spec.warmup, spec.threads = int(spec.iterations), int(spec.warmup), int(spec.threads)
        spec.seed = int(spec.seed)
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
        return cls(**_known(cls, {"message": "", **doc}))


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


class CacheState(TypedDict, total=False):
    requested: str | None
    achieved: str | None


class RuntimeInfo(TypedDict, total=False):
    name: str
    version: str
    executable: str


class EnvRef(TypedDict, total=False):
    """The environment a result was measured in: its name, the `--env` spec and the built environment's key."""

    name: str
    spec: str | None
    key: str | None


class MeasureInfo(TypedDict, total=False):
    """Which metrics a record holds, and for instructions how they were counted (runner/instructions.py)."""

    metrics: list[str]
    instructions: dict[str, object]


class StopInfo(TypedDict):
    """Where a run that could not go on stopped: executions stored, of how many, and why."""

    after: int
    of: int
    error: str


class ResumeInfo(TypedDict, total=False):
    """One `run --resume`: when, the status the run had, and where it had stopped."""

    at: str
    status: str
    stopped: StopInfo


class RunProcess(TypedDict):
    """The process that runs (or last ran) a run: host, pid and the pid's start time (store/run_owner.py)."""

    host: str
    pid: int
    started: float


class MachineInfo(TypedDict, total=False):
    """The machine a run happened on (machine/facts.py `machine_info`): its identity and what makes it noisy."""

    machine_id: str
    name: str
    hostname: str
    cpu_model: str
    architecture: str
    cpu_cores: int | None
    cpu_threads: int | None
    cpus_allowed: list[int]
    cpus_isolated: list[int]
    cpu_caches: dict[str, str]
    cpu_governors: list[str]
    cpu_turbo: bool | None
    cpu_smt: bool | None
    memory_bytes: int
    swap_bytes: int
    os: str
    os_release: str | None
    kernel: str
    python: str
    aslr: str | None
    load_average: list[float]


class EnvironmentCheck(TypedDict):
    """One thing that makes timings noisy on the machine, and whether it is fine (machine/facts.py)."""

    name: str
    ok: bool
    message: str


class CommitInfo(TypedDict, total=False):
    """The commit of the project under test (`run --commit` / `--repo`)."""

    sha: str
    repository: str | None
    dirty: bool | None
    timestamp: str | None


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


class MemoryWatched(TypedDict):
    """How the orchestrator watched a worker's memory against `--memory-limit` (runner/watch.py)."""

    mechanism: str
    limit_bytes: int
    peak_tree_rss_bytes: int
    looks: int
    max_interval_s: float


class WorkerProcess(TypedDict, total=False):
    """What the orchestrator saw of a worker process from outside (runner/isolate.py)."""

    spawn_to_result_s: float
    started_at: float
    exit_code: int
    child_user_s: float
    child_sys_s: float
    child_maxrss_bytes: int
    env_offset_bytes: int
    cpus: list[int] | None
    steal_s: float | None
    exit_wait: str
    memory_limit: MemoryWatched | None
    stopped: int


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
        if doc["measure"] is None:
            del doc["measure"]  # the orchestrator's, never a worker's
        return doc

    @classmethod
    def from_json(cls, doc: Json) -> WorkerReport:
        report = cls(**{**_known(cls, doc), "error": None})
        report.error = ErrorInfo.from_json(doc.get("error"))
        for name in ("samples", "warmup_samples", "memory", "threads", "allocator", "cache", "versions",
                     "runtime", "units"):
            if getattr(report, name) is None:
                setattr(report, name, {})
        report.warnings = list(report.warnings or [])
        return report


#: a metric's summary over one process's timed iterations: n, min, median, mean, stdev, iqr, cv (docs/results.md)
Stats = Dict[str, Union[float, int, None]]


@dataclass
class Result:
    """The stored record of one execution (case, environment, worker process): raw samples, their summary, and
    the context they were taken in. Stores, exports and reports take and give this record; its JSON (`to_json`) is
    what they write, `from_json` reads it back (also records older colbench versions wrote)."""

    result_id: str
    run_id: str
    timestamp: str
    benchmark: str
    case_id: str
    params: dict[str, ParamValue]
    engine: str
    runtime: RuntimeInfo
    env_name: str
    process_index: int
    status: str
    iterations: int
    warmup: int
    machine_id: str
    machine: MachineInfo
    run_name: str | None = None
    tags: dict[str, ParamValue] = field(default_factory=dict)
    env: EnvRef = field(default_factory=lambda: EnvRef())
    block: int | None = None
    samples: dict[str, list[float | None]] = field(default_factory=dict)
    warmup_samples: dict[str, list[float | None]] = field(default_factory=dict)
    first_iteration: dict[str, float] | None = None
    units: dict[str, str] = field(default_factory=dict)
    summary: dict[str, Stats] = field(default_factory=dict)
    work: WorkDone | None = None
    throughput: dict[str, float | None] = field(default_factory=dict)
    output: OutputSeen | None = None
    memory: MemoryUse = field(default_factory=lambda: MemoryUse())
    process: WorkerProcess = field(default_factory=lambda: WorkerProcess())
    threads: ThreadsUsed = field(default_factory=lambda: ThreadsUsed())
    allocator: AllocatorUsed = field(default_factory=lambda: AllocatorUsed())
    cache: CacheState = field(default_factory=lambda: CacheState())
    inputs: dict[str, InputFile] = field(default_factory=dict)
    versions: dict[str, str] = field(default_factory=dict)
    environment_checks: list[EnvironmentCheck] = field(default_factory=list)
    commit: CommitInfo | None = None
    warnings: list[str] = field(default_factory=list)
    error: ErrorDoc | None = None
    #: which metrics the record holds (`wall`, `instructions`) and how instructions were counted
    measure: MeasureInfo = field(default_factory=lambda: MeasureInfo(metrics=["wall"]))
    schema_version: int = SCHEMA_VERSION

    def to_json(self) -> Json:
        return asdict(self)

    @classmethod
    def from_json(cls, doc: Json) -> Result:
        """The record of a stored document; keys a record does not know are left out, and optional parts an older
        record lacks (or holds as null) take their defaults."""
        known = _known(cls, doc)
        for name in ("samples", "warmup_samples", "units", "summary", "throughput", "memory", "process", "threads",
                     "allocator", "cache", "inputs", "versions", "environment_checks", "warnings", "tags", "env"):
            if known.get(name, ...) is None:
                del known[name]
        known.setdefault("env_name", "")
        return cls(**known)

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    def median(self, metric: str = "wall_s") -> float | None:
        """The stored median of a metric's samples (None when absent or not measured)."""
        return (self.summary.get(metric) or {}).get("median")

    def stat(self, metric: str, name: str) -> float | None:
        """One summary statistic of a metric (`cv`, `n` …), None when absent."""
        return (self.summary.get(metric) or {}).get(name)

    @property
    def commit_sha(self) -> str | None:
        return (self.commit or {}).get("sha")

    @property
    def machine_name(self) -> str | None:
        return self.machine.get("name") if self.machine else None

    @property
    def error_kind(self) -> str | None:
        return (self.error or {}).get("kind")

    def redacted(self) -> Result:
        """A copy with every secret masked (records stored before redaction existed may hold one)."""
        copy: Result = redact_doc(self)
        return copy


@dataclass
class Run:
    """One `colbench run`, as stored: what was asked, where it ran, and how it ended."""

    run_id: str
    started_at: str
    machine_id: str
    machine: MachineInfo
    config: Json
    name: str | None = None
    finished_at: str | None = None
    status: str = "running"
    argv: list[str] = field(default_factory=list)
    colbench_version: str | None = None
    checks: list[EnvironmentCheck] = field(default_factory=list)
    commit: CommitInfo | None = None
    envs: list[Json] = field(default_factory=list)
    cases: int = 0
    calibration: Json | None = None
    #: where a run that could not go on stopped: {"after": executions stored, "of": planned, "error": why}
    stopped: StopInfo | None = None
    #: every `run --resume` of this run: when, the status it had, and where it had stopped
    resumes: list[ResumeInfo] = field(default_factory=list)
    #: the process that runs (or last ran) it: {"host", "pid", "started"}, so a run marked running whose process
    #: is gone (killed with -9) is told from one going on (store/run_owner.py)
    process: RunProcess | None = None
    #: the looks of `run --until-decided` (runner/session.py), which compare and the report replay
    sequential: Json | None = None
    #: a run measured by `colbench bisect`: its search, fingerprint, step and points (app/bisect_measure.py)
    bisect: Json | None = None
    #: a run measured by `colbench watch`: the watch, its package, and the two releases compared (app/watch.py)
    watch: WatchTag | None = None
    schema_version: int = SCHEMA_VERSION

    #: the order of the keys in a stored run record (as `runner.execute.start_run` always wrote them)
    _ORDER: ClassVar[tuple[str, ...]] = (
        "schema_version", "run_id", "name", "started_at", "finished_at", "status", "process", "argv",
        "colbench_version", "machine_id", "machine", "checks", "commit", "config", "envs", "cases", "calibration",
        "resumes", "stopped", "sequential", "bisect", "watch")
    #: left out of the record while they hold nothing, so a run's JSON says only what happened to it
    _OPTIONAL: ClassVar[tuple[str, ...]] = ("process", "calibration", "resumes", "stopped", "sequential", "bisect",
                                             "watch")

    def to_json(self) -> Json:
        values = asdict(self)
        return {k: values[k] for k in self._ORDER if not (k in self._OPTIONAL and not values[k])}

    @classmethod
    def from_json(cls, doc: Json) -> Run:
        known = _known(cls, doc)
        for name in ("argv", "checks", "envs", "resumes"):
            if known.get(name, ...) is None:
                del known[name]
        known.setdefault("cases", 0)
        known["cases"] = known["cases"] or 0
        return cls(**known)

    @property
    def env_names(self) -> list[str]:
        """The environments the run measured (`default` when it names none)."""
        return [str(e.get("name", "default")) for e in self.envs] or ["default"]

    @property
    def targets(self) -> list[str]:
        return list((self.config or {}).get("targets") or [])

    @property
    def commit_sha(self) -> str | None:
        return (self.commit or {}).get("sha")

    def redacted(self) -> Run:
        """A copy with every secret masked (records stored before redaction existed may hold one)."""
        copy: Run = redact_doc(self)
        return copy


@dataclass
class Side:
    """The results on one side of a comparison: a run, or one environment of it."""

    label: str
    run_id: str
    env_name: str
    results: list[Result]

    @property
    def machine_ids(self) -> set[str | None]:
        return {r.machine_id for r in self.results}
