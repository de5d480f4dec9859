"""The registry of real data sets: where they come from, how to check them, what they look like.

Built-in sources are the files the reference experiments used (the five posts colbench reproduces; see the README).
Users add their own (a URL or a local file, with a checksum) with :func:`register_source`; those are
kept in ``$COLBENCH_HOME/sources.json`` and listed next to the built-in ones.

``schema`` is what pyarrow's CSV reader *infers* on the real file when given only the delimiter and the
header handling (as the experiments did), not a schema one would choose; the twins are tested against it.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Required, TypedDict
from urllib.parse import urlparse

from colbench.data.columns import (
    FANNIE_COLUMNS,
    FANNIE_SCHEMA,
    TAXI_2010_COLUMNS,
    TAXI_2010_SCHEMA,
    TAXI_2016_COLUMNS,
    TAXI_2016_SCHEMA,
)
from colbench.data.errors import DataError
from colbench.data.hashing import file_digest, parse_checksum
from colbench.data.synth import GENERATORS
from colbench.paths import NAME_PATTERN, UnsafePath, colbench_home, expand_user, owned

COMPRESSIONS = {".gz": "gzip", ".bz2": "bz2", ".xz": "xz"}


class SourceDoc(TypedDict, total=False):
    """A Source as JSON (an entry of ``$COLBENCH_HOME/sources.json``); only ``name`` is required to read one."""

    name: Required[str]
    url: str | None
    path: str | None
    checksum: str | None
    compressed_size: int | None
    size: int | None
    rows: int | None
    columns: int | None
    delimiter: str
    header: bool
    blank_line_after_header: bool
    line_terminator: str
    column_names: list[str]
    schema: list[list[str]]
    homepage: str | None
    description: str
    notes: str
    twin: str | None
    variants: list[str]
    user: bool


@dataclass(frozen=True)
class Source:
    """A real data set: a CSV-like file available at a URL (or a local path)."""

    name: str
    url: str | None = None
    path: str | None = None
    checksum: str | None = None  # "md5:<hex>" / "sha256:<hex>"; None = not published
    compressed_size: int | None = None  # bytes of the file as downloaded, when compressed
    size: int | None = None  # bytes of the uncompressed text (approximate when published as "2.54 GB")
    rows: int | None = None
    columns: int | None = None
    delimiter: str = ","
    header: bool = True
    blank_line_after_header: bool = False
    line_terminator: str = "\n"
    column_names: tuple[str, ...] = ()
    schema: tuple[tuple[str, str], ...] = ()
    homepage: str | None = None
    description: str = ""
    notes: str = ""
    twin: str | None = None  # name of the synthetic generator reproducing it
    variants: tuple[str, ...] = ()  # derived variants (DSIB "str"/"cat")
    user: bool = False

    @property
    def origin(self) -> str:
        return self.url or self.path or "?"

    @property
    def filename(self) -> str:
        """Name of the file as downloaded."""
        loc = self.url or self.path or self.name
        base = os.path.basename(urlparse(loc).path if self.url else loc)
        return base or self.name

    @property
    def compression(self) -> str | None:
        return COMPRESSIONS.get(Path(self.filename).suffix.lower())

    def to_json(self) -> SourceDoc:
        return {"name": self.name, "url": self.url, "path": self.path, "checksum": self.checksum,
                "compressed_size": self.compressed_size, "size": self.size, "rows": self.rows,
                "columns": self.columns, "delimiter": self.delimiter, "header": self.header,
                "blank_line_after_header": self.blank_line_after_header, "line_terminator": self.line_terminator,
                "column_names": list(self.column_names), "schema": [list(x) for x in self.schema],
                "homepage": self.homepage, "description": self.description, "notes": self.notes, "twin": self.twin,
                "variants": list(self.variants), "user": self.user}

    @classmethod
    def from_json(cls, doc: SourceDoc) -> Source:
        """A source from its JSON object; a key it lacks takes the field's default (as older registries did)."""
        schema = tuple((str(name), str(kind)) for name, kind in doc.get("schema") or ())
        return cls(name=doc["name"], url=doc.get("url"), path=doc.get("path"), checksum=doc.get("checksum"),
                   compressed_size=doc.get("compressed_size"), size=doc.get("size"), rows=doc.get("rows"),
                   columns=doc.get("columns"), delimiter=doc.get("delimiter", ","), header=doc.get("header", True),
                   blank_line_after_header=doc.get("blank_line_after_header", False),
                   line_terminator=doc.get("line_terminator", "\n"),
                   column_names=tuple(doc.get("column_names") or ()), schema=schema,
                   homepage=doc.get("homepage"), description=doc.get("description", ""),
                   notes=doc.get("notes", ""), twin=doc.get("twin"), variants=tuple(doc.get("variants") or ()),
                   user=doc.get("user", False))


