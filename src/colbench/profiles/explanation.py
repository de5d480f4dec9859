"""What `colbench explain` found: each case's two profiles, where they came from, their diff and `compare`'s
verdict (app/explain.py makes these; report/explain_text.py shows them and writes their JSON documents)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from colbench.profiles.diff import ProfileDiff

#: the lowest and highest instruction count a side's stored results hold, when they counted instructions
CountRange = tuple[float, float]


@dataclass
class SideProfile:
    """Where one side's profile came from: `stored` by `run --profile`, or `re-run` now."""

    source: str
    path: Path | None = None
    perf_map: Path | None = None
    seconds: float = 0.0
    error: str | None = None
    warnings: list[str] = field(default_factory=list)


@dataclass
class CaseExplanation:
    """One case's profiles, their diff and `compare`'s verdict."""

    case_id: str
    label: str
    baseline: SideProfile
    contender: SideProfile
    diff: ProfileDiff | None = None
    verdict: str | None = None
    flamegraph: Path | None = None
    report: Path | None = None
    error: str | None = None
    #: the range of instructions the stored results counted per side (lowest, highest), to check the profiles
    stored_instructions: tuple[CountRange | None, CountRange | None] = (None, None)


@dataclass
class Explanation:
    """Every case of one `colbench explain`."""

    baseline: str
    contender: str
    cases: list[CaseExplanation]
    folder: Path
    seconds: float
    notes: list[str] = field(default_factory=list)
