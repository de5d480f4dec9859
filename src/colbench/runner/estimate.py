"""How long a plan will take (`run --dry-run`), from measured costs, never from nothing.

A worker process costs its start (interpreter, imports, the benchmark's setup: reading the input into memory) plus
its iterations (warm-ups and timed). Both come, in this order, from:

1. **this case's history** on this machine (the store's results of the same case id);
2. **a model of this machine's other cases**: per row of data, the iteration time and the setup time of results of
   the same benchmark and parameters but another `rows` (then of the same benchmark and engine or format, then of
   the benchmark), scaled to this case's rows; the start of a bare process per runtime apart;
3. **the reference model** shipped with colbench (`reference_costs.json`), made by the same code from runs of the
   reference suites on the reference VM (2 cores; `scripts/reference_costs.py`), so a fresh machine has estimates.

A counting process (`--measure instructions`, the worker under Valgrind) costs what this case's counting processes
took here, else its plain process times this machine's Valgrind factor (counting / plain, over the cases measured
both ways), else the reference factor.

Besides processes, a command pays for what it makes first, each at its cost on this machine where one was measured:
data the cache does not hold yet (its bytes at the build rate of its format, from the data manifests: every built
file records its build time), uv environments (a fresh one at the build time its marker records; a cached one still
resolves again), and the Java worker's Maven build (its marker records it too). What the estimate is built from is
reported with it, and `scripts/estimate_check.py` compares estimates with real commands (docs: README, "How long
a suite takes").
"""

from __future__ import annotations

import dataclasses
import functools
import json
import os
import statistics
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, ClassVar

from colbench.model.records import Result
from colbench.runner.plan import Plan, PlannedCase
from colbench.runtimes import RUNTIMES
from colbench.store.base import ResultQuery, Store

#: params that scale a case's size (rows) or are the harness's own, left out of a model's key
_SCALE_PARAMS = frozenset({"rows", "threads", "seed", "allocator", "cache"})
#: the params that say which engine or format does the work: the second level of the model
_ENGINE_PARAMS = ("runtime", "reader", "engine", "format", "codec", "output", "direction", "operation", "access",
                  "variant", "input")
REFERENCE_FILE = "reference_costs.json"


@dataclass
class Costs:
    """Per-row costs at three levels of likeness, bare-process start per runtime, and data build rates."""

    exact: dict[str, tuple[float, float]] = field(default_factory=dict)  # case_id -> (iteration s, process start s)
    per_row: dict[str, tuple[float, float]] = field(default_factory=dict)  # model key -> (s per row, setup s per row)
    startup_s: dict[str, float] = field(default_factory=dict)  # runtime -> bare process start
    build_s_per_byte: dict[str, float] = field(default_factory=dict)  # data format -> build seconds per byte
    #: what a run costs besides its processes and data: the command's start, planning, machine checks and
    #: calibration, the tables at the end (a command's wall time less its run record's span)
    run_s: float = 0.0
    #: case_id -> seconds of one counting process (the worker under Valgrind) of that case here: fresh processes'
    #: (else served ones'), and served ones' (else fresh ones')
    counting: dict[str, float] = field(default_factory=dict)
    counting_served: dict[str, float] = field(default_factory=dict)
    #: a counting process's seconds per second of the same case's plain process (0: not measured)
    valgrind_factor: float = 0.0
    #: the median counting process of cases with no model (an asv or pytest case), idle (0: not measured)
    counting_process_s: float = 0.0
    #: a fresh uv environment (resolve, install, import check), and a cached one (resolved again, found)
    env_build_s: float = 0.0
    env_cached_s: float = 0.0
    #: the Java worker's Maven build for one Arrow Java version, downloading it; and with Maven's repository holding it
    java_build_s: float = 0.0
    java_build_cached_s: float = 0.0

    _SCALARS: ClassVar[tuple[str, ...]] = ("run_s", "valgrind_factor", "counting_process_s", "env_build_s",
                                           "env_cached_s", "java_build_s", "java_build_cached_s")

    def to_json(self) -> dict[str, Any]:
        return {"per_row": {k: list(v) for k, v in sorted(self.per_row.items())},
                "startup_s": self.startup_s, "build_s_per_byte": self.build_s_per_byte,
                **{name: getattr(self, name) for name in self._SCALARS}}

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> Costs:
        costs = cls(per_row={k: (float(v[0]), float(v[1])) for k, v in (doc.get("per_row") or {}).items()},
                    startup_s={k: float(v) for k, v in (doc.get("startup_s") or {}).items()},
                    build_s_per_byte={k: float(v) for k, v in (doc.get("build_s_per_byte") or {}).items()})
        for name in cls._SCALARS:
            setattr(costs, name, float(doc.get(name) or 0.0))
        return costs

    def typical_counting_s(self, served: bool = False) -> float:
        """A counting process of a case never counted here: the median of the cases that were (served or fresh, as
        the run will count), else `counting_process_s` (0: neither)."""
        measured = list((self.counting_served if served else self.counting).values())
        return statistics.median(measured) if measured else self.counting_process_s

    def first(self, name: str, *others: Costs) -> float:
        """A scalar cost from these costs, else the first of `others` that has it (0 when none does)."""
        for costs in (self, *others):
            value = float(getattr(costs, name))
            if value > 0:
                return value
        return 0.0


