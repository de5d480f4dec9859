"""A memory peak as one side of `explain --metric memory`: the live bytes at the timed call's peak, by the function
that allocated them, in the shape `explain` compares (profiles/view.py ProfileView, unit bytes).

- **Named as `explain` names functions** (profiles/symbols.py): C++ demangled, Cython functions by their
  Python names, libraries without their version (`libarrow.so.2600` → `libarrow.so`), a frame heaptrack could not
  resolve as `[no symbols] LIB`, Python functions by name where a perf map names them.
- **The allocating function.** Every stack ends in an allocator: malloc and friends, Arrow's pool and buffer
  plumbing (`AllocateBuffer`, `PoolBuffer::Reserve`, `BaseMemoryPoolImpl::Allocate`, the pool shim), Python's and
  numpy's allocators. Those frames are cut off the end of the stack (`ALLOCATOR`), so a stack's last frame — the
  *self* of `explain`'s tables — is the function that asked for the memory: `arrow::ConcatenateBuffers` rather
  than `arrow_mi_malloc_aligned`. What they allocated still counts in full; only whose it is changes. The
  change of the peak is then exactly the sum of every allocating function's change, so shares add up as
  `explain`'s do.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from colbench.profiles.callgrind import Frame
from colbench.profiles.heaptrack import DamagedProfile, HeapPeak, read_heaptrack
from colbench.profiles.stacks import Folded
from colbench.profiles.symbols import PYTHON_OBJECT, PerfMap, frame_name, is_address, object_symbols
from colbench.profiles.view import NO_SYMBOLS, ProfileView, StrippedLibrary, library_key, merge_repeats

UNIT = "B"

#: frames of the allocators themselves, cut off the end of every stack (names as heaptrack demangles them)
ALLOCATOR = re.compile(
    r"^(malloc|calloc|realloc|free|posix_memalign|aligned_alloc|memalign|valloc|pvalloc|__libc_\w+|_int_\w+|"
    r"sysmalloc|operator new|arrow_mi_\w+|_?mi_\w+|je_\w+|report_alloc|heaptrack_\w+|"
    r"arrow::(BaseMemoryPoolImpl|PoolBuffer|ProxyMemoryPool|LoggingMemoryPool|CappedMemoryPool|"
    r"(\(anonymous namespace\)::)?(System|Jemalloc|Mimalloc)Allocator::|"
    r"memory_pool::|(\(anonymous namespace\)::)?(PoolBuffer|ResizePoolBuffer|AllocateBuffer|"
    r"AllocateResizableBuffer|AllocateBitmap|AllocateEmptyBitmap)\b|AllocateBuffer\b|AllocateResizableBuffer\b|"
    r"AllocateBitmap\b|AllocateEmptyBitmap\b|ResizableBuffer::|MemoryPool::|BufferBuilder::(Resize|Reserve)|"
    r"TypedBufferBuilder<.*>::(Resize|Reserve)|internal::(Allocate|Reallocate)\w*)|"
    r"parquet::AllocateBuffer\b|"
    r"_?PyObject_(Malloc|Calloc|Realloc|GC_\w+|New\w*)|_?PyMem_\w+|PyMem_\w+|pymalloc_\w+|_PyObject_ArenaMmap|"
    r"new_arena|allocate_from_new_pool|gc_alloc|_PyType_AllocNoTrack|PyType_GenericAlloc|"
    r"PyDataMem_\w+|default_(malloc|calloc|realloc)|npy_alloc_cache\w*|npy_\w*alloc\w*)")


@dataclass(frozen=True)
class MemorySide:
    """One side's memory profile: the peak as a view, and what was measured beside it."""

    view: ProfileView
    churn_bytes: int
    allocations: int
    #: the worker's own figures (runner/memory_profile.py's memory.json): RSS before the call, the call's peak
    #: RSS, the process's, the pool and its peak
    measured: dict[str, Any] = field(default_factory=dict)

    @property
    def peak_bytes(self) -> int:
        return self.view.total


def is_allocator(frame: Frame) -> bool:
    return bool(ALLOCATOR.match(frame.name)) or "poolshim" in frame.object or "heaptrack" in frame.object


def memory_view(peak: HeapPeak, label: str, perf_map: PerfMap | None = None) -> ProfileView:
    names = perf_map or PerfMap.read(None)
    named: dict[tuple[str, str], Frame] = {}
    unnamed: dict[str, float] = defaultdict(float)
    objects: dict[str, str] = {}

    def rename(raw: tuple[str, str, int]) -> Frame:
        function, module, address = raw
        key = (function or f"0x{address:x}", module)
        found = named.get(key)
        if found is None:
            name, shown = frame_name(key[0], module, names)
            if shown != PYTHON_OBJECT and (not function or is_address(name)):
                found = Frame(f"{NO_SYMBOLS} {library_key(module)}", library_key(module))
                objects[found.object] = module
            else:
                found = Frame(name, PYTHON_OBJECT if shown == PYTHON_OBJECT else library_key(module))
            named[key] = found
        return found

    folded: Folded = defaultdict(float)
    for stack, size in peak.stacks.items():
        frames = allocating_stack(tuple(rename(f) for f in stack))
        if frames[-1].name.startswith(NO_SYMBOLS):
            unnamed[frames[-1].object] += size
        folded[merge_repeats(frames)] += size
    stripped = [StrippedLibrary(lib, cost, object_symbols(objects.get(lib, lib)))
                for lib, cost in sorted(unnamed.items(), key=lambda kv: -kv[1])]
    python_named = any(f.object == PYTHON_OBJECT for f in named.values())
    return ProfileView(label, peak.peak_bytes, dict(folded), 0, python_named, stripped, unit=UNIT)


def allocating_stack(stack: tuple[Frame, ...]) -> tuple[Frame, ...]:
    """The stack without the allocator's frames at its end (never empty: an allocation with no other frame keeps
    its last one)."""
    end = len(stack)
    while end > 1 and is_allocator(stack[end - 1]):
        end -= 1
    return stack[:end] if stack else (Frame("[no stack]", ""),)


def read_side(path: Path, label: str, sidecar: Path | None = None) -> MemorySide:
    """One side's profile file (and the worker's figures beside it); DamagedProfile when it cannot be read."""
    peak = read_heaptrack(path)
    measured: dict[str, Any] = {}
    if sidecar is not None and sidecar.is_file():
        try:
            loaded = json.loads(sidecar.read_text())
        except (OSError, ValueError) as exc:
            raise DamagedProfile(f"{sidecar.name} beside the profile is not JSON ({exc})") from None
        measured = loaded if isinstance(loaded, dict) else {}
    view = memory_view(peak, label)
    view.path = str(path)
    return MemorySide(view, peak.churn_bytes, peak.allocations, measured)


__all__ = ["ALLOCATOR", "DamagedProfile", "MemorySide", "allocating_stack", "memory_view", "read_side"]