TLC_HOME = "https://www.nyc.gov/site/tlc/about/tlc-trip-record-data.page"

BUILTIN: dict[str, Source] = {
    "nyctaxi_2010-01": Source(
        name="nyctaxi_2010-01",
        url="https://ursa-qa.s3.amazonaws.com/nyctaxi/yellow_tripdata_2010-01.csv.gz",
        checksum="md5:22bd86bf54da91faf26fa8a243644a9f", compressed_size=591_876_633, size=2_540_000_000,
        rows=14_863_778, columns=18, delimiter=",", header=True, blank_line_after_header=True,
        line_terminator="\r\n", column_names=TAXI_2010_COLUMNS, schema=TAXI_2010_SCHEMA, homepage=TLC_HOME,
        description="NYC yellow taxi trips, January 2010 (E1 CSV readers, E5 Feather V2)",
        notes="size as published (2.54 GB)", twin="nyctaxi_2010-01"),
    "fanniemae_2016Q4": Source(
        name="fanniemae_2016Q4",
        url="https://ursa-qa.s3.amazonaws.com/fanniemae_loanperf/2016Q4.csv.gz",
        checksum="md5:6e8ff7ae76033c452a9b72350461a4e6", compressed_size=262_125_134, size=1_520_000_000,
        rows=22_180_168, columns=31, delimiter="|", header=False, line_terminator="\n",
        column_names=FANNIE_COLUMNS, schema=FANNIE_SCHEMA,
        homepage="https://capitalmarkets.fanniemae.com/credit-risk-transfer/single-family-credit-risk-transfer/"
                 "fannie-mae-single-family-loan-performance-data",
        description="Fannie Mae loan performance, 2016 Q4 acquisitions (E1 CSV readers, E5 Feather V2)",
        notes="size as published (1.52 GB); no header: the column names are Fannie Mae's",
        twin="fanniemae_2016Q4"),
}
for _m in range(1, 7):
    _name = f"nyctaxi_2016-{_m:02d}"
    BUILTIN[_name] = Source(
        name=_name, url=f"https://s3.amazonaws.com/nyc-tlc/trip+data/yellow_tripdata_2016-{_m:02d}.csv",
        rows=10_906_858 if _m == 1 else None, size=1_718_000_000 if _m == 1 else None, columns=19,
        delimiter=",", header=True, line_terminator="\r\n", column_names=TAXI_2016_COLUMNS,
        schema=TAXI_2016_SCHEMA, homepage=TLC_HOME,
        description=f"NYC yellow taxi trips, 2016-{_m:02d} (E2 DSIB baseline"
                    + (")" if _m == 1 else ", continuous read)"),
        notes=("size ≈ 1.6 GiB as published; " if _m == 1 else "")
        + "no published checksum: the first download's sha256 is recorded and checked afterwards; "
          "the TLC now publishes Parquet, so the CSV URL may be gone",
        twin=_name, variants=("plain", "str", "cat"))


def user_registry_path() -> Path:
    return colbench_home() / "sources.json"


def load_user_sources() -> dict[str, Source]:
    path = user_registry_path()
    if not path.exists():
        return {}
    try:
        doc = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise DataError(f"cannot read the user source registry {path}: {exc}; fix or delete it") from None
    try:
        sources = {d["name"]: replace(Source.from_json(d), user=True) for d in doc.get("sources", [])}
    except (AttributeError, KeyError, TypeError) as exc:
        raise DataError(f"cannot read the user source registry {path}: {exc!r}; fix or delete it") from None
    bad = [name for name in sources if not isinstance(name, str) or not NAME_PATTERN.fullmatch(name)]
    if bad:  # a name becomes a directory under downloads/: a hand-edited one must not lead elsewhere
        raise DataError(f"the user source registry {path} holds bad names ({', '.join(map(repr, bad))}); "
                        "fix or delete it")
    return sources


