"""The callgrind reader on small profiles written by hand, following Valgrind's "Callgrind Format Specification"
(https://valgrind.org/docs/manual/cl-format.html): the spec's own examples, name and subposition compression,
`--separate-callers` chains and recursion levels, totals against summary, and what is not a profile."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from colbench.profiles.callgrind import Frame, ProfileError, parse_callgrind, parse_lines, split_chain


def parse(text: str):
    return parse_lines(text.strip("\n").splitlines(keepends=True))


def by_name(profile) -> dict[str, int]:
    """Context index by the name callgrind wrote (the function, then its callers joined with `'`)."""
    return {"'".join(f.name for f in c.frames): i for i, c in enumerate(profile.contexts)}


def self_of(profile) -> dict[str, int]:
    return {"'".join(f.name for f in c.frames): c.self_cost for c in profile.contexts}


# The spec's "Extended Example": main calls func1 once and func2 3 times; func1 calls func2 twice.
SPEC_EXAMPLE = """
events: Instructions

fl=file1.c
fn=main
16 20
cfn=func1
calls=1 50
16 400
cfl=file2.c
cfn=func2
calls=3 20
16 400

fn=func1
51 100
cfl=file2.c
cfn=func2
calls=2 20
51 300

fl=file2.c
fn=func2
20 700
"""

# The same profile with name compression, as the spec writes it.
SPEC_COMPRESSED = """
events: Instructions

fl=(1) file1.c
fn=(1) main
16 20
cfn=(2) func1
calls=1 50
16 400
cfl=(2) file2.c
cfn=(3) func2
calls=3 20
16 400

fn=(2)
51 100
cfl=(2)
cfn=(3)
calls=2 20
51 300

fl=(2)
fn=(3)
20 700
"""


def test_the_specs_example_self_cost_and_call_edges():
    profile = parse(SPEC_EXAMPLE)
    assert profile.events == ["Instructions"]
    assert self_of(profile) == {"main": 20, "func1": 100, "func2": 700}
    ids = by_name(profile)
    main, func1, func2 = ids["main"], ids["func1"], ids["func2"]
    # a call's cost line is the callee's inclusive cost, charged to the edge and never to the caller's self cost
    assert profile.calls == {(main, func1): 400, (main, func2): 400, (func1, func2): 300}
    assert profile.counts == {(main, func1): 1, (main, func2): 3, (func1, func2): 2}
    # main's inclusive cost in the spec's words: "820, the sum of self cost 20 and costs spent in the calls"
    assert profile.contexts[main].self_cost + profile.calls[(main, func1)] + profile.calls[(main, func2)] == 820
    # no totals or summary line: the total is the sum of the self costs
    assert profile.totals == profile.self_total == 820
    assert profile.caller_depth == 0
    assert all(len(c.frames) == 1 for c in profile.contexts)


def named_calls(profile) -> dict[tuple[str, str], int]:
    names = {i: n for n, i in by_name(profile).items()}
    return {(names[a], names[b]): cost for (a, b), cost in profile.calls.items()}


def test_name_compression_reads_the_same_as_the_names_written_out():
    plain, compressed = parse(SPEC_EXAMPLE), parse(SPEC_COMPRESSED)
    assert self_of(compressed) == self_of(plain) == {"main": 20, "func1": 100, "func2": 700}
    assert named_calls(compressed) == named_calls(plain) == {("main", "func1"): 400, ("main", "func2"): 400,
                                                             ("func1", "func2"): 300}
    assert compressed.totals == 820


def test_ids_of_objects_files_and_functions_are_separate_tables_and_cob_cfn_share_them():
    # id 1 names an object, a file and a function at once (the spec: "a separate ID mapping for each position
    # specification"); cob= and cfn= refer to the ids ob= and fn= defined
    profile = parse("""
events: Ir
ob=(1) /usr/lib/libarrow.so.2600
fl=(1) ???
fn=(1) arrow::Read
0 10
cob=(2) /usr/lib/x86_64-linux-gnu/libc.so.6
cfi=(1)
cfn=(2) memcpy
calls=4 0
0 40
ob=(2)
fn=(2)
0 40
ob=(1)
fn=(1)
0 5
""")
    assert self_of(profile) == {"arrow::Read": 15, "memcpy": 40}
    read, memcpy = profile.contexts[by_name(profile)["arrow::Read"]], profile.contexts[by_name(profile)["memcpy"]]
    assert read.frames == (Frame("arrow::Read", "/usr/lib/libarrow.so.2600"),)
    assert memcpy.frames == (Frame("memcpy", "/usr/lib/x86_64-linux-gnu/libc.so.6"),)
    # the callee of the call is the same context as the one its own fn= block fills
    assert len(profile.contexts) == 2
    assert profile.counts == {(0, 1): 4}


def test_a_call_without_cob_is_into_the_callers_object():
    profile = parse("""
