"""What a run was asked to measure and where: its configuration (`RunConfig`) and its environments (`EnvChoice`).

Both are carried by the run record (`Run.config`, `Run.envs`) as these types; they become JSON only at the store's
edge (`to_json` / `from_json`, called by `Run.to_json` / `Run.from_json`). `from_json` reads what earlier colbench
versions stored: a config without `seed`, `scale`, `measure`, `profile` or `memory_limit_bytes`, an environment
without `runtime`, `interpreter` or `broken` takes the defaults those versions ran with.
"""

from __future__ import annotations

import sys
from dataclasses import asdict, dataclass, field, fields
from typing import Any, Protocol, TypedDict

from colbench.model.metrics import Measure, measure_from_json
from colbench.model.suite import Suite
from colbench.model.worker_records import known_fields

Json = dict[str, Any]


class CommitInfo(TypedDict, total=False):
    """The commit of the project under test (`run --commit` / `--repo`)."""

    sha: str
    repository: str | None
    dirty: bool | None
    timestamp: str | None


class _Planned(Protocol):
    """What a plan says of its counts (runner/plan.py `Plan`)."""

    @property
    def suite(self) -> Suite | None: ...


class _PlannedCase(Protocol):
    """What a planned case says of its processes (runner/plan.py `PlannedCase`)."""

    @property
    def processes(self) -> int | None: ...


