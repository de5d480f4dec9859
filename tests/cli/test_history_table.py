"""The history table's ratio column: an interval where the comparisons give one, words where they cannot."""

from __future__ import annotations

import math

from rich.console import Console

from colbench.analysis.history import History, Point
from colbench.cli.history_cmd import _history_table


def _rendered(points: list[Point]) -> str:
    history = History("c1", "placebo duration=0.01", "m1", "vm", points, reference="1.0", reference_median=2e8,
                      metric="instructions")
    console = Console(width=250, record=True)
    console.print(_history_table(history, lambda v: f"{v / 1e6:.1f} M instr", "pyarrow"))
    return console.export_text()


def test_a_point_of_one_process_says_it_has_no_interval_instead_of_zero_to_infinity():
    one = Point("2026-11-27", "r1", "default", "1.1", 2.1e8, math.nan, 1, "3.11.9", ratio=1.05, low=0.0,
                high=math.inf)
    two = Point("2026-11-27", "r2", "default", "1.2", 2.2e8, 0.001, 2, "3.11.9", ratio=1.1, low=1.098, high=1.102)
    wide = Point("2026-11-27", "r3", "default", "1.3", 2.2e8, 0.3, 2, "3.11.9", ratio=1.1, low=1e-9, high=4e7)
    text = _rendered([one, two, wide])
    assert "1.050 (no interval from 1 process)" in text
    assert "1.100 [1.098, 1.102]" in text
    assert "1.100 [<0.001, >1000]" in text
    assert "inf" not in text and "0.000," not in text
