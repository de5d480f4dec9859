"""Read a callgrind profile: the cost of every function (in its caller context) and of every call edge.

The format is Valgrind's "Callgrind Format Specification" (https://valgrind.org/docs/manual/cl-format.html).
What matters here:

- `ob=` / `fl=` / `fn=` set the current object (ELF file), source file and function; the cost lines that follow
  (`<position> <cost> …`) are that function's *self* cost;
- `cob=` / `cfi=` / `cfn=` name a called function, `calls=<count> <position>` announces a call, and the next cost
  line is that call's *inclusive* cost (the callee and everything it called), charged to the edge, not to self;
- names may be compressed: `(12) name` defines id 12, a later `(12)` refers to it (functions share one table,
  files another, objects a third);
- with `--separate-callers=N` a function's name is its call chain, innermost first: `f'g'h` is f called from g
  called from h; a chain of N callers may continue beyond what the name shows. A bare number after a name is
  callgrind's recursion level (`f'2`: f called by itself), not a caller.

Only the first event (`Ir`, instructions executed) is read. The parser keeps contexts as they are; naming
(libraries, Python functions, Cython) is profiles/symbols.py's and call stacks are profiles/stacks.py's.
"""

from __future__ import annotations

import gzip
import re
import zlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

#: how `fn=` names separate a function from its callers (`--separate-callers`) and from its recursion level
CHAIN_SEPARATOR = "'"
_COMPRESSED = re.compile(r"\((\d+)\)(?:\s(.*))?$")
_NUMBER = re.compile(r"[+-]?(?:0x[0-9a-fA-F]+|\d+)$")


class ProfileError(ValueError):
    """The file is not a callgrind profile this parser understands (the message says what was found)."""


@dataclass(frozen=True)
class Frame:
    """One function: its name as callgrind shows it (demangled C++, a symbol, or `0x…` for an address without a
    symbol) and the ELF object it lives in (full path as callgrind saw it; "" when unknown)."""

    name: str
    object: str


@dataclass
class Context:
    """A function in its caller context: `frames[0]` is the function, `frames[1:]` its callers, innermost first
    (one frame only when the profile has no `--separate-callers`)."""

    frames: tuple[Frame, ...]
    self_cost: int = 0


@dataclass
class CallgrindProfile:
    """One callgrind dump. Contexts are numbered by their order of appearance; `calls[(caller, callee)]` is the
    inclusive cost of every call from context `caller` to context `callee`, and `counts` how many calls."""

    events: list[str]
    totals: int
    command: str
    caller_depth: int
    contexts: list[Context] = field(default_factory=list)
    calls: dict[tuple[int, int], int] = field(default_factory=dict)
    counts: dict[tuple[int, int], int] = field(default_factory=dict)

    @property
    def self_total(self) -> int:
        return sum(c.self_cost for c in self.contexts)


