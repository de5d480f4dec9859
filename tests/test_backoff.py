"""One backoff rule for every retry (stores, Conbench, downloads): delays double up to a cap, never past the window,
and stop after the retries or the window are used up. A fake clock: nothing sleeps."""

from __future__ import annotations

from colbench.backoff import Backoff


class Clock:
    def __init__(self) -> None:
        self.now = 0.0
        self.slept: list[float] = []

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


def test_delays_double_up_to_the_cap_and_stop_at_the_window() -> None:
    clock = Clock()
    backoff = Backoff(0.1, 2.0, within_s=10.0, sleep=clock.sleep, clock=lambda: clock.now)
    while backoff.wait():
        pass
    # the last delay: what was left of the window
    assert [round(s, 6) for s in clock.slept] == [0.1, 0.2, 0.4, 0.8, 1.6, 2.0, 2.0, 2.0, 0.9]


def test_retries_are_counted_and_a_margin_keeps_time_for_the_attempt() -> None:
    clock = Clock()
    counted = Backoff(1.0, retries=3, sleep=clock.sleep, clock=lambda: clock.now)
    assert [counted.wait() for _ in range(5)] == [True, True, True, False, False]
    assert clock.slept == [1.0, 2.0, 4.0]
    clock = Clock()
    near_the_end = Backoff(0.5, within_s=2.0, retries=2, margin_s=1.0, sleep=clock.sleep, clock=lambda: clock.now)
    assert near_the_end.wait() and near_the_end.wait() is True and clock.slept == [0.5, 1.0]
    assert not near_the_end.wait()  # retries used up
    none = Backoff(0.5, retries=0, sleep=clock.sleep, clock=lambda: clock.now)
    assert not none.wait()
