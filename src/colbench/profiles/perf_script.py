"""Read `perf script` samples into a profile view: folded stacks of named frames, cost in the event's unit.

`perf script --fields comm,tid,event,period,ip,sym,dso` prints one paragraph per sample: a header line
(`python3 4711 cpu-clock: 500000`, or with the event before the period in other perf versions) and then the call
chain, leaf first, one frame a line: `<ip> <symbol> (<object>)`, `[unknown]` where no symbol covers the address.
The period of a `cpu-clock` sample is nanoseconds of CPU time, so a view's total is the CPU time of the sampled
region, every thread summed; other events (`cycles`) count in their own unit, which the view says.

Frames are named as callgrind's are (profiles/view.py): the library without its version, addresses
without a symbol as one `[no symbols] LIB` frame per library, Cython demangled. Kernel frames keep their object
(`[kernel.kallsyms]`): time in the kernel on the case's behalf (page faults, reads) is part of real time.

Python functions (a 3.12+ worker with CPython's perf trampolines on, workers/python/python_names.py): a stub's
frame is in `/tmp/perf-PID.map`; perf names it `py::QUALNAME:FILE` when that map is in /tmp as it prints, else
`[unknown]` with its address, which the map the worker kept beside the profile names. The interpreter frames that
run a Python function's bytecode are folded into it, as for callgrind. DWARF unwinding stops at the first stub
(code made at run time has no unwind tables), so a sampled stack ends at its innermost Python function: self
costs are whole, callers above that function are not in the stack.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from colbench.profiles.bounded import bounded_lines, open_profile
from colbench.profiles.callgrind import Frame, ProfileError
from colbench.profiles.stacks import Folded
from colbench.profiles.symbols import PYTHON_OBJECT, PYTHON_PREFIX, PerfMap, demangle_cython, python_function
from colbench.profiles.view import NO_SYMBOLS, ProfileView, fold_stack, library_key, merge_repeats

_FRAME = re.compile(r"^\s+([0-9a-fA-F]+)\s+(.*?)\s+\((.*)\)\s*$")
_EVENT = re.compile(r"\s([\w.-]+(?::[a-zA-Z]*)?):(?:\s|$)")
_UNITS = {"cpu-clock": "ns", "task-clock": "ns"}
_PERF_MAP_OBJECT = re.compile(r"/tmp/perf-\d+\.map$")


@dataclass(frozen=True)
class SampleCounts:
    """How many samples each frame's self cost rests on, for the noise of a sampled difference."""

    samples: int
    by_frame: dict[Frame, int]
    period: float  # the mean period of one sample (the event's unit)


def read_samples(path: Path, perf_map: PerfMap | None = None) -> tuple[Folded, str, SampleCounts]:
    """Folded stacks (root first) → cost, the event's unit, and the sample counts."""
    try:
        with open_profile(path) as handle:
            return parse_samples([line.rstrip("\n") for line in bounded_lines(handle, str(path), ProfileError)],
                                 perf_map)
    except (OSError, EOFError) as exc:
        raise ProfileError(f"{path}: cannot read the perf samples ({exc})") from None


def parse_samples(lines: list[str], perf_map: PerfMap | None = None) -> tuple[Folded, str, SampleCounts]:
    names = perf_map or PerfMap((), (), ())
    folded: Folded = defaultdict(float)
    counts: dict[Frame, int] = defaultdict(int)
    event, samples, total = "", 0, 0.0
    period: float | None = None
    frames: list[tuple[str, str, str]] = []  # (ip, symbol, object), leaf first

    def flush() -> None:
        nonlocal samples, total, period, frames
        if period is not None and frames:
            stack = fold_stack(tuple(reversed(_named(frames, names))))
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
        period = next((float(t) for t in rest if t.isascii() and t.isdigit()), None)
    flush()
    if samples == 0:
        raise ProfileError("no samples: the timed call ran too briefly for perf to sample it, or perf recorded "
                           "nothing (is the worker's region enabled?)")
    unit = _UNITS.get(event, event or "samples")
    return dict(folded), unit, SampleCounts(samples, dict(counts), total / samples)


def _named(frames: list[tuple[str, str, str]], perf_map: PerfMap) -> list[Frame]:
    """Frames named; an inlined frame (perf prints `(inlined)` for its object) takes the object of the frame it
    was inlined into, the next one at the same address."""
    named = []
    for index, (ip, symbol, obj) in enumerate(frames):
        if obj == "inlined":
            obj = next((o for i, _, o in frames[index + 1:] if i == ip and o != "inlined"), "")
        named.append(_frame(symbol, obj, ip, perf_map))
    return named


def _frame(symbol: str, obj: str, ip: str = "0", perf_map: PerfMap | None = None) -> Frame:
    if symbol.startswith(PYTHON_PREFIX):  # perf read the map itself
        return Frame(PYTHON_PREFIX + python_function(symbol), PYTHON_OBJECT)
    if perf_map is not None and _PERF_MAP_OBJECT.search(obj):
        python = perf_map.python_frame(int(ip, 16))
        if python is not None:
            return Frame(python[0], PYTHON_OBJECT)
    library = library_key(obj) if obj and obj != "unknown" else "?"
    if not symbol or symbol == "[unknown]":
        return Frame(f"{NO_SYMBOLS} {library}", library)
    cython = demangle_cython(symbol)
    return Frame(cython or symbol, library)


def perf_view(path: Path, label: str, calls: int = 1, perf_map: Path | None = None,
              ) -> tuple[ProfileView, SampleCounts]:
    """The samples of `calls` timed calls as the cost of one call (comparable with callgrind's one-call profiles,
    and between sides that sampled as many calls); Python functions named through the kept `perf_map`."""
    names = PerfMap.read(perf_map)
    folded, unit, counts = read_samples(path, names)
    calls = max(1, calls)
    folded = {stack: cost / calls for stack, cost in folded.items()}
    counts = SampleCounts(counts.samples, counts.by_frame, counts.period / calls)
    total = sum(folded.values())
    python_named = any(frame.object == PYTHON_OBJECT for stack in folded for frame in stack)
    view = ProfileView(label, round(total), folded, caller_depth=0, python_named=python_named, stripped=[],
                       path=str(path), unit=unit, python_lines=names.lines_by_frame() if python_named else {})
    return view, counts


def total_sampling_error(a: SampleCounts, b: SampleCounts) -> float:
    """One standard error of the change of the total (Poisson counts of all samples)."""
    return math.sqrt(a.samples * a.period ** 2 + b.samples * b.period ** 2)


def sampling_error(a: SampleCounts, b: SampleCounts, frame: Frame) -> float:
    """One standard error of a frame's self-cost change, counts taken as Poisson (in the event's unit)."""
    return math.sqrt(a.by_frame.get(frame, 0) * a.period ** 2 + b.by_frame.get(frame, 0) * b.period ** 2)
