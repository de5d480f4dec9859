"""When a counting process has counted enough calls: its counts repeat (runs in the worker, Python 3.8 on).

Instruction counts of one call repeat to hundredths of a percent, so a counting process stops once its timed calls
repeat within the metric's spread (`repeat_within`, 0.2%): more calls would only repeat them. Most cases repeat
call to call (two calls in a row agree). Some alternate: a cache or a pool that is filled on one call and reused on
the next, a hash table resized every other call; pyarrow's asv suite has cases whose counts go A, B, A, B, ... with
A and B 1-5% apart. Two calls in a row never agree there, so the process ran its whole iteration budget. A cycle of
`period` calls that repeats once (the last `period` calls each agree with the one `period` calls before) is as
settled as two equal calls: more calls would repeat the cycle, and the process's median (the median of whole
cycles) would not move. The record says which rule stopped each process (`measure.instructions.stopped_by`).
"""

from __future__ import annotations

from typing import Sequence

#: the longest cycle of counts a process stops on (one repeat of it: 2 x this many timed calls)
LONGEST_CYCLE = 3


def settled(samples: Sequence[float | None], within: float | None) -> str | None:
    """How the timed counts so far have settled, or None: "two calls agree" (the last two within `within`),
    "a cycle of N calls repeated" (the last N each within `within` of the count N calls before)."""
    if within is None:
        return None
    for period in range(1, LONGEST_CYCLE + 1):
        if len(samples) < 2 * period:
            break
        if all(_agree(samples[-i], samples[-i - period], within) for i in range(1, period + 1)):
            return "two calls agree" if period == 1 else f"a cycle of {period} calls repeated"
    return None


def _agree(a: float | None, b: float | None, within: float) -> bool:
    return bool(a and b) and abs(a / b - 1.0) <= within  # type: ignore[operator]