def all_sources() -> dict[str, Source]:
    return {**BUILTIN, **load_user_sources()}


def get_source(name: str) -> Source | None:
    return all_sources().get(name)


def register_source(name: str, location: str, checksum: str | None = None, *, delimiter: str = ",",
                    header: bool = True, blank_line_after_header: bool = False, line_terminator: str = "\n",
                    column_names: tuple[str, ...] = (), rows: int | None = None, columns: int | None = None,
                    description: str = "", replace_existing: bool = False) -> Source:
    """Add a user source (URL or local path) to ``$COLBENCH_HOME/sources.json`` and return it.

    A local file without a checksum gets its sha256 recorded now, so later copies can be checked.
    """
    if not NAME_PATTERN.fullmatch(name or ""):
        raise DataError(f"bad source name {name!r}: use letters, digits, '-', '_' and '.' (starting with a letter or "
                        "digit, at most 64)")
    if name in BUILTIN or name in GENERATORS:
        raise DataError(f"{name!r} is a built-in data set; choose another name")
    is_url = "://" in location
    path = None
    if not is_url:
        path, checksum = _local_file(location, checksum)
    if checksum is not None:
        algo, digest = parse_checksum(checksum)
        checksum = f"{algo}:{digest}"
    if len(delimiter) != 1:
        raise DataError("the delimiter must be one character")
    source = Source(name=name, url=location if is_url else None, path=path, checksum=checksum,
                    rows=rows, columns=columns, delimiter=delimiter, header=header,
                    blank_line_after_header=blank_line_after_header, line_terminator=line_terminator,
                    column_names=tuple(column_names), description=description, user=True)
    if source.filename in (".", "..") or "/" in source.filename or "\\" in source.filename:
        raise DataError(f"{location}: cannot tell the file name; give a URL or path that ends in one")
    owned(user_registry_path(), "user source registry")  # refused before it is read or written through a link
    users = load_user_sources()
    if name in users and not replace_existing:
        raise DataError(f"user source {name!r} exists; pass replace_existing=True (--replace) to overwrite it")
    users[name] = source
    _save(users)
    return source


def _local_file(location: str, checksum: str | None) -> tuple[str, str]:
    """A local source's resolved path, and its checksum (the file's sha256 when none is given)."""
    try:
        p = expand_user(location, "source").resolve()
    except UnsafePath as exc:
        raise DataError(str(exc)) from None
    if not p.is_file():
        raise DataError(f"{location} is not a file; give an existing path or a URL")
    return str(p), checksum if checksum is not None else "sha256:" + file_digest(p)


def unregister_source(name: str) -> None:
    owned(user_registry_path(), "user source registry")
    users = load_user_sources()
    if name not in users:
        raise DataError(f"no user source {name!r}; user sources: {', '.join(users) or 'none'}")
    del users[name]
    _save(users)


def _save(users: dict[str, Source]) -> None:
    from colbench.data.atomic import write_json_atomic

    write_json_atomic(user_registry_path(), {"sources": [s.to_json() for s in users.values()]})


class ArchiveRecord(TypedDict):
    """The sidecar of a downloaded archive (``<archive>.manifest.json``): what was checked, and the result."""

    source: str
    origin: str
    size: int
    mtime_ns: int
    checksum: str | None  # the published one, if any
    found: str  # "<algo>:<hex>" as computed
    verified: bool
    sha256: str


@dataclass
class SourceState:
    """What is on this machine for a source."""

    source: Source
    archive: Path  # where the file as downloaded lives (or must be put by hand)
    present: bool = False
    verified: bool = False
    size: int | None = None
    detail: str = ""
    #: the archive's sidecar, when it still describes the file (same size and mtime)
    extra: ArchiveRecord | None = None
