"""The Python worker: `python -m colbench.worker case.json result.json`.

Runs one case in this (fresh) process as docs/protocol.md describes. It imports as little as possible
before the benchmark does, so start-up cost stays small and the libraries under test load on the
benchmark's terms (tempfile and traceback load only when a case needs them: a worker's start-up
is part of every execution's overhead). Everything it learns goes into result.json; stdout
and stderr are left to the libraries.
"""

from __future__ import annotations

import contextlib
import faulthandler
import json
import os
import resource
import sys
import time
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from colbench.model.benchmark import Benchmark, CheckFailed, Context, OutputCheck, Unsupported
from colbench.model.params import ParamError
from colbench.model.worker_records import PROTOCOL, AllocatorUsed, CaseSpec, MemoryUse, RuntimeInfo, WorkerReport
from colbench.workers.python.count_stop import settled
from colbench.workers.python.pagecache import evict, read_through

if TYPE_CHECKING:  # imported only by the cases that use them: most workers never load ctypes
    from colbench.workers.python.callgrind_probe import CallgrindProbe
    from colbench.workers.python.extra_work import ExtraWork
    from colbench.workers.python.heap_window import HeapWindow

class InvalidCase(ValueError):
    """The case spec asks for something this worker cannot do."""


def _cpu_times() -> tuple[float, float]:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime, usage.ru_stime


class _RunDelay:
    """Nanoseconds this process's threads spend runnable but waiting for a CPU (Linux schedstat), read around a timed
    call from files kept open, the threads listed again only when their number (read from /proc/self/stat, open too)
    changed, after the call. Any /proc read between two calls slows the next one: on a 170 µs call
    (`scripts/measure_timed_call_disturbance.py`, idle VM) listing and opening each thread's file around it cost
    +20.5%, these reads +9.3% (16 µs), getrusage +0.3%; so calls under DELAY_READS_FROM_S are timed without them
    (`_DelayReads`)."""

    def __init__(self) -> None:
        self._files: dict[str, int] = {}
        self.available = True
        try:
            self._stat: int | None = os.open("/proc/self/stat", os.O_RDONLY)
        except OSError:
            self._stat = None
        self.refresh(force=True)

    def _threads(self) -> int | None:
        """The process's number of threads (field 20 of /proc/self/stat, after the command's closing parenthesis)."""
        if self._stat is None:
            return None
        try:
            return int(os.pread(self._stat, 1024, 0).rsplit(b")", 1)[1].split()[17])
        except (OSError, ValueError, IndexError):
            return None

    def refresh(self, force: bool = False) -> None:
        """Open the files of threads that appeared, close those of threads that ended (when their number changed)."""
        if not force and self._threads() == len(self._files):
            return
        try:
            tasks = set(os.listdir("/proc/self/task"))
        except OSError:
            self.available = False
            return
        for task in [t for t in self._files if t not in tasks]:
            os.close(self._files.pop(task))
        for task in tasks.difference(self._files):
            try:
                self._files[task] = os.open(f"/proc/self/task/{task}/schedstat", os.O_RDONLY)
            except OSError:
                continue  # a thread that ended meanwhile

    def read(self) -> dict[str, int]:
        delays = {}
        for task, fd in self._files.items():
            try:
                delays[task] = int(os.pread(fd, 128, 0).split()[1])
            except (OSError, ValueError, IndexError):
                continue  # a thread that ended meanwhile
        return delays

    def since(self, before: dict[str, int]) -> int:
        """The delay since `before` (`read()` before the call): threads started during the call count whole."""
        self.refresh()
        return sum(max(0, ns - before.get(task, 0)) for task, ns in self.read().items())


#: a call shorter than this is timed without run-delay reads around it (`_RunDelay`: 16 µs on the call after them,
#: 0.16% of this): its process records no run delay, and the choice of basis falls back to CPU / wall time
#: (analysis/basis.py), as for R and Java workers
DELAY_READS_FROM_S = 0.01


