"""Inside a profiled worker: name Python functions for a native profiler through CPython 3.12+'s perf trampolines.

A native profiler (callgrind, perf) sees Python code only as the interpreter's C functions. From Python 3.12 on,
`sys.activate_stack_trampoline("perf")` makes every Python function enter through a small stub of its own, compiled
at run time, and CPython writes one line per stub to `/tmp/perf-PID.map` (a path it fixes:
`START SIZE py::QUALNAME:FILENAME`). A profile then holds the stubs' addresses, and the map names them.

The map has no line numbers, so when the profile is over the worker looks up each mapped function's first line in
its code object (`co_qualname`, `co_filename`, `co_firstlineno`: every function object alive, and the code nested
in theirs) and writes them beside the map (LINES_NAME, JSON: map name → lines; a name that several code objects
share has several). A function whose code object is gone by then (a function made and dropped inside the timed
call) has no line.

The map is moved into the profile's folder (the orchestrator names it), so /tmp is left as it was; a map already
at this process's path (a leftover of an earlier process with the same pid) is never used: it would name the
wrong functions. Python 3.11 and older have no trampolines: their Python code stays the interpreter's cost.

Only the standard library is imported: this module is on the worker's path (Python 3.8-3.13).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

#: set by the orchestrator for a perf profile: the folder the map is moved to (callgrind's: callgrind_probe.KEEP_VAR)
FOLDER_VAR = "COLBENCH_PYTHON_NAMES_DIR"
PERF_MAP_NAME = "perf.map"
LINES_NAME = "perf.map.lines.json"
PREFIX = "py::"


def perf_map_path() -> Path:
    return Path(f"/tmp/perf-{os.getpid()}.map")  # CPython's fixed path (Python/perf_trampoline.c)


class PythonNames:
    """The trampolines of one profiled region; `keep()` moves what names them into `folder`."""

    def __init__(self, folder: Path | None) -> None:
        self.folder = folder
        self.active = False

    def start(self) -> bool:
        """Trampolines on (Python 3.12+, a build with them, no map left at this pid's path); True when they are."""
        activate = getattr(sys, "activate_stack_trampoline", None)
        if self.folder is None or self.active or activate is None or perf_map_path().exists():
            return False
        try:
            activate("perf")
        except (ValueError, OSError):  # a build without trampoline support
            return False
        self.active = True
        return True

    def keep(self) -> None:
        """Trampolines off; the map and the functions' first lines into the folder. The map is this process's own
        (made by its interpreter since `start`), so moving it out of /tmp cleans up after itself."""
        if not self.active:
            return
        self.active = False
        sys.deactivate_stack_trampoline()  # type: ignore[attr-defined]
        source = perf_map_path()
        if self.folder is None or not source.exists():
            return
        target = self.folder / PERF_MAP_NAME
        try:
            os.replace(source, target)
        except OSError:  # another file system: copy, then remove our own file
            import shutil

            shutil.copyfile(source, target)
            source.unlink()
        lines = first_lines(_mapped_names(target))
        (self.folder / LINES_NAME).write_text(json.dumps(lines, sort_keys=True))


def _mapped_names(path: Path) -> set[str]:
    names = set()
    for line in path.read_text(errors="replace").splitlines():
        fields = line.split(" ", 2)
        if len(fields) == 3 and fields[2].startswith(PREFIX):
            names.add(fields[2])
    return names


def first_lines(names: set[str]) -> dict[str, list[int]]:
    """Map name (`py::QUALNAME:FILENAME`) → the first lines of the live code objects that carry it."""
    import gc
    import types

    found: dict[str, set[int]] = {}
    seen: set[int] = set()
    pending = [f.__code__ for f in gc.get_objects() if isinstance(f, types.FunctionType)]
    while pending:
        code = pending.pop()
        if id(code) in seen:
            continue
        seen.add(id(code))
        name = f"{PREFIX}{getattr(code, 'co_qualname', code.co_name)}:{code.co_filename}"
        if name in names:
            found.setdefault(name, set()).add(code.co_firstlineno)
        pending.extend(c for c in code.co_consts if isinstance(c, types.CodeType))
    return {name: sorted(lines) for name, lines in found.items()}