def model_keys(benchmark: str, params: Mapping[str, Any]) -> list[str]:
    """The keys a case is looked up by, most alike first: its params but rows; its engine and format; its
    benchmark."""
    shape = {k: v for k, v in params.items() if k not in _SCALE_PARAMS}
    engine = {k: v for k, v in params.items() if k in _ENGINE_PARAMS}
    return [f"{benchmark} {json.dumps(shape, sort_keys=True, default=str)}",
            f"{benchmark} engine {json.dumps(engine, sort_keys=True, default=str)}",
            f"{benchmark} *"]


def _rows(params: Mapping[str, Any]) -> int | None:
    rows = params.get("rows")
    return int(rows) if isinstance(rows, int | float) and rows > 0 else None


def _process_parts(result: Result) -> tuple[float, float] | None:
    """(one iteration, the process's start: spawn to result less its iterations at their median), or None.

    The first call of a fresh process often costs far more than the median one (a Parquet read's first call imports
    pyarrow.dataset and pandas: 0.9 s against 18 ms), and that extra is paid once a process whatever the counts: it
    stays in the start, so an estimate with this process's counts gives back its spawn to result."""
    median = result.median()
    spawn = result.process.get("spawn_to_result_s")
    if median is None or spawn is None:
        return None
    calls = sum(1 for v in result.samples.get("wall_s") or [] if v is not None) + \
        sum(1 for v in result.warmup_samples.get("wall_s") or [] if v is not None)
    return float(median), max(0.0, float(spawn) - calls * float(median))


def _gaps(results: Sequence[Result]) -> dict[int, float]:
    """Per result (by id()), the orchestrator's time before its process started: from the end of the run's
    previous process (preparing the case, evicting a file from the page cache for a cold read, storing the last
    result). Capped at a minute, so a one-off (a data set built first) does not pass for a per-process cost."""
    gaps: dict[int, float] = {}
    by_run: dict[str, list[Result]] = defaultdict(list)
    for result in results:
        if result.process.get("started_at") is not None:
            by_run[result.run_id].append(result)
    for members in by_run.values():
        members.sort(key=lambda r: float(r.process["started_at"]))
        for before, after in zip(members, members[1:], strict=False):
            gaps[id(after)] = min(max(0.0, float(after.process["started_at"]) - _ended(before)), 60.0)
    return gaps