class _DelayReads:
    """Whether this process reads its run delay around its timed calls: decided once, at its first timed iteration,
    from the iteration before it (a warm-up), so that every timed sample of a process has it or none does."""

    def __init__(self) -> None:
        self.last_iteration_s: float | None = None
        self.decided: bool | None = None
        self.reader: _RunDelay | None = None

    def for_iteration(self, measured: int) -> _RunDelay | None:
        """The reader for this iteration (`measured` < 0: a warm-up, which records none), or None."""
        if measured < 0:
            return None
        if self.decided is None:
            self.decided = self.last_iteration_s is None or self.last_iteration_s >= DELAY_READS_FROM_S
        if not self.decided:
            return None
        if self.reader is None:
            self.reader = _RunDelay()
        return self.reader if self.reader.available else None


_DELAY_READS = _DelayReads()


def memory_size(output: Any) -> int | None:
    """The bytes the timed call's output holds in memory, decoded: an Arrow table's buffers (`nbytes`), a polars
    frame's `estimated_size()`, a pandas frame's columns with their Python strings (`memory_usage(deep=True)`), a
    numpy array's `nbytes`; summed over a dict or list of them. None for anything else (a writer's path)."""
    try:
        if isinstance(output, dict):
            parts = [memory_size(v) for v in output.values()]
        elif isinstance(output, (list, tuple)):
            parts = [memory_size(v) for v in output]
        elif hasattr(output, "num_rows") and isinstance(getattr(output, "nbytes", None), int):  # Arrow
            return int(output.nbytes)
        elif callable(getattr(output, "estimated_size", None)):  # polars
            return int(output.estimated_size())
        elif callable(getattr(output, "memory_usage", None)):  # pandas
            return int(output.memory_usage(index=True, deep=True).sum())
        elif hasattr(output, "dtype") and isinstance(getattr(output, "nbytes", None), int):  # numpy
            return int(output.nbytes)
        else:
            return None
    except Exception:  # an output that cannot say its size: no figure rather than a failed case
        return None
    known = [p for p in parts if p is not None]
    return sum(known) if known and len(known) == len(parts) else None


def _timed(bench: Benchmark, ctx: Context, extra: ExtraWork | None = None, measured: int = 0,
           ) -> tuple[dict[str, float], Any]:
    bench.before_each(ctx)
    delay = _DELAY_READS.for_iteration(measured)
    delay0 = delay.read() if delay is not None else None
    user0, sys0 = _cpu_times()
    t0 = time.perf_counter_ns()
    output = bench.run(ctx)
    if extra is not None:
        extra.run()
    t1 = time.perf_counter_ns()
    user1, sys1 = _cpu_times()
    delay_ns = delay.since(delay0) if delay is not None and delay0 is not None else None
    calls = max(1, ctx.calls)  # an asv benchmark's `number`: the sample is one call's
    wall = (t1 - t0) / 1e9 if ctx.timed_s is None else ctx.timed_s  # asv's timeraw_: timed by the benchmark itself
    ctx.timed_s = None
    sample = {"wall_s": wall / calls, "cpu_user_s": (user1 - user0) / calls, "cpu_sys_s": (sys1 - sys0) / calls}
    # the whole iteration's time: a batch of asv's `number` calls is disturbed once, not once a call
    _DELAY_READS.last_iteration_s = (t1 - t0) / 1e9
    if delay_ns is not None:
        # time the worker was ready to run but another job held the CPU: tells waiting for a CPU (a busy
        # machine) from waiting for I/O (the case itself); see analysis/basis.py
        sample["run_delay_s"] = delay_ns / 1e9
    sample.update(ctx.iteration_metrics)
    ctx.iteration_metrics.clear()
    return sample, output


def _the_call(bench: Benchmark, ctx: Context, extra: ExtraWork | None) -> Callable[[], Any]:
    """What a traced or counted region holds: the benchmark's call, then any injected extra work (`_timed` writes
    the same inline, so that nothing but the call sits between its clock readings)."""
    def call() -> Any:
        output = bench.run(ctx)
        if extra is not None:
            extra.run()
        return output
    return call


def _traced(bench: Benchmark, ctx: Context, window: HeapWindow,
            extra: ExtraWork | None) -> tuple[dict[str, float], Any]:
    """Under heaptrack (a memory profile): the timed call with its allocations recorded, and its RSS figures."""
    bench.before_each(ctx)
    t0 = time.perf_counter_ns()
    sample, output = window.trace(_the_call(bench, ctx, extra))
    sample["wall_s"] = (time.perf_counter_ns() - t0) / 1e9  # under heaptrack: what the profile cost, not the case
    ctx.iteration_metrics.clear()  # a benchmark's own timings mean little under heaptrack
    return sample, output


