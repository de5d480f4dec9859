"""Downloading sources: resumable HTTP, checksum verification, decompression.

Only the standard library (``urllib``): a download resumes from the ``.part`` file with an HTTP ``Range``
request, retries a dropped connection a few times, verifies the checksum, then renames the file into
place. A checksum mismatch deletes the file, so the next attempt starts clean. Without network the error
says how to carry on: the synthetic twin, or a file fetched by hand put where colbench looks for it.
"""

from __future__ import annotations

import bz2
import contextlib
import gzip
import lzma
import os
import shutil
import sys
from collections.abc import Iterator
from email.message import Message
from pathlib import Path
from typing import Any, BinaryIO

from colbench.backoff import Backoff
from colbench.bounded_http import Answer, NetError, host_of, request, status_problem
from colbench.data.atomic import write_json_atomic
from colbench.data.errors import DataError
from colbench.data.hashing import file_digest, matches, parse_checksum
from colbench.data.sources import ArchiveRecord, Source, SourceState
from colbench.paths import atomic_path, check_name, create_new, inside, move, owned, owned_dir, remove

BLOCK = 1 << 20
# Dropped connections are retried; failures to connect at all (no route, DNS) are not: that is "no network".


def downloads_dir(root: Path) -> Path:
    return root / "downloads"


def archive_path(source: Source, root: Path) -> Path:
    """Where the file of a source lives once downloaded (or where to put one fetched by hand); a name or file
    name that would lead out of the downloads directory (a hand-edited registry) is refused."""
    folder = inside(downloads_dir(root), check_name(source.name, "source name"), what="source")
    return inside(folder, source.filename, what=f"file name of source {source.name}")


def _sidecar(archive: Path) -> Path:
    return archive.with_name(archive.name + ".manifest.json")


@contextlib.contextmanager
def _progress(enabled: bool, label: str, total: int | None, done: int) -> Iterator[Any]:
    """A rich progress bar (bytes, speed, ETA) on stderr, or a no-op."""
    if not enabled:
        yield lambda n: None
        return
    from rich.console import Console
    from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn, TransferSpeedColumn

    with Progress(TextColumn("{task.description}"), BarColumn(), DownloadColumn(), TransferSpeedColumn(),
                  TimeRemainingColumn(), console=Console(stderr=True), transient=False) as bar:
        task = bar.add_task(label, total=total, completed=done)
        yield lambda n: bar.advance(task, n)


#: a download's body may take this long per byte announced, beyond the deadline of the call: a 1.6 GB month of
#: taxi trips gets about 1.7 hours at the slowest, a trickling server no longer than its announced size allows
SLOWEST_BYTES_PER_S = 256 * 2**10
#: the most a download of unknown size may be (a published size bounds the others, with 10 % to spare)
LARGEST_UNKNOWN = 64 * 2**30


def most_bytes(expected: int | None) -> int:
    return int(expected * 1.1) + 2**20 if expected else LARGEST_UNKNOWN


def download(url: str, dest: Path, *, checksum: str | None = None, retries: int = 3, timeout: float | None = None,
             progress: bool | None = None, label: str | None = None, backoff: float = 1.0,
             offline_hint: str = "", root: Path | None = None, expected_size: int | None = None) -> str:
    """Fetch ``url`` to ``dest`` (resuming ``dest.part``), verify ``checksum``; returns ``algo:hex`` found.

    Without a checksum the sha256 of the file is returned, for the caller to record. Every call to the server is
    bounded (colbench.bounded_http): `timeout` is its deadline (default $COLBENCH_NET_DEADLINE_S or a minute), plus
    the time its announced size takes at 256 KiB/s; a body larger than `expected_size` allows (or 64 GiB) is
    refused. ``root``: the directory the download belongs to (default ``dest``'s folder), checked at every level
    before anything is written; what was received is kept in ``dest.part`` for the next attempt.
    """
    root = Path(root) if root is not None else dest.parent
    owned_dir(dest.parent, "downloads folder", root)
    part = dest.with_name(dest.name + ".part")
    owned(part, "partial download", root)
    show = sys.stderr.isatty() if progress is None else progress
    retrying = Backoff(backoff, retries=retries)
    while True:
        offset = part.stat().st_size if part.exists() else 0
        headers = {"User-Agent": "colbench", "Accept-Encoding": "identity"}
        if offset:
            headers["Range"] = f"bytes={offset}-"
        try:
            answer = _fetch(url, headers, part, offset, timeout, show, label or dest.name, expected_size)
        except NetError as exc:
            have = part.stat().st_size if part.exists() else 0
            if exc.kind == "unreachable":
                raise DataError(f"{exc}: no network?{offline_hint}") from None
            if exc.kind in ("reset", "not-http") and retrying.wait():
                continue
            if exc.kind in ("reset", "not-http", "timeout"):
                raise DataError(f"download of {url} interrupted at {have:,} bytes ({exc.detail}); run the same "
                                "command again to resume") from None
            raise DataError(f"download of {url} failed: {exc.detail}") from None
        if answer.status == 416 and offset:  # nothing left past what we have: the .part is complete
            break
        if not answer.ok:
            raise DataError(f"download of {url} failed: {status_problem(answer, host_of(url)).detail}")
        break
    actual = _checked(part, dest, checksum, root)
    move(part, dest, "download", root)
    return actual


