"""A differential flame graph of two profiles, as one self-contained SVG (no script, no external file).

The idea is Brendan Gregg's ("Differential Flame Graphs", https://www.brendangregg.com/blog/2014-11-09/
differential-flame-graphs.html; FlameGraph's `difffolded.pl` pairs two folded profiles stack by stack): one
flame graph whose frames are coloured by how much their cost changed — red grew, blue shrank, the deeper the
colour the larger the change relative to the largest one. Two choices differ from `difffolded.pl` +
`flamegraph.pl`, whose widths are the second profile's: here a frame's width is the *mean* of its cost on the
two sides, so code that only the baseline ran stays visible (in Gregg's graph it vanishes, which is why he
suggests drawing a second, negated graph); and each frame's tooltip (`<title>`, shown on hover by every
browser) gives both costs, the change, and the change's share of the total change.

Stacks are root first (the bottom row); frames narrower than `MIN_WIDTH_PX` are left out (their cost stays in
their parent's width). The picture is as tall as what can be read, not as the deepest hair-thin stack: a frame
narrower than `MIN_PARENT_PX` draws none of the frames above it, and rows above the last one that frames fill to
`MIN_ROW_PX` are not drawn (a deep, thin Python stack made four fifths of a graph empty); a frame whose callees
were cut says how many rows were folded into it on hover. Labels are measured with DejaVu Sans's advance widths
(the font the SVG asks for first) and shortened as a reader would — without argument lists and nested template
arguments, then without namespaces — before they are cut; a long title or subtitle wraps onto a second line.
Every name is escaped (C++ templates are full of `<` and `&`), and characters XML forbids (control characters,
lone surrogates) become U+FFFD.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from xml.sax.saxutils import escape as _escape

from colbench.profiles.diff import SPLIT_FLOOR
from colbench.redact import document_text
from colbench.render.fmt import fmt_cost
from colbench.render.frames import short_function

WIDTH_PX = 1200
ROW_PX = 16
MARGIN_PX = 10
FONT_PX = 11
TITLE_FONT_PX = 15
MIN_WIDTH_PX = 0.3
#: a frame narrower than this draws no frames above it (a hair-thin tower says nothing but takes the height)
MIN_PARENT_PX = 4.0
#: the top drawn row is the last one whose frames together are at least this wide
MIN_ROW_PX = 24.0
#: DejaVu Sans's advance widths of ASCII 32-126 at 11 px (from the font's own metrics, matplotlib's copy of it)
_ADVANCE = (3.5, 4.41, 5.06, 9.22, 7.0, 10.45, 8.58, 3.02, 4.29, 4.29, 5.5, 9.22, 3.5, 3.97, 3.5, 3.71, 7.0, 7.0,
            7.0, 7.0, 7.0, 7.0, 7.0, 7.0, 7.0, 7.0, 3.71, 3.71, 9.22, 9.22, 9.22, 5.84, 11.0, 7.52, 7.55, 7.68, 8.47,
            6.95, 6.33, 8.52, 8.27, 3.24, 3.24, 7.21, 6.13, 9.49, 8.23, 8.66, 6.63, 8.66, 7.64, 6.98, 6.72, 8.05,
            7.52, 10.88, 7.54, 6.72, 7.54, 4.29, 3.71, 4.29, 9.22, 5.5, 5.5, 6.74, 6.98, 6.05, 6.98, 6.77, 3.87,
            6.98, 6.97, 3.06, 3.06, 6.37, 3.06, 10.72, 6.97, 6.73, 6.98, 6.98, 4.52, 5.73, 4.31, 6.97, 6.51, 9.0,
            6.51, 6.51, 5.77, 7.0, 3.71, 7.0, 9.22)
_WIDE = 11.0  # any other character: as wide as the widest ASCII ones

Stack = tuple[str, ...]

def escape(text: str) -> str:
    """Text for an SVG element: `&`, `<`, `>` escaped, and characters no XML document may hold replaced by U+FFFD
    (a symbol or a file name can have them; one would make the whole SVG unreadable): `redact.document_text`, the
    replacement every HTML view makes too."""
    return _escape(document_text(text))


#: one frame as drawn: (row, x, width, fill colour, label, hover text)
_Rect = tuple[int, float, float, str, str, str]


@dataclass
class _Node:
    name: str
    a: float = 0.0
    b: float = 0.0
    children: dict[str, _Node] = field(default_factory=dict)

    def child(self, name: str) -> _Node:
        found = self.children.get(name)
        if found is None:
            found = self.children[name] = _Node(name)
        return found


def merge_tree(baseline: Mapping[Stack, float], contender: Mapping[Stack, float]) -> _Node:
    """One tree of both profiles: every node's cost on each side (inclusive along its stack)."""
    root = _Node("all")
    for side, folded in (("a", baseline), ("b", contender)):
        for stack, cost in folded.items():
            node = root
            setattr(node, side, getattr(node, side) + cost)
            for name in stack:
                node = node.child(name)
                setattr(node, side, getattr(node, side) + cost)
    return root


