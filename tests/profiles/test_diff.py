"""Diffing two profiles of one case: shares of the total change add up, self changes sum to the total change,
functions on one side only, equal totals, and the whole path from two callgrind files."""

from __future__ import annotations

import gzip
import random
from pathlib import Path

import pytest

from colbench.profiles.callgrind import Frame
from colbench.profiles.diff import diff_profiles
from colbench.profiles.view import ProfileView, load_view

MAIN, READ, DECODE, COPY = (Frame("main", "prog"), Frame("arrow::Read", "libarrow.so"),
                            Frame("parquet::Decode", "libparquet.so"), Frame("memcpy", "libc.so"))


def view(label: str, folded: dict[tuple[Frame, ...], float]) -> ProfileView:
    return ProfileView(label, round(sum(folded.values())), folded, caller_depth=0, python_named=False)


BASELINE = view("A", {(MAIN,): 100, (MAIN, READ): 300, (MAIN, READ, DECODE): 500, (MAIN, READ, COPY): 100})
# decode +200, copy −50, main +10, a new function +40: +200 in all
CONTENDER = view("B", {(MAIN,): 110, (MAIN, READ): 300, (MAIN, READ, DECODE): 700, (MAIN, READ, COPY): 50,
                       (MAIN, READ, Frame("arrow::NewCheck", "libarrow.so")): 40})


def test_functions_are_ranked_by_the_size_of_their_self_change_with_their_share():
    diff = diff_profiles(BASELINE, CONTENDER)
    assert diff.total_change == 200 and diff.ratio == pytest.approx(1200 / 1000)
    assert [(c.function, c.library) for c in diff.changes] == [
        ("parquet::Decode", "libparquet.so"), ("memcpy", "libc.so"), ("arrow::NewCheck", "libarrow.so"),
        ("main", "prog")]
    decode, copy, new, main = diff.changes
    assert (decode.self_a, decode.self_b, decode.delta_self, decode.share) == (500, 700, 200, 1.0)
    assert copy.delta_self == -50 and copy.share == pytest.approx(-0.25)  # a shrinking function: a negative share
    assert main.share == pytest.approx(0.05)
    # arrow::Read's own cost did not change (not listed), though its inclusive cost did
    assert diff.changed_functions == 4
    assert decode.inclusive_a == 500 and main.inclusive_b == 1200 and main.delta_inclusive == 200


def test_the_listed_share_is_the_sum_of_the_listed_shares_and_all_of_them_make_the_whole_change():
    full = diff_profiles(BASELINE, CONTENDER)
    assert full.listed_share == pytest.approx(sum(c.share for c in full.changes)) == pytest.approx(1.0)
    assert sum(c.delta_self for c in full.changes) == pytest.approx(full.total_change)
    top2 = diff_profiles(BASELINE, CONTENDER, top=2)
    assert len(top2.changes) == 2 and top2.changed_functions == 4
    assert top2.listed_share == pytest.approx(1.0 - 0.25) == pytest.approx(sum(c.share for c in top2.changes))


def test_a_function_on_one_side_only():
    diff = diff_profiles(BASELINE, CONTENDER)
    new = next(c for c in diff.changes if c.function == "arrow::NewCheck")
    assert (new.self_a, new.self_b, new.inclusive_a, new.inclusive_b) == (0, 40, 0, 40)
    assert new.share == pytest.approx(0.2)
    gone = diff_profiles(CONTENDER, BASELINE)  # the other way round: it disappeared
    removed = next(c for c in gone.changes if c.function == "arrow::NewCheck")
    assert (removed.self_a, removed.self_b, removed.delta_self) == (40, 0, -40)
    assert removed.share == pytest.approx(0.2)  # −40 of a −200 change: the same direction as the total


def test_equal_totals_have_no_shares():
    a = view("A", {(MAIN, READ): 100, (MAIN, COPY): 100})
    b = view("B", {(MAIN, READ): 130, (MAIN, COPY): 70})
    diff = diff_profiles(a, b)
    assert diff.total_change == 0 and diff.listed_share is None
    # equal sizes rank by name
    assert [(c.function, c.delta_self, c.share) for c in diff.changes] == [("arrow::Read", 30, None),
                                                                           ("memcpy", -30, None)]
    same = diff_profiles(a, a)
    assert same.changes == [] and same.changed_functions == 0 and same.listed_share is None and same.ratio == 1