def _see_arrow_pool(report: WorkerReport) -> None:
    """Before the traced call (after the warm-ups, which import what the case uses): where heaptrack cannot see
    Arrow's default pool, the call is traced on one it sees, and the report says which."""
    if "pyarrow" in sys.modules:
        from colbench.workers.python.heap_window import see_arrow_pool

        traced = see_arrow_pool(sys.modules["pyarrow"])
        if traced is not None:
            report.allocator["traced"] = traced


def _heap_window() -> HeapWindow | None:
    """heaptrack's pause/resume when the worker runs under it for a memory profile (workers/python/heap_window.py)."""
    if not os.environ.get("COLBENCH_HEAPTRACK_WINDOW"):
        return None
    from colbench.workers.python.heap_window import HeapWindowUnavailable, open_window

    try:
        return open_window()
    except HeapWindowUnavailable as exc:
        raise InvalidCase(str(exc)) from None


def _counted(bench: Benchmark, ctx: Context, probe: CallgrindProbe, extra: ExtraWork | None,
             timed_index: int) -> tuple[dict[str, float], Any]:
    """Under callgrind: instructions of the timed call instead of times (which Valgrind makes meaningless).

    Warm-ups (timed_index < 0) run uninstrumented and uncounted: first calls often import whole libraries
    (pandas' readers import pandas), which instrumented would cost minutes. Instrumentation starts before the
    first timed iteration (`start_counting`)."""
    if timed_index < 0:
        bench.before_each(ctx)
        output = bench.run(ctx)
        ctx.iteration_metrics.clear()
        return {}, output
    _before_counted(bench, ctx, probe)
    count, output = probe.count(_the_call(bench, ctx, extra))
    ctx.iteration_metrics.clear()  # a benchmark's own timings mean nothing under Valgrind
    return {"instructions": count}, output


def _before_counted(bench: Benchmark, ctx: Context, probe: CallgrindProbe) -> None:
    """`before_each` of a counted call: with instrumentation off when it sets the case up again (an asv setup re-run
    between calls, `Benchmark.sets_up_each_call`): instrumented, the 100-column Parquet read of pyarrow's asv suite
    built and wrote its 10-million-cell table 20-50x slower before every counted call."""
    if bench.sets_up_each_call(ctx):
        probe.uninstrumented(lambda: bench.before_each(ctx))
    else:
        bench.before_each(ctx)


#: a first count of this many instructions or more is the first timed sample, not a warm-up count: the start-up
#: artefact of the first instrumented call (0.2-0.4% fewer on a 188 M Parquet read, under a million instructions)
#: is then below the repeat rule's 0.2%. Over the 376 counting processes of pyarrow's asv suite (docs/metrics.md),
#: the 33 whose calls count 1 G or more had a warm-up count within 0.025% of their timed calls' median (median; at
#: most 0.40%, in a case whose timed calls alternate by as much), and each of their counted calls costs minutes
KEEP_FIRST_COUNT_FROM = 1_000_000_000


def start_counting(report: WorkerReport, case: CaseState) -> tuple[dict[str, float], Any] | None:
    """After the warm-ups: instrumentation on, and the first count (`_first_count`) kept with the warm-ups; or, when
    it is as large as KEEP_FIRST_COUNT_FROM, returned as the first timed iteration's sample and output."""
    assert case.bench is not None and case.ctx is not None and case.probe is not None
    case.phases.mark("warmup")
    first, output = _first_count(case.bench, case.ctx, case.probe, case.extra)
    case.counting = True
    if first >= KEEP_FIRST_COUNT_FROM and case.extra is None:
        return {"instructions": first}, output
    del output
    _append(report.warmup_samples, {"instructions": first})
    return None


def _first_count(bench: Benchmark, ctx: Context, probe: CallgrindProbe, extra: ExtraWork | None) -> tuple[int, Any]:
    """Switch instrumentation on and make one counted call, kept as a warm-up unless it is large
    (`start_counting`): the first call after the switch counts 0.2-0.4% fewer instructions than every call after it
    (measured on a Parquet read: -0.41%, -0.33%, -0.24%), and would pass that artefact to the timed ones.
    COLBENCH_EXTRA_WORK is sized on it."""
    probe.start()
    _before_counted(bench, ctx, probe)
    first, output = probe.count(lambda: bench.run(ctx))
    ctx.iteration_metrics.clear()
    if extra is not None:
        ctx.warn(extra.calibrate(first, lambda fn: probe.count(fn)[0], probe_units=10_000))
    return first, output