events: Ir
ob=/lib/liba.so
fn=f
0 1
cfn=g
calls=1 0
0 9
fn=g
0 9
""")
    assert {c.frames[0] for c in profile.contexts} == {Frame("f", "/lib/liba.so"), Frame("g", "/lib/liba.so")}
    assert len(profile.contexts) == 2


def test_one_function_in_two_objects_is_two_contexts():
    profile = parse("""
events: Ir
ob=/lib/a.so
fn=init
0 3
ob=/lib/b.so
fn=init
0 4
""")
    assert sorted((c.frames[0].object, c.self_cost) for c in profile.contexts) == [("/lib/a.so", 3), ("/lib/b.so", 4)]


def test_a_reference_before_its_definition_is_a_profile_error_naming_the_line():
    with pytest.raises(ProfileError, match=r"line 3: function \(7\) used before it was named"):
        parse("events: Ir\nfl=x.c\nfn=(7)\n0 1\n")
    with pytest.raises(ProfileError, match=r"object \(3\) used before it was named"):
        parse("events: Ir\nfn=f\n0 1\ncob=(3)\ncfn=g\ncalls=1 0\n0 1\n")


def test_what_is_not_a_callgrind_profile_is_a_profile_error_saying_so():
    with pytest.raises(ProfileError, match="not a callgrind profile"):
        parse("")
    with pytest.raises(ProfileError, match="not a callgrind profile"):
        parse("# just a comment\n\n")
    with pytest.raises(ProfileError, match="not a callgrind profile"):
        parse("12 34\n56 78\n")  # numbers, but no header
    with pytest.raises(ProfileError, match="cannot read 'hello world'"):
        parse("hello world\n")
    with pytest.raises(ProfileError, match="not a callgrind profile .no `events:` line"):
        parse("version: 1\ncreator: someone\nfn=f\n0 10\n")  # a profile of nothing: no events line
    with pytest.raises(ProfileError, match="is not a number"):
        parse("events: Ir\nfn=f\n0 12abc\n")
    with pytest.raises(ProfileError, match="cannot read"):
        parse("events: Ir\nfn=f\ncalls=many 0\n0 1\n")


def test_positions_instr_line_shift_the_cost_to_the_third_column_and_subpositions_may_be_relative():
    # the spec's subposition compression example (events: ticks), Ir being the first event
    profile = parse("""
positions: instr line
events: ticks

fn=func
0x80001234 90 1
+3 * 5
+1 +1 6
-2 -1 10
""")
    assert self_of(profile) == {"func": 1 + 5 + 6 + 10}
    line_only = parse("positions: line\nevents: Ir Dr\nfn=func\n90 1 1000\n91 5 1000\n")
    assert self_of(line_only) == {"func": 6}  # the first event only, the second column never


def test_costs_may_be_hexadecimal_and_a_missing_cost_is_zero():
    profile = parse("events: Ir\nfn=f\n0x10 0x20\n17 0x0a\n18\n")
    assert self_of(profile) == {"f": 0x20 + 10}


def test_the_first_event_is_read_whatever_follows_it():
    profile = parse("events: Ir Dr Dw\nfn=f\n1 7 100 200\n2 3\n")
    assert self_of(profile) == {"f": 10}


def test_totals_is_the_total_else_summary_else_the_sum_of_self_costs():
    body = "events: Ir\nfn=f\n0 10\nfn=g\n0 5\n"
    assert parse(body).totals == 15
    assert parse("summary: 99\n" + body).totals == 99
    # callgrind writes both; it is totals (at the end) that matches the cost lines in its real dumps
    assert parse("summary: 14\n" + body + "totals: 15\n").totals == 15
    assert parse("summary: 14\n" + body + "totals: 15\n").self_total == 15


def test_separate_callers_chains_become_frames_innermost_first():
    profile = parse("""