def _ended(result: Result) -> float:
    """When an execution's last process ended: its own, or the counting one that ran after it (`wall,instructions`),
    whose time is the counting cost, not a gap."""
    ended = float(result.process["started_at"]) + float(result.process.get("spawn_to_result_s") or 0)
    counted = (result.measure or {}).get("instructions") or {}
    process = counted.get("process") if isinstance(counted, Mapping) else None
    if isinstance(process, Mapping) and process.get("started_at") and process.get("spawn_to_result_s"):
        ended = max(ended, float(process["started_at"]) + float(process["spawn_to_result_s"]))
    return ended


def fit_costs(results: Iterable[Result]) -> Costs:
    """Costs from results (ok ones): exact per case, per row at each model level, bare start per runtime. A
    process's start counts the orchestrator's time before it (`_gaps`): the run pays it per process too."""
    ok = [r for r in results if r.ok]
    gaps = _gaps(ok)
    by_case: dict[str, list[tuple[float, float]]] = defaultdict(list)
    starts: dict[str, list[float]] = defaultdict(list)
    kept: list[tuple[Result, float, float]] = []
    for result in ok:
        parts = _process_parts(result)
        if parts is None:
            continue
        then = _load_then(result)
        parts = (parts[0] / then, parts[1] / then)
        starts[(result.runtime or {}).get("name", "python")].append(parts[1])
        parts = (parts[0], parts[1] + gaps.get(id(result), 0.0))
        by_case[result.case_id].append(parts)
        kept.append((result, *parts))
    # a bare process: the quickest starts of the runtime (its interpreter and imports, before any setup)
    startup = {rt: statistics.quantiles(v, n=10)[0] if len(v) >= 10 else min(v) for rt, v in starts.items()}
    per_row = _per_row(kept, startup)
    counting, counting_served = _counting(ok), _counting(ok, served=True)
    plain = {case: statistics.median(spans) for case, spans in _plain_spans(ok).items()}
    factors = [seconds / plain[case] for case, seconds in counting.items() if plain.get(case)]
    return Costs(
        exact={case: (statistics.median(p[0] for p in parts), statistics.median(p[1] for p in parts))
               for case, parts in by_case.items()},
        per_row={key: (statistics.median(v[0] for v in values), statistics.median(v[1] for v in values))
                 for key, values in per_row.items()},
        startup_s=startup, counting=counting, counting_served=counting_served,
        valgrind_factor=statistics.median(factors) if factors else 0.0)


def _per_row(kept: Sequence[tuple[Result, float, float]], startup: Mapping[str, float]
             ) -> dict[str, list[tuple[float, float]]]:
    """Per model level, each process's (iteration, setup beyond a bare start) seconds per row."""
    per_row: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for result, iteration, start in kept:
        rows = _rows(result.params)
        if rows is None:
            continue
        runtime = (result.runtime or {}).get("name", "python")
        setup = max(0.0, start - startup.get(runtime, 0.0))
        for key in model_keys(result.benchmark, result.params):
            per_row[key].append((iteration / rows, setup / rows))
    return per_row


def _counting(results: Sequence[Result], served: bool = False) -> dict[str, float]:
    """Per case, the seconds of a counting process: spawn to result of the worker under Valgrind, as
    `runner.instructions.merge` keeps it (apart from the case's own process record). A process forked from a
    counting server (runner/count_server.py) costs its own span, and the first one of each server its server's start
    to ready too: their mean is what a process cost in that run, the servers' share included. `served`: the served
    processes' cost where a case has both kinds (a run that will use servers), else the fresh ones'."""
    spans: dict[str, list[float]] = defaultdict(list)
    served_spans: dict[str, list[float]] = defaultdict(list)
    for result in results:
        counted = (result.measure or {}).get("instructions") or {}
        process = counted.get("process") if isinstance(counted, Mapping) else None
        if not (isinstance(process, Mapping) and process.get("spawn_to_result_s")):
            continue
        seconds = float(process["spawn_to_result_s"])
        server = counted.get("server")
        if isinstance(server, Mapping):
            seconds += float(server.get("ready_s") or 0.0) if server.get("child") == 0 else 0.0
            served_spans[result.case_id].append(seconds / _load_then(result, process))
        else:
            spans[result.case_id].append(seconds / _load_then(result, process))
    fresh = {case: statistics.median(values) for case, values in spans.items()}
    forked = {case: statistics.fmean(values) for case, values in served_spans.items()}
    return {**fresh, **forked} if served else {**forked, **fresh}