@dataclass
class RunConfig:
    """What a run measures and how: its targets and parameter overrides, the counts of iterations, warm-ups and
    processes (None: the suite's, then colbench's defaults), limits, seed, scale, metrics and profiling.

    In a stored run the counts are resolved (`runner.execute.start_run`) and `suite` names the suite they came from;
    `run_name` and `commit` are the run's own (`Run.name`, `Run.commit`) and `machine_name` became `Run.machine`,
    so none of the three is written into the stored config."""

    targets: list[str]
    overrides: dict[str, list[str]] = field(default_factory=dict)
    iterations: int | None = None
    warmup: int | None = None
    processes: int | None = None
    timeout_s: float = 600.0
    memory_limit_bytes: int | None = None
    run_name: str | None = None
    seed: int = 42
    scale: float = 1.0
    commit: CommitInfo | None = None
    machine_name: str | None = None
    #: what to record: ("wall",), ("instructions",) or both (model/metrics.py `parse_measure`)
    measure: Measure = ("wall",)
    #: keep a callgrind profile of each case and environment next to its results (`run --profile`)
    profile: bool = False
    #: keep a memory profile (heaptrack) of each case and environment (`run --profile-memory`)
    profile_memory: bool = False
    #: count instructions in processes forked from counting servers, one set-up process under Valgrind per side,
    #: case and server (runner/count_server.py; `run --counting-server`), rather than in fresh processes
    #: (`--fresh-counts`); None: where servers cost less (runner/count_server.py `servers_pay`)
    counting_server: bool | None = None
    #: what a counting server holds, decided per run from its plan (runner/count_server.py `server_scope`, not
    #: stored): "case" (one set-up case per side and server) or "suite" (the suite imported once per side and
    #: server, one fresh case a forked process: runner/suite_server.py); None: "case"
    counting_scope: str | None = field(default=None, compare=False)
    #: counting processes run at once on this machine (`run --jobs`; runner/local_jobs.py), stored when more than
    #: one (the counts of multi-threaded cases shift beside another counting process: runs counted with different
    #: jobs are not comparable); None: one at a time
    jobs: int | None = field(default=None, compare=False)
    #: the suite a stored run's counts came from (None: a run of benchmarks, or a config not yet started)
    suite: str | None = None
    #: read from a stored config: the keys it had, and what it held beyond this type's fields, so a record an
    #: earlier (or later) colbench wrote is written back as it was (None: a config made here, every key written)
    stored_keys: tuple[str, ...] | None = field(default=None, compare=False, repr=False)
    stored_extra: Json = field(default_factory=dict, compare=False, repr=False)

    def resolved(self, plan: _Planned) -> tuple[int, int, int]:
        """(iterations, warm-ups, processes): the config's, else the plan's suite's, else 5, 1 and 3."""
        suite = plan.suite

        def pick(mine: int | None, suites: int | None, default: int) -> int:
            return mine if mine is not None else (suites if suites is not None else default)

        return (pick(self.iterations, suite.iterations if suite else None, 5),
                pick(self.warmup, suite.warmup if suite else None, 1),
                pick(self.processes, suite.processes if suite else None, 3))

    def processes_of(self, case: _PlannedCase, default: int) -> int:
        """A case's processes: --processes wins, then its suite entry's, then the run's default."""
        return self.processes if self.processes is not None else (case.processes or default)

    def to_json(self) -> Json:
        """The stored config (the keys and their order as `runner.execute.start_run` always wrote them; of a config
        read from a store, the keys it had)."""
        doc = {"targets": list(self.targets), "overrides": dict(self.overrides),
               "iterations": self.iterations, "warmup": self.warmup, "processes": self.processes,
               "timeout_s": self.timeout_s, "memory_limit_bytes": self.memory_limit_bytes, "seed": self.seed,
               "scale": self.scale, "suite": self.suite, "measure": list(self.measure), "profile": self.profile,
               "profile_memory": self.profile_memory}
        if self.counting_server is not None:  # written when set: the configs of runs before it had no such key
            doc["counting_server"] = self.counting_server
        if self.jobs is not None and self.jobs > 1:
            doc["jobs"] = self.jobs
        if self.stored_keys is None:
            return doc
        return {key: doc[key] if key in doc else self.stored_extra[key] for key in self.stored_keys}

    @classmethod
    def from_json(cls, doc: Json | None, *, run_name: str | None = None,
                  commit: CommitInfo | None = None) -> RunConfig:
        """A stored config (any version's); `run_name` and `commit` are the run record's own."""
        saved = doc or {}
        known = {f.name for f in fields(cls)} - {"run_name", "commit", "machine_name", "stored_keys", "stored_extra"}
        return cls(stored_keys=tuple(saved), stored_extra={k: v for k, v in saved.items() if k not in known},
                   targets=list(saved.get("targets") or []), overrides=dict(saved.get("overrides") or {}),
                   iterations=saved.get("iterations"), warmup=saved.get("warmup"), processes=saved.get("processes"),
                   timeout_s=saved.get("timeout_s", 600.0), memory_limit_bytes=saved.get("memory_limit_bytes"),
                   run_name=run_name, seed=saved.get("seed", 42), scale=saved.get("scale", 1.0), commit=commit,
                   measure=measure_from_json(saved.get("measure")), profile=bool(saved.get("profile")),
                   profile_memory=bool(saved.get("profile_memory")), suite=saved.get("suite"),
                   counting_server=saved.get("counting_server"), jobs=saved.get("jobs"))


@dataclass
class EnvChoice:
    """Where a worker runs: the default interpreter, or a uv environment (see runtimes/python.py)."""

    name: str = "default"
    python: str = sys.executable
    spec: str | None = None
    key: str | None = None
    resolved: dict[str, str] = field(default_factory=dict)
    #: extra environment variables for this side's workers (an A/B of a setting rather than a version)
    variables: dict[str, str] = field(default_factory=dict)
    #: "python" (uv environments), or "java" / "r" for the other workers' version matrices (runtimes/runtime_envs.py)
    runtime: str = "python"
    #: the Python version its workers run on (MAJOR.MINOR.PATCH), "" for the interpreter running colbench
    interpreter: str = ""
    #: why it could not be built ("" when it was): a release a sweep measures whose environment does not install or
    #: import; each of its executions is an error result with this cause, and the run goes on
    broken: str = ""

    def to_json(self) -> Json:
        return asdict(self)

    @classmethod
    def from_json(cls, doc: Json) -> EnvChoice:
        return cls(**known_fields(cls, doc))
