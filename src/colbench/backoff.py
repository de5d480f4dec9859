"""Retries with exponential backoff, one rule for every caller: the PostgreSQL store's reconnects, the DuckDB
store's wait for a file another process holds, the Conbench client's repeated requests and the data download's
resumed transfers. Each asks `wait()` after a failure that may pass: it sleeps the next delay (doubling from
`first` up to `cap`, never past the window) and says whether to try again, or says no at once when the window
(`within_s`) or the retries (`retries`) are used up."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass
class Backoff:
    first: float
    cap: float = float("inf")
    #: the seconds the retries may take, from now (None: no limit but `retries`)
    within_s: float | None = None
    #: how many retries at most (None: no limit but `within_s`)
    retries: int | None = None
    #: keep `margin_s` of the window for the attempt itself: no retry starts with less left
    margin_s: float = 0.0
    sleep: Callable[[float], None] = time.sleep
    clock: Callable[[], float] = time.monotonic
    made: int = 0
    _deadline: float | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        if self.within_s is not None:
            self._deadline = self.clock() + self.within_s

    @property
    def left_s(self) -> float:
        """What is left of the window (infinite without one)."""
        return float("inf") if self._deadline is None else self._deadline - self.clock()

    def wait(self) -> bool:
        """After a failure that may pass: sleep the next delay and return True to try again, or False (no sleep)
        when the retries or the window are used up."""
        left = self.left_s
        if (self.retries is not None and self.made >= self.retries) or left <= self.margin_s:
            return False
        self.sleep(min(self.first * 2 ** self.made, self.cap, left))
        self.made += 1
        return True