def _plain_spans(results: Sequence[Result]) -> dict[str, list[float]]:
    spans: dict[str, list[float]] = defaultdict(list)
    for result in results:
        if result.process.get("spawn_to_result_s"):
            spans[result.case_id].append(float(result.process["spawn_to_result_s"]) / _load_then(result))
    return spans


def build_rates(manifests: Iterable[Mapping[str, Any]]) -> dict[str, float]:
    """Seconds per byte to build a data file, per format, from data manifests (`build_seconds`, `size_bytes`)."""
    rates: dict[str, list[float]] = defaultdict(list)
    for entry in manifests:
        seconds, size = entry.get("build_seconds") or 0, entry.get("size_bytes") or 0
        if seconds > 0 and size > 0:
            rates[str(entry.get("format"))].append(seconds / size)
    return {fmt: statistics.median(v) for fmt, v in rates.items()}


def local_manifests(data_root: Path) -> list[dict[str, Any]]:
    found = []
    for path in (data_root / "cache").glob("*/*/*.manifest.json"):
        try:
            found.append(json.loads(path.read_text()))
        except (OSError, ValueError):
            continue
    return found


def reference_costs() -> Costs:
    """The reference model shipped with colbench (empty when the file is missing)."""
    try:
        text = resources.files("colbench.runner").joinpath(REFERENCE_FILE).read_text()
    except (OSError, FileNotFoundError):
        return Costs()
    return Costs.from_json(json.loads(text))


def history_costs(store: Store, plan: Plan, machine_id: str) -> Costs:
    """This machine's costs, from every ok result of the plan's benchmarks in the store, and the builds its
    environment and Java worker caches recorded."""
    results: list[Result] = []
    for benchmark in sorted({c.benchmark.name for c in plan.cases}):
        results += store.results(ResultQuery(benchmark=benchmark, machine_id=machine_id, status="ok"))
    costs = fit_costs(results)
    costs.env_build_s, costs.java_build_s = builds_here()
    return costs


def builds_here() -> tuple[float, float]:
    """The median seconds a fresh uv environment and a Java worker build took on this machine (0: none recorded)."""
    from colbench.runtimes import java
    from colbench.runtimes.env_cache import build_seconds

    envs = build_seconds()
    jars = [float(s) for jar in java.built_jars() if (s := jar.build_seconds)]
    return (statistics.median(envs) if envs else 0.0), (statistics.median(jars) if jars else 0.0)


@dataclass(frozen=True)
class CaseEstimate:
    case: PlannedCase
    iteration_s: float | None
    process_s: float | None  # one process: start + iterations
    source: str  # "history", "this machine's model", "reference model", "none"
    #: one counting process (the worker under Valgrind), when the run counts instructions, and what it is from
    counting_s: float | None = None
    counting_source: str = ""
    #: the counting process is the typical one of other cases (`with_counting`), not this case's: a rough figure
    counting_typical: bool = False

    def execution_s(self, measure: Sequence[str]) -> float:
        """One execution: the plain process when wall time is measured, the counting one when instructions are."""
        return ((self.process_s or 0.0) if "wall" in measure else 0.0) + \
            ((self.counting_s or 0.0) if "instructions" in measure else 0.0)

    def unknown(self, measure: Sequence[str]) -> bool:
        """No figure at all for a metric the run measures."""
        return ("wall" in measure and self.process_s is None) or \
            ("instructions" in measure and self.counting_s is None)


