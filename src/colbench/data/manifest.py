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
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Required, TypedDict

from colbench.data.atomic import write_json_atomic
from colbench.data.formats import FormatOptions
from colbench.data.hashing import file_digest
from colbench.data.synth.base import GenOptions, TextLayout
from colbench.model.benchmark import DataRequest
from colbench.model.records import Json
from colbench.model.worker_records import known_fields

MANIFEST_VERSION = 1
SUFFIX = ".manifest.json"


class VariantLineage(TypedDict):
    """A DSIB variant ("str", "cat") derived from the plain file, and the version of that derivation."""

    name: str
    version: str


class GzipLineage(TypedDict):
    level: int


class FormatLineage(TypedDict):
    """How a binary file was converted: its format, codec, format options and the converter's version."""

    format: str
    codec: str | None
    options: FormatOptions
    converter: str


class Lineage(TypedDict, total=False):
    """Where a cached file comes from. A real file names its source (``source``, ``checksum``, ``origin``); a twin
    its generator (``generator``, ``version``, ``rows``, ``seed``, ``options``); then what was made of it. Kept as
    the JSON object it is on disk (keys absent, not null, when they do not apply), so lineages compare as stored."""

    kind: Required[str]  # "real" or "synthetic"
    source: str
    checksum: str | None
    origin: str
    generator: str
    version: str
    rows: int | None
    seed: int
    options: GenOptions
    variant: VariantLineage
    gzip: GzipLineage
    format: FormatLineage


def normalized(doc: Lineage) -> object:
    """JSON round trip, so that tuples, ints-as-floats etc. compare the way they are stored."""
    result: object = json.loads(json.dumps(doc, sort_keys=True))
    return result


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
    lineage: Lineage
    request: DataRequest
    layout: TextLayout | None = None
    schema: list[list[str]] | None = None
    created: str = ""
    build_seconds: float = 0.0
    inputs: list[str] = field(default_factory=list)
    manifest_version: int = MANIFEST_VERSION

    def to_json(self) -> Json:
        """The sidecar's JSON object: every field, in field order, the request, layout and schema as JSON."""
        doc = {f.name: getattr(self, f.name) for f in fields(self)}
        doc.update(request=self.request.to_json(), layout=self.layout.to_json() if self.layout is not None else None,
                   schema=[list(pair) for pair in self.schema] if self.schema is not None else None,
                   inputs=list(self.inputs))
        return doc

    @classmethod
    def from_json(cls, doc: Json) -> Entry:
        """An entry from its sidecar; a key it lacks takes the field's default (a required one raises TypeError),
        one it does not know is left out."""
        known = known_fields(cls, doc)
        layout = known.get("layout")
        known.update(request=DataRequest.from_json(doc["request"]),
                     layout=TextLayout.from_json(layout) if layout else None, inputs=list(known.get("inputs") or []))
        return cls(**known)


def sidecar(path: Path) -> Path:
    return path.with_name(path.name + SUFFIX)


def read(path: Path) -> Entry | None:
    try:
        doc = json.loads(sidecar(path).read_text())
        if doc.get("manifest_version") != MANIFEST_VERSION:
            return None
        return Entry.from_json(doc)
    except (OSError, ValueError, TypeError, KeyError, AttributeError):  # unreadable or not an entry: rebuilt
        return None


def write(path: Path, entry: Entry, root: Path | None = None) -> None:
    """The entry beside its file (`root`: the data root in use, from which every level of the path is checked)."""
    write_json_atomic(sidecar(path), entry.to_json(), root)


def status(path: Path, lineage: Lineage, *, verify: bool = False, root: Path | None = None,
           ) -> tuple[str, Entry | None]:
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
            write(path, entry, root)
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
