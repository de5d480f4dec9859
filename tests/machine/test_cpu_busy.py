"""Wall-time workers go to the CPU other work used least since the last look (machine/cpu_busy.py)."""

from __future__ import annotations

import pytest

from colbench.machine.cpu_busy import QUIET_BELOW, QuietCpus, read_cpu_ticks

STAT = """cpu  2255 34 2290 22625563 6290 127 456 0 0 0
cpu0 1132 34 1441 11311718 3675 127 438 0 0 0
cpu1 1123 0 849 11313845 2615 0 18 0 0 0
intr 114930548 113199788 3 0 5 263 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0
"""


def test_proc_stat_becomes_busy_and_total_seconds_per_cpu():
    ticks = read_cpu_ticks(STAT)
    assert sorted(ticks) == [0, 1]
    busy, total = ticks[0]
    assert busy == pytest.approx((1132 + 34 + 1441 + 127 + 438) / 100)  # idle and iowait are not busy
    assert total == pytest.approx((1132 + 34 + 1441 + 11311718 + 3675 + 127 + 438) / 100)


class FakeMachine:
    """Two CPUs whose busy seconds grow as a test says, one second of clock per look."""

    def __init__(self) -> None:
        self.busy = {0: 0.0, 1: 0.0}
        self.now = 0.0
        self.orchestrator = 0.0

    def ticks(self) -> dict[int, tuple[float, float]]:
        return {cpu: (busy, self.now) for cpu, busy in self.busy.items()}

    def chooser(self) -> QuietCpus:
        return QuietCpus(read=self.ticks, clock=lambda: self.now, sleep=self.wait,
                         own_seconds=lambda: self.orchestrator)

    def wait(self, seconds: float) -> None:
        self.now += seconds

    def run(self, seconds: float, **busy: float) -> None:
        """`seconds` pass; CPU n is busy `busy['cpuN']` of them."""
        self.now += seconds
        for name, share in busy.items():
            self.busy[int(name[3:])] += share * seconds


def test_a_cpu_that_other_work_holds_is_left_for_the_quiet_one():
    machine = FakeMachine()
    quiet = machine.chooser()
    machine.busy[0] = 0.0
    first = quiet.choose([0, 1], 1)  # the first look watches for a moment: nothing busy yet
    assert first.cpus == [0] and first.quiet
    machine.run(1.0, cpu0=0.9)  # another job takes CPU 0
    second = quiet.choose([0, 1], 1)
    assert second.cpus == [1] and second.busy == pytest.approx(0.0) and second.quiet


def test_colbench_s_own_worker_is_not_other_work():
    machine = FakeMachine()
    quiet = machine.chooser()
    assert quiet.choose([0, 1], 1).cpus == [0]
    machine.run(2.0, cpu0=1.0)  # the worker we started on CPU 0, busy the whole time
    quiet.ran([0], 2.0)
    again = quiet.choose([0, 1], 1)
    assert again.cpus == [0] and again.busy == pytest.approx(0.0)


def test_a_small_difference_does_not_move_a_block_to_the_other_cpu():
    machine = FakeMachine()
    quiet = machine.chooser()
    assert quiet.choose([0, 1], 1).cpus == [0]
    machine.run(1.0, cpu0=0.05)
    assert quiet.choose([0, 1], 1).cpus == [0]  # 5% busier than CPU 1: not worth moving


def test_when_every_cpu_is_busy_the_choice_says_none_was_quiet():
    machine = FakeMachine()
    quiet = machine.chooser()
    quiet.choose([0, 1], 1)
    machine.run(1.0, cpu0=0.9, cpu1=0.6)
    choice = quiet.choose([0, 1], 1)
    assert choice.cpus == [1] and choice.busy == pytest.approx(0.6) and not choice.quiet
    assert QUIET_BELOW < 0.6


def test_the_orchestrator_s_own_time_is_taken_off_where_it_ran():
    machine = FakeMachine()
    quiet = machine.chooser()
    quiet.choose([0, 1], 1)
    machine.run(1.0, cpu1=0.5)
    machine.orchestrator += 0.5  # that was colbench itself, storing a result
    choice = quiet.choose([0, 1], 1)
    assert choice.busy == pytest.approx(0.0) and choice.quiet