@dataclass
class Estimate:
    seconds: float
    cases: list[CaseEstimate]
    data_seconds: float = 0.0
    data_bytes: int = 0
    #: worker processes in all, and the seconds they take (with the load factor)
    processes: int = 0
    process_seconds: float = 0.0
    #: uv environments to build fresh and to find again, and what they take
    envs_fresh: int = 0
    envs_cached: int = 0
    env_seconds: float = 0.0
    #: worker builds (the Java worker's Maven build) and what they take
    worker_builds: int = 0
    worker_build_seconds: float = 0.0
    #: the command's own start, checks and tables
    run_seconds: float = 0.0
    #: processes take this many times longer than measured because the machine is busy (1: it is not)
    load_factor: float = 1.0
    #: processes run at once (`process_seconds` is their wall time: the sum of their times divided by it)
    jobs: int = 1
    #: what the run measures: which of a case's figures it needs
    measure: tuple[str, ...] = ("wall",)

    @property
    def unknown_cases(self) -> int:
        """Cases without a figure for a metric the run measures: the total leaves them out."""
        return sum(1 for c in self.cases if c.unknown(self.measure))

    @property
    def typical_cases(self) -> int:
        """Counted cases whose counting process is the typical one of other cases: in the total, but a rough figure."""
        return sum(1 for c in self.cases if "instructions" in self.measure and c.counting_typical)

    @property
    def rough(self) -> bool:
        """Whether some case's figure is missing or another case's: the looks' budget is then sized on the first."""
        return bool(self.unknown_cases or self.typical_cases)

    def sources(self) -> dict[str, int]:
        counts: dict[str, int] = defaultdict(int)
        for c in self.cases:
            counts[c.source] += 1
        return dict(counts)

    def counting_sources(self) -> dict[str, int]:
        counts: dict[str, int] = defaultdict(int)
        for c in self.cases:
            if c.counting_source:
                counts[c.counting_source] += 1
        return dict(counts)


def _from_model(costs: Costs, case: PlannedCase) -> tuple[float, float] | None:
    rows = _rows(case.params)
    if rows is None:
        return None
    for key in model_keys(case.benchmark.name, case.params):
        if key in costs.per_row:
            per_row, setup_per_row = costs.per_row[key]
            startup = costs.startup_s.get(case.runtime, _assumed_startup(case.runtime))
            return per_row * rows, startup + setup_per_row * rows
    return None


def _assumed_startup(runtime: str) -> float:
    return RUNTIMES[runtime].assumed_startup_s if runtime in RUNTIMES else 1.0


def estimate_case(case: PlannedCase, iterations: int, warmup: int, history: Costs, reference: Costs
                  ) -> CaseEstimate:
    if case.case_id in history.exact:
        iteration, start = history.exact[case.case_id]
        return CaseEstimate(case, iteration, start + (iterations + warmup) * iteration, "history")
    for costs, source in ((history, "this machine's model"), (reference, "reference model")):
        modelled = _from_model(costs, case)
        if modelled is not None:
            iteration, start = modelled
            return CaseEstimate(case, iteration, start + (iterations + warmup) * iteration, source)
    guess = case.benchmark.estimate_seconds(case.params)
    if guess is not None:
        start = history.startup_s.get(case.runtime) or _assumed_startup(case.runtime)
        return CaseEstimate(case, guess, start + (iterations + warmup) * guess, "benchmark's own guess")
    return CaseEstimate(case, None, None, "none")


def with_counting(estimate: CaseEstimate, history: Costs, reference: Costs, served: bool = False) -> CaseEstimate:
    """The case's counting process: as measured here (forked from servers when `served`), else its plain process
    times the Valgrind factor measured here, else the reference factor; a case with no plain figure either (an asv
    or pytest case never run here) gets the median counting process of the cases counted here, else the reference
    VM's (`counting_typical`: a rough figure, said so)."""
    measured = history.counting_served if served else history.counting
    if estimate.case.case_id in measured:
        return dataclasses.replace(estimate, counting_s=measured[estimate.case.case_id], counting_source="history")
    if estimate.process_s is not None:
        for costs, source in ((history, "this machine's Valgrind factor"), (reference, "reference Valgrind factor")):
            if costs.valgrind_factor > 0:
                return dataclasses.replace(estimate, counting_s=estimate.process_s * costs.valgrind_factor,
                                           counting_source=f"{source} ({costs.valgrind_factor:.0f}x)")
        return estimate
    for costs, source in ((history, "the median counting process here"),
                          (reference, "the reference VM's median counting process")):
        typical = costs.typical_counting_s(served)
        if typical > 0:
            return dataclasses.replace(estimate, counting_s=typical, counting_source=f"{source} ({typical:.0f} s)",
                                       counting_typical=True)
    return estimate