def _checked(part: Path, dest: Path, checksum: str | None, root: Path) -> str:
    """The downloaded file's checksum (`algo:hex`), which must match `checksum` when one is given; a file that does
    not is deleted."""
    if not checksum:
        return "sha256:" + file_digest(part)
    ok, actual = matches(part, checksum)
    if not ok:
        remove(part, within=dest.parent, root=root)  # our partial download
        raise DataError(f"checksum mismatch for {dest.name}: expected {checksum}, got {actual}; "
                        "the file was deleted, run the same command again to download it afresh")
    return actual


def _open_part(part: Path, append: bool) -> BinaryIO:
    """The partial download, opened without following a link planted in its place."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(part, flags | (os.O_APPEND if append else os.O_TRUNC), 0o644)
    return os.fdopen(fd, "ab" if append else "wb")


def _fetch(url: str, headers: dict[str, str], part: Path, offset: int, timeout: float | None, show: bool,
           label: str, expected_size: int | None) -> Answer:
    with contextlib.ExitStack() as stack:
        advance: list[Any] = [lambda n: None]

        def open_sink(status: int, answer_headers: Message) -> BinaryIO | None:
            if not 200 <= status < 300:
                return None
            start = offset
            if offset and status == 206:
                content_range = answer_headers.get("Content-Range", "")
                if not content_range.startswith(f"bytes {offset}-"):
                    raise DataError(f"server answered a resume at byte {offset} with {content_range!r}; "
                                    f"delete {part} and try again")
            else:  # no range support: start again from zero
                start = 0
            length = answer_headers.get("Content-Length")
            total = start + int(length) if length is not None and length.isascii() and length.isdigit() else None
            advance[0] = stack.enter_context(_progress(show, label, total, start))
            return stack.enter_context(_open_part(part, append=bool(start)))

        return request(url, headers=headers, deadline_s=timeout, max_bytes=max(most_bytes(expected_size) - offset, 1),
                       redirects="https-anywhere", open_sink=open_sink, progress=lambda n: advance[0](n),
                       seconds_per_byte=1 / SLOWEST_BYTES_PER_S)


# --- local state of a source ---------------------------------------------------------------------------

def source_state(source: Source, root: Path) -> SourceState:
    """Is the source here, and was it verified (cheap: trusts the sidecar when size and mtime match)?"""
    archive = archive_path(source, root)
    state = SourceState(source=source, archive=archive)
    if not archive.exists():
        part = archive.with_name(archive.name + ".part")
        if part.exists():
            state.detail = f"partial download ({part.stat().st_size:,} bytes)"
        return state
    st = archive.stat()
    state.present, state.size = True, st.st_size
    doc = _read_sidecar(archive)
    if doc and doc.get("size") == st.st_size and doc.get("mtime_ns") == st.st_mtime_ns:
        state.verified = bool(doc.get("verified"))
        state.extra = doc
        state.detail = "verified" if state.verified else "no published checksum (recorded on first use)"
    else:
        state.detail = "not verified yet"
    return state


def _read_sidecar(archive: Path) -> ArchiveRecord | None:
    import json

    try:
        record: ArchiveRecord = json.loads(_sidecar(archive).read_text())
    except (OSError, ValueError):
        return None
    return record


def _record(archive: Path, source: Source, found: str, verified: bool, root: Path) -> ArchiveRecord:
    st = archive.stat()
    doc: ArchiveRecord = {
        "source": source.name, "origin": source.origin, "size": st.st_size, "mtime_ns": st.st_mtime_ns,
        "checksum": source.checksum, "found": found, "verified": verified,
        "sha256": found.split(":", 1)[1] if found.startswith("sha256:") else file_digest(archive)}
    write_json_atomic(_sidecar(archive), doc, root)
    return doc


def verify_archive(source: Source, root: Path) -> SourceState:
    """Check a present archive against the source's checksum (or the one recorded at first use)."""
    state = source_state(source, root)
    if not state.present or state.verified or (state.extra and source.checksum is None):
        return state  # verified, or (no published checksum) unchanged since its sha256 was recorded
    archive = state.archive
    expected = source.checksum
    if expected is None:
        previous = _read_sidecar(archive)
        expected = f"sha256:{previous['sha256']}" if previous and previous.get("sha256") else None
    if expected is None:  # first use of a source without checksum: record what we have
        _record(archive, source, "sha256:" + file_digest(archive), verified=False, root=root)
        return source_state(source, root)
    ok, actual = matches(archive, expected)
    if not ok:
        raise DataError(f"{archive} does not match {source.name}'s checksum (expected {expected}, got {actual}); "
                        "delete it and run `colbench data get " + source.name + "`")
    _record(archive, source, actual, verified=source.checksum is not None, root=root)
    return source_state(source, root)


