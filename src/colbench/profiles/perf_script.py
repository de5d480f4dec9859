"""Read `perf script` samples into a profile view: folded stacks of named frames, cost in the event's unit.

`perf script --fields comm,tid,event,period,ip,sym,dso` prints one paragraph per sample: a header line
(`python3 4711 cpu-clock: 500000`, or with the event before the period in other perf versions) and then the call
chain, leaf first, one frame a line: `<ip> <symbol> (<object>)`, `[unknown]` where no symbol covers the address.
The period of a `cpu-clock` sample is nanoseconds of CPU time, so a view's total is the CPU time of the sampled
region, every thread summed; other events (`cycles`) count in their own unit, which the view says.

Frames are named as callgrind's are (profiles/view.py): the library without its version, addresses
without a symbol as one `[no symbols] LIB` frame per library, Cython demangled. Kernel frames keep their object
(`[kernel.kallsyms]`): time in the kernel on the case's behalf (page faults, reads) is part of real time.
"""

from __future__ import annotations

import gzip
import math
import re
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from colbench.profiles.callgrind import Frame, ProfileError
from colbench.profiles.stacks import Folded
from colbench.profiles.symbols import demangle_cython
from colbench.profiles.view import NO_SYMBOLS, ProfileView, library_key, merge_repeats

_FRAME = re.compile(r"^\s+([0-9a-fA-F]+)\s+(.*?)\s+\((.*)\)\s*$")
_EVENT = re.compile(r"\s([\w.-]+(?::[a-zA-Z]*)?):(?:\s|$)")
_UNITS = {"cpu-clock": "ns", "task-clock": "ns"}


@dataclass(frozen=True)
class SampleCounts:
    """How many samples each frame's self cost rests on, for the noise of a sampled difference."""

    samples: int
    by_frame: dict[Frame, int]
    period: float  # the mean period of one sample (the event's unit)


def read_samples(path: Path) -> tuple[Folded, str, SampleCounts]:
    """Folded stacks (root first) → cost, the event's unit, and the sample counts."""
    opener = gzip.open if path.suffix == ".gz" else open
    try:
        with opener(path, "rt", encoding="utf-8", errors="replace") as handle:
            return parse_samples(handle.read().split("\n"))
    except (OSError, EOFError) as exc:
        raise ProfileError(f"{path}: cannot read the perf samples ({exc})") from None


def parse_samples(lines: list[str]) -> tuple[Folded, str, SampleCounts]:
    folded: Folded = defaultdict(float)
    counts: dict[Frame, int] = defaultdict(int)
    event, samples, total = "", 0, 0.0
    period: float | None = None
    frames: list[tuple[str, str, str]] = []  # (ip, symbol, object), leaf first

    def flush() -> None:
        nonlocal samples, total, period, frames
        if period is not None and frames:
            stack = tuple(reversed(_named(frames)))
            folded[merge_repeats(stack)] += period
            counts[stack[-1]] += 1
            samples, total = samples + 1, total + period
        period, frames = None, []

    for line in lines:
        if not line.strip():
            flush()
            continue
        if line[0].isspace():
            match = _FRAME.match(line)
            if match and period is not None:
                frames.append((match.group(1), match.group(2), match.group(3)))
            continue
        flush()
        found = _EVENT.search(line)
        if found:
            event = event or found.group(1).split(":")[0]
            rest = line[found.end():].split() + line[:found.start()].split()[-1:]
        else:
            rest = line.split()[-1:]
        period = next((float(t) for t in rest if t.isdigit()), None)
    flush()
    if samples == 0:
        raise ProfileError("no samples: the timed call ran too briefly for perf to sample it, or perf recorded "
                           "nothing (is the worker's region enabled?)")
    unit = _UNITS.get(event, event or "samples")
    return dict(folded), unit, SampleCounts(samples, dict(counts), total / samples)


def _named(frames: list[tuple[str, str, str]]) -> list[Frame]:
    """Frames named; an inlined frame (perf prints `(inlined)` for its object) takes the object of the frame it
    was inlined into, the next one at the same address."""
    named = []
    for index, (ip, symbol, obj) in enumerate(frames):
        if obj == "inlined":
            obj = next((o for i, _, o in frames[index + 1:] if i == ip and o != "inlined"), "")
        named.append(_frame(symbol, obj))
    return named


def _frame(symbol: str, obj: str) -> Frame:
    library = library_key(obj) if obj and obj != "unknown" else "?"
    if not symbol or symbol == "[unknown]":
        return Frame(f"{NO_SYMBOLS} {library}", library)
    cython = demangle_cython(symbol)
    return Frame(cython or symbol, library)


def perf_view(path: Path, label: str, calls: int = 1) -> tuple[ProfileView, SampleCounts]:
    """The samples of `calls` timed calls as the cost of one call (comparable with callgrind's one-call profiles,
    and between sides that sampled as many calls)."""
    folded, unit, counts = read_samples(path)
    calls = max(1, calls)
    folded = {stack: cost / calls for stack, cost in folded.items()}
    counts = SampleCounts(counts.samples, counts.by_frame, counts.period / calls)
    total = sum(folded.values())
    view = ProfileView(label, round(total), folded, caller_depth=0, python_named=False, stripped=[],
                       path=str(path), unit=unit)
    return view, counts


def total_sampling_error(a: SampleCounts, b: SampleCounts) -> float:
    """One standard error of the change of the total (Poisson counts of all samples)."""
    return math.sqrt(a.samples * a.period ** 2 + b.samples * b.period ** 2)


def sampling_error(a: SampleCounts, b: SampleCounts, frame: Frame) -> float:
    """One standard error of a frame's self-cost change, counts taken as Poisson (in the event's unit)."""
    return math.sqrt(a.by_frame.get(frame, 0) * a.period ** 2 + b.by_frame.get(frame, 0) * b.period ** 2)
