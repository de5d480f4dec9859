"""Call stacks from callgrind profiles written by hand: costs add up to the profile's total, a shared callee's cost
goes to its callers in proportion, `--separate-callers` chains are taken as they are, cycles end."""

from __future__ import annotations

import random

import pytest

from colbench.profiles.callgrind import Frame, parse_lines
from colbench.profiles.stacks import (
    ELIDED,
    MAX_DEPTH,
    MIN_SHARE,
    folded_stacks,
    inclusive_costs,
    self_costs,
)
from tests.profiles.test_callgrind import SPEC_EXAMPLE  # the spec's example


def parse(text: str):
    return parse_lines(text.strip("\n").splitlines(keepends=True))


def names(folded) -> dict[tuple[str, ...], float]:
    out: dict[tuple[str, ...], float] = {}
    for stack, cost in folded.items():
        key = tuple(f.name for f in stack)
        out[key] = out.get(key, 0.0) + cost
    return out


def by_name(costs: dict[Frame, float]) -> dict[str, float]:
    return {f.name: c for f, c in costs.items()}




def test_a_shared_callee_is_split_over_its_callers_in_proportion_to_their_calls():
    profile = parse(SPEC_EXAMPLE)
    folded = names(folded_stacks(profile))
    # func2 (self 700) is called from main for 400 and from func1 for 300: 4/7 and 3/7 of its cost
    assert folded == pytest.approx({("main",): 20, ("main", "func1"): 100, ("main", "func2"): 400,
                                    ("main", "func1", "func2"): 300})
    assert sum(folded.values()) == pytest.approx(profile.totals) == pytest.approx(820)


def test_inclusive_and_self_costs_of_the_stacks():
    folded = folded_stacks(parse(SPEC_EXAMPLE))
    assert by_name(inclusive_costs(folded)) == pytest.approx({"main": 820, "func1": 400, "func2": 700})
    assert by_name(self_costs(folded)) == pytest.approx({"main": 20, "func1": 100, "func2": 700})


def test_uneven_split_follows_the_edge_costs_not_the_call_counts():
    profile = parse("""
events: Ir
fn=main
0 0
cfn=a
calls=1 0
0 10
cfn=b
calls=1000 0
0 90
fn=a
0 0
cfn=leaf
calls=99 0
0 10
fn=b
0 0
cfn=leaf
calls=1 0
0 90
fn=leaf
0 100
""")
    folded = names(folded_stacks(profile))
    assert folded == pytest.approx({("main", "a", "leaf"): 10, ("main", "b", "leaf"): 90})


def test_separate_callers_chains_are_stacks_as_callgrind_kept_them():
    # f is reached from g and from h; its self cost per chain is known exactly and must not be re-split by the
    # (here deliberately different) cost of the edges
    profile = parse("""
events: Ir
ob=(1) /bin/prog
fn=(1) main
0 1
cfn=(2) g'main
calls=1 0
0 15
cfn=(3) h'main
calls=1 0
0 90
fn=(2)
0 5
cfn=(4) f'g'main
calls=1 0
0 10
fn=(3)
0 0
cfn=(5) f'h'main
calls=1 0
0 90
fn=(4)
0 10
fn=(5)
0 90
""")
    folded = folded_stacks(profile)
    assert names(folded) == pytest.approx({("main",): 1, ("main", "g"): 5, ("main", "g", "f"): 10,
                                           ("main", "h", "f"): 90})
    assert sum(folded.values()) == pytest.approx(profile.totals) == pytest.approx(106)
    # every frame of a stack has its object, callers named only inside a chain included
    assert {f.object for stack in folded for f in stack} == {"/bin/prog"}


def test_chains_deeper_than_the_callers_kept_are_joined_through_the_callers_contexts():
    # --separate-callers=1: d's context `d'c` does not say whether c was called from a or from b; the two
    # contexts of c calling into it (30 and 10) do
    profile = parse("""
events: Ir
fn=(1) main
0 0
cfn=(2) a'main
calls=1 0
0 30
cfn=(3) b'main
calls=1 0
0 10
fn=(2)
0 0
cfn=(4) c'a
calls=1 0
0 30
fn=(3)
0 0
cfn=(5) c'b
calls=1 0
0 10
fn=(4)
0 0
cfn=(6) d'c
calls=1 0
0 30
fn=(5)
0 0
cfn=(6)
calls=1 0
0 10
fn=(6)
0 40
""")
    assert profile.caller_depth == 1
    assert names(folded_stacks(profile)) == pytest.approx({("main", "a", "c", "d"): 30, ("main", "b", "c", "d"): 10})


