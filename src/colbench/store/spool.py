"""A local, durable spool for writes a store could not take (yet).

`PostgresStore` writes a result (or run record) here when the server stays away longer than its retry window, and
the run goes on. `DuckDBStore` writes every result here *first* and removes it once the store file took it, so a
result survives a store locked by another process. Every spool is `$COLBENCH_HOME/spool/<store key>/`, removed when
empty: colbench deletes only in its own tree, and a store file may be anywhere the user put it. (Before, a DuckDB
store's spool was `<store file>.spool/` beside the file; what such a folder holds is still read, never deleted.)
Layout:

    store.txt                 the store URL (password removed), for humans (PostgreSQL spools only)
    results/<result_id>.json  one result record per file
    runs/<run_id>.json        {"op": "create" | "update", "doc": run record}; a later update replaces the file

Every file is written atomically (temporary file, fsync, rename, fsync of the directory), so a crash leaves either
the whole record or nothing. Uploading claims a file by renaming it first (`<name>.claim-<pid>`), so several
processes can sync the same spool at once; a claim whose process died is picked up again. Uploads are idempotent
(result ids are deterministic, runs are upserts), so a file uploaded twice is harmless; a file is removed only after
the server confirmed its row.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from colbench.model.records import Json, Result, Run
from colbench.paths import (
    UnsafePath,
    colbench_home,
    fsync_dir,
    move,
    owned,
    owned_dir,
    remove,
    write_atomic,
    write_text,
)

log = logging.getLogger("colbench.store")

_CLAIM = ".claim-"

#: how a spooled run record is to be written: created (if new) or updated (replacing the stored one)
RunOp = Literal["create", "update"]


@dataclass
class SpooledRun:
    """A run record waiting in the spool, with how to write it."""

    op: RunOp
    run: Run


def _spooled_run(doc: Json) -> SpooledRun:
    return SpooledRun("update" if doc.get("op") == "update" else "create", Run.from_json(doc["doc"]))


def store_key(identity: str) -> str:
    """Directory name of a store's spool: a hash of its connection identity (never of its password)."""
    return hashlib.sha256(identity.encode()).hexdigest()[:16]


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@dataclass
class SyncReport:
    runs: int = 0
    results: int = 0
    failed: int = 0

    def __bool__(self) -> bool:
        return bool(self.runs or self.results)