def test_a_total_change_near_zero_beside_large_moves_is_too_small_to_split():
    # a +0.1% total over functions that moved ±35%: shares would be ±35000%, so there are none
    a = view("A", {(MAIN, READ): 1000, (MAIN, COPY): 1000})
    b = view("B", {(MAIN, READ): 1352, (MAIN, COPY): 650})
    diff = diff_profiles(a, b)
    assert diff.total_change == 2 and diff.moved == 702 and diff.too_small_to_split
    assert diff.listed_share is None and [c.share for c in diff.changes] == [None, None]
    assert [c.delta_self for c in diff.changes] == [-350, 352] or [c.delta_self for c in diff.changes] == [352, -350]
    from colbench.profiles.explanation import CaseExplanation, SideProfile
    from colbench.report.explain_text import summary_lines, table_rows

    case = CaseExplanation("c", "case", SideProfile("stored", None), SideProfile("stored", None), diff=diff)
    text = "\n".join(summary_lines(case))
    assert "too small to split into shares" in text and "%" not in "".join(r[5] for r in table_rows(diff))
    # a total that is a tenth of what moved is split (no share beyond ±1000%)
    c = view("C", {(MAIN, READ): 1350, (MAIN, COPY): 720})
    split = diff_profiles(a, c)
    assert not split.too_small_to_split and split.listed_share == pytest.approx(1.0)
    assert max(abs(ch.share or 0) for ch in split.changes) <= 10


def test_one_name_in_two_libraries_is_two_functions():
    a = view("A", {(MAIN, Frame("init", "liba.so")): 10, (MAIN, Frame("init", "libb.so")): 10})
    b = view("B", {(MAIN, Frame("init", "liba.so")): 30, (MAIN, Frame("init", "libb.so")): 10})
    (change,) = diff_profiles(a, b).changes
    assert (change.function, change.library, change.share) == ("init", "liba.so", 1.0)


@pytest.mark.parametrize("seed", range(5))
def test_random_profiles_self_changes_sum_to_the_total_change(seed: int):
    rng = random.Random(seed)
    frames = [Frame(f"f{i}", f"lib{i % 3}.so") for i in range(30)]

    def random_view(label: str) -> ProfileView:
        folded: dict[tuple[Frame, ...], float] = {}
        for _ in range(rng.randint(5, 60)):
            stack = (MAIN, *rng.sample(frames, rng.randint(1, 6)))
            folded[stack] = folded.get(stack, 0) + rng.randint(1, 10_000)
        return view(label, folded)

    a, b = random_view("A"), random_view("B")
    diff = diff_profiles(a, b, top=1000)
    assert sum(c.delta_self for c in diff.changes) == pytest.approx(diff.total_change)
    assert diff.too_small_to_split == (diff.total_change != 0 and abs(diff.total_change) < 0.1 * diff.moved)
    if diff.total_change and not diff.too_small_to_split:
        assert diff.listed_share == pytest.approx(1.0)
        assert diff.listed_share == pytest.approx(sum(c.share for c in diff.changes))
    sizes = [abs(c.delta_self) for c in diff.changes]
    assert sizes == sorted(sizes, reverse=True)


PROFILE = """# callgrind format
events: Ir
ob=(1) /venv/pyarrow/libarrow.so.{version}
fn=(1) main
0 10
cfn=(2) arrow::Read'main
calls=1 0
0 {read}
fn=(2)
0 {read_self}
cfn=(3) arrow::Extra'arrow::Read'main
calls=1 0
0 {extra}
fn=(3)
0 {extra}
totals: {total}
"""


def write_profile(path: Path, version: str, read_self: int, extra: int) -> Path:
    text = PROFILE.format(version=version, read=read_self + extra, read_self=read_self, extra=extra,
                          total=10 + read_self + extra)
    path.write_bytes(gzip.compress(text.encode()))
    return path


def test_two_callgrind_files_of_two_releases_diff_by_library_without_its_version(tmp_path: Path):
    a = load_view(write_profile(tmp_path / "a.callgrind.gz", "1800", 1000, 1), label="18")
    b = load_view(write_profile(tmp_path / "b.callgrind.gz", "1900", 1000, 501), label="19")
    assert a.total == 1011 and b.total == 1511 and a.caller_depth == 2
    diff = diff_profiles(a, b)
    (extra,) = diff.changes
    assert (extra.function, extra.library, extra.delta_self, extra.share) == ("arrow::Extra", "libarrow.so", 500, 1)
    assert diff.listed_share == 1 and diff.baseline.label == "18" and diff.contender.label == "19"