def estimate_plan(plan: Plan, iterations: int, warmup: int, processes: Callable[[PlannedCase], int],
                  history: Costs, reference: Costs | None = None, envs: int = 1,
                  new_data: Sequence[tuple[str, int]] = (), build_rates_here: Mapping[str, float] | None = None,
                  *, measure: Sequence[str] = ("wall",), env_builds: Sequence[bool] = (),
                  worker_builds: Sequence[bool] = (),
                  load_factor: float = 1.0, served: bool = False, jobs: int = 1) -> Estimate:
    """Every case's processes at its estimated cost, for each environment, plus what is made first: the data still
    to build (`new_data`: (format, bytes) of each file the cache lacks), the uv environments (`env_builds`: True
    for each that must be built, False for each found in the cache) and the Java worker builds (`worker_builds`:
    True for each that downloads Arrow Java, False for each that Maven's repository serves).
    `load_factor` stretches the processes for a busy machine; `served`: counting processes forked from servers;
    `jobs`: processes run at once (runner/local_jobs.py), which divides their wall time."""
    reference = reference if reference is not None else reference_costs()
    cases = [estimate_case(case, iterations, warmup, history, reference) for case in plan.cases]
    if "instructions" in measure:
        cases = [with_counting(c, history, reference, served) for c in cases]
    count = sum(processes(c.case) * envs for c in cases)
    process_seconds = load_factor * sum(processes(c.case) * envs * c.execution_s(measure) for c in cases) / jobs
    rates = {**reference.build_s_per_byte, **(build_rates_here or {})}
    fallback = statistics.median(rates.values()) if rates else 0.0
    data_seconds = sum(size * rates.get(fmt, fallback) for fmt, size in new_data)
    fresh = sum(1 for built in env_builds if built)

    def build_s(name: str) -> float:
        return _build_s(name, history, reference, load_factor)

    env_seconds = fresh * build_s("env_build_s") + (len(env_builds) - fresh) * build_s("env_cached_s")
    worker_seconds = sum(build_s("java_build_s") if downloads else build_s("java_build_cached_s")
                         for downloads in worker_builds)
    total = process_seconds + data_seconds + env_seconds + worker_seconds + reference.run_s
    return Estimate(total, cases, data_seconds, sum(size for _, size in new_data), processes=count,
                    process_seconds=process_seconds, envs_fresh=fresh, envs_cached=len(env_builds) - fresh,
                    env_seconds=env_seconds, worker_builds=len(worker_builds), worker_build_seconds=worker_seconds,
                    run_seconds=reference.run_s, load_factor=load_factor, jobs=jobs, measure=tuple(measure))


def _build_s(name: str, history: Costs, reference: Costs, load_factor: float) -> float:
    """A build's seconds: as builds took on this machine (their loads included), else the reference's idle figure
    stretched by the load of the moment (uv and Maven are CPU-bound: a build at load 8 on 2 cores took 4x the
    reference's)."""
    here = history.first(name)
    return here if here > 0 else reference.first(name) * load_factor


#: how a worker's time grows with the load: ((load + 1) / cpus) ** LOAD_EXPONENT. Shares alone would give 1; the
#: load average overstates the competition (it counts tasks that sleep on I/O, and threads of jobs that do not all
#: run at once): on the 2-core reference VM a counting process at load 6.7 got 45% of a CPU (16.3 s of CPU in 35.9 s),
#: a factor of 2.2 where the shares say 3.85
LOAD_EXPONENT = 0.6


