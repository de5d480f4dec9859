"""Atomic file creation and inter-process locks for the data cache.

Every file is written under a temporary name in its final directory and renamed into place only when
complete, so a killed preparation leaves a ``.tmp-`` file (which nothing ever reads) instead of a
half file under the real name. A lock file per target serialises two processes that want the same file:
the second one waits, then finds the file made by the first.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from colbench.data.errors import DataError
from colbench.paths import remove

try:  # POSIX
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

TEMP_MARK = ".tmp-"


def temp_path_for(target: Path) -> Path:
    return target.with_name(f".{target.name}{TEMP_MARK}{os.getpid()}-{secrets.token_hex(4)}")


def temp_files_for(target: Path) -> list[Path]:
    """Leftovers of earlier (killed) attempts at ``target``."""
    return sorted(target.parent.glob(f".{target.name}{TEMP_MARK}*"))


@contextlib.contextmanager
def atomic_path(target: Path) -> Iterator[Path]:
    """Yield a temporary path next to ``target``; rename it onto ``target`` if the block succeeds."""
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = temp_path_for(target)
    try:
        yield tmp
        os.replace(tmp, target)
    finally:
        remove(tmp, within=target.parent, own_temp=True)  # ours, a moment old; gone already when the rename worked


def fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_atomic(path: Path, data: bytes) -> None:
    """`path` holds `data` or its old content, never a part, even after a power cut: write aside, fsync, rename,
    fsync the directory. The one way colbench writes a small file that must survive."""
    with atomic_path(path) as tmp, open(tmp, "wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())
    fsync_dir(path.parent)


def write_json_atomic(path: Path, doc: Any) -> None:
    write_atomic(path, (json.dumps(doc, indent=1, sort_keys=True) + "\n").encode())


class FileLock:
    """An exclusive lock held on ``path`` (created if missing) for the life of a ``with`` block.

    ``fcntl.flock`` locks die with their process, so a killed holder never leaves a stale lock.
    """

    def __init__(self, path: Path, timeout: float | None = None) -> None:
        self.path = path
        self.timeout = timeout
        self._fd: int | None = None

    def __enter__(self) -> FileLock:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        if fcntl is None:  # pragma: no cover - no advisory locks: best effort, the rename stays atomic
            self._fd = fd
            return self
        deadline = None if self.timeout is None else time.monotonic() + self.timeout
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | (fcntl.LOCK_NB if deadline is not None else 0))
                break
            except BlockingIOError:
                if deadline is not None and time.monotonic() > deadline:
                    os.close(fd)
                    raise DataError(f"{self.path} is locked by another colbench process; "
                                    "wait for it to finish or remove the lock file") from None
                time.sleep(0.05)
        self._fd = fd
        return self

    def __exit__(self, *exc: object) -> None:
        if self._fd is not None:
            if fcntl is not None:
                fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None