def _repeated(samples: list[float | None], within: float | None) -> bool:
    """The timed values repeat within `within` (relative): two in a row agree, or a short cycle of them repeated
    (workers/python/count_stop.py): the metric's spread is reached, more calls would only repeat them."""
    return settled(samples, within) is not None


def _sampler() -> Any:
    """perf's control when the worker runs under `perf record` for a profile (workers/python/perf_control.py)."""
    if not os.environ.get("COLBENCH_PERF_CTL"):
        return None
    from colbench.workers.python.perf_control import PerfControlError, open_control

    try:
        return open_control()
    except (OSError, PerfControlError) as exc:
        raise InvalidCase(f"cannot reach perf's control FIFO: {exc}") from None


def _instruments(spec: CaseSpec) -> tuple[CallgrindProbe | None, ExtraWork | None]:
    """The instruction counter (for `"measure": "instructions"`) and injected extra work (COLBENCH_EXTRA_WORK)."""
    probe = extra = None
    if spec.measure == "instructions":
        from colbench.workers.python.callgrind_probe import ProbeUnavailable, open_probe

        if os.environ.get("COLBENCH_COMPILE_PASS"):
            # natively, before the case's first counting process (runner/compile_pass.py): the modules a counting
            # worker imports are compiled, and the case runs as a wall-time worker would
            import colbench.workers.python.count_server  # noqa: F401
        else:
            try:
                probe = open_probe(spec)
            except ProbeUnavailable as exc:
                raise InvalidCase(str(exc)) from None
    if os.environ.get("COLBENCH_EXTRA_WORK"):
        from colbench.workers.python.extra_work import ExtraWork

        try:
            extra = ExtraWork.from_env()
        except ValueError as exc:
            raise InvalidCase(str(exc)) from None
        if spec.warmup < 1:
            raise InvalidCase("COLBENCH_EXTRA_WORK is sized from the first warm-up iteration: use --warmup 1 or more")
    return probe, extra


def _size_extra_work(extra: ExtraWork, first_wall_s: float) -> str:
    def wall(fn: Any) -> float:
        t0 = time.perf_counter_ns()
        fn()
        return (time.perf_counter_ns() - t0) / 1e9
    return extra.calibrate(first_wall_s, wall, probe_units=200_000)


def _append(samples: dict[str, list[float | None]], sample: dict[str, float]) -> None:
    for name, value in sample.items():
        samples.setdefault(name, []).append(value)


def _check_output(bench: Benchmark, ctx: Context, output: Any) -> OutputCheck | None:
    check = bench.after_each(ctx, output)
    if check is not None and not isinstance(check, OutputCheck):
        raise CheckFailed(f"after_each must return OutputCheck or None, not {type(check).__name__}")
    return check


def apply_threads(threads: int) -> dict[str, object]:
    """Apply the thread count to every engine already loaded and report what each one now uses.

    Environment variables set by the orchestrator cover engines that read them at import (polars, OpenMP,
    Arrow); this makes Arrow's pools explicit and reads back what actually took effect.
    """
    applied: dict[str, object] = {}
    if "pyarrow" in sys.modules:
        pa = sys.modules["pyarrow"]
        pa.set_cpu_count(threads)
        applied["arrow_cpu"] = pa.cpu_count()
        if hasattr(pa, "set_io_thread_count"):  # pyarrow 0.17 has no I/O pool of its own to size
            pa.set_io_thread_count(max(threads, 1))
            applied["arrow_io"] = pa.io_thread_count()
    if "polars" in sys.modules:
        pl = sys.modules["polars"]
        size = getattr(pl, "thread_pool_size", None)
        applied["polars"] = size() if callable(size) else None
    with contextlib.suppress(AttributeError):
        applied["cpu_affinity"] = sorted(os.sched_getaffinity(0))
    for var in ("OMP_NUM_THREADS", "OMP_WAIT_POLICY", "POLARS_MAX_THREADS"):
        if var in os.environ:
            applied[var] = os.environ[var]
    return applied