def load_factor(load_average: float | None = None, cpus: int | None = None) -> float:
    """How much longer a single-threaded worker takes at this load than on an idle machine (1 while the load leaves
    a CPU free); the current load when none is given."""
    if load_average is None:
        try:
            load_average = os.getloadavg()[0]
        except OSError:
            return 1.0
    cpus = cpus or os.cpu_count() or 1
    return max(1.0, (load_average + 1.0) / cpus) ** LOAD_EXPONENT


#: how long the probe of the CPU share a new process gets right now spins (once a command)
PROBE_S = 0.3


@functools.cache
def measured_share(probe_s: float = PROBE_S) -> float:
    """The share of a CPU a new single-threaded process gets right now, measured: a busy loop of `probe_s` seconds,
    its thread's CPU time over the wall time it took (1.0: a CPU is free). Under load this is what a worker gets:
    on the 2-core reference VM at load 13 counting processes took 7-9x their idle time, where the load average's
    formula (`load_factor`) said 3.1x."""
    started, cpu = time.perf_counter(), time.thread_time()
    while time.perf_counter() - started < probe_s:
        pass
    return min(1.0, (time.thread_time() - cpu) / max(time.perf_counter() - started, 1e-9))


def current_load_factor(load_average: float | None = None) -> float:
    """How much longer a process takes now than on an idle machine: the measured share of a CPU (`measured_share`),
    never less than the load average's formula says (a probe of 0.3 s may catch a quiet moment)."""
    share = measured_share()
    return max(1.0 / max(share, 0.02), load_factor(load_average))


def _load_then(result: Result, process: Mapping[str, Any] | None = None) -> float:
    """The load factor when `result`'s process ran: measured, where its record has the child's CPU time (its wall
    time over its CPU time: the share of a CPU it got, as `measured_share` measures the share now), else from the
    load average its run's machine record holds (1 when unknown). History is kept as what the processes would have
    taken on an idle machine, so that it and the factor of the moment stretch alike."""
    process = result.process if process is None else process
    wall, cpu = process.get("spawn_to_result_s"), (process.get("child_user_s") or 0) + (process.get("child_sys_s") or 0)
    if wall and cpu > 0 and result.params.get("cache") != "cold":  # a cold read waits on the disk, not for a CPU
        return max(1.0, float(wall) / float(cpu))
    machine = result.machine or {}
    loads = machine.get("load_average") or []
    if not loads:
        return 1.0
    cpus = machine.get("cpu_threads") or len(machine.get("cpus_allowed") or []) or None
    return load_factor(float(loads[0]), cpus)


def profile_process_s(results: Sequence[Result], case_id: str, fallback: Costs | None = None,
                      ) -> tuple[float | None, str]:
    """What re-running one case under callgrind (explain's fresh profile: a worker under Valgrind) takes on an idle
    machine, and from what: the case's own counting processes in `results`, else its plain processes times the
    Valgrind factor measured over `results`, else `fallback`'s (the reference model's) factor; (None, "") unknown."""
    ok = [r for r in results if r.ok]
    counted = _counting([r for r in ok if r.case_id == case_id])
    if case_id in counted:
        return counted[case_id], "its counting processes"
    plain = _plain_spans([r for r in ok if r.case_id == case_id]).get(case_id)
    if not plain:
        return None, ""
    counting, spans = _counting(ok), _plain_spans(ok)
    factors = [seconds / statistics.median(spans[case]) for case, seconds in counting.items() if spans.get(case)]
    if factors:
        return statistics.median(plain) * statistics.median(factors), "its processes × the Valgrind factor here"
    reference = fallback if fallback is not None else reference_costs()
    if reference.valgrind_factor > 0:
        return statistics.median(plain) * reference.valgrind_factor, "its processes × the reference Valgrind factor"
    return None, ""
