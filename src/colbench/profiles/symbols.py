"""Names for a profile's frames: libraries, Python functions, Cython functions, and what cannot be named.

- **Native code** is named by callgrind from the ELF objects' symbol tables: a library with a full symbol table
  (`.symtab`: pyarrow's wheels keep theirs) names every function; a *stripped* one keeps only its exported
  (dynamic) symbols, so its internal functions appear as code addresses (`0x…`). `object_symbols` reads the
  section headers to say which (Debian's `-dbgsym` packages add the symbols back through `/usr/lib/debug`).
- **Python functions** cannot be seen by Valgrind: the interpreter runs them all in `_PyEval_EvalFrameDefault`.
  On Python 3.12+ the profiling worker switches on CPython's perf trampolines (workers/python/callgrind_probe.py): every
  Python function then enters through a small stub of its own, callgrind names the stub by its address, and the
  perf map CPython wrote (`start size py::name:file` per line) names the address. Python 3.11 has no
  trampolines: its Python code stays the interpreter's cost.
- **Cython functions** (pyarrow's `lib`, `_parquet`, `_dataset` modules) are native symbols with mangled names,
  `__pyx_pw_7pyarrow_8_dataset_7Scanner_13to_table`, shown as `pyarrow._dataset.Scanner.to_table`.
"""

from __future__ import annotations

import bisect
import re
import struct
from dataclasses import dataclass
from functools import cache
from pathlib import Path

ADDRESS = re.compile(r"0x[0-9a-fA-F]+$")
_CYTHON = re.compile(r"__pyx_(pw|pf|f)_(\d\w*)(.*)$", re.DOTALL)
_INTERPRETER = re.compile(r"(lib)?python(\d+(\.\d+)*)?[a-z]*(\.so.*)?$")
#: the object of a Python function's frame (named through the perf map)
PYTHON_OBJECT = "python"
PYTHON_PREFIX = "py::"


def short_object(path: str) -> str:
    """`/…/pyarrow/libparquet.so.2600` → `libparquet.so.2600`; an unknown object (`???`, "") → `?`."""
    name = path.rsplit("/", 1)[-1].strip()
    return name if name and name != "???" else "?"


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
    """CPython's perf map (`/tmp/perf-PID.map`, kept as `perf.map` beside the profile): code ranges → names."""

    starts: tuple[int, ...]
    ends: tuple[int, ...]
    names: tuple[str, ...]

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
        return cls(tuple(e[0] for e in entries), tuple(e[1] for e in entries), tuple(e[2] for e in entries))

    def __len__(self) -> int:
        return len(self.starts)

    def name_of(self, address: int) -> str | None:
        index = bisect.bisect_right(self.starts, address) - 1
        if index >= 0 and address < self.ends[index]:
            return self.names[index]
        return None


def python_function(entry: str) -> str:
    """`py::read_table:/…/pyarrow/parquet/core.py` → `read_table (pyarrow/parquet/core.py)`."""
    body = entry.removeprefix(PYTHON_PREFIX)
    function, _, filename = body.partition(":")
    parts = Path(filename).parts
    shown = "/".join(parts[-3:]) if "site-packages" in parts else Path(filename).name or filename
    return f"{function} ({shown})" if filename else function


def frame_name(name: str, obj: str, perf_map: PerfMap) -> tuple[str, str]:
    """What a frame is called in tables and flame graphs, and the object it is shown with."""
    if is_address(name) and len(perf_map):
        entry = perf_map.name_of(int(name, 16))
        if entry is not None and entry.startswith(PYTHON_PREFIX):
            return PYTHON_PREFIX + python_function(entry), PYTHON_OBJECT
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
