"""Counting processes side by side on this machine: a run that only counts instructions runs up to `jobs` of its
processes at once (`run --jobs N`; by default one per CPU this process may use, as memory allows).

Why counts only: an instruction count is the process's own, whatever runs beside it (docs/metrics.md: the counts of
a case agree within 0.01% whether its processes ran one at a time or side by side), so a 2-core machine counts a
suite in half the wall time. Wall times are not: two workers side by side share caches, memory bandwidth and the
CPU's clock, so a run that measures wall time runs one worker at a time, as it always did (hyperfine and pyperf
never run two measured commands at once either).

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


def local_jobs(config: RunConfig) -> int:
    """How many executions of a run this machine runs at once: `config.jobs` where given (PlanError when it asks
    for more than one with wall time measured), else one per usable CPU for a run that counts instructions only
    (no wall time, no profiles kept), as many as the available memory holds at MEMORY_PER_JOB each; else 1."""
    counts_only = config.measure == ("instructions",) and not config.profile and not config.profile_memory
    if config.jobs is not None:
        if config.jobs > 1 and not counts_only:
            raise PlanError(f"--jobs {config.jobs} runs processes side by side, which only instruction counts "
                            "allow (wall times of side-by-side workers disturb each other, and profiles are made "
                            "one at a time): use --measure instructions, or leave --jobs out")
        return config.jobs
    if not counts_only:
        return 1
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    room = int(psutil.virtual_memory().available // MEMORY_PER_JOB)
    return max(1, min(cpus, room))


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
