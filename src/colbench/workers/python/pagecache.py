"""Page-cache control for input files: warm them, evict them, and check what was achieved.

Eviction is per file with posix_fadvise(DONTNEED) (dirty pages are synced first, since the kernel keeps
dirty pages); as root we also try the global drop_caches. Residency is then measured with mincore(2), so
the recorded cache state is what was observed, not what was asked for.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

_CHUNK = 8 << 20


def read_through(paths: Iterable[Path]) -> None:
    """Read every byte once so the files sit in the page cache (the 'warm' state)."""
    for path in paths:
        if not path.is_file():
            continue
        with open(path, "rb", buffering=0) as handle:
            buffer = bytearray(_CHUNK)
            while handle.readinto(buffer):
                pass


def _drop_all_caches() -> bool:
    if os.geteuid() != 0:
        return False
    try:
        os.sync()
        with open("/proc/sys/vm/drop_caches", "w") as handle:
            handle.write("1\n")
        return True
    except OSError:
        return False


def _libc() -> Any:
    import ctypes.util  # only for cold-cache runs: find_library is slow to import and to call

    name = ctypes.util.find_library("c")
    return ctypes.CDLL(name, use_errno=True) if name else None


def resident_fraction(path: Path) -> float | None:
    """Share of the file's pages in the page cache (mincore), or None when it cannot be told."""
    size = path.stat().st_size
    if size == 0:
        return 0.0
    libc = _libc()
    if libc is None:
        return None
    import ctypes
    import mmap  # here, not at the top: a case that reads no file never needs it (every worker imports this module)

    page = mmap.PAGESIZE
    pages = (size + page - 1) // page
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
    libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
    libc.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.POINTER(ctypes.c_ubyte)]
    fd = os.open(path, os.O_RDONLY)
    try:
        # Python's mmap object cannot hand out the address of a read-only mapping, so map through libc.
        address = libc.mmap(None, size, mmap.PROT_READ, mmap.MAP_SHARED, fd, 0)
        if address in (None, ctypes.c_void_p(-1).value):
            return None
        try:
            vec = (ctypes.c_ubyte * pages)()
            if libc.mincore(address, size, vec) != 0:
                return None
            return sum(v & 1 for v in bytes(vec)) / pages
        finally:
            libc.munmap(address, size)
    finally:
        os.close(fd)


def evict(paths: Iterable[Path], warn: Callable[[str], None]) -> str:
    """Evict the files from the page cache; return the state achieved ('cold', or 'partly-cold:<share>')."""
    files = [p for p in paths if p.is_file()]
    if not files:
        return "cold"
    dropped = _drop_all_caches()
    worst = 0.0
    for path in files:
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fdatasync(fd)
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)
        share = resident_fraction(path)
        if share is None:
            warn("page-cache residency cannot be checked here (no mincore); cold state assumed")
        else:
            worst = max(worst, share)
    if worst > 0.01:
        warn(f"cold cache requested, but {worst:.0%} of an input stayed in the page cache"
             + ("" if dropped else " (drop_caches needs root)"))
        return f"partly-cold:{worst:.2f}"
    return "cold"
