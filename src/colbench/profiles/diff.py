"""Where the instructions went: two profiles of the same case, the functions whose cost changed most.

The change of the total (contender − baseline) is exactly the sum of every function's change of *self* cost
(the instructions executed in the function's own code), so each function's share of the total change is
well defined and shares of different functions add: the listed functions "account for" the sum of their
shares. Inclusive cost (the function and everything it called) is shown beside it — it tells a caller that
does more calls from a callee that got slower — but inclusive changes overlap and are never summed.

Ranking is by the size of the self change, either sign: a slowdown that is +12% here and −2% there lists both,
with shares of 120% and −20% of a +10% total. When the totals are equal there is no change to share (shares
are None) and the listing says so; nor when the total change is small beside what moved between functions
(`SPLIT_FLOOR`): a +0.1% total over functions that moved ±4% would give shares of ±3500%, which say nothing, so
the listing says the total is too small to split and shows the changes alone.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from colbench.profiles.callgrind import Frame
from colbench.profiles.stacks import inclusive_costs, self_costs
from colbench.profiles.view import ProfileView, StrippedLibrary, load_view

DEFAULT_TOP = 15
#: the total change is split into shares only when it is at least this fraction of the functions' own changes
#: summed whatever their sign (so no share exceeds ±1000%); below it, shares are None
SPLIT_FLOOR = 0.1


@dataclass(frozen=True)
class FunctionChange:
    function: str
    library: str
    self_a: float
    self_b: float
    inclusive_a: float
    inclusive_b: float
    #: this function's self change as a fraction of the total change (None when the total did not change)
    share: float | None
    #: one standard error of the self change where costs are sampled (perf), None where they are counted
    noise: float | None = None
    #: a Python function's first lines on each side (from its code objects; none known: ())
    lines: tuple[tuple[int, ...], tuple[int, ...]] = ((), ())

    @property
    def within_noise(self) -> bool:
        """A sampled change smaller than two standard errors: it may be chance."""
        return self.noise is not None and abs(self.delta_self) < 2 * self.noise

    @property
    def delta_self(self) -> float:
        return self.self_b - self.self_a

    @property
    def delta_inclusive(self) -> float:
        return self.inclusive_b - self.inclusive_a


@dataclass(frozen=True)
class SideSummary:
    label: str
    total: int
    python_named: bool
    caller_depth: int
    stripped: list[StrippedLibrary] = field(default_factory=list)


@dataclass(frozen=True)
class ProfileDiff:
    baseline: SideSummary
    contender: SideSummary
    changes: list[FunctionChange]
    #: how many functions changed at all (the listed ones are the largest of these)
    changed_functions: int
    #: the listed functions' share of the total change: the sum of their shares (None: no total change)
    listed_share: float | None
    #: the unit of every cost: "instructions", or "ns" of CPU time (see ProfileView.unit)
    unit: str = "instructions"
    #: one standard error of the total change where costs are sampled (perf), None where they are counted
    total_noise: float | None = None
    #: every function's self change summed whatever its sign: what moved, of which the total change is the net
    moved: float = 0.0

    @property
    def too_small_to_split(self) -> bool:
        """A total change too small beside what moved between functions for shares to mean anything."""
        return self.total_change != 0 and abs(self.total_change) < SPLIT_FLOOR * self.moved

    @property
    def total_within_noise(self) -> bool:
        return self.total_noise is not None and abs(self.total_change) < 2 * self.total_noise

    @property
    def total_change(self) -> int:
        return self.contender.total - self.baseline.total

    @property
    def ratio(self) -> float | None:
        return self.contender.total / self.baseline.total if self.baseline.total else None


def diff_profiles(baseline: ProfileView, contender: ProfileView, top: int = DEFAULT_TOP,
                  noise: Callable[[Frame], float] | None = None, total_noise: float | None = None) -> ProfileDiff:
    """The `top` functions whose self cost changed most between two profiles of one case."""
    self_a, self_b = self_costs(baseline.folded), self_costs(contender.folded)
    incl_a, incl_b = inclusive_costs(baseline.folded), inclusive_costs(contender.folded)
    total_change = contender.total - baseline.total
    frames: set[Frame] = set(incl_a) | set(incl_b)
    changed = [f for f in frames if round(self_b.get(f, 0.0)) != round(self_a.get(f, 0.0))]
    changed.sort(key=lambda f: (-abs(self_b.get(f, 0.0) - self_a.get(f, 0.0)), f.name, f.object))
    moved = sum(abs(self_b.get(f, 0.0) - self_a.get(f, 0.0)) for f in changed)
    split = total_change != 0 and abs(total_change) >= SPLIT_FLOOR * moved
    rows = []
    for frame in changed[:max(0, top)]:
        delta = self_b.get(frame, 0.0) - self_a.get(frame, 0.0)
        rows.append(FunctionChange(frame.name, frame.object, self_a.get(frame, 0.0), self_b.get(frame, 0.0),
                                   incl_a.get(frame, 0.0), incl_b.get(frame, 0.0),
                                   delta / total_change if split else None,
                                   noise(frame) if noise is not None else None,
                                   (baseline.python_lines.get(frame.name, ()),
                                    contender.python_lines.get(frame.name, ()))))
    listed = sum(r.share for r in rows if r.share is not None) if split else None
    return ProfileDiff(_summary(baseline), _summary(contender), rows, len(changed), listed, baseline.unit,
                       total_noise, moved)


def _summary(view: ProfileView) -> SideSummary:
    return SideSummary(view.label, view.total, view.python_named, view.caller_depth, list(view.stripped))


PERF_SUFFIX = ".perf.gz"


@dataclass(frozen=True)
class DiffedFiles:
    diff: ProfileDiff
    baseline: ProfileView
    contender: ProfileView


def diff_files(baseline: Path, contender: Path, labels: tuple[str, str], *, perf_maps: tuple[Path | None,
               Path | None] = (None, None), top: int = DEFAULT_TOP, calls: int = 1) -> DiffedFiles:
    """Read two profiles of one case — callgrind's, or perf's samples of `calls` timed calls (`*.perf.gz`, with
    each change's sampling noise) — and diff them. ProfileError (or OSError) when a file cannot be read."""
    from colbench.profiles.perf_script import perf_view, sampling_error, total_sampling_error

    if baseline.name.endswith(PERF_SUFFIX):
        (view_a, counts_a), (view_b, counts_b) = (perf_view(baseline, labels[0], calls, perf_maps[0]),
                                                  perf_view(contender, labels[1], calls, perf_maps[1]))
        diff = diff_profiles(view_a, view_b, top, noise=functools.partial(sampling_error, counts_a, counts_b),
                             total_noise=total_sampling_error(counts_a, counts_b))
    else:
        view_a = load_view(baseline, perf_maps[0], labels[0])
        view_b = load_view(contender, perf_maps[1], labels[1])
        diff = diff_profiles(view_a, view_b, top)
    return DiffedFiles(diff, view_a, view_b)
