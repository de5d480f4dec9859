"""An asv benchmark (airspeed velocity) as colbench cases: one `AsvBenchmark` per asv benchmark, one case per
combination of its `params`, driven in the worker by asv's own runner library (asv_runner, on the package index).

The orchestrator knows a suite from its discovery (`asv_discover.py`, run by asv_runner in a fresh interpreter):
each benchmark's asv name, type, `param_names` and the parameter strings asv itself shows and stores (the `repr` of
each value), so a case is stored under asv's name with asv's parameter strings, and a history reads as asv's would.

In the worker (this module runs on every Python the worker supports, 3.8 on), the benchmark is found by its name as
asv_runner's `get_benchmark_from_name` finds it, made of asv_runner's own benchmark type for its kind, the other
types left unimported (`asv_lookup.py`: a case's cost is its own); the combination is picked by its index in the
cartesian product, as asv's own runner does, and colbench drives asv's life cycle around its own timed region:
- `setup`: `random` (and numpy, once the suite's module imported it) seeded with one seed per benchmark (not the
  process's), so data a setup makes with unseeded random calls is the same in every process and environment; the
  `setup_cache` result loaded (made once per environment and key, in a file the whole run shares, `_SetupCache`);
  asv's setups (module, class, method; `setup` or `setUp`); `skip_params` or `NotImplementedError` there skip the
  case (`Unsupported`, with asv's reason);
- `before_each`: asv's `redo_setup` (teardown then setup before every timed call but the first), as asv's own
  timer re-runs them between its samples, from the benchmark's seed again (a setup that draws random data draws
  the same data for every call: the counts of a call repeat, and a counting process stops after two); under
  Valgrind it runs uninstrumented (`sets_up_each_call`);
- `run` (the timed region): the benchmark's call. A `time_*` benchmark without setup hooks makes `number` calls per
  iteration (asv's calibration to `sample_time`, or its declared `number`) and the worker divides the iteration by
  them (`Context.calls`); with setup hooks asv times each call alone, and so does colbench. Under Valgrind every
  iteration is one call, so a count is one call's. `timeraw_*` times its code in a child interpreter with asv's own
  timer, and the worker files that figure (`Context.timed_s`); `mem_*` (pympler's `asizeof`, as asv), `peakmem_*`
  (the process's peak RSS after the call) and `track_*` (the returned value, in the benchmark's `unit`) file their
  figure as the case's own metric (`asv_mem`, `asv_peakmem`, `asv_track`);
- `teardown`: asv's teardowns.
"""

from __future__ import annotations

import gc
import hashlib
import os
import random
import sys
import time
import zlib
from collections.abc import Callable
from typing import Any, ClassVar

from colbench.benchmarks.asv_lookup import find, put_on_path
from colbench.model.benchmark import Benchmark, Context, Unsupported, Work
from colbench.model.params import Grid, Param

#: the kinds asv_runner knows, as its `type` says them → the metric colbench files for the kind (None: wall time)
KIND_METRIC: dict[str, str | None] = {"time": None, "timeraw": None, "memory": "asv_mem",
                                          "peakmemory": "asv_peakmem", "track": "asv_track"}
#: what every environment must install for an asv suite to run there: asv's runner, and pympler for `mem_*` (asv's
#: runner leaves `mem_*` benchmarks out of its discovery without it)
ASV_REQUIREMENTS = ("asv_runner>=0.2", "pympler")
#: asv's default `sample_time`: a batch of calls of a fast benchmark lasts at least this long
SAMPLE_TIME_S = 0.01
#: a name prefix that cannot be an asv benchmark's: a module of the suite that failed to import at discovery
IMPORT_ERROR_PREFIX = "asv-import:"


def _declared(doc: dict[str, Any], key: str) -> Any:
    return (doc.get("declared") or {}).get(key)