def offline_hint(source: Source, root: Path) -> str:
    twin = (f" Use the synthetic twin instead (`colbench data make {source.name} --rows N`, or rows=N in a "
            "DataRequest), or" if source.twin else " Either")
    return f"{twin} fetch {source.origin} by hand and put it at {archive_path(source, root)}"


def fetch_source(source: Source, root: Path, *, progress: bool | None = None, retries: int = 3,
                 timeout: float | None = None, backoff: float = 1.0) -> SourceState:
    """``colbench data get``: make the source's file present and verified (download or copy)."""
    state = source_state(source, root)
    if state.present:
        return verify_archive(source, root)
    archive = state.archive
    for path, what in ((archive, "download"), (_sidecar(archive), "manifest")):  # a link there: refused first
        owned(path, what, root)
    owned_dir(archive.parent, "downloads directory", root=root)  # a source's folder linked elsewhere: refused
    if source.path:  # a user source on a local disk: link (or copy) it in, then verify like a download
        src = Path(source.path)
        if not src.is_file():
            raise DataError(f"{source.name}: {src} does not exist any more; register the source again")
        with atomic_path(archive, "download", root) as tmp:
            try:
                os.link(src, tmp)
            except OSError:
                shutil.copyfile(src, tmp)
        return verify_archive(source, root)
    if not source.url:
        raise DataError(f"{source.name} has neither a URL nor a path; register it again")
    found = download(source.url, archive, checksum=source.checksum, progress=progress, retries=retries,
                     timeout=timeout, backoff=backoff, label=source.name, offline_hint=offline_hint(source, root),
                     root=root, expected_size=source.compressed_size if source.compression else source.size)
    _record(archive, source, found, verified=source.checksum is not None, root=root)
    return source_state(source, root)


def require_archive(source: Source, root: Path) -> Path:
    """The verified archive of a source, or a DataError saying how to get it."""
    state = verify_archive(source, root)
    if not state.present:
        twin = ", or pass rows=N (--rows N) to use the synthetic twin" if source.twin else ""
        raise DataError(f"{source.name} is not downloaded: run `colbench data get {source.name}` "
                        f"(or put {source.filename} at {state.archive}){twin}")
    return state.archive


def open_decompressed(path: Path, compression: str | None) -> BinaryIO:
    if compression == "gzip":
        return gzip.open(path, "rb")  # type: ignore[return-value]
    if compression == "bz2":
        return bz2.open(path, "rb")  # type: ignore[return-value]
    if compression == "xz":
        return lzma.open(path, "rb")  # type: ignore[return-value]
    return open(path, "rb")


def decompress(archive: Path, dest: Path, compression: str | None, root: Path | None = None) -> tuple[int, int, bool]:
    """Write the decompressed text atomically; returns (bytes, newline count, ends with a newline)."""
    newlines, size, last = 0, 0, b"\n"
    try:
        with open_decompressed(archive, compression) as src, atomic_path(dest, "data file", root) as tmp, \
                create_new(tmp) as out:
            while True:
                block = src.read(4 * BLOCK)
                if not block:
                    break
                newlines += block.count(b"\n")
                size += len(block)
                last = block[-1:]
                out.write(block)
    except (OSError, EOFError, lzma.LZMAError) as exc:
        raise DataError(f"{archive} is corrupt ({exc}); delete it and download it again") from None
    return size, newlines, last == b"\n"


__all__ = ["archive_path", "decompress", "download", "fetch_source", "offline_hint", "parse_checksum",
           "require_archive", "source_state", "verify_archive"]