def test_callers_below_the_minimum_share_are_kept_together_and_still_add_up():
    small = 1  # of 10_000: 0.01%, under MIN_SHARE
    assert small / 10_000 < MIN_SHARE
    profile = parse(f"""
events: Ir
fn=main
0 0
cfn=hot
calls=1 0
0 {10_000 - small}
cfn=cold
calls=1 0
0 {small}
fn=hot
0 0
cfn=leaf
calls=1 0
0 {10_000 - small}
fn=cold
0 0
cfn=leaf
calls=1 0
0 {small}
fn=leaf
0 10000
""")
    folded = folded_stacks(profile)
    assert names(folded) == pytest.approx({("main", "hot", "leaf"): 9999, (ELIDED.name, "leaf"): 1})
    assert sum(folded.values()) == pytest.approx(10_000)


def test_recursion_levels_are_frames_of_the_stack_and_count_once_inclusively():
    profile = parse("""
events: Ir
fn=(1) main
0 1
cfn=(2) fact'main
calls=1 0
0 10
fn=(2)
0 4
cfn=(3) fact'2'fact'main
calls=1 0
0 6
fn=(3)
0 6
""")
    folded = folded_stacks(profile)
    assert names(folded) == pytest.approx({("main",): 1, ("main", "fact"): 4, ("main", "fact", "fact"): 6})
    assert by_name(inclusive_costs(folded)) == pytest.approx({"main": 11, "fact": 10})


def test_a_cycle_between_functions_ends_and_keeps_the_total():
    # f and g call each other (no separate callers, no recursion levels): the walk must not go round forever
    profile = parse("""
events: Ir
fn=main
0 1
cfn=f
calls=1 0
0 300
fn=f
0 100
cfn=g
calls=5 0
0 200
fn=g
0 120
cfn=f
calls=4 0
0 80
""")
    folded = folded_stacks(profile)
    assert sum(folded.values()) == pytest.approx(profile.totals) == pytest.approx(221)
    assert by_name(self_costs(folded)) == pytest.approx({"main": 1, "f": 100, "g": 120})
    # the call that closes the cycle (g → f) is not followed: both run under main, entered through f; no function
    # of the cycle becomes a root of its own
    assert names(folded) == pytest.approx({("main",): 1, ("main", "f"): 100, ("main", "f", "g"): 120})


def test_a_cycle_is_rooted_where_it_was_entered_whichever_context_callgrind_wrote_first():
    # the same cycle, g's block first and main's last: the stacks do not depend on the order of the file
    profile = parse("""
events: Ir
fn=g
0 120
cfn=f
calls=4 0
0 80
fn=f
0 100
cfn=g
calls=5 0
0 200
fn=main
0 1
cfn=f
calls=1 0
0 300
""")
    assert names(folded_stacks(profile)) == pytest.approx({("main",): 1, ("main", "f"): 100,
                                                            ("main", "f", "g"): 120})


def test_a_cycle_nobody_entered_has_a_root_and_keeps_its_cost():
    # instrumentation switched on inside a recursion: f and g call each other and no recorded context calls in
    profile = parse("events: Ir\nfn=f\n0 7\ncfn=g\ncalls=1 0\n0 5\nfn=g\n0 5\ncfn=f\ncalls=1 0\n0 3\n")
    folded = names(folded_stacks(profile))
    assert folded == pytest.approx({("f",): 7, ("f", "g"): 5})


def test_a_call_chain_deeper_than_max_depth_is_cut_not_a_recursion_error():
    depth = 3 * MAX_DEPTH
    blocks = ["events: Ir"]
    for level in reversed(range(depth)):  # deepest first: the walk starts at the bottom of the chain
        blocks += [f"fn=f{level}", "0 1"]
        if level + 1 < depth:
            blocks += [f"cfn=f{level + 1}", "calls=1 0", f"0 {depth - level - 1}"]
    profile = parse("\n".join(blocks))
    folded = folded_stacks(profile)
    assert sum(folded.values()) == pytest.approx(depth)
    assert max(len(s) for s in folded) <= MAX_DEPTH + 2


@pytest.mark.parametrize("seed", range(6))
def test_random_call_graphs_with_cycles_add_up_to_their_total(seed: int):
    rng = random.Random(seed)
    functions = [f"fn{i}" for i in range(rng.randint(5, 40))]
    lines = ["events: Ir"]
    for name in functions:
        lines += [f"fn={name}", f"0 {rng.randint(0, 1000)}"]
        for callee in rng.sample(functions, rng.randint(0, min(4, len(functions)))):
            lines += [f"cfn={callee}", f"calls={rng.randint(1, 9)} 0", f"0 {rng.randint(0, 5000)}"]
    profile = parse("\n".join(lines))
    folded = folded_stacks(profile)
    assert sum(folded.values()) == pytest.approx(profile.totals, rel=1e-9)
    assert sum(self_costs(folded).values()) == pytest.approx(profile.self_total, rel=1e-9)
    assert all(cost >= 0 for cost in folded.values())
    # a frame's inclusive cost is at least its self cost and at most the total
    incl, own = inclusive_costs(folded), self_costs(folded)
    for frame, cost in own.items():
        assert cost <= incl[frame] + 1e-6 <= profile.totals + 1e-6
