"""Manifest entries of cached files: one JSON sidecar per file (``<file>.manifest.json``).

An entry records what the file is (data set, format, codec, rows, columns, layout, schema), where it
comes from (``lineage``: generator name and version and parameters, or the source and its checksum,
plus the format options), and what it was when written (size, mtime, sha256). A file is trusted when its
lineage is the one the cache would produce today and its size and content still match; a sidecar per
file (rather than one big index) needs no global lock and is replaced atomically with its file.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from colbench.data.atomic import write_json_atomic
from colbench.data.hashing import file_digest

MANIFEST_VERSION = 1
SUFFIX = ".manifest.json"


def normalized(doc: Any) -> Any:
    """JSON round trip, so that tuples, ints-as-floats etc. compare the way they are stored."""
    return json.loads(json.dumps(doc, sort_keys=True))


@dataclass
class Entry:
    file: str  # name of the data file, in the sidecar's directory
    dataset: str
    format: str
    codec: str | None
    rows: int
    columns: int
    size_bytes: int
    sha256: str
    mtime_ns: int
    lineage: dict[str, Any]
    request: dict[str, Any]
    layout: dict[str, Any] | None = None
    schema: list[list[str]] | None = None
    created: str = ""
    build_seconds: float = 0.0
    inputs: list[str] = field(default_factory=list)
    manifest_version: int = MANIFEST_VERSION

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> Entry:
        known = set(cls.__dataclass_fields__)
        return cls(**{k: v for k, v in doc.items() if k in known})


def sidecar(path: Path) -> Path:
    return path.with_name(path.name + SUFFIX)


def read(path: Path) -> Entry | None:
    try:
        doc = json.loads(sidecar(path).read_text())
        if doc.get("manifest_version") != MANIFEST_VERSION:
            return None
        return Entry.from_json(doc)
    except (OSError, ValueError, TypeError):
        return None


def write(path: Path, entry: Entry) -> None:
    write_json_atomic(sidecar(path), entry.to_json())


def status(path: Path, lineage: dict[str, Any], *, verify: bool = False) -> tuple[str, Entry | None]:
    """``ok``, ``missing``, ``unrecorded`` (file without entry), ``stale`` (other lineage), or
    ``corrupt: <why>``. Hashes the file only when asked to or when its mtime changed."""
    entry = read(path)
    if not path.exists():
        return "missing", entry
    if entry is None:
        return "unrecorded", None
    if normalized(entry.lineage) != normalized(lineage):
        return "stale", entry
    st = path.stat()
    if st.st_size != entry.size_bytes:
        return f"corrupt: {st.st_size:,} bytes instead of {entry.size_bytes:,}", entry
    if verify or st.st_mtime_ns != entry.mtime_ns:
        if file_digest(path) != entry.sha256:
            return "corrupt: content hash differs", entry
        if st.st_mtime_ns != entry.mtime_ns:  # touched, not changed: remember the new mtime
            entry.mtime_ns = st.st_mtime_ns
            write(path, entry)
    return "ok", entry


def entries(root: Path) -> Iterator[tuple[Path, Entry]]:
    """Every (data file path, entry) below ``root``."""
    if not root.exists():
        return
    for side in sorted(root.rglob("*" + SUFFIX)):
        data = side.with_name(side.name[: -len(SUFFIX)])
        entry = read(data)
        if entry is not None:
            yield data, entry
