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

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from colbench.profiles.bounded import bounded_lines, open_profile

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
        if part.isascii() and part.isdigit():  # f'2: a recursion level of the name before it
            continue
        chain.append(part)
    return chain


def parse_callgrind(path: Path) -> CallgrindProfile:
    """A callgrind file, plain or gzipped (`.gz`: how colbench keeps profiles)."""
    try:
        with open_profile(path) as handle:  # a damaged, cut-short or oversized file: one line, not a traceback
            return parse_lines(bounded_lines(handle, str(path), ProfileError), str(path))
    except OSError as exc:
        raise ProfileError(f"{path}: cannot read it ({exc})") from None


def parse_lines(lines: Iterable[str], source: str = "profile") -> CallgrindProfile:
    """Parse a callgrind dump's lines (see the module docstring for what is kept)."""
    parser = _Parser(source)
    for line_no, raw in enumerate(lines, 1):
        line = raw.rstrip("\n")
        if not line or line.startswith("#"):
            continue
        first = line[0]
        if first in "0123456789+-*":  # ASCII digits only: str.isdigit() takes "¹"
            parser.cost_line(line, line_no)
            continue
        key, sep, value = line.partition("=")
        if sep and key in _NAME_KEYS:
            parser.name_line(key, value, line, line_no)
        else:
            parser.header_line(line, line_no)
    return parser.profile()


#: the `key=value` lines that name an object, file or function or announce a call (or a jump, which is skipped)
_NAME_KEYS = frozenset(("ob", "fl", "fi", "fe", "fn", "cob", "cfi", "cfl", "cfn", "calls", "jump", "jcnd", "jfi",
                        "jfl"))


class _Parser:
    """The state of parse_lines between lines: the name tables, the current function and the call announced."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.objects, self.files, self.functions = _Names("object"), _Names("file"), _Names("function")
        self.events: list[str] = []
        self.positions = 1
        self.totals: int | None = None
        self.summary: int | None = None
        self.command = ""
        self.by_key: dict[tuple[str, str], int] = {}   # (fn name as written, object) → context index
        self.contexts: list[Context] = []
        self.calls: dict[tuple[int, int], int] = {}
        self.counts: dict[tuple[int, int], int] = {}
        self.depth = 0
        self.current_ob = ""
        self.current_fn: int | None = None
        self.call_ob: str | None = None
        self.call_fn: str | None = None
        self.pending_call: int | None = None  # the count of a `calls=` line whose cost line comes next
        self.seen_header = False

    def context(self, name: str, obj: str) -> int:
        key = (name, obj)
        index = self.by_key.get(key)
        if index is None:
            chain = split_chain(name)
            self.depth = max(self.depth, len(chain) - 1)
            # callers' objects are unknown from the name alone: resolved by profile_stacks from their own entries
            frames = (Frame(chain[0], obj), *(Frame(n, "") for n in chain[1:]))
            index = self.by_key[key] = len(self.contexts)
            self.contexts.append(Context(frames))
        return index

    def cost_line(self, line: str, line_no: int) -> None:
        """A cost: the current function's self cost, or the inclusive cost of the call announced just before."""
        if self.current_fn is None and self.pending_call is None:
            if not self.seen_header:
                raise ProfileError(f"{self.source}: not a callgrind profile (line {line_no} is a cost line before "
                                   "any header)")
            return
        cost = _cost(line.split(), self.positions, line_no)
        if self.pending_call is not None:
            if self.current_fn is None or self.call_fn is None:
                raise ProfileError(f"line {line_no}: a call outside any function")
            callee = self.context(self.call_fn, self.call_ob if self.call_ob is not None else self.current_ob)
            edge = (self.current_fn, callee)
            self.calls[edge] = self.calls.get(edge, 0) + cost
            self.counts[edge] = self.counts.get(edge, 0) + self.pending_call
            self.pending_call, self.call_ob, self.call_fn = None, None, None
        elif self.current_fn is not None:
            self.contexts[self.current_fn].self_cost += cost

    def name_line(self, key: str, value: str, line: str, line_no: int) -> None:
        self.seen_header = True
        if key == "ob":
            self.current_ob = self.objects.read(value, line_no)
        elif key in ("fl", "fi", "fe", "cfi", "cfl"):
            self.files.read(value, line_no)  # kept in the table for later references; not part of a frame
        elif key == "fn":
            self.current_fn = self.context(self.functions.read(value, line_no), self.current_ob)
        elif key == "cob":
            self.call_ob = self.objects.read(value, line_no)
        elif key == "cfn":
            self.call_fn = self.functions.read(value, line_no)
        elif key == "calls":
            try:
                self.pending_call = int(value.split()[0])
            except (ValueError, IndexError):
                raise ProfileError(f"line {line_no}: cannot read {line!r}") from None

    def header_line(self, line: str, line_no: int) -> None:
        header, sep, value = line.partition(":")
        if not sep:
            raise ProfileError(f"{self.source} line {line_no}: cannot read {line[:80]!r}")
        self.seen_header = True
        value = value.strip()
        if header == "events":
            self.events = value.split()
        elif header == "positions":
            self.positions = len(value.split()) or 1
        elif header == "totals":
            self.totals = int(value.split()[0])
        elif header == "summary":
            self.summary = int(value.split()[0])
        elif header == "cmd":
            self.command = value

    def profile(self) -> CallgrindProfile:
        if not self.events:
            raise ProfileError(f"{self.source}: not a callgrind profile (no `events:` line)")
        total = self.totals if self.totals is not None else self.summary
        profile = CallgrindProfile(events=self.events, totals=total if total is not None else 0,
                                   command=self.command, caller_depth=self.depth, contexts=self.contexts,
                                   calls=self.calls, counts=self.counts)
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
