"""Watch a worker without disturbing it: sleep until it exits, its time is up, or its memory needs a look.

The orchestrator shares the machine with the worker it measures, so it must not wake up needlessly. Exit is
awaited on a pidfd (Linux ≥ 5.3): one blocking poll() that returns when the process ends or at the next
deadline. The memory limit is checked by reading the worker tree's resident size from /proc, at intervals
that follow the headroom: a process far below its limit is looked at once a second
(`COLBENCH_MEMORY_POLL_S`), one close to it up to 20 times a second. The price is overshoot: memory that
grows faster than `ASSUMED_GROWTH_BYTES_PER_S` can pass the limit before the next look. (A cgroup's
memory.max would enforce the limit in the kernel, but needs a delegated cgroup v2 memory controller, which
machines like the ones colbench is developed on do not offer.)
"""

from __future__ import annotations

import contextlib
import os
import select
import time
from pathlib import Path
from typing import Any

from colbench.model.records import MemoryWatched

#: roughly how fast one process can fault in fresh memory; sets how soon to look again given the headroom
ASSUMED_GROWTH_BYTES_PER_S = 4 << 30
MIN_MEMORY_INTERVAL_S = 0.05
DEFAULT_MEMORY_INTERVAL_S = 1.0
_FALLBACK_EXIT_POLL_S = 0.1
_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


class ExitWatch:
    """Blocks until a child process has exited (without reaping it) or a timeout passes."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self._fd: int | None = None
        self._poller: Any = None
        with contextlib.suppress(AttributeError, OSError):  # no pidfd: older kernel or not Linux
            self._fd = os.pidfd_open(pid)
            self._poller = select.poll()
            self._poller.register(self._fd, select.POLLIN)
        self.mechanism = "pidfd" if self._fd is not None else f"waitid every {_FALLBACK_EXIT_POLL_S:g} s"

    def wait(self, timeout_s: float) -> bool:
        """True once the process has exited; False when `timeout_s` passed first."""
        if self._poller is not None:
            return bool(self._poller.poll(max(0.0, timeout_s) * 1000))
        deadline = time.monotonic() + max(0.0, timeout_s)
        while True:
            if os.waitid(os.P_PID, self.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None:
                return True
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            time.sleep(min(remaining, _FALLBACK_EXIT_POLL_S))

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = self._poller = None


def _children(pid: int) -> list[int]:
    """Children of every thread of `pid` (a child belongs to the thread that forked it)."""
    found: list[int] = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return found
    for tid in tasks:
        with contextlib.suppress(OSError, ValueError):
            found.extend(int(c) for c in Path(f"/proc/{pid}/task/{tid}/children").read_text().split())
    return found


def _rss(pid: int) -> int:
    try:
        return int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * _PAGE
    except (OSError, ValueError, IndexError):
        return 0


def tree_rss(pid: int) -> int:
    """Resident bytes of a process and all its descendants (0 once it is gone)."""
    if not Path("/proc/self/task").is_dir():  # not Linux: psutil, costlier but portable
        import psutil

        try:
            proc = psutil.Process(pid)
            total = proc.memory_info().rss
            for child in proc.children(recursive=True):
                with contextlib.suppress(psutil.Error):
                    total += child.memory_info().rss
            return total
        except psutil.Error:
            return 0
    total, todo = 0, [pid]
    while todo:
        current = todo.pop()
        total += _rss(current)
        todo.extend(_children(current))
    return total


def memory_interval_setting() -> float:
    """The longest pause between two looks at a worker's memory (`COLBENCH_MEMORY_POLL_S`, default 1 s)."""
    try:
        value = float(os.environ.get("COLBENCH_MEMORY_POLL_S", DEFAULT_MEMORY_INTERVAL_S))
    except ValueError:
        return DEFAULT_MEMORY_INTERVAL_S
    return max(MIN_MEMORY_INTERVAL_S, value)


class MemoryWatch:
    """The memory limit of one worker tree, enforced by looking at its resident size now and then."""

    mechanism = "rss-poll"

    def __init__(self, pid: int, limit_bytes: int, max_interval_s: float | None = None) -> None:
        self.pid = pid
        self.limit_bytes = limit_bytes
        self.max_interval_s = max_interval_s if max_interval_s is not None else memory_interval_setting()
        self.peak_bytes = 0
        self.last_bytes = 0
        self.looks = 0

    def next_look_in(self) -> float:
        """Seconds until the tree could have grown past the limit at the assumed rate, within bounds."""
        headroom = max(0, self.limit_bytes - self.last_bytes)
        return min(self.max_interval_s, max(MIN_MEMORY_INTERVAL_S, headroom / ASSUMED_GROWTH_BYTES_PER_S))

    def over_limit(self) -> bool:
        self.last_bytes = tree_rss(self.pid)
        self.peak_bytes = max(self.peak_bytes, self.last_bytes)
        self.looks += 1
        return self.last_bytes > self.limit_bytes

    def info(self) -> MemoryWatched:
        return MemoryWatched(mechanism=self.mechanism, limit_bytes=self.limit_bytes,
                             peak_tree_rss_bytes=self.peak_bytes, looks=self.looks,
                             max_interval_s=self.max_interval_s)
