"""The JSON documents `colbench explain` writes (`explain.json` beside each flame graph, and `explain --format
json`); what they are made from is typed in profiles/explanation.py (`Explanation`, `CaseExplanation`,
`SideProfile`)."""

from __future__ import annotations

from typing import Any, NotRequired, TypedDict


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
    #: a Python function's first lines on each side (from its code objects, looked up by the profiled worker)
    lines: NotRequired[dict[str, list[int]]]


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
    #: every function's self change summed whatever its sign, and whether the total is too small beside it to
    #: split into shares (profiles/diff.py)
    moved: NotRequired[float]
    too_small_to_split: NotRequired[bool]
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
