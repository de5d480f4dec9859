"""Names for a profile's frames: libraries, Python functions, Cython functions, and what cannot be named.

- **Native code** is named by callgrind from the ELF objects' symbol tables: a library with a full symbol table
  (`.symtab`: pyarrow's wheels keep theirs) names every function; a *stripped* one keeps only its exported
  (dynamic) symbols, so its internal functions appear as code addresses (`0x…`). `object_symbols` reads the
  section headers to say which (Debian's `-dbgsym` packages add the symbols back through `/usr/lib/debug`).
- **Python functions** cannot be seen by Valgrind: the interpreter runs them all in `_PyEval_EvalFrameDefault`.
  On Python 3.12+ the profiling worker switches on CPython's perf trampolines (workers/python/callgrind_probe.py): every
  Python function then enters through a small stub of its own, callgrind names the stub by its address, and the
  perf map CPython wrote (`start size py::name:file` per line) names the address; the function's first line comes
  from its code object, looked up by the worker (the map has none). Python 3.11 has no trampolines: its Python
  code stays the interpreter's cost.
- **Cython functions** (pyarrow's `lib`, `_parquet`, `_dataset` modules) are native symbols with mangled names,
  `__pyx_pw_7pyarrow_8_dataset_7Scanner_13to_table`, shown as `pyarrow._dataset.Scanner.to_table`.
"""

from __future__ import annotations

import bisect
import json
import re
import struct
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

ADDRESS = re.compile(r"0x[0-9a-fA-F]+$")
_CYTHON = re.compile(r"__pyx_(pw|pf|f)_(\d\w*)(.*)$", re.DOTALL)
_INTERPRETER = re.compile(r"(lib)?python(\d+(\.\d+)*)?[a-z]*(\.so.*)?$")
#: the object of a Python function's frame (named through the perf map)
PYTHON_OBJECT = "python"
PYTHON_PREFIX = "py::"
#: the worker's first lines of the mapped functions, beside the map (workers/python/python_names.LINES_NAME)
LINES_SUFFIX = ".lines.json"


def short_object(path: str) -> str:
    """`/…/pyarrow/libparquet.so.2600` → `libparquet.so.2600`; an unknown object (`???`, "") → `?`."""
    name = path.rsplit("/", 1)[-1].strip()
    return name if name and name != "???" else "?"


@cache
def is_interpreter(obj: str) -> bool:
    """The CPython interpreter itself (`python3.11`, `libpython3.12.so.1.0`), by its object's file name."""
    return bool(_INTERPRETER.match(short_object(obj)))


def is_address(name: str) -> bool:
    return bool(ADDRESS.match(name))


def demangle_cython(name: str) -> str | None:
    """`__pyx_pw_7pyarrow_8_dataset_7Scanner_13to_table` → `pyarrow._dataset.Scanner.to_table` (None: not Cython).
    Cython writes each part of the qualified name as <length><part>, joined by `_`, and the function last: as
    <counter><name> for a Python-visible function (`pw`, `pf`), as its bare name for a `cdef` one (`f`:
    `__pyx_f_7pyarrow_3lib_check_status`). A counter followed by a name with `_` in it can read as one more
    part (`…_2to_numpy`: "to" of length 2?): the reading whose parts all fit wins. What follows the symbol (the
    C++ parameter list callgrind demangled, `[clone …]`) is kept."""
    match = _CYTHON.match(name)
    if not match:
        return None
    kind, mangled, rest = match.groups()
    parts = _cython_parts(mangled, counter=kind != "f")
    return ".".join(parts) + rest if parts is not None and len(parts) > 1 else None


def _cython_parts(text: str, counter: bool) -> list[str] | None:
    digits = re.match(r"\d+", text)
    if digits:
        size, body = int(digits.group()), text[digits.end():]
        if len(body) > size + 1 and body[size] == "_":  # <length><part>_, then the rest
            inner = _cython_parts(body[size + 1:], counter)
            if inner is not None:
                return [body[:size], *inner]
        if counter and body and not body[0].isdigit():
            return [body]  # <counter><name>: the function
        return None
    return [text] if not counter and text else None


@dataclass(frozen=True)
class PerfMap:
    """CPython's perf map (`/tmp/perf-PID.map`, kept as `perf.map` beside the profile): code ranges → names; and the
    first lines the worker found for them in their code objects (`perf.map.lines.json` beside it)."""

    starts: tuple[int, ...]
    ends: tuple[int, ...]
    names: tuple[str, ...]
    #: map name (`py::QUALNAME:FILENAME`) → the first lines of the code objects that carry it
    lines: dict[str, tuple[int, ...]] = field(default_factory=dict)

    @classmethod
    def read(cls, path: Path | None) -> PerfMap:
        entries: list[tuple[int, int, str]] = []
        if path is not None and path.exists():
            for line in path.read_text(errors="replace").splitlines():
                fields = line.split(" ", 2)
                if len(fields) == 3:
                    try:
                        start, size = int(fields[0], 16), int(fields[1], 16)
                    except ValueError:
                        continue
                    entries.append((start, start + size, fields[2]))
        entries.sort()
        return cls(tuple(e[0] for e in entries), tuple(e[1] for e in entries), tuple(e[2] for e in entries),
                   _read_lines(path.with_name(path.name + LINES_SUFFIX)) if path is not None else {})

    def __len__(self) -> int:
        return len(self.starts)

    def name_of(self, address: int) -> str | None:
        index = bisect.bisect_right(self.starts, address) - 1
        if index >= 0 and address < self.ends[index]:
            return self.names[index]
        return None

    def python_frame(self, address: int) -> tuple[str, tuple[int, ...]] | None:
        """The frame name of the Python function whose stub holds `address`, and its first lines (none known: ())."""
        entry = self.name_of(address)
        if entry is None or not entry.startswith(PYTHON_PREFIX):
            return None
        return PYTHON_PREFIX + python_function(entry), self.lines.get(entry, ())


    def lines_by_frame(self) -> dict[str, tuple[int, ...]]:
        """Frame name (as `python_frame` names it) → the first lines known for it."""
        found: dict[str, set[int]] = {}
        for entry, lines in self.lines.items():
            if lines:
                found.setdefault(PYTHON_PREFIX + python_function(entry), set()).update(lines)
        return {name: tuple(sorted(lines)) for name, lines in found.items()}


