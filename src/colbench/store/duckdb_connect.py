"""Opening a DuckDB store file, and what every DuckDB failure means to the user.

Every connection of the DuckDB store comes from `connection()`: it waits (boundedly) for a lock another process
holds, never lets DuckDB load or download an extension, and turns any `duckdb.Error` raised while connecting *or
later, while querying through the connection* into a one-line `StoreError` that says what to do. That is the one
place where DuckDB's exceptions become colbench's; no command handles them itself.

Read-only connections are shared by the reads of a process that come in quick succession (a command's several
queries): opening a big store costs tens of milliseconds and its first scans start from a cold buffer pool. The
shared connection closes after `LINGER_S` without use and at most `MAX_AGE_S` after it opened, so a run waiting to
write is never held back long, and it closes before this process opens the file read-write (DuckDB refuses two
connections with different settings to one file in one process).
"""

from __future__ import annotations

import atexit
import os
import re
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

import duckdb

from colbench.backoff import Backoff
from colbench.store.base import StoreError, StoreLocked

DEFAULT_WAIT_S = 30.0
LINGER_S = 0.25
MAX_AGE_S = 1.0
# Stores are plain files: an extension is never needed, and a path DuckDB mistakes for a URL must not download one.
_CONFIG: dict[str, str | bool | int | float | list[str]] = {"autoinstall_known_extensions": False,
                                                             "autoload_known_extensions": False}
# What a damaged file raises (reading past its end, a broken catalog; a bad checksum is a plain duckdb.Error, known by
# its text), as opposed to a query DuckDB refuses (a binder or catalog error: a store changed by hand, or a bug).
_DAMAGE = (duckdb.IOException, duckdb.InternalException, duckdb.FatalException, duckdb.SerializationException)
_HOLDER = re.compile(r"Conflicting lock is held in (.*?) \(PID (\d+)\)")


def wait_window() -> float:
    """How long to wait for a lock another process holds: COLBENCH_STORE_WAIT_S (default 30 s)."""
    try:
        return max(0.0, float(os.environ.get("COLBENCH_STORE_WAIT_S", DEFAULT_WAIT_S)))
    except ValueError:
        return DEFAULT_WAIT_S


def _first_line(exc: BaseException) -> str:
    text = " ".join(str(exc).strip().split("\n", 1)[0].split())
    return (text[:240] + "…") if len(text) > 240 else text or type(exc).__name__


def lock_holder(exc: BaseException) -> str | None:
    """'PID 123 (python3.11)' when `exc` is DuckDB's lock conflict, 'another process' when it names none."""
    text = str(exc)
    if "Could not set lock" not in text and "Conflicting lock" not in text:
        return None
    match = _HOLDER.search(text)
    return f"PID {match.group(2)} ({Path(match.group(1)).name})" if match else "another process"


def explain(path: Path, exc: BaseException, *, writing: bool) -> StoreError:
    """The StoreError for a DuckDB (or file system) failure on the store `path`."""
    reason = _first_line(exc)
    text = str(exc)
    holder = lock_holder(exc)
    if holder:
        return StoreLocked(f"the store {path} is locked by {holder}: wait for it to finish (or stop it) and try "
                           "again", holder)
    if isinstance(exc, OSError) or any(s in text for s in ("Permission denied", "Operation not permitted",
                                                           "Read-only file system")):
        what = "write" if writing else "read"
        return StoreError(f"cannot {what} the store {path} ({reason}): fix its permissions, or use another --store")
    if "No space left" in text:
        return StoreError(f"cannot write the store {path}: the disk is full ({reason}); free space and run again")
    if "not a valid DuckDB database file" in text:
        if path.is_file() and path.stat().st_size == 0:
            return StoreError(f"{path} is an empty file, not a colbench store: remove it (a run creates the store "
                              "there), or pass another --store")
        return StoreError(f"{path} is not a DuckDB file ({reason}): restore the store from a copy, or start a new "
                          "one with --store NEW")
    if "version number" in text or "storage version" in text:
        return StoreError(f"the store {path} was written by another DuckDB version ({reason}): use the colbench "
                          "(and duckdb) that wrote it, or another --store")
    if isinstance(exc, _DAMAGE) or any(s in text for s in ("Corrupt", "checksum", "Could not read")):
        return StoreError(f"the store {path} is damaged (DuckDB: {reason}): restore it from a copy, or start a new "
                          f"one with --store NEW; `colbench store info --check --store {path}` shows what is readable")
    return StoreError(f"cannot use the store {path} (DuckDB: {reason}): if it was changed by hand, restore it from a "
                      "copy or start a new one with --store NEW")


def _open(path: Path, read_only: bool, wait_s: float) -> duckdb.DuckDBPyConnection:
    backoff = Backoff(0.02, 0.25, within_s=wait_s)
    while True:
        try:
            con = duckdb.connect(str(path), read_only=read_only, config=_CONFIG)
            con.execute("SET enable_progress_bar = false")  # a long migration must not draw on the user's terminal
            return con
        except duckdb.Error as exc:
            if lock_holder(exc) and backoff.wait():  # another process has the file: wait our turn
                continue
            raise explain(path, exc, writing=not read_only) from None


class _Shared:
    """The read-only connection of this process to one file, reused while reads keep coming."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.con: duckdb.DuckDBPyConnection | None = None
        self.opened = self.used = 0.0
        self.timer: threading.Timer | None = None

    def close(self) -> None:
        with self.lock:
            if self.con is not None:
                with suppress(duckdb.Error):
                    self.con.close()
            self.con = None

    def touch(self) -> None:
        self.used = time.monotonic()
        if self.used - self.opened >= MAX_AGE_S:
            self.close()
        elif self.timer is None:
            self._arm(LINGER_S)

    def _arm(self, delay: float) -> None:
        self.timer = threading.Timer(delay, self._expire)
        self.timer.daemon = True
        self.timer.start()

    def _expire(self) -> None:
        with self.lock:
            self.timer = None
            idle = time.monotonic() - self.used
            if self.con is not None and idle < LINGER_S:
                self._arm(LINGER_S - idle)
            else:
                self.close()


_shared: dict[str, _Shared] = {}
_registry = threading.Lock()


def _shared_for(path: Path) -> _Shared:
    with _registry:
        return _shared.setdefault(os.path.realpath(path), _Shared())


@atexit.register
def _close_all() -> None:
    """Close shared connections before the interpreter tears DuckDB's module down under them."""
    with _registry:
        shared = list(_shared.values())
    for one in shared:
        one.close()


def release(path: Path) -> None:
    """Close this process's read-only connection to `path`, if it has one."""
    with _registry:
        shared = _shared.get(os.path.realpath(path))
    if shared is not None:
        shared.close()


@contextmanager
def connection(path: Path, *, read_only: bool, wait_s: float | None = None) -> Iterator[duckdb.DuckDBPyConnection]:
    """A connection to the store file; DuckDB errors inside the block become StoreErrors too. A read-write one is
    closed on exit; a read-only one is shared (see the module's docstring)."""
    wait = wait_window() if wait_s is None else wait_s
    if read_only:
        shared = _shared_for(path)
        with shared.lock:
            if shared.con is None:
                shared.con = _open(path, True, wait)
                shared.opened = time.monotonic()
            try:
                yield shared.con
            except duckdb.Error as exc:
                shared.close()
                raise explain(path, exc, writing=False) from None
            finally:
                shared.touch()
        return
    release(path)
    con = _open(path, False, wait)
    try:
        yield con
    except duckdb.Error as exc:
        raise explain(path, exc, writing=True) from None
    finally:
        with suppress(duckdb.Error):
            con.close()
