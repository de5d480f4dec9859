"""Where a run's executions run: the seam between the run loop (`execute.execute_run`, which alone writes the store)
and what starts the worker processes, as hyperfine's `Executor` trait separates its shell runner from what it times.

`execute.LocalExecutor` (the default) runs each execution here, one after another, as colbench always did;
`runner.cluster.DaskExecutor` (`--cluster`) sends them to the workers of a Dask cluster and hands their results
back as they arrive. A use case chooses one for the runs it starts with `using_executor`; the run loop asks
`current_executor()` and falls back to the local one. Either way the loop stores each result the moment it has it,
so an interrupted run resumes with `run --resume` whatever ran it.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from colbench.model.records import InputFile, Result, Run
from colbench.model.run_config import RunConfig
from colbench.runner.plan import Execution
from colbench.store.base import Store


@dataclass(frozen=True)
class Job:
    """What every execution of one pass of the run loop shares: the run record, its config and resolved counts,
    Valgrind's toolchain when it counts (None otherwise), and the input files this machine prepared (case id →
    its inputs; an executor whose workers are elsewhere prepares them there)."""

    run: Run
    config: RunConfig
    iterations: int
    warmup: int
    toolchain: Any
    inputs: Mapping[str, dict[str, InputFile]]
    #: where the run's results go (read only: which worker measured a case's earlier blocks)
    store: Store | None = None
    #: executions to leave out as the loop goes (`stop_failing`: a case that failed in an environment); the local
    #: executor asks before each one, a cluster's has submitted them all already
    skip: Callable[[Execution], bool] = lambda execution: False


#: `started(execution)`: the executor says an execution is about to run (or, on a cluster, that its result is in)
Started = Callable[[Execution], None]


class Executor(Protocol):
    """Runs executions and yields each with its result, in any order; never writes the store."""

    #: what the run records as its executor ("local", or "dask tcp://…")
    label: str

    def results(self, executions: Sequence[Execution], job: Job, started: Started,
                ) -> Iterator[tuple[Execution, Result]]: ...

    def check(self, job: Job, executions: Sequence[Execution]) -> None:
        """Refuse, before anything runs, what this executor cannot measure soundly (a PlanError in one line)."""

    def slots(self) -> int:
        """How many tasks run at once (1 here; a cluster's workers' threads): a session's budget is wall time of
        the whole run, so the next look is sized by what runs side by side."""


_CURRENT: contextvars.ContextVar[Executor | None] = contextvars.ContextVar("colbench_executor", default=None)


def current_executor() -> Executor | None:
    """The executor the use case chose for its runs (None: the local one)."""
    return _CURRENT.get()


@contextlib.contextmanager
def using_executor(executor: Executor | None) -> Iterator[None]:
    """Every run started inside the block runs on `executor` (None: the local runner)."""
    token = _CURRENT.set(executor)
    try:
        yield
    finally:
        _CURRENT.reset(token)
