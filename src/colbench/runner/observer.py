"""The hooks a run reports its progress through (`execute_run` calls them; `app.run.RunObserver` adds the use
case's own events and the CLI's live view implements them). A module of its own so that what only wants the hooks
does not import the run loop."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from colbench.runner.plan import PlannedCase


class RunObserver:
    """Hooks for a live view; the CLI's Rich progress implements them."""

    def start(self, run: dict[str, Any], cases: int, executions: int) -> None: ...
    def case_started(self, case: PlannedCase) -> None: ...
    # `execution`: a `runner.execute.Execution` (named here, the run loop's module would import this one back)
    def execution_done(self, execution: Any, result: dict[str, Any]) -> None: ...
    def case_done(self, case: PlannedCase, results: list[dict[str, Any]]) -> None: ...
    def finish(self, run: dict[str, Any]) -> None: ...