class Spool:
    """The spool of one store. Every write, rename and deletion here goes through colbench.paths, which checks every
    level from $COLBENCH_HOME down (`root`: a spool root a caller owns, for tests), so a folder of the spool linked
    out of the home is refused before anything is written into it or moved within it."""

    def __init__(self, key: str, label: str | None, root: Path | None = None) -> None:
        self.root = root
        self.dir = (root or colbench_home() / "spool") / key
        self.label = label

    def check(self) -> Path:
        """The spool's folder, if it is colbench's at every level (UnsafePath naming the link otherwise)."""
        return owned(self.dir, "spool folder", self.root)

    def _ensure(self, sub: str) -> Path:
        folder = self.dir / sub
        self.check()
        if not folder.is_dir() or folder.is_symlink():
            owned_dir(folder, "spool folder", self.root)
            if self.label is not None:
                write_text(self.dir / "store.txt", self.label + "\n", "spool file", self.root)
            fsync_dir(self.dir)
        return owned(folder, "spool folder", self.root)

    def _put(self, sub: str, name: str, data: bytes) -> Path:
        for attempt in (1, 2):
            path = self._ensure(sub) / name
            try:
                write_atomic(path, data, "spool file", self.root)
                return path
            except FileNotFoundError:
                if attempt == 2:
                    raise  # another process pruned the empty folder between our check and our write: once more
        raise AssertionError("unreachable")

    def put_result(self, result: Result) -> Path:
        return self._put("results", f"{result.result_id}.json", json.dumps(result.to_json(), default=str).encode())

    def put_run(self, run: Run, op: RunOp) -> Path:
        path = self.dir / "runs" / f"{run.run_id}.json"
        if op == "create" and path.exists():
            return path  # an update of the same run is already waiting, and it wins
        return self._put("runs", path.name, json.dumps({"op": op, "doc": run.to_json()}, default=str).encode())

    def remove(self, path: Path) -> None:
        """Forget a file the store has taken. No directory fsync: a file that comes back after a crash is written
        again, which is harmless (writes are idempotent)."""
        remove(path, within=self.dir, root=self.root)

    def result_keys(self, run_id: str) -> set[tuple[str, str, int]]:
        """(case, environment, process) of the results of `run_id` waiting here."""
        keys = set()
        for path in self._files("results"):
            try:
                doc = json.loads(path.read_bytes())
            except (OSError, ValueError):
                continue
            if doc.get("run_id") == run_id:
                keys.add((doc["case_id"], doc.get("env_name", ""), int(doc["process_index"])))
        return keys

    def _run_files(self, run_id: str) -> list[Path]:
        """The files here that belong to `run_id`: its results and its run record (claims of dead processes too)."""
        found = [p for p in self._files("runs") if p.name.split(_CLAIM, 1)[0] == f"{run_id}.json"]
        for path in self._files("results"):
            try:
                doc = json.loads(path.read_bytes())
            except (OSError, ValueError):
                continue
            if isinstance(doc, dict) and doc.get("run_id") == run_id:
                found.append(path)
        return found

    def run_results(self, run_id: str) -> int:
        """How many results of `run_id` wait here."""
        return sum(1 for p in self._run_files(run_id) if p.parent.name == "results")

    def forget_run(self, run_id: str) -> int:
        """Delete what of `run_id` waits here (a deleted run's results must not come back with the next sync);
        returns the results removed."""
        self.check()
        files = self._run_files(run_id)
        for path in files:
            remove(path, within=self.dir, root=self.root)
        if files:
            self.prune()
        return sum(1 for p in files if p.parent.name == "results")

    def prune(self) -> None:
        """Remove the spool's folders when nothing waits in them (files left behind keep them). A folder linked out
        of the home is refused (UnsafePath) before anything is removed: a store opened for writing checks its
        spool this way before it takes a result."""
        self.check()
        for sub in ("runs", "results"):
            with contextlib.suppress(OSError):
                owned(self.dir / sub, "spool folder", self.root)
                (self.dir / sub).rmdir()
        with contextlib.suppress(OSError):
            if self.label is not None and {p.name for p in self.dir.iterdir()} == {"store.txt"}:
                remove(self.dir / "store.txt", within=self.dir, root=self.root)
            self.check()
            self.dir.rmdir()

    def _files(self, sub: str) -> Iterator[Path]:
        folder = self.dir / sub
        if not folder.is_dir():
            return
        try:
            owned(folder, "spool folder", self.root)
        except UnsafePath:  # a link planted there holds nothing of ours (writing or syncing refuses it, loudly)
            return
        for path in sorted(folder.iterdir()):
            name = path.name
            if name.startswith("."):  # a file still being written (data.atomic)
                continue
            if _CLAIM in name:
                pid = name.rsplit(_CLAIM, 1)[1]
                if pid.isascii() and pid.isdigit() and _pid_alive(int(pid)) and int(pid) != os.getpid():
                    continue  # another process is uploading it right now
            yield path

    def pending(self) -> tuple[int, int]:
        """(runs, results) waiting to be uploaded."""
        return sum(1 for _ in self._files("runs")), sum(1 for _ in self._files("results"))

    def __len__(self) -> int:
        return sum(self.pending())

    def _claim(self, path: Path) -> Path | None:
        base = path.name.split(_CLAIM, 1)[0]
        claimed = path.with_name(f"{base}{_CLAIM}{os.getpid()}")
        try:
            move(path, claimed, "spool file", self.root)
        except FileNotFoundError:
            return None  # someone else took it
        return claimed

    def _release(self, claimed: Path) -> None:
        """Upload failed: put the file back unless a newer one took its place."""
        original = claimed.with_name(claimed.name.split(_CLAIM, 1)[0])
        if original.exists():
            remove(claimed, within=self.dir, root=self.root)
        else:
            move(claimed, original, "spool file", self.root)

    def drain(self, upload_runs: Callable[[list[SpooledRun]], None],
              upload_results: Callable[[list[Result]], int], batch: int = 500) -> SyncReport:
        """Upload everything waiting (runs first), removing each file once the store confirmed it.
        An upload that raises puts its files back and re-raises: nothing is lost. A file that is no record (cut
        short, another shape) moves to `bad/`."""
        report = SyncReport()
        self.check()  # a folder linked out of the home: refused before a file there is claimed (renamed)
        for sub in ("runs", "results"):
            if os.path.lexists(self.dir / sub):
                owned(self.dir / sub, "spool folder", self.root)
        for sub in ("runs", "results"):
            paths = list(self._files(sub))
            for start in range(0, len(paths), batch):
                claimed, runs, results = self._claim_batch(sub, paths[start:start + batch], report)
                if claimed:
                    self._upload_batch(sub, claimed, runs, results, upload_runs, upload_results, report)
        return report

    def _claim_batch(self, sub: str, paths: list[Path], report: SyncReport
                     ) -> tuple[list[Path], list[SpooledRun], list[Result]]:
        """The files of a batch this process claimed and their records; an unreadable one moves to `bad/`."""
        claimed: list[Path] = []
        runs: list[SpooledRun] = []
        results: list[Result] = []
        for path in paths:
            taken = self._claim(path)
            if taken is None:
                continue
            try:
                doc = json.loads(taken.read_bytes())
                if sub == "runs":
                    runs.append(_spooled_run(doc))
                else:
                    results.append(Result.from_json(doc))
            except (OSError, ValueError, TypeError, KeyError, AttributeError) as exc:
                bad = self._ensure("bad") / taken.name.split(_CLAIM, 1)[0]
                move(taken, bad, "spool file", self.root)
                log.warning("spool file %s is unreadable (%s): moved to %s", path, exc, bad)
                report.failed += 1
                continue
            claimed.append(taken)
        return claimed, runs, results

    def _upload_batch(self, sub: str, claimed: list[Path], runs: list[SpooledRun], results: list[Result],
                      upload_runs: Callable[[list[SpooledRun]], None], upload_results: Callable[[list[Result]], int],
                      report: SyncReport) -> None:
        """Upload a batch, then remove its files; an upload that raises puts them back and re-raises."""
        try:
            if sub == "runs":
                upload_runs(runs)
                report.runs += len(runs)
            else:
                upload_results(results)
                report.results += len(results)
        except BaseException:
            for taken in claimed:
                self._release(taken)
            raise
        for taken in claimed:
            remove(taken, within=self.dir, root=self.root)
        fsync_dir(claimed[0].parent)


def legacy_documents(folder: Path) -> tuple[list[SpooledRun], list[Result]]:
    """(run records, results) left in an old-style spool folder beside a DuckDB store file, read without touching
    the folder (it may be outside colbench's tree, where colbench deletes nothing); files that hold no record are
    passed over."""
    runs: list[SpooledRun] = []
    results: list[Result] = []
    for sub in ("runs", "results"):
        directory = folder / sub
        if folder.is_symlink() or not directory.is_dir() or directory.is_symlink():
            continue
        for path in sorted(directory.glob("*.json*")):
            with contextlib.suppress(OSError, ValueError, TypeError, KeyError, AttributeError):
                doc = json.loads(path.read_bytes())
                if sub == "runs":
                    runs.append(_spooled_run(doc))
                else:
                    results.append(Result.from_json(doc))
    return runs, results


def sync_spool(store: Any) -> SyncReport:
    """Upload what `store` (a PostgresStore) left in its spool; a store without a spool has nothing to sync."""
    sync = getattr(store, "sync_spool", None)
    return sync() if sync is not None else SyncReport()
