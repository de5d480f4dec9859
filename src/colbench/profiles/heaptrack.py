"""heaptrack's file read into what a memory profile says: the live allocations at the timed call's peak, by stack.

heaptrack_interpret writes a line-based text (zstd or gzip compressed; heaptrack's own `accumulatedtracedata.cpp`
reads it the same way), every number in hex:

    s LEN TEXT            a string (1-based index): a library path, a function name, a file
    i IP MODULE [FN FILE LINE [FN FILE LINE]…]   an instruction pointer (1-based): its library, and when resolved
                          its function (then the functions inlined at it, not used: callgrind does not see them
                          either, so frames are named as `explain` names them)
    t IP PARENT           a trace (1-based): a frame and the trace of its caller (0: the root)
    a SIZE TRACE          an allocation's info (0-based): its size and its trace
    + INFO / - INFO       an allocation / the free of an allocation of that info

The worker (workers/python/heap_window.py) records only around the timed call, between two marker allocations of
improbable sizes: the window. Allocations before it (the worker's start, before heaptrack was paused) that are freed
in it are not the call's, so a free counts only against allocations of its info made in the window. The peak is
the highest sum of the call's live bytes; the stacks are the live allocations at that moment; the churn is every
byte the call allocated.
"""

from __future__ import annotations

import gzip
import subprocess
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from colbench.processes import streaming
from colbench.profiles.bounded import bounded_lines
from colbench.workers.python.heap_window import MARK_END_BYTES, MARK_START_BYTES

#: a frame as heaptrack resolved it: (function name, or "" when unresolved; library path; address)
RawFrame = tuple[str, str, int]
RawStack = tuple[RawFrame, ...]


#: reading a profile colbench wrote decompresses in seconds; one that takes minutes is stopped
ZSTD_TIMEOUT_S = 300.0


class DamagedProfile(ValueError):
    """A memory profile that cannot be read (truncated, not heaptrack's, no window): one line."""


@dataclass(frozen=True)
class HeapPeak:
    #: root first → bytes live at the peak
    stacks: dict[RawStack, int]
    peak_bytes: int
    churn_bytes: int
    allocations: int
    #: the peak's position in the call: allocation events before it / all events in the window
    peak_at: float


def _lines(path: Path) -> Iterator[str]:
    if path.name.endswith(".zst"):
        try:
            with streaming(["zstd", "-dc", "--", str(path)], timeout_s=ZSTD_TIMEOUT_S, what=f"zstd -dc {path.name}") \
                    as proc:
                assert proc.stdout is not None and proc.stderr is not None
                yield from bounded_lines(proc.stdout, path.name, DamagedProfile)
                proc.stdout.close()
                err = proc.stderr.read(1 << 16)
                proc.wait()
        except OSError as exc:
            raise DamagedProfile(f"cannot run zstd to read {path.name}: {exc}") from None
        except subprocess.TimeoutExpired as exc:
            raise DamagedProfile(str(exc)) from None
        if proc.returncode != 0:
            raise DamagedProfile(f"{path.name} is not a complete zstd file ({err.decode(errors='replace').strip()})")
    else:
        try:
            with gzip.open(path, "rb") as packed:
                yield from bounded_lines(packed, path.name, DamagedProfile)
        except (OSError, EOFError) as exc:
            raise DamagedProfile(f"{path.name} is not a complete gzip file ({exc})") from None


def read_heaptrack(path: Path) -> HeapPeak:
    """The timed call's peak from heaptrack's file; DamagedProfile when it cannot be read."""
    reader = _Reader()
    try:
        for line in _lines(path):
            reader.read(line)
    except (ValueError, IndexError) as exc:
        raise DamagedProfile(f"{path.name} is not heaptrack's data ({type(exc).__name__}: {exc})") from None
    if not reader.started:
        if len(reader.strings) == 1:
            raise DamagedProfile(f"{path.name} holds no heaptrack data")
        raise DamagedProfile(f"{path.name} has no timed call in it (the worker's window markers are missing)")
    if not reader.ended:
        raise DamagedProfile(f"{path.name} ends inside the timed call (the worker did not finish it)")
    return _peak(reader.events, reader.infos, reader.traces, reader.ips)