def _allocator_state(requested: str) -> AllocatorUsed:
    pool = sys.modules["pyarrow"].default_memory_pool() if "pyarrow" in sys.modules else None
    return AllocatorUsed(requested=requested, actual=_backend(pool))


def _backend(pool: Any) -> str | None:
    """The allocator behind an Arrow memory pool; None where pyarrow does not say (before 1.0)."""
    name = getattr(pool, "backend_name", None)
    return name if isinstance(name, str) else None


def _process_memory() -> MemoryUse:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    memory = MemoryUse(peak_rss_bytes=peak_rss_bytes(), page_faults_minor=usage.ru_minflt,
                       page_faults_major=usage.ru_majflt, ctx_switches_voluntary=usage.ru_nvcsw,
                       ctx_switches_involuntary=usage.ru_nivcsw, engine_peak_bytes=None, engine_memory=None)
    if "pyarrow" in sys.modules:
        pool = sys.modules["pyarrow"].default_memory_pool()
        memory["engine_peak_bytes"] = int(pool.max_memory())
        memory["engine_memory"] = f"arrow_pool:{_backend(pool) or 'unnamed'}"
    return memory


def loaded_versions() -> dict[str, str]:
    """The version of every top-level module loaded that carries one (the engines' libraries among them), colbench's
    own once, and the interpreter's."""
    versions = {"python": sys.version.split()[0]}
    for name, module in list(sys.modules.items()):
        if "." in name or name.startswith("_") or module is None:
            continue
        with warnings.catch_warnings():  # a module may deprecate its own __version__ (jsonschema does)
            warnings.simplefilter("ignore")
            version = getattr(module, "__version__", None)
        if isinstance(version, str) and not name.startswith("colbench"):
            versions[name] = version
    import colbench

    versions["colbench"] = colbench.__version__
    return dict(sorted(versions.items()))


def peak_rss_bytes() -> int:
    """Peak RSS of this process since its exec.

    Linux's getrusage ru_maxrss survives execve: it keeps the high-water mark of the forking parent (the
    orchestrator, often larger than the worker), so it would report the parent's size. VmHWM belongs to
    the process's own memory map, which exec replaced."""
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # KiB on Linux; bytes on macOS


def run_case(document: dict[str, Any]) -> dict[str, Any]:
    """Run the case that a case.json holds in this process and return its result.json (never raises for a
    benchmark's errors): the JSON edge of `measure_case`."""
    try:
        if document.get("protocol") != PROTOCOL:
            raise InvalidCase(f"case protocol {document.get('protocol')!r}; this worker speaks {PROTOCOL}")
        spec = CaseSpec.from_json(document)
    except (InvalidCase, TypeError, KeyError, ValueError) as exc:
        report = WorkerReport(runtime=_runtime())
        why = str(exc) if isinstance(exc, InvalidCase) else f"the case file lacks or mistypes {exc}"
        report.fail("invalid", why)
        report.versions = loaded_versions()
        return report.to_json()
    return measure_case(spec).to_json()


def _runtime() -> RuntimeInfo:
    return RuntimeInfo(name="python", version=sys.version.split()[0], executable=sys.executable)


def benchmark_lookup(spec: CaseSpec) -> Callable[[str], Benchmark]:
    """How the case's benchmark is found: by name in the registry, or in its source (an asv suite, a pytest file)."""
    from colbench.benchmarks.registry import get_benchmark, source_benchmark

    def lookup(name: str) -> Benchmark:
        return source_benchmark(name, spec.source, spec.params) if spec.source else get_benchmark(name)

    return lookup


def measure_case(spec: CaseSpec) -> WorkerReport:
    """Run the case in this process and report what it measured (never raises for the benchmark's errors)."""
    report = WorkerReport(runtime=_runtime(), threads={"requested": spec.threads},
                          allocator={"requested": spec.allocator, "actual": None},
                          cache={"requested": spec.cache, "achieved": None})
    case = CaseState(spec.measure == "instructions")
    try:
        guarded(report, lambda: _set_up_and_measure(spec, report, case, benchmark_lookup(spec)))
    finally:
        _stop_and_tear_down(report, case)
    _finish_report(spec, report, case)
    return report


