"""The shapes `colbench explain` is shown from: what the text reads of the use case's outcome, and the JSON
document it writes (`explain.json` beside each flame graph, and `explain --format json`).

The outcome's dataclasses live with the use case (app/explain.py: `Explanation`, `CaseExplanation`,
`SideProfile`), a layer above this one, so the text names what it reads of them as read-only protocols.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, NotRequired, Protocol, TypedDict

from colbench.profiles.diff import ProfileDiff

#: the lowest and highest instruction count a side's stored results hold, when they counted instructions
CountRange = tuple[float, float]


class ProfileSource(Protocol):
    """Where one side's profile came from (app/explain.SideProfile)."""

    @property
    def source(self) -> str: ...
    @property
    def path(self) -> Path | None: ...
    @property
    def perf_map(self) -> Path | None: ...
    @property
    def seconds(self) -> float: ...
    @property
    def error(self) -> str | None: ...
    @property
    def warnings(self) -> list[str]: ...


class ExplainedCase(Protocol):
    """One case's profiles, their diff and `compare`'s verdict (app/explain.CaseExplanation)."""

    @property
    def case_id(self) -> str: ...
    @property
    def label(self) -> str: ...
    @property
    def baseline(self) -> ProfileSource: ...
    @property
    def contender(self) -> ProfileSource: ...
    @property
    def diff(self) -> ProfileDiff | None: ...
    @property
    def verdict(self) -> str | None: ...
    @property
    def flamegraph(self) -> Path | None: ...
    @property
    def error(self) -> str | None: ...
    @property
    def stored_instructions(self) -> tuple[CountRange | None, CountRange | None]: ...


class ExplainOutcome(Protocol):
    """Every case of one `colbench explain` (app/explain.Explanation)."""

    @property
    def baseline(self) -> str: ...
    @property
    def contender(self) -> str: ...
    @property
    def cases(self) -> Sequence[ExplainedCase]: ...
    @property
    def folder(self) -> Path: ...
    @property
    def seconds(self) -> float: ...
    @property
    def notes(self) -> list[str]: ...


class CostChange(TypedDict):
    baseline: int
    contender: int
    change: int


class FunctionDocument(TypedDict):
    function: str
    short: str
    library: str
    self: CostChange
    inclusive: CostChange
    share: float | None
    noise: int | None
    within_noise: bool


class ProfileDocument(TypedDict):
    source: str
    path: str | None
    python_names: str | None
    seconds: float
    error: str | None
    warnings: list[str]


class SideDocument(TypedDict):
    label: str
    total: int
    python_named: bool
    caller_depth: int


class CaseDocument(TypedDict):
    """One case (`explain.json`); the keys from `metric` on only when both profiles were read and diffed."""

    case_id: str
    label: str
    verdict: str | None
    error: str | None
    profiles: dict[str, ProfileDocument]
    flamegraph: str | None
    metric: NotRequired[str]
    unit: NotRequired[str]
    baseline: NotRequired[SideDocument]
    contender: NotRequired[SideDocument]
    total_change: NotRequired[int]
    ratio: NotRequired[float | None]
    total_noise: NotRequired[int | None]
    changed_functions: NotRequired[int]
    listed_share: NotRequired[float | None]
    functions: NotRequired[list[FunctionDocument]]
    notes: NotRequired[list[str]]
    #: `--metric memory`: each side's churn, allocations, recorded peak RSS and the profiling worker's figures
    memory: NotRequired[dict[str, Any]]


class ExplanationDocument(TypedDict):
    """`explain --format json`: every case's document under the schema's name."""

    schema: str
    baseline: str
    contender: str
    folder: str
    seconds: float
    notes: list[str]
    cases: list[CaseDocument]
