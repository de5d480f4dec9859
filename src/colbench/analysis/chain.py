"""A history's points on one scale, from comparisons rather than from pooled times.

A point of a history (a version of a library, a commit, the code as a date found it) may be measured in several runs
made hours apart under different load; their raw times do not compare (issue 37: a bisect's 19.0.1 at 58.6 ms from
a quiet hour beside 26.0.1 at 145.8 ms from a busy one, CV ±60%). So each point is placed relative to one reference
point through what was measured side by side:

- **Within a run**, each point is compared with the run's anchor (the point of the run measured in the most runs)
  by the one comparison's statistics (`analysis.verdicts.compare_suite`, paired by block: the per-process values of
  one block ran back to back, so the machine's state cancels): a ratio with its interval.
- **Across runs**, through a point both runs measured: a ratio to it in one run times its ratio to the reference in
  the other. Chains are the shortest in variance (Dijkstra over the squared log half-widths); the chain's interval
  adds the half-widths of its links in quadrature (links from different runs are independent). Two runs that
  compared the same pair are combined first (inverse-variance).
- **Raw medians across runs** only where the machine's calibration says they can be trusted
  (`BetweenRuns`): a metric whose noise does not depend on load (instruction counts, `Metric.stable_noise`), or
  repeated runs of unchanged code on this machine whose medians agree within a third of the threshold.
- Anything else is **incomparable** to the reference, and said to be: it keeps its raw median for the table, and no
  change point is looked for across it.
"""

from __future__ import annotations

import heapq
import math
from collections import defaultdict
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from colbench.analysis.scipy_stats import stats
from colbench.analysis.verdicts import CaseInput, compare_suite
from colbench.model.metrics import DEFAULT_THRESHOLD

#: the error level of each link's interval (as `colbench compare`'s default)
ALPHA = 0.01
#: repeated runs of unchanged code a between-run calibration needs
CALIBRATION_RUNS = 3
#: raw medians are trusted when the between-run spread is at most this share of the threshold
TRUSTED_SHARE = 1 / 3


@dataclass(frozen=True)
class Measurement:
    """A point as one run measured it: `node` is what was measured (a version with its interpreter, or one identity
    of code), `values` per process with their `blocks` (None: not interleaved)."""

    node: Hashable
    run_id: str
    env_name: str
    values: tuple[float, ...]
    blocks: tuple[int | None, ...]
    when: str = ""

    @property
    def median(self) -> float:
        return float(np.median(self.values))


@dataclass(frozen=True)
class Placed:
    """A node relative to the reference: `ratio` with its interval (None: incomparable), and how it was reached."""

    ratio: float | None
    low: float | None
    high: float | None
    via: str


#: a node with no measurement on a ratio scale (`usable`): shown with its values, placed nowhere
UNPLACEABLE = Placed(None, None, None, "incomparable: its values are not all positive and finite")


@dataclass(frozen=True)
class BetweenRuns:
    """What repeated runs of the same node say about comparing raw medians across runs on this machine."""

    trusted: bool
    #: sd of log run medians between runs of the same node (None: not enough repeats)
    spread: float | None
    runs: int
    reason: str


@dataclass
class Placement:
    reference: Hashable | None
    nodes: dict[Hashable, Placed] = field(default_factory=dict)
    calibration: BetweenRuns | None = None


@dataclass(frozen=True)
class _Link:
    log_ratio: float
    half_width: float  # of the log interval, at ALPHA
    runs: tuple[str, ...]


def usable(m: Measurement) -> bool:
    """Whether a measurement can be placed on a ratio scale: values, every one positive and finite. A store may
    hold a median of 0 or below (a worker reports what it measured; a metric of a difference can be negative):
    such a point is left unplaced (incomparable), never a log of it (issue 48: "math domain error")."""
    return bool(m.values) and all(v > 0 and math.isfinite(v) for v in m.values)


def between_runs(measurements: Sequence[Measurement], *, stable_noise: bool,
                 threshold: float = DEFAULT_THRESHOLD) -> BetweenRuns:
    """Whether raw medians compare across runs here: always for a metric of stable noise; else when at least
    CALIBRATION_RUNS runs measured one unchanged node and their medians spread (pooled sd of log medians) at most
    TRUSTED_SHARE of the threshold."""
    if stable_noise:
        return BetweenRuns(True, None, 0, "its noise does not change with the machine's load")
    groups: dict[Hashable, list[float]] = defaultdict(list)
    for m in measurements:
        if usable(m):
            groups[m.node].append(math.log(m.median))
    repeated = [g for g in groups.values() if len(g) >= 2]
    runs = sum(len(g) for g in repeated)
    dof = sum(len(g) - 1 for g in repeated)
    if runs < CALIBRATION_RUNS or dof < CALIBRATION_RUNS - 1:
        return BetweenRuns(False, None, runs, f"{runs} repeated run(s) of unchanged code: a between-run calibration "
                           f"needs {CALIBRATION_RUNS}")
    squares = sum(float(np.sum((np.asarray(g) - np.mean(g)) ** 2)) for g in repeated)
    spread = math.sqrt(squares / dof)
    limit = TRUSTED_SHARE * threshold
    if spread <= limit:
        return BetweenRuns(True, spread, runs, f"runs of unchanged code agree within ±{spread:.1%} (at most "
                           f"±{limit:.1%})")
    return BetweenRuns(False, spread, runs, f"runs of unchanged code differ by ±{spread:.1%} between runs (more "
                       f"than ±{limit:.1%})")


