"""The typed records that travel between colbench's layers, each with one JSON form.

- `CaseSpec`: what the orchestrator hands a worker (`case.json`, docs/protocol.md); the R and Java workers read
  the same JSON.
- `WorkerReport`: what a worker writes back (`result.json`), or what the orchestrator writes in its place when the
  worker crashed, hung or ran out of memory (`WorkerReport.failure`).
  These two live in `model/worker_records.py` (the Python worker imports only that module) and are re-exported here.
- `Result`: the stored record, one per (case, environment, worker process); its JSON is checked against
  `result.schema.json` (docs/results.md).
- `Run`: one `colbench run`: its config, machine, environments and status (its parts: model/run_config.py,
  model/run_parts.py).

Stores take and give `Result` and `Run` (store/base.py); only the JSON and SQL edges (stores, the spool, exports,
Conbench documents) turn them into documents and back.
- `Side`: the results on one side of a comparison.

JSON in, JSON out: `from_json` accepts what older colbench versions and the other workers wrote (missing keys
take their defaults); `to_json` writes every key, so a stored record always has the schema's shape.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, ClassVar, TypedDict

from colbench.model.params import ParamValue
from colbench.model.result import SCHEMA_VERSION
from colbench.model.run_config import CommitInfo as CommitInfo
from colbench.model.run_config import EnvChoice, RunConfig
from colbench.model.run_parts import BisectTag, MachineBandwidth, SequentialLooks
from colbench.model.watch import WatchTag
from colbench.model.worker_records import PROTOCOL as PROTOCOL
from colbench.model.worker_records import AllocatorUsed as AllocatorUsed
from colbench.model.worker_records import CacheState as CacheState
from colbench.model.worker_records import CaseSpec as CaseSpec
from colbench.model.worker_records import ErrorDoc as ErrorDoc
from colbench.model.worker_records import ErrorInfo as ErrorInfo
from colbench.model.worker_records import InputFile as InputFile
from colbench.model.worker_records import MeasureInfo as MeasureInfo
from colbench.model.worker_records import MemoryUse as MemoryUse
from colbench.model.worker_records import OutputSeen as OutputSeen
from colbench.model.worker_records import RuntimeInfo as RuntimeInfo
from colbench.model.worker_records import ThreadsUsed as ThreadsUsed
from colbench.model.worker_records import WorkDone as WorkDone
from colbench.model.worker_records import WorkerReport as WorkerReport
from colbench.model.worker_records import known_fields
from colbench.redact import redact_doc

Json = dict[str, Any]


class EnvRef(TypedDict, total=False):
    """The environment a result was measured in: its name, the `--env` spec and the built environment's key."""

    name: str
    spec: str | None
    key: str | None


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


class MemoryWatched(TypedDict):
    """How the orchestrator watched a worker's memory against `--memory-limit` (runner/worker_wait.py)."""

    mechanism: str
    limit_bytes: int
    peak_tree_rss_bytes: int
    looks: int
    max_interval_s: float


class ExecutorInfo(TypedDict, total=False):
    """Which executor ran a process when it was not the local runner (`run --cluster`): the Dask worker, its host,
    and the environment it ran in there, built from the client's lock (runner/cluster_env.py)."""

    kind: str
    worker: str
    address: str
    host: str
    #: the environment's key on that worker, the client's key of it, and the SHA-256 of the lock both resolved
    env_key: str | None
    client_env_key: str | None
    lock_sha256: str | None
    #: whether that worker built the environment for this task (False: found in its cache, or built for an earlier
    #: task), and how long that took
    env_built: bool
    env_seconds: float
    #: executions measured one after another in this one task on this worker (every block of a wall-time case)
    group: int
    #: the worker's CPU kind (model, architecture, flags; or its `COLBENCH_WORKER_CPU_KIND`): counts compare within one
    cpu_kind: str
    #: set on an error result of an execution that never ran (no worker was left that may run it), with the cause:
    #: the run loop shows it and does not store it, so `run --resume` runs it
    not_run: str


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
    #: other work's share of the CPUs the worker was pinned to, over the moments before it started, and whether
    #: that was quiet (machine/cpu_busy.py); absent when the CPUs were fixed (isolated, every CPU, not pinned)
    cpu_busy: float
    quiet_cpu: bool
    steal_s: float | None
    exit_wait: str
    memory_limit: MemoryWatched | None
    stopped: int
    #: absent on the local runner
    executor: ExecutorInfo


