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
their parent's width). Every name is escaped (C++ templates are full of `<` and `&`), and characters XML
forbids (control characters, lone surrogates) become U+FFFD.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from xml.sax.saxutils import escape as _escape

from colbench.redact import document_text
from colbench.render.fmt import fmt_cost

WIDTH_PX = 1200
ROW_PX = 16
MARGIN_PX = 10
TITLE_PX = 46
FONT_PX = 11
CHAR_PX = 6.4  # the width of one character at FONT_PX in a sans-serif font, for truncating labels
MIN_WIDTH_PX = 0.3

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
    total_change = root.b - root.a
    scale = (WIDTH_PX - 2 * MARGIN_PX) / max((root.a + root.b) / 2, 1e-9)
    largest = max(_largest_change(root), 1e-9)
    rects: list[_Rect] = []
    depth = _layout(root, 0, MARGIN_PX, scale, largest, total_change, (baseline_label, contender_label, unit),
                    rects)
    height = TITLE_PX + (depth + 1) * ROW_PX + 2 * MARGIN_PX + 18
    rows = []
    for depth_of, x, width, fill, label, tip in rects:
        y = height - MARGIN_PX - 18 - (depth_of + 1) * ROW_PX
        text = _fit(label, width)
        rows.append(f'<g><title>{escape(tip)}</title><rect x="{x:.2f}" y="{y}" width="{width:.2f}" '
                    f'height="{ROW_PX - 1}" fill="{fill}" rx="2"/>'
                    + (f'<text x="{x + 3:.2f}" y="{y + ROW_PX - 4}">{escape(text)}</text>' if text else "")
                    + "</g>")
    room = WIDTH_PX - 2 * MARGIN_PX  # headings are cut to the width (the whole title shows on hover)
    title_room = room * FONT_PX / 15
    legend = (f"width: mean cost of {baseline_label} and {contender_label}; colour: change "
              f"({contender_label} − {baseline_label}), red grew, blue shrank; hover a frame for its numbers")
    return "\n".join([
        '<?xml version="1.0" encoding="UTF-8" standalone="no"?>',
        f'<svg xmlns="http://www.w3.org/2000/svg" version="1.1" width="{WIDTH_PX}" height="{height}" '
        f'viewBox="0 0 {WIDTH_PX} {height}" font-family="Verdana, DejaVu Sans, sans-serif" '
        f'font-size="{FONT_PX}">',
        f'<rect x="0" y="0" width="{WIDTH_PX}" height="{height}" fill="#fbfbf8"/>',
        f'<text x="{WIDTH_PX / 2}" y="20" text-anchor="middle" font-size="15">{escape(_fit(title, title_room))}'
        f'<title>{escape(title)}</title></text>',
        f'<text x="{WIDTH_PX / 2}" y="38" text-anchor="middle" fill="#555">{escape(_fit(subtitle, room))}</text>',
        *rows,
        f'<text x="{MARGIN_PX}" y="{height - 8}" fill="#555">{escape(_fit(legend, room))}</text>',
        "</svg>",
        "",
    ])


def _largest_change(node: _Node) -> float:
    largest = 0.0
    stack = [node]
    while stack:
        current = stack.pop()
        for child in current.children.values():
            largest = max(largest, abs(child.b - child.a))
            stack.append(child)
    return largest


def _layout(node: _Node, depth: int, x: float, scale: float, largest: float, total_change: float,
            labels: tuple[str, str, str], out: list[_Rect]) -> int:
    """Place `node`'s children above it from `x`, widest first; returns the deepest row used."""
    deepest = depth
    for child in sorted(node.children.values(), key=lambda c: (-(c.a + c.b), c.name)):
        width = (child.a + child.b) / 2 * scale
        if width < MIN_WIDTH_PX:
            continue
        out.append((depth, x, width, _colour(child.b - child.a, largest), child.name,
                    _tooltip(child, total_change, labels)))
        deepest = max(deepest, _layout(child, depth + 1, x, scale, largest, total_change, labels, out))
        x += width
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


def _fit(label: str, width: float) -> str:
    room = int((width - 6) / CHAR_PX)
    if room < 3:
        return ""
    return label if len(label) <= room else label[:room - 2] + ".."
