"""Things the tests build once per session and only read: stores of real runs, the Java worker's jar.

Under pytest-xdist every worker is a session of its own, so a session-scoped fixture would be built once per
worker. `built_once` builds into the directory all workers share (the parent of each worker's base temporary
directory), under a file lock: the first worker to ask builds, the others wait for it, and every worker gets its
own copy, so that no two processes ever hold the same DuckDB file and no test can change what another reads. A
test that writes into a built thing copies it first (`copy_of`)."""

from __future__ import annotations

import fcntl
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest


def _session_root(factory: pytest.TempPathFactory) -> Path:
    base = factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def built_once(factory: pytest.TempPathFactory, name: str, build: Callable[[Path], object]) -> Path:
    """`build(directory)` once per test session across all workers, then a copy of that directory for this worker.

    A failed build leaves nothing behind: the next worker that asks builds again (and fails the same way)."""
    root = _session_root(factory) / "built-once"
    root.mkdir(exist_ok=True)
    built, done = root / name, root / f"{name}.done"
    with open(root / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not done.exists():
            shutil.rmtree(built, ignore_errors=True)
            built.mkdir()
            try:
                build(built)
            except BaseException:
                shutil.rmtree(built, ignore_errors=True)
                raise
            done.touch()
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return built
    return copy_of(built, factory.mktemp(f"{name}-copy"))


def copy_of(source: Path, target: Path) -> Path:
    """A copy of a built directory to write into, at `target` (which may exist, empty); symlinks stay links."""
    shutil.copytree(source, target, symlinks=True, dirs_exist_ok=True)
    return target