#: a metric's summary over one process's timed iterations: n, min, median, mean, stdev, iqr, cv (docs/results.md)
Stats = dict[str, float | int | None]


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
        known = known_fields(cls, doc)
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
    """One `colbench run`, as stored: what was asked, where it ran, and how it ended. Its parts are typed records
    (model/run_config.py, model/run_parts.py); `to_json` / `from_json` are the only places it is JSON."""

    run_id: str
    started_at: str
    machine_id: str
    machine: MachineInfo
    config: RunConfig
    name: str | None = None
    finished_at: str | None = None
    status: str = "running"
    argv: list[str] = field(default_factory=list)
    colbench_version: str | None = None
    checks: list[EnvironmentCheck] = field(default_factory=list)
    commit: CommitInfo | None = None
    envs: list[EnvChoice] = field(default_factory=list)
    cases: int = 0
    #: the machine's memory bandwidths, measured at the start of a run with an E3 case (None: none measured)
    calibration: MachineBandwidth | None = None
    #: where a run that could not go on stopped: {"after": executions stored, "of": planned, "error": why}
    stopped: StopInfo | None = None
    #: every `run --resume` of this run: when, the status it had, and where it had stopped
    resumes: list[ResumeInfo] = field(default_factory=list)
    #: the process that runs (or last ran) it: {"host", "pid", "started"}, so a run marked running whose process
    #: is gone (killed with -9) is told from one going on (store/run_owner.py)
    process: RunProcess | None = None
    #: the looks of `run --until-decided` (runner/session.py), which compare and the report replay
    sequential: SequentialLooks | None = None
    #: a run measured by `colbench bisect`: its search, fingerprint, step and points (app/bisect_measure.py)
    bisect: BisectTag | None = None
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
    #: the typed parts, written by their own `to_json`
    _TYPED: ClassVar[tuple[str, ...]] = ("config", "envs", "calibration", "sequential", "bisect")

    def to_json(self) -> Json:
        values = {k: v for k, v in asdict(self).items() if k not in self._TYPED}
        values["config"] = self.config.to_json()
        values["envs"] = [env.to_json() for env in self.envs]
        values["calibration"] = self.calibration.to_json() if self.calibration else None
        values["sequential"] = self.sequential.to_json() if self.sequential else None
        values["bisect"] = self.bisect.to_json() if self.bisect else None
        return {k: values[k] for k in self._ORDER if not (k in self._OPTIONAL and not values[k])}

    @classmethod
    def from_json(cls, doc: Json) -> Run:
        """A stored run record of any colbench version (its typed parts read by their own `from_json`)."""
        known = known_fields(cls, doc)
        for name in ("argv", "checks", "envs", "resumes"):
            if known.get(name, ...) is None:
                del known[name]
        known.setdefault("cases", 0)
        known["cases"] = known["cases"] or 0
        known["config"] = RunConfig.from_json(doc.get("config"), run_name=doc.get("name"), commit=doc.get("commit"))
        known["envs"] = [EnvChoice.from_json(env) for env in known.get("envs") or []]
        known["calibration"] = MachineBandwidth.from_json(doc.get("calibration")) or None
        known["sequential"] = SequentialLooks.from_json(doc["sequential"]) if doc.get("sequential") else None
        known["bisect"] = BisectTag.from_json(doc["bisect"]) if doc.get("bisect") else None
        return cls(**known)

    @property
    def env_names(self) -> list[str]:
        """The environments the run measured (`default` when it names none)."""
        return [env.name for env in self.envs] or ["default"]

    @property
    def targets(self) -> list[str]:
        return list(self.config.targets)

    @property
    def commit_sha(self) -> str | None:
        return (self.commit or {}).get("sha")

    def redacted(self) -> Run:
        """A copy with every secret masked (records stored before redaction existed may hold one)."""
        copy: Run = redact_doc(self)
        return copy


@dataclass(frozen=True)
class RunEnv:
    """One environment of one run, named exactly: a side a use case already knows (a watch's explain names the two
    environments of the release's run), passed as it is rather than spelled `RUN:ENV` and parsed again."""

    run_id: str
    env_name: str

    def __str__(self) -> str:
        return f"{self.run_id}:{self.env_name}"


#: a side as a command names it (`RUN`, a prefix, a name, `latest`, `ENV`, `RUN:ENV`: store/selection.py), or exactly
SideRef = str | RunEnv


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