def guarded(report: WorkerReport, body: Callable[[], None]) -> bool:
    """Run `body`; a benchmark's failure becomes the report's error (its kind from the exception), never a crash.
    True when it ran through."""
    try:
        body()
        return True
    except MemoryError as exc:
        _fail(report, "oom", f"MemoryError: {exc}")
    except CheckFailed as exc:
        _fail(report, "check", str(exc) or "output check failed")
    except (InvalidCase, ParamError, Unsupported) as exc:  # the case's fault, or the release's lack, not an error
        _fail(report, "invalid", str(exc))
    except Exception as exc:  # the benchmark's own failure: record it, don't crash the worker
        _fail(report, "exception", f"{type(exc).__name__}: {exc}")
    return False


class CaseState:
    """What measure_case has set up so far, so that its cleanup stops and tears down exactly that."""

    def __init__(self, counting: bool) -> None:
        self.phases = _Phases(counting)
        self.ctx: Context | None = None
        self.bench: Benchmark | None = None
        self.probe: CallgrindProbe | None = None
        self.sampler: Any = None
        self.window: HeapWindow | None = None
        self.set_up = False
        self.counting = False  # instrumentation is on and the warm-up count made (`start_counting`)
        self.extra: ExtraWork | None = None
        self.paths: list[Path] = []


def _set_up_and_measure(spec: CaseSpec, report: WorkerReport, case: CaseState,
                        get_benchmark: Callable[[str], Benchmark]) -> None:
    set_up(spec, report, case, get_benchmark)
    assert case.bench is not None and case.ctx is not None
    iterate(spec, report, case)
    finish_measuring(report, case.bench, case.ctx)


def set_up(spec: CaseSpec, report: WorkerReport, case: CaseState,
           get_benchmark: Callable[[str], Benchmark]) -> None:
    """Everything before the first iteration: the benchmark's setup, threads, allocator, page cache, instruments.
    The counting server (workers/python/count_server.py) runs it once for all the processes it forks."""
    case.window = _heap_window()  # paused from here: only the timed call is recorded
    case.probe, extra = _instruments(spec)
    case.bench = bench = get_benchmark(spec.benchmark)
    inputs = {name: Path(doc["path"]) for name, doc in spec.inputs.items()}
    case.ctx = ctx = _context(spec, bench, inputs)
    bench.setup(ctx)
    case.set_up = True
    case.phases.mark("setup")
    report.threads["applied"] = apply_threads(ctx.threads)
    report.allocator = allocator = _allocator_state(spec.allocator)
    if spec.allocator != "default" and allocator["actual"] not in (None, spec.allocator):
        raise InvalidCase(f"allocator {spec.allocator} requested but Arrow uses {allocator['actual']}: this "
                          "pyarrow build lacks it")
    paths = list(inputs.values())
    if spec.cache == "warm":
        read_through(paths)
        report.cache["achieved"] = "warm"
    case.sampler = _sampler()
    case.extra, case.paths = extra, paths


def finish_measuring(report: WorkerReport, bench: Benchmark, ctx: Context) -> None:
    """What a report says of the case after its iterations: the file written, the work of one call, units."""
    if report.output is None and ctx.output_file_size is not None:
        report.output = {"rows": None, "columns": None, "checksum": None,
                         "file_size_bytes": ctx.output_file_size}
    work = bench.work(ctx)
    report.work = {"bytes": work.bytes, "rows": work.rows}
    report.units = dict(ctx.units)


def _context(spec: CaseSpec, bench: Benchmark, inputs: dict[str, Path]) -> Context:
    params = dict(spec.params)
    known = set(bench.full_grid().names)
    unknown = sorted(set(params) - known)
    if unknown:
        raise InvalidCase(f"params {unknown} are not params of {bench.name}")
    scratch = Path(spec.scratch_dir or _scratch_dir())
    scratch.mkdir(parents=True, exist_ok=True)
    return Context(params=params, inputs=inputs, threads=spec.threads, seed=spec.seed, scratch=scratch,
                   input_info=spec.inputs, measure=spec.measure)


