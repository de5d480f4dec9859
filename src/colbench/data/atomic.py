"""Inter-process locks for the data cache, and JSON written atomically.

Every file is written under a temporary name in its final directory and renamed into place only when complete
(`colbench.paths.atomic_path`, which checks every level of the path first), so a killed preparation leaves a
``.tmp-`` file (which nothing ever reads) instead of a half file under the real name. A lock file per target
serialises two processes that want the same file: the second one waits, then finds the file made by the first.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from colbench.data.errors import DataError
from colbench.paths import TEMP_MARK, owned, owned_dir, write_atomic

try:  # POSIX
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]


def temp_files_for(target: Path) -> list[Path]:
    """Leftovers of earlier (killed) attempts at ``target``."""
    return sorted(target.parent.glob(f".{target.name}{TEMP_MARK}*"))


def write_json_atomic(path: Path, doc: Any, root: Path | None = None) -> None:
    write_atomic(path, (json.dumps(doc, indent=1, sort_keys=True) + "\n").encode(), "file", root)


class FileLock:
    """An exclusive lock held on ``path`` (created if missing) for the life of a ``with`` block.

    ``fcntl.flock`` locks die with their process, so a killed holder never leaves a stale lock. The lock file's
    path is checked at every level (`owned`, `root`: the data root in use) and opened without following a link.
    """

    def __init__(self, path: Path, timeout: float | None = None, root: Path | None = None) -> None:
        self.path = path
        self.timeout = timeout
        self.root = root
        self._fd: int | None = None

    def __enter__(self) -> FileLock:
        owned_dir(self.path.parent, "lock folder", self.root)
        owned(self.path, "lock file", self.root)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0), 0o644)
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