def _link(base: Measurement, other: Measurement, metric: str) -> _Link | None:
    """`other` / `base` measured in one run, paired by block where both were interleaved."""
    paired = None not in base.blocks and None not in other.blocks
    case = CaseInput(baseline=[[v] for v in base.values], contender=[[v] for v in other.values], metric=metric,
                     baseline_blocks=[int(b) for b in base.blocks if b is not None] if paired else None,
                     contender_blocks=[int(b) for b in other.blocks if b is not None] if paired else None,
                     basis="wall" if metric == "time" else "value")
    try:
        (found,) = compare_suite({"link": case}, alpha=ALPHA)
    except ValueError:
        return None
    if not (found.ratio > 0 and found.ci_low > 0 and math.isfinite(found.ci_high)):
        return None
    log_ratio = math.log(found.ratio)
    half = max(math.log(found.ci_high) - log_ratio, log_ratio - math.log(found.ci_low), 1e-9)
    return _Link(log_ratio, half, (base.run_id,))


def _combined(links: Sequence[_Link]) -> _Link:
    """Parallel links of one pair from several runs, inverse-variance weighted."""
    weights = [1 / link.half_width ** 2 for link in links]
    total = sum(weights)
    log_ratio = sum(w * link.log_ratio for w, link in zip(weights, links, strict=True)) / total
    return _Link(log_ratio, 1 / math.sqrt(total), tuple(r for link in links for r in link.runs))


def _runs_of(measurements: Sequence[Measurement]) -> dict[str, list[Measurement]]:
    by_run: dict[str, list[Measurement]] = defaultdict(list)
    for m in measurements:
        if usable(m):
            by_run[m.run_id].append(m)
    return by_run


def place(measurements: Sequence[Measurement], order: Sequence[Hashable], *, metric: str = "time",
          stable_noise: bool = False, threshold: float = DEFAULT_THRESHOLD,
          reference: Hashable | None = None) -> Placement:
    """Every node of `order` relative to the reference (`reference`, else the node measured in the most runs, the
    latest in `order` on a tie): raw medians where the calibration trusts them, else chains of within-run
    comparisons, else incomparable."""
    by_run = _runs_of(measurements)
    runs_of_node: dict[Hashable, set[str]] = defaultdict(set)
    for run_id, members in by_run.items():
        for m in members:
            runs_of_node[m.node].add(run_id)
    if not runs_of_node:
        return Placement(None)
    position = {node: i for i, node in enumerate(order)}
    calibration = between_runs(measurements, stable_noise=stable_noise, threshold=threshold)
    if calibration.trusted:
        if reference is None or reference not in runs_of_node:
            reference = max(runs_of_node, key=lambda n: (len(runs_of_node[n]), position.get(n, -1)))
        return Placement(reference, _raw(measurements, reference, calibration, metric), calibration)
    graph = _link_graph(by_run, runs_of_node, position, metric)
    if reference is None or reference not in runs_of_node:
        # in the largest set of points chained together: the one measured in the most runs, the latest on a tie
        size = {node: len(_component(graph, node)) for node in runs_of_node}
        reference = max(runs_of_node, key=lambda n: (size[n], len(runs_of_node[n]), position.get(n, -1)))
    return Placement(reference, _chains(graph, reference, runs_of_node), calibration)


def _link_graph(by_run: Mapping[str, list[Measurement]], runs_of_node: Mapping[Hashable, set[str]],
                position: Mapping[Hashable, int], metric: str) -> dict[Hashable, list[tuple[Hashable, _Link]]]:
    """Each node's links to the nodes measured beside it: within every run, from the run's anchor (the node
    measured in the most runs) to each other node, parallel links of several runs combined; both directions."""
    links: dict[tuple[Hashable, Hashable], list[_Link]] = defaultdict(list)
    for members in by_run.values():
        nodes = {m.node for m in members}
        if len(nodes) < 2:
            continue
        anchor = max(members, key=lambda m: (len(runs_of_node[m.node]), len(m.values), position.get(m.node, -1)))
        for other in members:
            if other.node == anchor.node:
                continue
            found = _link(anchor, other, metric)
            if found is not None:
                links[(anchor.node, other.node)].append(found)
    graph: dict[Hashable, list[tuple[Hashable, _Link]]] = defaultdict(list)
    for (a, b), parallel in links.items():
        link = _combined(parallel)
        graph[a].append((b, link))
        graph[b].append((a, _Link(-link.log_ratio, link.half_width, link.runs)))
    return graph