def iterate(spec: CaseSpec, report: WorkerReport, case: CaseState, start: int = 0, stop: int | None = None) -> None:
    """The warmup and measured iterations: each timed (or counted), its output checked, and dropped before the next.
    `start`/`stop` cut the range. A counting server (workers/python/count_server.py) forks its processes inside this
    loop, at the first timed call (`_iteration`): each goes on with it from there."""
    probe, sampler, bench, ctx, extra, paths = case.probe, case.sampler, case.bench, case.ctx, case.extra, case.paths
    assert bench is not None and ctx is not None
    warmup, last = spec.warmup, spec.warmup + spec.iterations - 1
    for index in range(start, last + 1 if stop is None else min(stop, last + 1)):
        if spec.cache == "cold":
            report.cache["achieved"] = evict(paths, ctx.warn)
        if sampler is not None and index == warmup:
            sampler.enable()  # perf samples the timed iterations only (explain --profiler perf)
        if case.window is not None and index == 0:
            case.window.before_first_call()
        sample, output = _iteration(report, case, bench, ctx, extra, index - warmup)
        if sampler is not None and index == last:
            sampler.disable()
        if index == 0:
            report.first_iteration = dict(sample) or None
            if extra is not None and probe is None:
                ctx.warn(_size_extra_work(extra, sample["wall_s"]))
        _append(report.warmup_samples if index < warmup else report.samples, sample)
        _record_output(report, bench, ctx, output, measure_memory=index == last and probe is None)
        del output
        if probe is not None and _repeated(report.samples.get("instructions") or [], spec.repeat_within):
            break


def _iteration(report: WorkerReport, case: CaseState, bench: Benchmark, ctx: Context, extra: ExtraWork | None,
               measured: int) -> tuple[dict[str, float], Any]:
    """One call, timed; or under heaptrack traced (the measured ones); or under Valgrind counted (the first measured
    one starts the counting)."""
    probe = case.probe
    if case.window is not None and measured >= 0:
        if measured == 0:
            _see_arrow_pool(report)
        return _traced(bench, ctx, case.window, extra)
    if probe is None:
        return _timed(bench, ctx, extra, measured)
    if measured == 0 and not case.counting:
        first = start_counting(report, case)
        serving = os.environ.get("COLBENCH_COUNT_SERVER")
        if serving:  # a counting server: its measured processes are forked here, where a fresh worker goes on
            del first  # the server's own count and output, not held across the forks: each counts its own
            _serve_forks(report, case, serving)
            # in a forked process: its own warm-up count, in place of the server's, on the path a fresh process
            # takes from its warm-up count to its first timed call
            report.warmup_samples.pop("instructions", None)
            first = start_counting(report, case)
        if first is not None:  # a large first count: the first timed sample (KEEP_FIRST_COUNT_FROM)
            return first
    return _counted(bench, ctx, probe, extra, measured)


#: in a process forked by a counting server: where its result goes (the server's own result.json is not written)
_FORKED_RESULT: list[Path] = []


def _serve_forks(report: WorkerReport, case: CaseState, fds: str) -> None:
    """Turn into a counting server (workers/python/count_server.py); returns in each forked process, which then makes
    its own warm-up count (kept in place of the server's, `_iteration`): the first call after the fork counted
    0.8-1.0% more than the calls after it on the placebo (2,000 int allocations: the request's few objects in the
    small-object pools), where the second agreed with fresh processes' timed calls within 0.02%. The warm-up count is
    made by `start_counting` as a fresh process makes it, so the path from it to the first timed call is a fresh
    process's: made inside the fork's callback, that first timed call counted +0.05-0.4% over the second, by what
    else the worker module held (measured while merging the suite servers: +0.36% with the cycle stopping rule)."""
    from colbench.workers.python.count_server import serve_here

    def forked(seed: int) -> None:
        assert case.probe is not None and case.ctx is not None and case.bench is not None
        case.probe.forked()
        case.ctx.seed = seed
        case.set_up = False  # the server owns the case's setup and tears it down once
        case.phases = _Phases(True)
        case.phases.seconds.pop("start", None)  # the fork: nothing; start, setup and warm-ups are the server's

    _FORKED_RESULT.append(serve_here(case, fds, forked))


def _record_output(report: WorkerReport, bench: Benchmark, ctx: Context, output: Any, measure_memory: bool) -> None:
    check = _check_output(bench, ctx, output)
    if check is not None:
        report.output = {"rows": check.rows, "columns": check.columns, "checksum": check.checksum,
                         "file_size_bytes": ctx.output_file_size}
    if measure_memory:  # once, untimed; a count under Valgrind would pay 20-50x for it
        size = memory_size(output)
        if size is not None:
            report.output = {**(report.output or {"rows": None, "columns": None, "checksum": None,
                                                  "file_size_bytes": ctx.output_file_size}),
                             "memory_bytes": size}


