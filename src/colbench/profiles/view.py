"""One side's profile, ready to compare: folded stacks of named frames that mean the same thing on both sides.

From a callgrind file (profiles/callgrind.py) and its call stacks (profiles/stacks.py):

- frames get the names of profiles/symbols.py (Python functions through the perf map, Cython demangled) and
  their library without its version (`libarrow.so.2600` → `libarrow.so`), so two pyarrow releases line up;
- code known only by its address (a stripped library, code generated at run time) is one frame per library,
  `[no symbols] libffi.so`: addresses move with every process (ASLR), so they cannot match across sides anyway,
  and the library says where to look (its `-dbgsym` package or a build with symbols);
- where Python functions are named (Python 3.12+), the interpreter's own frames between a Python function and
  what it calls are folded into that function: the cost of running its bytecode becomes its self cost, and a
  native call (pyarrow's Cython, then Arrow's C++) hangs directly below the Python function that made it.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from colbench.profiles.callgrind import CallgrindProfile, Frame, parse_callgrind
from colbench.profiles.stacks import Folded, Stack, folded_stacks
from colbench.profiles.symbols import (
    PYTHON_OBJECT,
    PerfMap,
    frame_name,
    is_address,
    is_interpreter,
    object_symbols,
    short_object,
)

_SO_VERSION = re.compile(r"(\.so)(\.\d+)+$")
NO_SYMBOLS = "[no symbols]"


@dataclass(frozen=True)
class StrippedLibrary:
    """A library whose functions showed as bare addresses: how much of the profile they cost, and why."""

    library: str
    cost: float
    symbols: str  # "exported only" (stripped), "symbols", "unknown" (see symbols.object_symbols)


@dataclass
class ProfileView:
    label: str
    total: int
    folded: Folded
    caller_depth: int
    python_named: bool
    stripped: list[StrippedLibrary] = field(default_factory=list)
    path: str = ""
    #: what a cost counts: "instructions" (callgrind), "ns" of CPU time (perf's cpu-clock), or an event's name
    unit: str = "instructions"
    #: a Python function's frame name → its first lines (from its code object, see profile_symbols.PerfMap)
    python_lines: dict[str, tuple[int, ...]] = field(default_factory=dict)


def library_key(obj: str) -> str:
    """`/…/libarrow.so.2600` → `libarrow.so`: the same library across releases."""
    return _SO_VERSION.sub(r"\1", short_object(obj))


def load_view(path: Path, perf_map: Path | None = None, label: str = "") -> ProfileView:
    return view_of(parse_callgrind(path), PerfMap.read(perf_map), label or path.name, str(path))


def view_of(profile: CallgrindProfile, perf_map: PerfMap, label: str, path: str = "") -> ProfileView:
    raw = folded_stacks(profile)
    named: dict[Frame, Frame] = {}
    unnamed: dict[str, float] = defaultdict(float)
    objects: dict[str, str] = {}

    def rename(frame: Frame) -> Frame:
        found = named.get(frame)
        if found is None:
            name, shown = frame_name(frame.name, frame.object, perf_map)
            if shown != PYTHON_OBJECT and is_address(name):
                found = Frame(f"{NO_SYMBOLS} {library_key(frame.object)}", library_key(frame.object))
                objects[found.object] = frame.object
            else:
                found = Frame(name, PYTHON_OBJECT if shown == PYTHON_OBJECT else library_key(frame.object))
            named[frame] = found
        return found

    folded: Folded = defaultdict(float)
    python_named = False
    for stack, cost in raw.items():
        renamed = tuple(rename(f) for f in stack)
        if renamed[-1].name.startswith(NO_SYMBOLS):
            unnamed[renamed[-1].object] += cost
        python_named = python_named or any(f.object == PYTHON_OBJECT for f in renamed)
        folded[merge_repeats(renamed)] += cost
    if python_named:
        folded = fold_interpreter(folded, {f.object for f in named.values() if is_interpreter(f.object)})
    stripped = [StrippedLibrary(lib, cost, object_symbols(objects.get(lib, lib)))
                for lib, cost in sorted(unnamed.items(), key=lambda kv: -kv[1])]
    return ProfileView(label, profile.totals, dict(folded), profile.caller_depth, python_named, stripped, path,
                       python_lines=perf_map.lines_by_frame() if python_named else {})


def merge_repeats(stack: Stack) -> Stack:
    """Consecutive frames that became one (several addresses of one stripped library) are one frame."""
    out: list[Frame] = []
    for frame in stack:
        if out and out[-1] == frame and frame.name.startswith(NO_SYMBOLS):
            continue
        out.append(frame)
    return tuple(out)


def fold_interpreter(folded: Folded, interpreter_objects: set[str]) -> Folded:
    """Drop the interpreter's frames that run a Python function's bytecode — those below a Python function's frame,
    up to the next Python function or native frame — so that cost becomes the function's self cost. Interpreter
    frames below native code (a Cython function calling the C API) and above the first Python function stay."""
    out: Folded = defaultdict(float)
    for stack, cost in folded.items():
        out[fold_stack(stack, interpreter_objects.__contains__)] += cost
    return dict(out)


def fold_stack(stack: Stack, interpreter: Callable[[str], bool] = is_interpreter) -> Stack:
    """One stack as `fold_interpreter` folds it (`interpreter`: is this object the interpreter's)."""
    kept: list[Frame] = []
    under_python = False
    for frame in stack:
        if frame.object == PYTHON_OBJECT:
            under_python = True
        elif interpreter(frame.object):
            if under_python:
                continue
        else:
            under_python = False
        kept.append(frame)
    return tuple(kept)