def _read_lines(path: Path) -> dict[str, tuple[int, ...]]:
    """The worker's first lines (workers/python/python_names.py); a missing or damaged file names no line."""
    try:
        raw = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    if not isinstance(raw, dict):
        return {}
    return {str(name): tuple(sorted(int(n) for n in found if isinstance(n, int)))
            for name, found in raw.items() if isinstance(found, list)}


_SITE = ("site-packages", "dist-packages")
_STDLIB = re.compile(r"python\d+\.\d+t?$")


def python_function(entry: str) -> str:
    """`py::read_table:/…/site-packages/pyarrow/parquet/core.py` → `read_table (pyarrow/parquet/core.py)`: the
    file as its module's path (inside site-packages, or the standard library's folder), else its name; so the same
    function is the same frame on Python 3.12 and 3.13, and in two environments' folders."""
    body = entry.removeprefix(PYTHON_PREFIX)
    function, _, filename = body.partition(":")
    return f"{function} ({module_path(filename)})" if filename else function


def module_path(filename: str) -> str:
    parts = Path(filename).parts
    for index in range(len(parts) - 2, -1, -1):
        if parts[index] in _SITE or (_STDLIB.match(parts[index]) and index and parts[index - 1] == "lib"):
            return "/".join(parts[index + 1:])
    return Path(filename).name or filename


def with_lines(name: str, baseline: tuple[int, ...], contender: tuple[int, ...] = ()) -> str:
    """`py::f (m.py)` with its first line, `py::f (m.py:12)`; with each side's where they differ, `:12→14`; several
    code objects of one name, `:12,40`. Other names, and functions with no line known, come back unchanged."""
    if not (baseline or contender) or not name.startswith(PYTHON_PREFIX) or not name.endswith(")"):
        return name
    a, b = (",".join(map(str, side)) for side in (baseline, contender))
    return f"{name[:-1]}:{a if a == b or not b else b if not a else f'{a}→{b}'})"


def frame_name(name: str, obj: str, perf_map: PerfMap) -> tuple[str, str]:
    """What a frame is called in tables and flame graphs, and the object it is shown with."""
    if is_address(name) and len(perf_map):
        python = perf_map.python_frame(int(name, 16))
        if python is not None:
            return python[0], PYTHON_OBJECT
    cython = demangle_cython(name)
    if cython is not None:
        return cython, short_object(obj)
    return name, short_object(obj)


@cache
def object_symbols(path: str) -> str:
    """`symbols` (a full symbol table, debug info, or a detached debug file under /usr/lib/debug, as Debian's
    `-dbgsym` packages install), `exported only` (stripped: internal functions are code addresses), or `unknown`
    (not a 64-bit ELF file readable here)."""
    try:
        sections = _elf_sections(path)
    except (OSError, struct.error, IndexError, ValueError):
        return "unknown"
    if b".symtab" in sections or b".debug_info" in sections:
        return "symbols"
    build_id = sections.get(b".note.gnu.build-id")
    if build_id is not None and _detached_debug(path, build_id).exists():
        return "symbols"
    return "exported only"


def _elf_sections(path: str) -> dict[bytes, bytes | None]:
    """Section name → its contents for the build-id note (None for the others, which are not read)."""
    with open(path, "rb") as handle:
        header = handle.read(64)
        if header[:4] != b"\x7fELF" or header[4] != 2:  # 64-bit ELF only
            raise ValueError("not a 64-bit ELF file")
        order = "<" if header[5] == 1 else ">"
        shoff, = struct.unpack_from(order + "Q", header, 0x28)
        shentsize, shnum, shstrndx = struct.unpack_from(order + "HHH", header, 0x3A)
        handle.seek(shoff)
        table = handle.read(shentsize * shnum)
        # sh_name, sh_type, sh_flags, sh_addr, sh_offset, sh_size
        entries = [struct.unpack_from(order + "IIQQQQ", table, i * shentsize) for i in range(shnum)]
        handle.seek(entries[shstrndx][4])
        strings = handle.read(entries[shstrndx][5])
        found: dict[bytes, bytes | None] = {}
        for entry in entries:
            name = strings[entry[0]:strings.find(b"\0", entry[0])]
            found[name] = None
            if name == b".note.gnu.build-id":
                handle.seek(entry[4])
                note = handle.read(entry[5])
                namesz, descsz = struct.unpack_from(order + "II", note, 0)
                start = 12 + ((namesz + 3) & ~3)
                found[name] = note[start:start + descsz]
        return found


def _detached_debug(path: str, build_id: bytes | None) -> Path:
    if build_id:
        text = build_id.hex()
        return Path("/usr/lib/debug/.build-id") / text[:2] / f"{text[2:]}.debug"
    return Path("/usr/lib/debug" + str(Path(path).resolve()))