def _stop_and_tear_down(report: WorkerReport, case: CaseState) -> None:
    if case.probe is not None:
        case.probe.stop()
        case.phases.mark("counting")
    if case.sampler is not None:
        with contextlib.suppress(Exception):  # a perf that went away must not hide the case's own result
            case.sampler.disable()
    if case.bench is not None and case.ctx is not None and case.set_up:
        try:
            case.bench.teardown(case.ctx)
        except Exception as exc:
            report.warnings.append(f"teardown failed: {type(exc).__name__}: {exc}")


def _finish_report(spec: CaseSpec, report: WorkerReport, case: CaseState) -> None:
    if case.ctx is not None:
        for warning in case.ctx.warnings:
            report.warn(warning)
    report.memory = _process_memory()
    if "applied" not in report.threads:
        report.threads["applied"] = apply_threads(spec.threads)
    report.versions = loaded_versions()
    report.phases = case.phases.seconds or None


class _Phases:
    """Under Valgrind, the process's CPU seconds per phase: `start` (the interpreter and colbench's imports), `setup`
    (the benchmark's, with the library's imports), `warmup` (uninstrumented) and `counting` (instrumented calls)."""

    def __init__(self, on: bool) -> None:
        self.on = on
        self.seconds: dict[str, float] = {}
        self._last = 0.0
        self.mark("start")

    def mark(self, phase: str) -> None:
        if not self.on or phase in self.seconds:
            return
        now = sum(_cpu_times())
        self.seconds[phase] = round(max(0.0, now - self._last), 3)
        self._last = now


def _scratch_dir() -> str:
    import tempfile

    return tempfile.mkdtemp(prefix="colbench-scratch-")


def _fail(report: WorkerReport, kind: str, message: str) -> None:
    import traceback

    report.fail(kind, message, traceback.format_exc())


def write_atomically(path: Path, document: dict[str, Any]) -> None:
    """Write, then rename: a worker killed while writing leaves no half file. Not data.atomic.write_atomic, on
    purpose: the orchestrator reads this file as soon as the process has exited (from the page cache) and a
    power cut loses the temporary directory anyway, so its two fsyncs (and its imports) would only add to every
    execution's overhead (~20 ms here under load)."""
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w") as handle:
        json.dump(document, handle, default=str)
    os.replace(tmp, path)


def _preload(doc: dict[str, Any]) -> None:
    """A suite server's imports (workers/python/suite_server.py): the benchmark of its first case (`doc["case"]`)
    looked up as `measure_case` looks it up. A lookup that fails is left to each process of the case, which reports
    it as a fresh worker would."""
    if not doc.get("case"):
        return
    spec = CaseSpec.from_json(doc["case"])
    with contextlib.suppress(Exception):
        benchmark_lookup(spec)(spec.benchmark)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 2:
        print("usage: python -m colbench.worker CASE_JSON RESULT_JSON", file=sys.stderr)
        return 2
    faulthandler.enable()  # a segfault leaves a Python traceback on stderr for the error result
    case_path, result_path = Path(argv[0]), Path(argv[1])
    suite = os.environ.get("COLBENCH_SUITE_SERVER")
    if suite:  # a suite server (workers/python/suite_server.py): returns in each forked process, with its case
        from colbench.workers.python.suite_server import serve

        served = serve(suite, case_path, _preload)
        if served is None:  # its imports only (compiled natively before a server starts)
            return 0
        case_path, result_path = served
        _FORKED_RESULT.append(result_path)
    try:
        spec = json.loads(case_path.read_text())
    except (OSError, ValueError) as exc:
        print(f"colbench worker: cannot read case file {case_path}: {exc}", file=sys.stderr)
        return 2
    result = run_case(spec)
    if _FORKED_RESULT:  # forked by a counting server: its own result file, and no interpreter exit (the server's)
        code = 0
        try:
            write_atomically(_FORKED_RESULT[0], result)
        except BaseException:
            code = 1
        os._exit(code)
    write_atomically(result_path, result)
    return 0
