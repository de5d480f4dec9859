"""Workers never outlive the orchestrator, and their temporary directories never outlive both.

A worker runs in its own session (so a Ctrl-C on the terminal reaches colbench, not the benchmark), which
also means nothing kills it when colbench dies. On Linux the child asks the kernel for SIGKILL when its parent
dies (PR_SET_PDEATHSIG). The setting survives execve (it is cleared only for set-uid/set-gid binaries or file
capabilities), so it covers the exec chains of the R and Java workers too: `Rscript` execs `R`, which execs
`exec/R`, all in one pid; `java` is one process. It is not inherited by forks: a grandchild the benchmark
forks itself dies with the worker's process group when colbench kills that group (timeout, memory, SIGINT,
SIGTERM), but not after a `kill -9` of colbench. It fires when the *thread* that started the worker ends, so
a worker must be started and waited for by the same thread (runner/isolate.py does both).

Each execution's directory is named `colbench-exec-<orchestrator pid>-…` in the system temp directory, so
the next `colbench run` can remove the directories of orchestrators that died without cleaning up.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import signal
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

EXEC_DIR_PREFIX = "colbench-exec-"
# tempfile's random suffix draws from [a-z0-9_]; the pid is the orchestrator's
_EXEC_DIR_NAME = re.compile(re.escape(EXEC_DIR_PREFIX) + r"(\d+)-[a-z0-9_]+")
_PR_SET_PDEATHSIG = 1


def exec_dir_prefix() -> str:
    """Prefix of this orchestrator's execution directories (for tempfile.TemporaryDirectory)."""
    return f"{EXEC_DIR_PREFIX}{os.getpid()}-"


@functools.cache
def _prctl() -> Callable[..., int] | None:
    if not sys.platform.startswith("linux"):
        return None
    import ctypes

    return ctypes.CDLL(None, use_errno=True).prctl  # looked up in the parent: the child only calls it


def die_with_parent_hook() -> Callable[[], None] | None:
    """A preexec function that makes the child die with this process (Linux), or None where that cannot be had."""
    prctl = _prctl()
    if prctl is None:
        return None
    parent = os.getpid()

    def die_with_parent() -> None:
        if prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) != 0:
            return  # not fatal: the worker still runs, it only lacks the parent-death signal
        # The parent may have died between fork and prctl: then no signal will ever come, so go now.
        if os.getppid() != parent:
            os._exit(1)

    return die_with_parent


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process
        return True
    return True


def sweep_stale_exec_dirs(root: Path | None = None) -> list[Path]:
    """Remove execution directories left by colbench processes that no longer exist.

    Looks only at the direct entries of colbench's temp directory (tempfile.gettempdir()); removes only real
    directories (never symlinks) owned by this user whose name matches `colbench-exec-<pid>-<suffix>` with a
    pid that is not running. A pid reused by another process keeps its directory until that one ends.
    """
    top = Path(root or tempfile.gettempdir()).resolve()
    removed: list[Path] = []
    try:
        entries = list(os.scandir(top))
    except OSError:
        return removed
    for entry in entries:
        match = _EXEC_DIR_NAME.fullmatch(entry.name)
        if not match:
            continue
        try:
            if not entry.is_dir(follow_symlinks=False) or entry.stat(follow_symlinks=False).st_uid != os.getuid():
                continue
        except OSError:
            continue
        pid = int(match.group(1))
        if pid == os.getpid() or _alive(pid):
            continue
        path = Path(entry.path)
        if path.parent.resolve() != top:
            continue
        shutil.rmtree(path, ignore_errors=True)  # fd-based on Linux: never follows a link planted inside
        removed.append(path)
    return removed