class _Reader:
    """heaptrack's lines as read so far: its strings, instruction pointers, traces, allocation infos, and the
    allocations and frees between the worker's window markers."""

    def __init__(self) -> None:
        self.strings: list[str] = [""]
        self.ips: list[RawFrame] = [("", "", 0)]
        self.traces: list[tuple[int, int]] = [(0, 0)]
        self.infos: list[tuple[int, int]] = []
        self.events: list[int] = []  # +info+1 for an allocation, -(info+1) for a free
        self.inside = self.ended = False
        self.started = False

    def read(self, line: str) -> None:
        tag = line[:1]
        if tag == "s":
            _, _, text = line.rstrip("\n").partition(" ")
            self.strings.append(text.partition(" ")[2])
        elif tag == "i":
            parts = line.split()
            module = self.strings[int(parts[2], 16)] if len(parts) > 2 else ""
            function = self.strings[int(parts[3], 16)] if len(parts) > 3 else ""
            self.ips.append((function, module, int(parts[1], 16)))
        elif tag == "t":
            _, ip, parent = line.split()
            self.traces.append((int(ip, 16), int(parent, 16)))
        elif tag == "a":
            _, hex_size, trace = line.split()
            self.infos.append((int(hex_size, 16), int(trace, 16)))
        elif tag == "+" or tag == "-":
            self.event(tag, int(line[2:], 16))

    def event(self, tag: str, info: int) -> None:
        """An allocation (+) or a free (-): a window marker, or an event kept while inside the window."""
        bytes_ = self.infos[info][0]
        if bytes_ == MARK_START_BYTES:
            self.inside, self.started = True, True
        elif bytes_ == MARK_END_BYTES:
            self.inside, self.ended = False, True
        elif self.inside:
            self.events.append(info + 1 if tag == "+" else -(info + 1))


def _peak(events: list[int], infos: list[tuple[int, int]], traces: list[tuple[int, int]],
          ips: list[RawFrame]) -> HeapPeak:
    live: Counter[int] = Counter()
    current = peak = churn = count = 0
    peak_index = -1
    for index, event in enumerate(events):
        info = abs(event) - 1
        size = infos[info][0]
        if event > 0:
            live[info] += 1
            current += size
            churn += size
            count += 1
            if current > peak:
                peak, peak_index = current, index
        elif live[info] > 0:  # else: allocated before the window, not the call's
            live[info] -= 1
            current -= size
    by_trace = _live_by_trace(events[:peak_index + 1], infos)
    stacks: dict[RawStack, int] = {}
    cache: dict[int, RawStack] = {0: ()}
    for trace, size in by_trace.items():
        stack = _stack(trace, traces, ips, cache)
        stacks[stack] = stacks.get(stack, 0) + size
    return HeapPeak(stacks, peak, churn, count, (peak_index + 1) / len(events) if events else 0.0)


def _live_by_trace(events: list[int], infos: list[tuple[int, int]]) -> Counter[int]:
    """The bytes still allocated after `events`, per trace (frees of what was allocated before them ignored)."""
    at_peak: Counter[int] = Counter()
    for event in events:
        info = abs(event) - 1
        if event > 0:
            at_peak[info] += 1
        elif at_peak[info] > 0:
            at_peak[info] -= 1
    by_trace: Counter[int] = Counter()
    for info, n in at_peak.items():
        if n > 0:
            size, trace = infos[info]
            by_trace[trace] += size * n
    return by_trace


def _stack(trace: int, traces: list[tuple[int, int]], ips: list[RawFrame], cache: dict[int, RawStack]) -> RawStack:
    """The trace's frames root first (iteratively: deep recursion in the traced code must not recurse here)."""
    chain = []
    while trace not in cache:
        chain.append(trace)
        trace = traces[trace][1]
    stack = cache[trace]
    for t in reversed(chain):
        stack = (*stack, ips[traces[t][0]])
        cache[t] = stack
    return cache[chain[0]] if chain else stack