def asv_benchmark(root: str, doc: dict[str, Any], cache_dir: str = "") -> AsvBenchmark:
    """The colbench benchmark of one asv benchmark (a class of its own: a Benchmark's name and grid are the
    class's)."""
    names: list[str] = [str(n) for n in doc.get("param_names") or []]
    values: list[list[str]] = [[str(x) for x in v] for v in doc.get("params") or []]
    kind = str(doc.get("type", "time"))
    about = f"asv {kind} benchmark of {os.path.basename(root)}"
    if doc.get("error"):
        about = f"a module of the asv suite {os.path.basename(root)} that does not import: {doc['error']}"
    name = str(doc["name"])
    attrs = {"name": name, "description": about,
             "grid": Grid(tuple(Param(n, default=tuple(v), choices=tuple(v), help="asv parameter")
                                for n, v in zip(names, values)))}
    cls = type("AsvBenchmark_" + hashlib.sha256(name.encode()).hexdigest()[:8], (AsvBenchmark,), attrs)
    return cls(root, doc, cache_dir)  # type: ignore[no-any-return]


class AsvBenchmark(Benchmark):
    """One asv benchmark of a suite folder, from its discovery document (`asv_discover.describe`); made by
    `asv_benchmark`."""

    engine: ClassVar[str] = "python"
    work_unit: ClassVar[str] = "rows"
    work_basis: ClassVar[str] = "rows"
    throughput_of: ClassVar[str] = "calls (an asv benchmark's timed call)"

    def __init__(self, root: str, doc: dict[str, Any], cache_dir: str = "") -> None:
        self.root = root
        self.doc = doc
        self.cache_dir = cache_dir
        self.kind = str(doc.get("type", "time"))
        self._skipped = {tuple(str(x) for x in s) for s in doc.get("skipped") or []}

    # --- declarative side (orchestrator) ---
    def source_spec(self) -> dict[str, Any]:
        return {"kind": "asv", "root": self.root, "cache_dir": self.cache_dir, "type": self.kind,
                "param_names": list(self.grid.names)}

    def valid(self, params: dict[str, Any]) -> str | None:
        combo = tuple(str(params[n]) for n in self.grid.names)
        if combo in self._skipped:
            return "skip_params of the asv benchmark"
        return None

    def processes_asked(self) -> int | None:
        """asv's `rounds`, where the benchmark declares it: its fresh processes per case."""
        rounds = _declared(self.doc, "rounds")
        return int(rounds) if isinstance(rounds, (int, float)) and rounds >= 1 else None

    def timeout_s(self) -> float | None:
        timeout = self.doc.get("timeout")
        return float(timeout) if isinstance(timeout, (int, float)) and timeout > 0 else None

    def estimate_seconds(self, params: dict[str, Any]) -> float | None:
        return None

    # --- life cycle (worker) ---
    def setup(self, ctx: Context) -> None:
        if self.name.startswith(IMPORT_ERROR_PREFIX):
            _import_module_again(self.root, os.path.basename(self.root) + "." + self.name[len(IMPORT_ERROR_PREFIX):])
        seed = zlib.crc32(self.name.encode())  # one per benchmark: the same data in every process and environment
        random.seed(seed)
        bench = find(self.root, self.name, self.kind)
        _seed(seed)  # the suite's module is imported now: numpy is seeded if it uses numpy
        if bench._params:
            bench.set_param_idx(_param_index(bench, self.grid.names, ctx.params))
        ctx.state["asv"] = bench
        self._refuse_what_cannot_count(ctx, bench)
        _set_cache(bench, _SetupCache(self.cache_dir).get(bench) if bench.setup_cache_key else None)
        if bench.do_setup():  # skip_params, or NotImplementedError in a setup
            ctx.state["skipped"] = True
            raise Unsupported(f"asv skipped {self.name}: skip_params or NotImplementedError in setup")
        ctx.calls = self._calls(ctx, bench)
        if self.kind == "track" and getattr(bench, "unit", None):
            ctx.units["asv_track"] = str(bench.unit)
        for metric in ("asv_mem", "asv_peakmem"):
            ctx.units[metric] = "B"

    def _refuse_what_cannot_count(self, ctx: Context, bench: Any) -> None:
        if ctx.measure != "instructions":
            return
        if self.kind == "timeraw":
            raise Unsupported("timeraw_* times its code in a child interpreter, which Valgrind does not count: "
                              "run it without --measure instructions")
        if KIND_METRIC.get(self.kind):
            raise Unsupported(f"{self.kind} benchmarks measure a value, not a time: run them without "
                              "--measure instructions")

    def _calls(self, ctx: Context, bench: Any) -> int:
        """Calls per timed iteration: asv's `number` (declared, else calibrated as asv does to `sample_time`), 1
        with setup hooks (asv then times each call alone) and under Valgrind (a count is one call's)."""
        if self.kind != "time" or ctx.measure == "instructions":
            return 1
        number = int(getattr(bench, "number", 0) or 0)
        if bench._setups:
            if number > 1:
                ctx.warn(f"asv number={number} with setup hooks: each call is timed alone, setup re-run between")
            _warm_up(bench, _warmup_time(bench), lambda: self.before_each(ctx))
            return 1
        _warm_up(bench, _warmup_time(bench))
        return number if number > 0 else _calibrate(bench, float(getattr(bench, "sample_time", SAMPLE_TIME_S)))

    def before_each(self, ctx: Context) -> None:
        bench = ctx.state["asv"]
        if getattr(bench, "_redo_setup_next", False):  # asv re-runs the setup now: from the benchmark's seed again,
            _seed(zlib.crc32(self.name.encode()))      # so every call sees the data the first call saw
        bench.redo_setup()

    def sets_up_each_call(self, ctx: Context) -> bool:
        """asv re-runs a benchmark's setup hooks between timed calls (`redo_setup`)."""
        bench = ctx.state.get("asv")
        return bool(bench is not None and getattr(bench, "_setups", None))

    def run(self, ctx: Context) -> Any:
        bench = ctx.state["asv"]
        args = _call_args(bench)
        if self.kind == "timeraw":  # asv's own timer: the code's time in a child interpreter, not the child's start
            number = int(bench.number or 1)
            ctx.timed_s = bench._get_timer(*args).timeit(number) / number
            return None
        if self.kind == "time":  # with the garbage collector off, as asv's timer (timeit's) runs the calls
            func = bench.func
            output = None
            collecting = gc.isenabled()
            gc.disable()
            try:
                for _ in range(ctx.calls):
                    output = func(*args)
            finally:
                if collecting:
                    gc.enable()
            return output
        value = bench.run(*args)  # asv's own measure of a mem_, peakmem_ or track_ benchmark
        metric = KIND_METRIC[self.kind]
        if metric and isinstance(value, (int, float)):
            ctx.iteration_metrics[metric] = float(value)
        return None

    def teardown(self, ctx: Context) -> None:
        bench = ctx.state.get("asv")
        if bench is not None and not ctx.state.get("skipped"):
            bench.do_teardown()

    def work(self, ctx: Context) -> Work:
        """None known: an asv benchmark does not say how many rows or bytes a call handles, so no throughput is
        shown (one row a call made "157,629 rows/s" of a 6 µs call)."""
        return Work()


