"""Which CPU is quietest right now: per-CPU busy time from /proc/stat, over the time since the last look.

A wall-time worker pinned to a CPU that other work holds waits for it: an A/A pair of a Parquet read pinned to CPU 0
ran 1.4x apart in 3 of 4 blocks while another job ran there (issue #33). So each worker is pinned to the CPU that
other work used least since the previous worker started (`QuietCpus.choose`). The window is the previous process's
run, which was colbench's own worker on its CPU: what that worker used (its CPU time, `QuietCpus.ran`) is taken off
before comparing, so colbench does not flee its own footprint. The first choice, with no window yet, looks for
`FIRST_LOOK_S`. The kernel counts in ticks of 1/`SC_CLK_TCK` s (10 ms), so a window of a few ticks says little:
shorter windows than `MIN_WINDOW_S` keep the previous choice.

No CPU is quiet when other work used at least `QUIET_BELOW` of the quietest one: the record says so (runner/isolate.py)
and the run's summary counts those processes.
"""

from __future__ import annotations

import os
import resource
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

#: other work's share of a CPU below which it counts as quiet
QUIET_BELOW = 0.2
#: how long the first look watches the CPUs
FIRST_LOOK_S = 0.1
#: a shorter window than this keeps the previous choice (a few 10 ms ticks say nothing)
MIN_WINDOW_S = 0.05
#: another CPU must be this much quieter (share of the window) to move away from the previous worker's CPUs, so
#: a block's two sides stay on one CPU unless the move is worth it
MOVE_MARGIN = 0.1

Ticks = dict[int, tuple[float, float]]  # cpu -> (busy seconds, all seconds), cumulative since boot


def own_cpu_seconds() -> float:
    """CPU seconds this process (the orchestrator, every thread) has used."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def read_cpu_ticks(text: str | None = None) -> Ticks:
    """Per-CPU busy and total seconds from /proc/stat (`text`: its content, for tests); empty where there is none.
    Busy is everything but idle and iowait; steal counts as busy (the hypervisor took the CPU)."""
    if text is None:
        try:
            with open("/proc/stat") as handle:
                text = handle.read()
        except OSError:
            return {}
    tick = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    ticks: Ticks = {}
    for line in text.splitlines():
        if not line.startswith("cpu") or line.startswith("cpu "):
            continue
        name, *values = line.split()
        try:
            numbers = [int(v) for v in values[:8]]
            cpu = int(name[3:])
        except ValueError:
            continue
        if len(numbers) < 5:
            continue
        idle = numbers[3] + numbers[4]  # idle + iowait
        total = sum(numbers)
        ticks[cpu] = ((total - idle) / tick, total / tick)
    return ticks


@dataclass(frozen=True)
class Choice:
    """The CPUs chosen and how busy other work kept them (share of the window) before the worker started."""

    cpus: list[int]
    busy: float | None
    window_s: float | None

    @property
    def quiet(self) -> bool | None:
        return None if self.busy is None else self.busy < QUIET_BELOW


@dataclass
class QuietCpus:
    """Chooses the quietest CPUs at each worker start (see the module's docstring)."""

    read: Callable[[], Ticks] = read_cpu_ticks
    clock: Callable[[], float] = time.monotonic
    sleep: Callable[[float], None] = time.sleep
    #: the orchestrator's own CPU time, which is not other work either (it runs on any CPU: taken off in proportion)
    own_seconds: Callable[[], float] = own_cpu_seconds
    _last: Ticks | None = None
    _last_at: float = 0.0
    _last_own: float = 0.0
    _own: dict[int, float] = field(default_factory=dict)
    _anywhere: float = 0.0
    _previous: list[int] = field(default_factory=list)

    def ran(self, cpus: Sequence[int] | None, cpu_seconds: float) -> None:
        """colbench's own worker used `cpu_seconds` on `cpus` (None: not pinned, on any) since the last choice: not
        other work."""
        if not cpus:
            self._anywhere += cpu_seconds
            return
        for cpu in cpus:
            self._own[cpu] = self._own.get(cpu, 0.0) + cpu_seconds / len(cpus)

    def choose(self, allowed: Sequence[int], count: int) -> Choice:
        """The `count` CPUs of `allowed` that other work used least since the last choice."""
        now_ticks, now, own = self.read(), self.clock(), self.own_seconds()
        if self._last is None:
            self.sleep(FIRST_LOOK_S)
            self._last, self._last_at, self._last_own = now_ticks, now, own
            now_ticks, now, own = self.read(), self.clock(), self.own_seconds()
        window = now - self._last_at
        if window < MIN_WINDOW_S and len(self._previous) == count:
            return Choice(list(self._previous), None, window)
        used: dict[int, float] = {}
        spans: dict[int, float] = {}
        for cpu in allowed:
            if cpu in now_ticks and cpu in self._last:
                used[cpu] = max(0.0, now_ticks[cpu][0] - self._last[cpu][0] - self._own.get(cpu, 0.0))
                spans[cpu] = now_ticks[cpu][1] - self._last[cpu][1]
        # colbench's unpinned work (the orchestrator, a counting worker) ran wherever the kernel put it: taken off each
        # CPU in proportion to what it used
        unpinned, everyone = max(0.0, own - self._last_own) + self._anywhere, sum(used.values())
        busy = {cpu: min(1.0, max(0.0, (u - unpinned * u / everyone if everyone else u) / spans[cpu]))
                if spans[cpu] > 0 else 0.0 for cpu, u in used.items()}
        self._last, self._last_at, self._last_own, self._own, self._anywhere = now_ticks, now, own, {}, 0.0
        if len(busy) < count:  # no /proc/stat: the first allowed CPUs, as before
            self._previous = list(allowed[:count])
            return Choice(list(self._previous), None, None)
        ranked = sorted(busy, key=lambda c: (busy[c], c))
        chosen = sorted(ranked[:count])
        previous = [c for c in self._previous if c in busy]
        if len(previous) == count and max(busy[c] for c in previous) <= max(busy[c] for c in chosen) + MOVE_MARGIN:
            chosen = previous  # not worth a move: a block's two sides stay on one CPU
        self._previous = chosen
        return Choice(chosen, max(busy[c] for c in chosen), window)