events: Ir
ob=(1) /bin/prog
fn=(1) main
0 1
cfn=(2) g'main
calls=1 0
0 30
fn=(2)
0 10
cfn=(3) f'g'main
calls=2 0
0 20
fn=(3)
0 20
""")
    assert profile.caller_depth == 2
    chain = profile.contexts[by_name(profile)["f'g'main"]].frames
    # the function keeps its object; a caller named only inside the chain has none (profiles.stacks fills it in)
    assert chain == (Frame("f", "/bin/prog"), Frame("g", ""), Frame("main", ""))
    assert self_of(profile) == {"main": 1, "g'main": 10, "f'g'main": 20}
    assert profile.totals == 31


def test_recursion_levels_are_not_callers():
    assert split_chain("f") == ["f"]
    assert split_chain("f'2") == ["f"]
    assert split_chain("f'g'h") == ["f", "g", "h"]
    assert split_chain("f'2'f'main") == ["f", "f", "main"]
    assert split_chain("0x0000000000002510'ffi_prep_cif") == ["0x0000000000002510", "ffi_prep_cif"]
    profile = parse("""
events: Ir
fn=(1) fact'main
0 4
cfn=(2) fact'2'fact'main
calls=1 0
0 6
fn=(2)
0 6
""")
    assert profile.caller_depth == 2
    rec = profile.contexts[by_name(profile)["fact'fact'main"]]
    assert [f.name for f in rec.frames] == ["fact", "fact", "main"]
    # the level and the outer call are two contexts (callgrind counts them apart), joined by one edge
    assert len(profile.contexts) == 2 and profile.calls == {(0, 1): 6}


def test_jumps_and_inlined_files_do_not_disturb_costs():
    profile = parse("""
events: Ir
fl=(1) a.c
fn=(1) f
1 10
fi=(2) inline.h
2 5
fe=(1)
jump=3 7
4
jcnd=2 1 9
5 1
cfl=(2)
cfn=(2) g
calls=1 3
6 100
fn=(2)
3 100
""")
    assert self_of(profile) == {"f": 16, "g": 100}


def test_names_that_look_like_compression_but_are_not():
    # "(below main)" is a name valgrind uses: "(" not followed by a digit is no id
    profile = parse("events: Ir\nfn=(below main)\n0 3\nfn=(4) operator()(int)\n0 2\nfn=(4)\n0 1\n")
    assert self_of(profile) == {"(below main)": 3, "operator()(int)": 3}


def test_a_real_shaped_dump_with_a_header_reads_its_command(tmp_path: Path):
    # as callgrind 3.19 writes it, trailing spaces (\x20) included
    text = """# callgrind format
version: 1
creator: callgrind-3.19.0
pid: 30553
cmd:  /venv/bin/python -m colbench.worker case.json result.json
part: 1

desc: I1 cache:\x20
desc: Trigger: Client Request: colbench

positions: line
events: Ir
summary: 50

ob=(7) /usr/lib/x86_64-linux-gnu/libffi.so.8.1.2
fl=(2) ???
fn=(2576) 0x0000000000002510'ffi_prep_cif
0 18
cfn=(3270) 0x00000000000061b0'0x0000000000002510'ffi_prep_cif
calls=1 0\x20
0 30
0 2

fn=(3270)
0 30

totals: 50
"""
    plain = tmp_path / "callgrind.out.1"
    plain.write_text(text)
    packed = tmp_path / "profile.callgrind.gz"
    packed.write_bytes(gzip.compress(text.encode()))
    for path in (plain, packed):
        profile = parse_callgrind(path)
        assert profile.command == "/venv/bin/python -m colbench.worker case.json result.json"
        assert profile.totals == profile.self_total == 50
        assert self_of(profile) == {"0x0000000000002510'ffi_prep_cif": 20,
                                    "0x00000000000061b0'0x0000000000002510'ffi_prep_cif": 30}
        assert profile.caller_depth == 2


def test_a_damaged_gzip_profile_is_a_profile_error(tmp_path: Path):
    packed = gzip.compress(SPEC_EXAMPLE.encode())
    truncated = tmp_path / "cut.callgrind.gz"
    truncated.write_bytes(packed[: len(packed) // 2])
    not_gzip = tmp_path / "plain.callgrind.gz"
    not_gzip.write_text(SPEC_EXAMPLE)
    for path in (truncated, not_gzip):
        with pytest.raises(ProfileError, match=path.name):
            parse_callgrind(path)
