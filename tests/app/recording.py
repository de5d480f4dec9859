"""A run observer that records every event it is told, for tests that call the use cases directly."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from colbench.app.run import RunObserver
from colbench.model.records import Result, Run


class Recorder(RunObserver):
    def __init__(self) -> None:
        self.events: list[tuple[Any, ...]] = []

    def kinds(self) -> list[str]:
        return [event[0] for event in self.events]

    def of(self, kind: str) -> list[tuple[Any, ...]]:
        return [event for event in self.events if event[0] == kind]

    def at_once(self, slots: int) -> None:
        self.events.append(("at_once", slots))

    def start(self, run: Run, cases: int, executions: int) -> None:
        self.events.append(("start", run.run_id, cases, executions))

    def case_started(self, case: Any) -> None:
        self.events.append(("case_started", case.case_id))

    def execution_done(self, execution: Any, result: Result) -> None:
        self.events.append(("execution_done", result.case_id, result.env_name, result.status))

    def case_done(self, case: Any, results: list[Result]) -> None:
        self.events.append(("case_done", case.case_id, len(results)))

    def finish(self, run: Run) -> None:
        self.events.append(("finish", run.status))

    def skipped(self, benchmark: str, params: Mapping[str, Any], reason: str) -> None:
        self.events.append(("skipped", benchmark, dict(params), reason))

    def said(self, text: str) -> None:
        self.events.append(("said", text))

    def blocks_chosen(self, envs: int, blocks: int, decider: str | None, budget_s: float | None = None,
                      per_first_look: float | None = None) -> None:
        self.events.append(("blocks_chosen", envs, blocks, decider, budget_s))

    def looked(self, look: Any, next_look: Any, budget_s: float) -> None:
        self.events.append(("looked", look.number, look.pending, next_look is not None, budget_s, look.ended))
