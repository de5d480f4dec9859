"""Counting processes side by side on this machine: a run that only counts instructions may run up to `jobs` of its
processes at once (`run --jobs N`; the default is one at a time).

Why counts only: a count is the process's own, and wall times of side-by-side workers disturb each other (caches,
memory bandwidth, the CPU's clock), so a run that measures wall time runs one worker at a time (hyperfine and pyperf
never run two measured commands at once either). Why not by default: a count is its own only where the code does
not depend on time. A Feather read of pyarrow (zstd and lz4, 100,000 rows), counted two at a time, counted
+0.04% to +0.26% more than one at a time, in every process and the same in a Dask cluster of 2 workers on one
machine; the placebo (pure Python) counted the same. Multi-threaded libraries wait on each other for as long as the
other core lets them, and that moves a count across the 0.25% threshold. The two sides of a run are counted the same
way, so a run's verdicts hold; runs counted with different `--jobs` must not be compared (the run record keeps its
jobs).

The run loop still alone writes the store, in its own thread; the jobs' threads only wait on their workers (each
asleep on its worker's exit or its server's reply, no polling). A stop signal reaches the loop's thread: every
worker and counting server of the run is killed, the jobs' threads return, and the loop stores the run as
interrupted, as with one job.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING

import psutil

from colbench.model.records import Result
from colbench.model.run_config import RunConfig
from colbench.runner.executor import Job, Started
from colbench.runner.plan import Execution, PlanError

if TYPE_CHECKING:
    from concurrent.futures import Future

#: memory a counting job is given room for (a pyarrow read under Valgrind: 0.3-1 GB, its server as much again)
MEMORY_PER_JOB = 2 * 2**30


def local_jobs(config: RunConfig, *, check: bool = False) -> int:
    """How many executions of a run this machine runs at once: 1, or `config.jobs` for a run that counts
    instructions only, at most as many as the CPUs this process may use and the available memory (MEMORY_PER_JOB
    each) allow. `check` (before a run starts): PlanError instead, for jobs with wall time or profiles, or more
    than fit; later (a look of a long run, when memory is shorter) fewer run at once, never an error."""
    if config.jobs is None or config.jobs == 1:
        return 1
    if config.measure != ("instructions",) or config.profile or config.profile_memory:
        if not check:
            return 1
        raise PlanError(f"--jobs {config.jobs} runs processes side by side, which only instruction counts "
                        "allow (wall times of side-by-side workers disturb each other, and profiles are made "
                        "one at a time): use --measure instructions, or leave --jobs out")
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    room = max(1, int(psutil.virtual_memory().available // MEMORY_PER_JOB))
    if check and config.jobs > min(cpus, room):
        most = min(cpus, room)
        raise PlanError(f"--jobs {config.jobs}: this machine runs at most {most} counting "
                        f"process{'es' if most > 1 else ''} at once ({cpus} CPU{'s' if cpus > 1 else ''} this "
                        f"process may use, memory for {room} at 2 GiB each): give --jobs {most} or leave it out")
    return min(config.jobs, cpus, room)


def side_by_side(executions: Sequence[Execution], job: Job, started: Started, jobs: int,
                 run_one: Callable[[Execution], Result], stop_all: Callable[[], None],
                 ) -> Iterator[tuple[Execution, Result]]:
    """Each execution through `run_one` in one of `jobs` threads, at most `jobs` at once in the scheduled order,
    each yielded with its result as it completes. `started` and `job.skip` are called in the caller's thread (the
    progress view and the run loop's state are its own). Whatever ends the iteration early (a stop signal, the
    caller's error, the caller closing it) calls `stop_all` (kill every running worker and server) before the
    threads are joined, so nothing outlives the run."""
    from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait

    pending = iter(enumerate(executions))
    running: dict[Future[Result], tuple[int, Execution]] = {}
    with ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="colbench-job") as pool:

        def submit_next() -> bool:
            for index, execution in pending:
                if job.skip(execution):
                    continue
                started(execution)
                running[pool.submit(run_one, execution)] = (index, execution)
                return True
            return False

        try:
            while len(running) < jobs and submit_next():
                pass
            while running:
                done, _ = wait(running, return_when=FIRST_COMPLETED)
                for future in sorted(done, key=lambda f: running[f][0]):
                    _, execution = running.pop(future)
                    result = future.result()
                    submit_next()  # the next one starts before this result is stored: the CPU stays busy
                    yield execution, result
        except BaseException:
            stop_all()
            for future in running:
                future.cancel()
            raise