def differential_svg(baseline: Mapping[Stack, float], contender: Mapping[Stack, float], *, title: str,
                     subtitle: str = "", baseline_label: str = "A", contender_label: str = "B",
                     unit: str = "instructions") -> str:
    """The SVG document (a string) of the differential flame graph of two folded profiles."""
    root = merge_tree(baseline, contender)
    scale = (WIDTH_PX - 2 * MARGIN_PX) / max((root.a + root.b) / 2, 1e-9)
    total_change = root.b - root.a
    # a total too small beside what moved between frames is not split into shares (profiles/diff.py)
    splittable = abs(total_change) >= SPLIT_FLOOR * _moved(root)
    layout = _Layout(scale, max(_largest_change(root), 1e-9), total_change if splittable else 0.0,
                     (baseline_label, contender_label, unit))
    layout.place(root, 0, MARGIN_PX)
    room = WIDTH_PX - 2 * MARGIN_PX
    heading = [(line, TITLE_FONT_PX, "#000") for line in wrap(title, room, TITLE_FONT_PX)] + \
        [(line, FONT_PX, "#555") for line in wrap(subtitle, room, FONT_PX)]
    top = MARGIN_PX + sum(size + 5 for _, size, _ in heading) + 6
    depth = layout.drawn_depth()
    height = round(top + (depth + 1) * ROW_PX + MARGIN_PX + 18)
    rows = []
    for depth_of, x, width, fill, label, tip in layout.rects:
        if depth_of > depth:
            continue
        y = height - MARGIN_PX - 18 - (depth_of + 1) * ROW_PX
        text = fit(label, width - 6)
        rows.append(f'<g><title>{escape(tip)}</title><rect x="{x:.2f}" y="{y}" width="{width:.2f}" '
                    f'height="{ROW_PX - 1}" fill="{fill}" rx="2"/>'
                    + (f'<text x="{x + 3:.2f}" y="{y + ROW_PX - 4}">{escape(text)}</text>' if text else "")
                    + "</g>")
    lines, y_at = [], MARGIN_PX
    for number, (line, size, colour) in enumerate(heading):
        y_at += size + 5
        whole = f"<title>{escape(title)}</title>" if number == 0 else ""  # the whole title on hover
        lines.append(f'<text x="{WIDTH_PX / 2}" y="{y_at}" text-anchor="middle" font-size="{size}" '
                     f'fill="{colour}">{escape(line)}{whole}</text>')
    legend = (f"width: mean cost of {baseline_label} and {contender_label}; colour: change "
              f"({contender_label} − {baseline_label}), red grew, blue shrank; stacks end where they get too "
              "thin to read; hover a frame for its numbers")
    return "\n".join([
        '<?xml version="1.0" encoding="UTF-8" standalone="no"?>',
        f'<svg xmlns="http://www.w3.org/2000/svg" version="1.1" width="{WIDTH_PX}" height="{height}" '
        f'viewBox="0 0 {WIDTH_PX} {height}" font-family="DejaVu Sans, Verdana, sans-serif" '
        f'font-size="{FONT_PX}">',
        f'<rect x="0" y="0" width="{WIDTH_PX}" height="{height}" fill="#fbfbf8"/>',
        *lines,
        *rows,
        f'<text x="{MARGIN_PX}" y="{height - 8}" fill="#555">{escape(fit(legend, room))}</text>',
        "</svg>",
        "",
    ])


def text_width(text: str, size: float = FONT_PX) -> float:
    """The width in px of `text` in DejaVu Sans at `size` px."""
    return sum(_ADVANCE[ord(c) - 32] if 32 <= ord(c) < 127 else _WIDE for c in text) * size / FONT_PX


def fit(label: str, room: float, size: float = FONT_PX) -> str:
    """The label in `room` px: whole, else shortened as a reader would (no argument lists or nested template
    arguments, then no namespaces), else cut with "…"; "" where not even three characters fit."""
    for candidate in _shorter(label):
        if text_width(candidate, size) <= room:
            return candidate
    shortest = _shorter(label)[-1]
    end = len(shortest)
    while end > 2 and text_width(shortest[:end] + "…", size) > room:
        end -= 1
    return shortest[:end] + "…" if end > 2 else ""


def _shorter(label: str) -> list[str]:
    """The label and its shorter forms, longest first: without argument lists and nested template arguments,
    without any template arguments, then without the namespaces before its last two names (`Class::method`),
    then its last name alone."""
    forms = [label, short_function(label)]
    bare = short_function(label, template_depth=0)
    forms.append(bare)
    if "::" in bare and not bare.startswith(("py::", "[")):
        parts = bare.split("::")
        if len(parts) > 2:
            forms.append("::".join(parts[-2:]))
        forms.append(parts[-1])
    return list(dict.fromkeys(forms))