def _import_module_again(root: str, module: str) -> None:
    """A module that failed to import when colbench discovered the suite: import it here, in this environment, so
    the error row holds this environment's traceback; if it imports here, say why the case has no benchmark."""
    import importlib

    put_on_path(root)
    importlib.import_module(module)
    raise ImportError(f"{module} failed to import where colbench discovered the suite but imports in this "
                      "environment: discover the suite with an interpreter that has its dependencies")


def _set_cache(bench: Any, cache: Any) -> None:
    """The setup_cache result handed to the benchmark: asv_runner 0.3's `set_cache`, or before it (an environment of
    an older era resolves an older asv_runner) `insert_param`, as that release's own runner did."""
    if hasattr(bench, "set_cache"):
        bench.set_cache(cache)
    elif cache is not None:
        bench.insert_param(cache)


def _call_args(bench: Any) -> tuple[Any, ...]:
    """The arguments of the benchmark's call: the setup_cache result (if any) then the parameters."""
    build = getattr(bench, "_build_params", None)
    return tuple(build()) if build is not None else tuple(bench._current_params)


def _seed(seed: int) -> None:
    random.seed(seed)
    numpy = sys.modules.get("numpy")
    if numpy is not None:
        numpy.random.seed(seed % (2**32))


def _param_index(bench: Any, names: list[str], params: dict[str, Any]) -> int:
    """The combination's index in the cartesian product of asv's parameter strings (`bench.params`), the index
    asv's own runner takes (`benchmark-3`)."""
    index = 0
    for axis, name in zip(bench.params, names):
        value = str(params[name])
        if value not in axis:
            raise Unsupported(f"asv parameter {name}={value} is not one of {', '.join(axis)} in this environment")
        index = index * len(axis) + axis.index(value)
    return index