def _component(graph: Mapping[Hashable, list[tuple[Hashable, _Link]]], start: Hashable) -> set[Hashable]:
    seen, stack = {start}, [start]
    while stack:
        for neighbour, _ in graph.get(stack.pop(), ()):
            if neighbour not in seen:
                seen.add(neighbour)
                stack.append(neighbour)
    return seen


def _chains(graph: Mapping[Hashable, list[tuple[Hashable, _Link]]], reference: Hashable,
            nodes: Mapping[Hashable, set[str]]) -> dict[Hashable, Placed]:
    best: dict[Hashable, tuple[float, float, list[Hashable], tuple[str, ...]]] = {reference: (0.0, 0.0, [], ())}
    queue: list[tuple[float, int, Hashable]] = [(0.0, 0, reference)]
    tie = 1
    done: set[Hashable] = set()
    while queue:
        variance, _, node = heapq.heappop(queue)
        if node in done:
            continue
        done.add(node)
        log_ratio, _, path, runs = best[node]
        for neighbour, link in graph.get(node, ()):
            candidate = variance + link.half_width ** 2
            if neighbour not in best or candidate < best[neighbour][1]:
                best[neighbour] = (log_ratio + link.log_ratio, candidate, [*path, node], (*runs, *link.runs))
                heapq.heappush(queue, (candidate, tie, neighbour))
                tie += 1
    out: dict[Hashable, Placed] = {}
    for node in nodes:
        if node == reference:
            out[node] = Placed(1.0, 1.0, 1.0, "reference")
        elif node in best:
            log_ratio, variance, path, runs = best[node]
            half = math.sqrt(variance)
            through = [_name(p) for p in path[1:]]
            via = (f"measured beside {_name(reference)} in {_runs_text(runs)}" if not through else
                   f"chained through {' → '.join(through)} ({_runs_text(runs)})")
            out[node] = Placed(math.exp(log_ratio), math.exp(log_ratio - half), math.exp(log_ratio + half), via)
        else:
            out[node] = Placed(None, None, None, f"incomparable: never measured beside a point chained to "
                               f"{_name(reference)}")
    return out


def _raw(measurements: Sequence[Measurement], reference: Hashable, calibration: BetweenRuns,
         metric: str) -> dict[Hashable, Placed]:
    """Pooled medians over the reference's, where the calibration trusts them: the interval from the between-run
    spread (by run medians) when it was measured, else the unpaired comparison of the processes."""
    pooled: dict[Hashable, list[Measurement]] = defaultdict(list)
    for m in measurements:
        if usable(m):
            pooled[m.node].append(m)
    ref_values = [v for m in pooled[reference] for v in m.values]
    ref_median = float(np.median(ref_values))
    z = float(stats.norm.ppf(1 - ALPHA / 2))
    out: dict[Hashable, Placed] = {}
    for node, members in pooled.items():
        values = [v for m in members for v in m.values]
        ratio = float(np.median(values)) / ref_median
        if node == reference:
            out[node] = Placed(1.0, 1.0, 1.0, "reference")
            continue
        if calibration.spread is not None:
            half = z * calibration.spread * math.sqrt(1 / len(members) + 1 / len(pooled[reference]))
        else:
            link = _link(Measurement(reference, "", "", tuple(ref_values), (None,) * len(ref_values)),
                         Measurement(node, "", "", tuple(values), (None,) * len(values)), metric)
            half = link.half_width if link is not None else math.inf
        out[node] = Placed(ratio, ratio * math.exp(-half), ratio * math.exp(half),
                           f"raw medians across runs ({calibration.reason})")
    return out


def chained(links: Sequence[tuple[float, float, float]]) -> tuple[float, float, float] | None:
    """Ratios measured one after the other (each in its own run: a watch's release against the one before it),
    chained: their product, its interval the links' log half-widths added in quadrature (the same rule as a
    history's chains). None when a link is missing or not a finite, positive ratio with its interval."""
    if not links:
        return None
    log_ratio = variance = 0.0
    for ratio, low, high in links:
        if not (ratio > 0 and low > 0 and math.isfinite(high)):
            return None
        log_ratio += math.log(ratio)
        variance += max(math.log(high / ratio), math.log(ratio / low)) ** 2
    half = math.sqrt(variance)
    return math.exp(log_ratio), math.exp(log_ratio - half), math.exp(log_ratio + half)


def _name(node: Hashable) -> str:
    return " ".join(str(part) for part in node if part) if isinstance(node, tuple) else str(node)


def _runs_text(runs: Sequence[str]) -> str:
    unique = list(dict.fromkeys(r for r in runs if r))
    return f"run {unique[0]}" if len(unique) == 1 else f"{len(unique)} runs"