class _Names:
    """One name-compression table (`(id) name` defines, `(id)` refers)."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.names: dict[str, str] = {}

    def read(self, value: str, line_no: int) -> str:
        match = _COMPRESSED.match(value.strip())
        if not match:
            return value.strip()
        ident, name = match.group(1), match.group(2)
        if name is not None:
            self.names[ident] = name
            return name
        if ident not in self.names:
            raise ProfileError(f"line {line_no}: {self.kind} ({ident}) used before it was named")
        return self.names[ident]


def split_chain(name: str) -> list[str]:
    """`f'2'g'h` → ["f", "g", "h"]: the function and its callers, recursion levels dropped."""
    parts = name.split(CHAIN_SEPARATOR)
    chain = [parts[0]]
    for part in parts[1:]:
        if part.isdigit():  # f'2: a recursion level of the name before it
            continue
        chain.append(part)
    return chain


def parse_callgrind(path: Path) -> CallgrindProfile:
    """A callgrind file, plain or gzipped (`.gz`: how colbench keeps profiles)."""
    opener = gzip.open if path.suffix == ".gz" else open
    try:
        with opener(path, "rt", encoding="utf-8", errors="replace") as handle:
            return parse_lines(handle, str(path))
    except (gzip.BadGzipFile, EOFError, zlib.error) as exc:  # a damaged or cut-short file: not a traceback
        raise ProfileError(f"{path}: not a complete gzip file ({exc})") from None


def parse_lines(lines: Iterable[str], source: str = "profile") -> CallgrindProfile:
    """Parse a callgrind dump's lines (see the module docstring for what is kept)."""
    objects, files, functions = _Names("object"), _Names("file"), _Names("function")
    events: list[str] = []
    positions = 1
    totals: int | None = None
    summary: int | None = None
    command = ""
    by_key: dict[tuple[str, str], int] = {}   # (fn name as written, object) → context index
    contexts: list[Context] = []
    calls: dict[tuple[int, int], int] = {}
    counts: dict[tuple[int, int], int] = {}
    depth = 0
    current_ob = ""
    current_fn: int | None = None
    call_ob: str | None = None
    call_fn: str | None = None
    pending_call: int | None = None  # the count of a `calls=` line whose cost line comes next
    seen_header = False

    def context(name: str, obj: str) -> int:
        nonlocal depth
        key = (name, obj)
        index = by_key.get(key)
        if index is None:
            chain = split_chain(name)
            depth = max(depth, len(chain) - 1)
            # callers' objects are unknown from the name alone: resolved by profiles.stacks from their own entries
            frames = (Frame(chain[0], obj), *(Frame(n, "") for n in chain[1:]))
            index = by_key[key] = len(contexts)
            contexts.append(Context(frames))
        return index

    for line_no, raw in enumerate(lines, 1):
        line = raw.rstrip("\n")
        if not line or line.startswith("#"):
            continue
        first = line[0]
        if first.isdigit() or first in "+-*":
            if current_fn is None and pending_call is None:
                if not seen_header:
                    raise ProfileError(f"{source}: not a callgrind profile (line {line_no} is a cost line before any "
                                       "header)")
                continue
            fields = line.split()
            cost = _cost(fields, positions, line_no)
            if pending_call is not None:
                if current_fn is None or call_fn is None:
                    raise ProfileError(f"line {line_no}: a call outside any function")
                callee = context(call_fn, call_ob if call_ob is not None else current_ob)
                edge = (current_fn, callee)
                calls[edge] = calls.get(edge, 0) + cost
                counts[edge] = counts.get(edge, 0) + pending_call
                pending_call, call_ob, call_fn = None, None, None
            elif current_fn is not None:
                contexts[current_fn].self_cost += cost
            continue
        key, sep, value = line.partition("=")
        if sep and key in ("ob", "fl", "fi", "fe", "fn", "cob", "cfi", "cfl", "cfn", "calls", "jump", "jcnd",
                           "jfi", "jfl"):
            seen_header = True
            if key == "ob":
                current_ob = objects.read(value, line_no)
            elif key in ("fl", "fi", "fe", "cfi", "cfl"):
                files.read(value, line_no)  # kept in the table for later references; not part of a frame
            elif key == "fn":
                current_fn = context(functions.read(value, line_no), current_ob)
            elif key == "cob":
                call_ob = objects.read(value, line_no)
            elif key == "cfn":
                call_fn = functions.read(value, line_no)
            elif key == "calls":
                try:
                    pending_call = int(value.split()[0])
                except (ValueError, IndexError):
                    raise ProfileError(f"line {line_no}: cannot read {line!r}") from None
            continue
        header, sep, value = line.partition(":")
        if not sep:
            raise ProfileError(f"{source} line {line_no}: cannot read {line[:80]!r}")
        seen_header = True
        value = value.strip()
        if header == "events":
            events = value.split()
        elif header == "positions":
            positions = len(value.split()) or 1
        elif header == "totals":
            totals = int(value.split()[0])
        elif header == "summary":
            summary = int(value.split()[0])
        elif header == "cmd":
            command = value
    if not events:
        raise ProfileError(f"{source}: not a callgrind profile (no `events:` line)")
    total = totals if totals is not None else summary
    profile = CallgrindProfile(events=events, totals=total if total is not None else 0, command=command,
                               caller_depth=depth, contexts=contexts, calls=calls, counts=counts)
    if total is None:
        profile.totals = profile.self_total
    return profile


def _cost(fields: list[str], positions: int, line_no: int) -> int:
    """The first event's cost on a cost line: the fields after the position columns (a missing cost is 0)."""
    if len(fields) <= positions:
        return 0
    value = fields[positions]
    if not _NUMBER.match(value):
        raise ProfileError(f"line {line_no}: cost {value!r} is not a number")
    return int(value, 0)