def _warmup_time(bench: Any) -> float:
    """asv's warm-up before sampling: the benchmark's `warmup_time`, else asv_runner's default for this interpreter
    (0.1 s on CPython: "transient effects exist also on CPython"; 1 s on PyPy). Without it a sub-millisecond call
    of pyarrow's suite, its first few calls timed cold, took 1.35-1.65x asv's figure (docs/asv.md)."""
    declared = getattr(bench, "warmup_time", -1)
    if isinstance(declared, (int, float)) and declared >= 0:
        return float(declared)
    return 1.0 if "__pypy__" in sys.modules else 0.1


def _warm_up(bench: Any, warmup_time: float, before: Callable[[], None] | None = None) -> None:
    """asv's warm-up: untimed calls for `warmup_time`, at least one when it is positive, each after `before` (asv
    re-runs a benchmark's setup hooks before every call, warm-up calls too)."""
    if warmup_time <= 0:
        return
    deadline = time.perf_counter() + warmup_time
    args = _call_args(bench)
    while True:
        if before is not None:
            before()
        bench.func(*args)
        if time.perf_counter() >= deadline:
            return


def _calibrate(bench: Any, sample_time: float) -> int:
    """asv's choice of `number`: grow the batch until one lasts `sample_time` (asv's `benchmark_timing`)."""
    args = _call_args(bench)
    number = 1
    while True:
        start = time.perf_counter()
        for _ in range(number):
            bench.func(*args)
        took = time.perf_counter() - start
        if took >= sample_time or number >= 10_000_000:
            return number
        grow = min(10.0, max(1.1, sample_time / took)) if took > 0 else 10.0
        number = max(number + 1, int(grow * number))


class _SetupCache:
    """`setup_cache` made once per environment and key and handed to the benchmark as asv does: pickled into a file
    under the run's cache folder, named by this interpreter's environment (`sys.prefix`) and asv's key (module and
    line), so no result crosses library versions; a lock file lets one worker make it while others wait."""

    def __init__(self, cache_dir: str) -> None:
        self.cache_dir = cache_dir

    def get(self, bench: Any) -> Any:
        import pickle

        path = self._path(bench.setup_cache_key)
        if os.path.exists(path):
            with open(path, "rb") as handle:
                return pickle.load(handle)
        import fcntl

        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path + ".lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if not os.path.exists(path):
                value = bench.do_setup_cache()
                tmp = path + f".{os.getpid()}.tmp"
                with open(tmp, "wb") as handle:
                    pickle.dump(value, handle)
                os.replace(tmp, path)
        with open(path, "rb") as handle:
            return pickle.load(handle)

    def _path(self, key: str) -> str:
        where = hashlib.sha256(os.path.realpath(sys.prefix).encode()).hexdigest()[:16]
        name = hashlib.sha256(key.encode()).hexdigest()[:16]
        base = self.cache_dir or os.path.join(os.path.expanduser("~"), ".cache", "colbench-asv")
        return os.path.join(base, where, name + ".pickle")
