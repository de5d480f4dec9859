"""The differential flame graph: a well-formed, self-contained SVG whose frames are the stacks' functions, sized by
the mean of both sides, coloured by the change, with every name escaped; and the short names frames show."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest

from colbench.render.flamegraph import MIN_WIDTH_PX, WIDTH_PX, differential_svg, merge_tree
from colbench.render.frames import frame_label, short_function

SVG = "{http://www.w3.org/2000/svg}"

A = {("main",): 100.0, ("main", "read"): 300.0, ("main", "read", "decode"): 500.0,
     ("main", "read", "memcpy"): 100.0}
B = {("main",): 100.0, ("main", "read"): 300.0, ("main", "read", "decode"): 800.0,
     ("main", "read", "memcpy"): 50.0, ("main", "read", "new_check"): 40.0}


def frames(svg: str) -> dict[str, dict]:
    """Every drawn frame by its name (the first line of its tooltip): its rectangle and tooltip."""
    root = ET.fromstring(svg)
    out = {}
    for group in root.iter(f"{SVG}g"):
        title = group.find(f"{SVG}title").text
        rect = group.find(f"{SVG}rect").attrib
        label = group.find(f"{SVG}text")
        out[title.split("\n", 1)[0]] = {"title": title, "x": float(rect["x"]), "y": float(rect["y"]),
                                        "width": float(rect["width"]), "fill": rect["fill"],
                                        "label": label.text if label is not None else None}
    return out


def rgb(fill: str) -> tuple[int, int, int]:
    r, g, b = map(int, re.fullmatch(r"rgb\((\d+),(\d+),(\d+)\)", fill).groups())
    return r, g, b


def test_the_svg_is_well_formed_and_draws_every_function_of_the_stacks():
    svg = differential_svg(A, B, title="Where the instructions went: read", subtitle="A: 1 M, B: 1.2 M",
                           baseline_label="18.1.0", contender_label="19.0.1")
    root = ET.fromstring(svg)
    assert root.tag == f"{SVG}svg" and root.attrib["width"] == str(WIDTH_PX)
    drawn = frames(svg)
    assert set(drawn) == {"main", "read", "decode", "memcpy", "new_check"}
    texts = "".join(root.itertext())
    assert "Where the instructions went: read" in texts and "A: 1 M, B: 1.2 M" in texts
    assert "18.1.0" in drawn["decode"]["title"] and "19.0.1" in drawn["decode"]["title"]


def test_widths_are_the_mean_of_both_sides_and_children_sit_on_their_parent():
    drawn = frames(differential_svg(A, B, title="t"))
    total = (sum(A.values()) + sum(B.values())) / 2
    scale = drawn["main"]["width"] / total
    assert drawn["main"]["width"] == pytest.approx(WIDTH_PX - 20, abs=0.01)  # the root spans the graph
    assert drawn["decode"]["width"] == pytest.approx((500 + 800) / 2 * scale, abs=0.01)
    # code only one side ran stays visible, at half its width
    assert drawn["new_check"]["width"] == pytest.approx(40 / 2 * scale, abs=0.01)
    children = [drawn[n] for n in ("decode", "memcpy", "new_check")]
    assert sum(c["width"] for c in children) <= drawn["read"]["width"] + 0.01
    assert all(c["y"] < drawn["read"]["y"] < drawn["main"]["y"] for c in children)  # root at the bottom
    assert all(drawn["read"]["x"] - 0.01 <= c["x"] <= drawn["read"]["x"] + drawn["read"]["width"] for c in children)


def test_colours_say_which_way_each_frame_changed():
    drawn = frames(differential_svg(A, B, title="t"))
    r, g, b = rgb(drawn["decode"]["fill"])  # grew the most (+300): the deepest red
    assert r == 232 and g == b < 100
    r, g, b = rgb(drawn["memcpy"]["fill"])  # shrank: blue
    assert b == 232 and r == g < 232
    r, g, b = rgb(drawn["new_check"]["fill"])  # grew by +40: a paler red than decode's
    assert r == 232 and g == b and rgb(drawn["decode"]["fill"])[1] < g < 232
    unchanged = differential_svg({("x",): 5.0}, {("x",): 5.0}, title="t")
    assert frames(unchanged)["x"]["fill"] == "rgb(232,232,225)"


def test_tooltips_give_both_costs_the_change_and_its_share_of_the_total_change():
    title = frames(differential_svg(A, B, title="t", baseline_label="A", contender_label="B"))["decode"]["title"]
    assert title.splitlines()[0] == "decode"
    assert "A: 500 instructions" in title and "B: 800" in title and "+60.00%" in title
    assert "103.4% of the total change" in title  # +300 of the +290 of the whole graph
    new_check = frames(differential_svg(A, B, title="t"))["new_check"]["title"]
    assert "(new)" in new_check


def test_frames_too_narrow_to_see_are_left_out_but_their_cost_stays_in_the_parent():
    big = {("main",): 1e9, ("main", "tiny"): 1.0}
    drawn = frames(differential_svg(big, big, title="t"))
    assert "tiny" not in drawn and "main" in drawn
    assert 1.0 * (WIDTH_PX - 20) / 1e9 < MIN_WIDTH_PX


def test_empty_profiles_still_make_a_valid_svg():
    root = ET.fromstring(differential_svg({}, {}, title="nothing"))
    assert root.tag == f"{SVG}svg" and not list(root.iter(f"{SVG}g"))


HOSTILE = ['<script>alert(1)</script>', 'std::map<int, std::vector<char>>::operator[](int) & "x" \'y\'',
           ']]><!-- -->', '&amp;&lt;', 'bell\x07 and escape\x1b[31m and nul\x00', 'lone \udc80 surrogate',
           'emoji 🚀 and ünïcödé']


def test_hostile_names_are_escaped_and_the_svg_stays_well_formed():
    folded = {("main", name): 10.0 * (i + 1) for i, name in enumerate(HOSTILE)}
    svg = differential_svg(folded, {**folded, ("main", HOSTILE[0]): 99.0}, title='<script>t</script> & "q"',
                           subtitle="]]>", baseline_label="<a>", contender_label="&b")
    svg.encode("utf-8")  # writable as UTF-8 (no lone surrogate left)
    root = ET.fromstring(svg)  # well-formed
    assert "<script" not in svg and "alert(1)</script>" not in svg
    assert not list(root.iter(f"{SVG}script"))
    titles = [g.find(f"{SVG}title").text for g in root.iter(f"{SVG}g")]
    shown = {t.split("\n", 1)[0] for t in titles}
    # what parses back is the name itself (control characters and surrogates replaced, not dropped silently)
    assert "<script>alert(1)</script>" in shown
    assert 'std::map<int, std::vector<char>>::operator[](int) & "x" \'y\'' in shown
    assert "]]><!-- -->" in shown and "&amp;&lt;" in shown and "emoji 🚀 and ünïcödé" in shown
    assert any(s.startswith("bell") and "\x07" not in s and "\x1b" not in s and "\x00" not in s for s in shown)
    assert any(s.startswith("lone ") and s.endswith(" surrogate") for s in shown)
    assert '<script>t</script> & "q"' in "".join(root.itertext())


def test_the_svg_is_self_contained():
    svg = differential_svg(A, B, title="t")
    root = ET.fromstring(svg)
    # no script, no style sheet or image to fetch, no link: the only URL is the SVG namespace's name
    assert not any(el.tag.split("}")[-1] in ("script", "image", "use", "a", "foreignObject", "style", "link")
                   for el in root.iter())
    assert not any("href" in key for el in root.iter() for key in el.attrib)
    assert re.findall(r"https?://[^\s\"']+", svg) == ["http://www.w3.org/2000/svg"]
    assert "url(" not in svg and "@import" not in svg


def test_merge_tree_adds_each_side_along_the_stacks():
    root = merge_tree(A, B)
    assert (root.a, root.b) == (1000.0, 1290.0)
    read = root.children["main"].children["read"]
    assert (read.a, read.b) == (900.0, 1190.0)
    assert (read.children["new_check"].a, read.children["new_check"].b) == (0.0, 40.0)


# --- short names -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "short"), [
    ("arrow::BaseBinaryBuilder<arrow::BinaryType>::Append(unsigned char const*, long)",
     "arrow::BaseBinaryBuilder<arrow::BinaryType>::Append"),
    ("std::vector<std::pair<int, long>, std::allocator<std::pair<int, long> > >::push_back(std::pair<int, long> "
     "const&)", "std::vector<std::pair<…>, std::allocator<…> >::push_back"),
    ("void arrow::internal::Foo<int>(int)", "arrow::internal::Foo<int>"),  # the return type goes
    ("arrow::Status arrow::ipc::Read(int) const", "arrow::ipc::Read"),
    ("(anonymous namespace)::Decode(int)", "(anonymous namespace)::Decode"),
    ("arrow::operator<<(std::ostream&, arrow::Status const&)", "arrow::operator<<"),
    ("a::b<c>::operator<(a::b<c> const&)", "a::b<c>::operator<"),
    ("arrow::Future<arrow::internal::Empty>::operator()()", "arrow::Future<arrow::internal::Empty>::operator()"),
    ("parquet::Decode(int) [clone .cold]", "parquet::Decode"),
    ("operator delete(void*, unsigned long)", "operator delete"),
    ("operator new(unsigned long)", "operator new"),
    ("arrow::Datum::operator bool() const", "arrow::Datum::operator bool"),
    ("std::function<void ()>::operator()() const", "std::function<void ()>::operator()"),
    ("memcpy", "memcpy"),
    ("py::read_table (pyarrow/parquet/core.py)", "py::read_table (pyarrow/parquet/core.py)"),
    ("[no symbols] libz.so", "[no symbols] libz.so"),
])
def test_short_function(name: str, short: str):
    assert short_function(name) == short


def test_frame_label_adds_the_library_where_it_says_something():
    assert frame_label("arrow::Read(int)", "libarrow.so") == "arrow::Read (libarrow.so)"
    assert frame_label("py::f (a.py)", "python") == "py::f (a.py)"
    assert frame_label("[no symbols] libz.so", "libz.so") == "[no symbols] libz.so"
    assert frame_label("0x1234", "?") == "0x1234"


def test_a_deep_thin_stack_does_not_make_the_picture_tall():
    """One wide stack 3 deep and a hair-thin one 60 deep (as a Python interpreter's frames beside a Parquet read):
    the picture is as tall as the readable rows, and the thin stack's last drawn frame says what it folds."""
    wide = {("main", "read", "decode"): 10_000.0}
    thin = {tuple(["main", *[f"py_frame_{i}" for i in range(60)]]): 20.0}
    svg = differential_svg({**wide, **thin}, {**wide, **thin}, title="t")
    height = float(ET.fromstring(svg).attrib["height"])
    assert height < 200, height  # was 60 rows (~1050 px), all but four of them empty
    drawn = frames(svg)
    assert {"main", "read", "decode"} <= set(drawn) and not any(n.startswith("py_frame_1") for n in drawn)
    folded = [f for f in drawn.values() if "are not drawn: too thin to read" in f["title"]]
    assert folded and all(f["width"] < 4 for f in folded)


def test_labels_fit_their_frames_and_are_shortened_before_they_are_cut():
    from colbench.render.flamegraph import text_width

    name = ("parquet::internal::(anonymous namespace)::TypedRecordReader<parquet::PhysicalType<"
            "(parquet::Type::type)5> >::ReadRecords(long)")
    stacks = {("main", name): 300.0, ("main", "other"): 900.0, ("main", "arrow::BufferBuilder::Finish(bool)"): 60.0}
    drawn = frames(differential_svg(stacks, stacks, title="t"))
    for frame in drawn.values():
        if frame["label"]:
            assert text_width(frame["label"]) <= frame["width"] - 6 + 0.01, frame
    assert drawn[name]["label"] == "TypedRecordReader<…>::ReadRecords"  # not "parquet::internal::(anon…"
    assert drawn["arrow::BufferBuilder::Finish(bool)"]["label"] in ("BufferBuilder::Finish", "Finish")


def test_a_long_title_wraps_onto_a_second_line_instead_of_being_cut():
    title = "Where the memory went: " + " ".join(f"param{i}=value{i}" for i in range(14))
    root = ET.fromstring(differential_svg(A, B, title=title, subtitle="sub"))
    heading = [t for t in root.findall(f"{SVG}text") if t.attrib.get("text-anchor") == "middle"]
    lines = [t.text for t in heading if t.attrib.get("font-size") == "15"]
    assert len(lines) == 2 and " ".join(lines) == title, lines
    assert heading[-1].text == "sub"


def test_no_share_on_hover_when_the_total_change_is_too_small_to_split():
    a = {("main", "read"): 1000.0, ("main", "copy"): 1000.0}
    b = {("main", "read"): 1352.0, ("main", "copy"): 650.0}  # +2 in all over ±350 moved: shares of ±17500%
    drawn = frames(differential_svg(a, b, title="t"))
    assert "of the total change" not in drawn["read"]["title"] and "+35.20%" in drawn["read"]["title"]
    c = {("main", "read"): 1300.0, ("main", "copy"): 1000.0}
    assert "100.0% of the total change" in frames(differential_svg(a, c, title="t"))["read"]["title"]