def wrap(text: str, room: float, size: float) -> list[str]:
    """A heading in up to two lines of `room` px, broken at spaces; the second cut with "…" if need be."""
    if not text:
        return []
    if text_width(text, size) <= room:
        return [text]
    words, first = text.split(" "), ""
    while words and text_width((first + " " + words[0]).strip(), size) <= room:
        first = (first + " " + words.pop(0)).strip()
    if not first:  # one word wider than the line
        return [fit(text, room, size)]
    return [first, fit(" ".join(words), room, size)]


def _moved(node: _Node) -> float:
    """Every frame's change of self cost, summed whatever its sign."""
    moved, stack = 0.0, [node]
    while stack:
        current = stack.pop()
        kids = current.children.values()
        moved += abs((current.b - sum(k.b for k in kids)) - (current.a - sum(k.a for k in kids)))
        stack.extend(kids)
    return moved


def _largest_change(node: _Node) -> float:
    largest = 0.0
    stack = [node]
    while stack:
        current = stack.pop()
        for child in current.children.values():
            largest = max(largest, abs(child.b - child.a))
            stack.append(child)
    return largest


class _Layout:
    """The frames placed row by row (root first), and how wide each row's frames are together."""

    def __init__(self, scale: float, largest: float, total_change: float, labels: tuple[str, str, str]) -> None:
        self.scale, self.largest, self.total_change, self.labels = scale, largest, total_change, labels
        self.rects: list[_Rect] = []
        self.filled: dict[int, float] = {}
        #: per drawn frame (its index in rects): how many rows of callees above it stay undrawn
        self.folded: dict[int, int] = {}

    def place(self, node: _Node, depth: int, x: float) -> None:
        """Place `node`'s children above it from `x`, widest first; a frame too thin to read keeps its callees."""
        for child in sorted(node.children.values(), key=lambda c: (-(c.a + c.b), c.name)):
            width = (child.a + child.b) / 2 * self.scale
            if width < MIN_WIDTH_PX:
                continue
            index = len(self.rects)
            self.rects.append((depth, x, width, _colour(child.b - child.a, self.largest), child.name,
                               _tooltip(child, self.total_change, self.labels)))
            self.filled[depth] = self.filled.get(depth, 0.0) + width
            if width >= MIN_PARENT_PX:
                self.place(child, depth + 1, x)
            elif child.children:
                self.folded[index] = _height(child)
            x += width

    def drawn_depth(self) -> int:
        """The top row drawn: the last one frames fill to MIN_ROW_PX (all rows when none does). The frames below
        it whose callees are cut off say so on hover."""
        rows = sorted(self.filled)
        wide = [row for row in rows if self.filled[row] >= MIN_ROW_PX]
        depth = wide[-1] if wide else (rows[-1] if rows else 0)
        for index, folded in self.folded.items():
            self._note(index, folded)
        if depth < (rows[-1] if rows else 0):
            self._note_cut(depth)
        return depth

    def _note(self, index: int, rows: int) -> None:
        depth, x, width, fill, label, tip = self.rects[index]
        self.rects[index] = (depth, x, width, fill, label,
                             tip + f"\n(its callees, {rows} row{'s' if rows != 1 else ''} deep, are not drawn: "
                             "too thin to read)")

    def _note_cut(self, depth: int) -> None:
        """Frames of the top drawn row with callees above it."""
        ends = {(row, round(x, 2)) for row, x, *_ in self.rects if row == depth + 1}
        for index, (row, x, width, *_rest) in enumerate(self.rects):
            if row == depth and any(r == depth + 1 and x - 0.01 <= at < x + width for r, at in ends):
                self._note(index, max(1, max(r for r, *_ in self.rects) - depth))


def _height(node: _Node) -> int:
    """How many rows of callees stand above a node."""
    deepest, stack = 0, [(node, 0)]
    while stack:
        current, depth = stack.pop()
        deepest = max(deepest, depth)
        stack.extend((child, depth + 1) for child in current.children.values())
    return deepest


def _colour(delta: float, largest: float) -> str:
    """White-ish for no change, toward red (grew) or blue (shrank) with the size of the change."""
    strength = min(1.0, abs(delta) / largest) ** 0.5 if largest else 0.0
    if abs(delta) < 0.5:
        return "rgb(232,232,225)"
    fade = round(232 - 170 * strength)
    return f"rgb(232,{fade},{fade})" if delta > 0 else f"rgb({fade},{fade},232)"


def _tooltip(node: _Node, total_change: float, labels: tuple[str, str, str]) -> str:
    """The frame's cost on both sides in the profile's unit (labels: baseline, contender, unit)."""
    delta = node.b - node.a
    change = f"{delta / node.a:+.2%}" if node.a else "new"
    share = f"; {delta / total_change:.1%} of the total change" if total_change else ""
    return (f"{node.name}\n{labels[0]}: {fmt_cost(node.a, labels[2])}, {labels[1]}: "
            f"{fmt_cost(node.b, labels[2])} ({change}){share}")


