"""Call stacks from a callgrind profile: folded stacks (root first) with their self cost, for flame graphs and for
inclusive costs.

Callgrind does not record whole call stacks. It records each function's self cost in its caller context (the
last N callers with `--separate-callers=N`, none without) and the inclusive cost of every call edge between
contexts. A context whose chain is shorter than N is complete: it is one stack. A context at the full depth may
continue upward in more than one way; its callers' contexts (the edges into it) say which, and with what cost, so
its self cost is split over those callers in proportion to the cost of their calls into it — the assumption
gprof makes for every function, here made only beyond N callers (and for every function when N is 0, as in
a profile kept from an instruction count). Variants under `MIN_SHARE` of a context's cost are kept together as one
stack rooted at `[callers below MIN_SHARE]`, so the costs always add up to the profile's total. A call that
closes a cycle (recursion deeper than the caller chains) is left out of the walk (`_back_edges`): the cycle's
cost goes to the callers that entered it, and every stack starts where callgrind's recorded stacks start.
"""

from __future__ import annotations

import sys
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass

from colbench.profiles.callgrind import CallgrindProfile, Frame

#: the smallest share of one context's cost that keeps a caller variant of its own
MIN_SHARE = 0.002
ELIDED = Frame("[callers below 0.2%]", "")
#: deeper than this many frames, a stack is cut (a runaway recursion would exhaust Python's stack)
MAX_DEPTH = 400

Stack = tuple[Frame, ...]
Folded = dict[Stack, float]


@dataclass(frozen=True)
class _Edge:
    caller: int
    cost: int


def folded_stacks(profile: CallgrindProfile) -> Folded:
    """Root-first stacks → self cost (instructions; a float where a context's cost was split over callers)."""
    stacks = _Stacks(profile)
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 4 * MAX_DEPTH + 100))
    try:
        folded: Folded = defaultdict(float)
        for index, context in enumerate(profile.contexts):
            if context.self_cost:
                for stack, share in stacks.expand(index, 0):
                    folded[stack] += context.self_cost * share
    finally:
        sys.setrecursionlimit(limit)
    return dict(folded)


class _Stacks:
    """The root-first stacks of each context with the share of its cost each takes, walked up the callers."""

    def __init__(self, profile: CallgrindProfile) -> None:
        self.profile = profile
        self.incoming: dict[int, list[_Edge]] = defaultdict(list)
        back = _back_edges(profile)
        for (caller, callee), cost in profile.calls.items():
            if cost > 0 and caller != callee and (caller, callee) not in back:
                self.incoming[callee].append(_Edge(caller, cost))
        self.complete_below = profile.caller_depth + 1 if profile.caller_depth else 1
        self.memo: dict[int, list[tuple[Stack, float]]] = {}
        self.objects = _objects_by_name(profile)

    def expand(self, index: int, depth: int) -> list[tuple[Stack, float]]:
        cached = self.memo.get(index)
        if cached is not None:
            return cached
        context = self.profile.contexts[index]
        own = context.frames[0]
        callers = self.incoming.get(index, [])
        if not callers or depth > MAX_DEPTH:
            # a root: the chain callgrind named, completed with the objects its callers have elsewhere
            result = [(tuple(Frame(f.name, f.object or self.objects(f.name)) for f in reversed(context.frames)), 1.0)]
        elif len(context.frames) < self.complete_below and len(callers) == 1:
            result = [(stack + (own,), share) for stack, share in self.expand(callers[0].caller, depth + 1)]
        else:
            total = sum(e.cost for e in callers)
            shares: dict[Stack, float] = defaultdict(float)
            for edge in callers:
                for stack, share in self.expand(edge.caller, depth + 1):
                    shares[stack + (own,)] += share * edge.cost / total
            result = _keep_large(shares, own)
        # reused from every caller, which keeps the walk linear in the contexts: exact, as the calls left after
        # `_back_edges` form no cycle
        self.memo[index] = result
        return result


def _back_edges(profile: CallgrindProfile) -> set[tuple[int, int]]:
    """The calls that close a cycle (f calls g calls f, as callgrind records recursion deeper than its caller
    chains), found by a depth-first walk down the calls from the contexts nobody calls (then from any context
    not reached yet: a cycle entered before instrumentation started). Stacks are built without them, so the cost
    a function has inside a cycle goes to the callers that entered the cycle, in proportion to their calls, and
    no function of a cycle becomes a root of its own (as it would if the walk up the callers were cut wherever
    it met a function already on its way)."""
    callees: dict[int, list[int]] = defaultdict(list)
    called: set[int] = set()
    for (caller, callee), cost in profile.calls.items():
        if cost > 0 and caller != callee:
            callees[caller].append(callee)
            called.add(callee)
    back: set[tuple[int, int]] = set()
    state: dict[int, int] = {}  # 1: on the walk's path, 2: done
    count = len(profile.contexts)
    starts = [i for i in range(count) if i not in called] + list(range(count))
    for start in starts:
        if start in state:
            continue
        state[start] = 1
        path: list[tuple[int, int]] = [(start, 0)]  # (context, next callee to look at): no Python recursion
        while path:
            node, position = path[-1]
            children = callees.get(node, ())
            if position == len(children):
                state[node] = 2
                path.pop()
                continue
            path[-1] = (node, position + 1)
            child = children[position]
            seen = state.get(child)
            if seen == 1:
                back.add((node, child))
            elif seen is None:
                state[child] = 1
                path.append((child, 0))
    return back


def _keep_large(shares: dict[Stack, float], own: Frame) -> list[tuple[Stack, float]]:
    kept = [(stack, share) for stack, share in shares.items() if share >= MIN_SHARE]
    rest = 1.0 - sum(share for _, share in kept)
    if rest > 1e-12:
        kept.append(((ELIDED, own), rest))
    return kept


def _objects_by_name(profile: CallgrindProfile) -> Callable[[str], str]:
    """A caller named only inside a chain has no object there: the object its own context has (when unique)."""
    found: dict[str, set[str]] = defaultdict(set)
    for context in profile.contexts:
        found[context.frames[0].name].add(context.frames[0].object)

    def object_of(name: str) -> str:
        objects = found.get(name, set())
        return next(iter(objects)) if len(objects) == 1 else ""
    return object_of


def inclusive_costs(folded: Folded) -> dict[Frame, float]:
    """Each frame's inclusive cost: the stacks it is on, counted once per stack (recursion is not counted twice)."""
    costs: dict[Frame, float] = defaultdict(float)
    for stack, cost in folded.items():
        for frame in set(stack):
            costs[frame] += cost
    return dict(costs)


def self_costs(folded: Folded) -> dict[Frame, float]:
    costs: dict[Frame, float] = defaultdict(float)
    for stack, cost in folded.items():
        costs[stack[-1]] += cost
    return dict(costs)
