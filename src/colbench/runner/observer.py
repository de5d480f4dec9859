"""The hooks a run reports its progress through (`ExecutionHooks`: `execute_run` calls them; `app.run.RunObserver`
adds the use case's own events and the CLI's live view implements them). A module of its own so that what only wants
the hooks does not import the run loop."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from colbench.model.records import Result, Run
    from colbench.runner.plan import Execution, PlannedCase


class ExecutionHooks:
    """What the run loop tells of its executions (a case starts, an execution is stored …); `app.run.RunObserver`
    adds the use case's own events to them, and the CLI's Rich progress implements both."""

    def preparing(self, what: str) -> None:
        """A step before the workers (the machine's memory bandwidth, the input data) begins: a view says it only
        if it lasts (a quiet step stays quiet; a slow one is never silence)."""
    def at_once(self, slots: int) -> None:
        """At most `slots` executions run side by side (`run --jobs`, a cluster's workers): a view counts what is
        left that many at a time. Told, not inferred: the next process starts before the last one's result is
        stored (runner/local_jobs.py), so one more than `slots` is briefly running."""
    def start(self, run: Run, cases: int, executions: int) -> None: ...
    def case_started(self, case: PlannedCase) -> None: ...
    def execution_started(self, execution: Execution) -> None: ...
    def execution_done(self, execution: Execution, result: Result) -> None: ...
    def case_done(self, case: PlannedCase, results: list[Result]) -> None: ...
    def profiling(self, execution: Execution) -> None:
        """`run --profile`: one more worker, under callgrind, profiles this case and environment."""
    def finish(self, run: Run) -> None: ...
