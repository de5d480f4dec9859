"""The format cache: "data set X as format F with codec C" → a verified file, made once.

Layout under ``root`` (``colbench.paths.data_dir()`` by default)::

    downloads/<source>/<file as published>             real sources (``colbench data get``)
    cache/<dataset>/<slug>/<format>-<codec>[-opts].<ext>  materialised files, each with a
                                                          ``.manifest.json`` sidecar

``slug`` is ``real`` for the real file or ``r<rows>-s<seed>`` for a twin, followed by the generator
options that differ from their defaults (``-variant=str``, ``-type=int64`` …).

How each file is made:

* CSV of a twin: the generator writes the source's text layout in chunks. CSV of a real source: the
  verified download, decompressed. DSIB ``str``/``cat`` CSVs: derived from the plain CSV
  (:mod:`colbench.data.variants`). ``csv``+``gzip``: the CSV, gzipped.
* Binary formats of a CSV-born data set (real or twin): the CSV read back by pyarrow with only the
  delimiter and header handling given, types inferred, as the experiments did (:mod:`csvio`); the 2016 taxi
  months get ``store_and_fwd_flag`` as bool like the DSIB post. Frames (E3, E4, vroom) are written straight
  from the generated Arrow batches.

Every write goes to a temporary name and is renamed into place, under a per-file lock, then its manifest
entry is written; a file whose entry is missing, of another lineage, or whose size / hash no longer match
is rebuilt (with a warning when it was corrupt).
"""

from __future__ import annotations

import contextlib
import json
import shutil
import tempfile
import time
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, fields
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypedDict, cast

import pyarrow as pa

from colbench.data import csvio, formats, manifest, variants
from colbench.data.atomic import FileLock, temp_files_for, write_json_atomic
from colbench.data.download import archive_path, decompress, downloads_dir, require_archive, source_state
from colbench.data.errors import DataError
from colbench.data.formats import FormatOptions
from colbench.data.hashing import file_digest
from colbench.data.manifest import Lineage
from colbench.data.sources import Source, all_sources
from colbench.data.synth import GENERATORS, Generator, TextLayout
from colbench.data.synth.base import GenOptions, OptionValue
from colbench.model.benchmark import DataRequest
from colbench.model.records import InputFile
from colbench.paths import TEMP_MARK, atomic_path, check_name, create_new, data_dir, owned, owned_dir, remove

CONVERTER_VERSION = "1"  # bump when conversions from CSV change
CALIBRATION_ROWS = 20_000
_KEEP: Any = object()


class CacheWarning(UserWarning):
    """A cached file was found corrupt or stale and is being rebuilt."""


class SizeRow(TypedDict):
    """One cached file in the file-size table."""

    dataset: str
    rows: int
    synthetic: bool
    seed: int | None
    format: str
    codec: str | None
    options: dict[str, OptionValue]
    size_bytes: int
    path: str


@dataclass
class CachedFile:
    """A materialised file, as handed to workers (``asdict`` must stay JSON-friendly but for ``path``)."""

    path: Path
    size_bytes: int
    rows: int
    columns: int
    dataset: str
    format: str
    codec: str | None
    sha256: str
    delimiter: str | None = None  # CSV only: what a reader must be told
    header: bool | None = None  # CSV only: whether the first line holds the column names
    line_terminator: str | None = None
    blank_line_after_header: bool | None = None
    column_names: list[str] | None = None
    synthetic: bool = True
    seed: int | None = None
    options: dict[str, OptionValue] = field(default_factory=dict)  # the request's: generator, variant and format
    lineage: Lineage | None = None

    def case_input(self, request: dict[str, object]) -> InputFile:
        """The `inputs` entry of a worker's case.json and of the stored result (docs/protocol.md): every field of
        this file, in field order (the path as text, lists and mappings copied), and the request it answers.
        `InputFile` is this record's JSON form, typed in model/ for the worker and the results, which never import
        the data layer; tests/data/test_cache.py holds its keys to these fields."""
        doc: dict[str, Any] = {f.name: _copied(getattr(self, f.name)) for f in fields(self)}
        doc.update(path=str(self.path), request=request)
        return cast(InputFile, doc)


def _copied(value: Any) -> Any:
    """A list or mapping copied (the document never shares state with the record), anything else as it is."""
    if isinstance(value, list):
        return list(value)
    return dict(value) if isinstance(value, dict) else value


@dataclass(frozen=True)
class FilePlan:
    """A request resolved against the registry: what to make, where, and from what."""

    request: DataRequest
    dataset: str
    format: str
    codec: str | None
    rows: int | None  # None: the real file
    seed: int
    variant: str | None  # DSIB "str"/"cat"; None = plain
    gen_options: GenOptions
    fmt_options: FormatOptions
    path: Path
    lineage: Lineage
    source: Source | None
    generator: Generator | None

    @property
    def synthetic(self) -> bool:
        return self.rows is not None

    def text_layout(self) -> TextLayout | None:
        """The layout of this plan's CSV (None for binary formats)."""
        if self.format != "csv":
            return None
        base = _base_layout(self)
        return variants.layout(base) if self.variant else base

    def derived(self, format: str | None = None, codec: Any = _KEEP, fmt_options: FormatOptions | None = None,
                variant: Any = _KEEP) -> FilePlan:
        """Another file of the same data (its CSV, its plain variant …), resolved the same way."""
        opts: dict[str, OptionValue] = dict(self.gen_options)
        chosen = self.variant if variant is _KEEP else variant
        if chosen:
            opts["variant"] = chosen
        opts.update(self.fmt_options if fmt_options is None else fmt_options)
        request = DataRequest(self.dataset, format or self.format, self.codec if codec is _KEEP else codec,
                              self.request.rows, self.seed, opts)
        return resolve(request, self.path_root)

    @property
    def path_root(self) -> Path:
        return self.path.parents[3]


def _base_layout(plan: FilePlan) -> TextLayout:
    if plan.synthetic or plan.source is None:
        assert plan.generator is not None
        return plan.generator.layout(plan.gen_options)
    s = plan.source
    return TextLayout(delimiter=s.delimiter, header=s.header, blank_line_after_header=s.blank_line_after_header,
                      line_terminator=s.line_terminator, column_names=s.column_names)


def known_datasets() -> list[str]:
    names = list(all_sources())
    return names + [g for g in GENERATORS if g not in names]


def _slug(plan_rows: int | None, seed: int, gen: Generator | None, gen_options: GenOptions,
          variant: str | None) -> str:
    parts = ["real"] if plan_rows is None else [f"r{plan_rows}", f"s{seed}"]
    if gen is not None and plan_rows is not None:
        defaults = {s.name: s.default for s in gen.option_specs}
        parts += [f"{k}={_slugval(v)}" for k, v in sorted(gen_options.items()) if defaults.get(k) != v]
    if variant:
        parts.append(f"variant={variant}")
    return "-".join(parts)


def _slugval(v: OptionValue) -> str:
    return {"\t": "tab", ",": "comma", "|": "pipe"}.get(str(v), str(v))


def resolve(request: DataRequest, root: Path | None = None) -> FilePlan:
    """Validate a request and work out its file, or raise a DataError that says what is wrong."""
    root = Path(root) if root is not None else data_dir()
    name = request.dataset
    srcs = all_sources()
    source = srcs.get(name)
    gen = GENERATORS.get(name)
    if source is None and gen is None:
        raise DataError(f"unknown dataset {name!r}; known: {', '.join(known_datasets())}")
    fmt, codec = formats.normalize(request.format, request.codec)
    opts = dict(request.options or {})
    fmt_opts = formats.format_options(fmt, {k: opts.pop(k) for k in formats.FORMAT_OPTIONS if k in opts})
    variant = _variant(name, opts.pop("variant", None), source)
    real = request.rows is None and source is not None
    rows = _rows(request, real, gen)
    gen_options, lineage = _origin(request, rows, opts, source if real else None, gen)
    _add_conversions(lineage, variant, fmt, codec, fmt_opts)
    slug = _slug(rows, request.seed, gen, gen_options, variant)
    path = root / "cache" / name / slug / formats.file_name(fmt, codec, fmt_opts)
    if fmt == "csv" and gen is not None and rows is not None and not gen.supports_csv(gen_options):
        raise DataError(f"{name} with {gen_options} has no CSV form (binary values); ask for "
                        "parquet, feather or an Arrow IPC format")
    return FilePlan(request=request, dataset=name, format=fmt, codec=codec, rows=rows, seed=request.seed,
                variant=variant, gen_options=gen_options, fmt_options=fmt_opts, path=path, lineage=lineage,
                source=source, generator=gen)


def _variant(name: str, variant: OptionValue | None, source: Source | None) -> str | None:
    """The variant asked for (None for the plain file), if the real data set has it."""
    if variant in (None, "plain"):
        return None
    if source is None or variant not in source.variants:
        allowed = ", ".join(source.variants) if source and source.variants else "none"
        raise DataError(f"{name} has no variant {variant!r} (variants: {allowed})")
    return str(variant)


def _rows(request: DataRequest, real: bool, gen: Generator | None) -> int | None:
    """The rows asked for: None for a real file, a synthetic-only set's own size when not given."""
    rows = request.rows
    if rows is None and not real:  # synthetic-only sets: the experiment's own size
        rows = gen.full_rows if gen is not None else None
        if rows is None:
            raise DataError(f"{request.dataset} is synthetic only: pass rows=N (--rows N)")
    if rows is not None and rows < 0:
        raise DataError(f"rows must be >= 0, got {rows}")
    return rows


def _origin(request: DataRequest, rows: int | None, opts: dict[str, OptionValue], real: Source | None,
            gen: Generator | None) -> tuple[GenOptions, Lineage]:
    """The generator's options and where the file comes from: the `real` source's file, or the generator."""
    name = request.dataset
    if real is not None:
        if opts:
            raise DataError(f"options {', '.join(sorted(opts))} only apply to synthetic data (pass rows=N)")
        return {}, {"kind": "real", "source": name, "checksum": real.checksum, "origin": real.origin}
    if gen is None:
        raise DataError(f"{name} has no synthetic twin: drop rows to use the real file "
                        f"(`colbench data get {name}`)")
    gen_options = gen.options(opts)
    return gen_options, {"kind": "synthetic", "generator": gen.name, "version": gen.version, "rows": rows,
                         "seed": request.seed, "options": gen_options}


def _add_conversions(lineage: Lineage, variant: str | None, fmt: str, codec: str | None,
                     fmt_opts: FormatOptions) -> None:
    """What the file went through after its origin: a variant's change, gzip, a conversion to another format."""
    if variant:
        lineage["variant"] = {"name": variant, "version": variants.VERSION}
    if fmt == "csv" and codec == "gzip":
        lineage["gzip"] = {"level": fmt_opts.get("compression_level") or formats.GZIP_LEVEL}
    elif fmt != "csv":
        lineage["format"] = {"format": fmt, "codec": codec, "options": fmt_opts, "converter": CONVERTER_VERSION}


# --- materialise ----------------------------------------------------------------------------------------

def materialize(request: DataRequest, root: Path | None = None, *, verify: bool = False) -> CachedFile:
    """The file for ``request``, made if needed (safe with concurrent processes). ``verify`` re-hashes it."""
    return _materialize(resolve(request, root), verify=verify)


def _materialize(plan: FilePlan, *, verify: bool = False) -> CachedFile:
    root = plan.path_root
    lock = plan.path.with_name(plan.path.name + ".lock")
    # a data set's folder (or the data directory, the cache, the file, its manifest or lock) linked out of the data
    # root is refused before anything is read or written there, never written through
    for path, what in ((plan.path, "data file"), (manifest.sidecar(plan.path), "manifest"), (lock, "lock file")):
        owned(path, what, root)
    state, entry = manifest.status(plan.path, plan.lineage, verify=verify, root=root)
    if state == "ok" and entry is not None:
        return _cached(plan, entry)
    owned_dir(plan.path.parent, "data cache folder", root)
    with FileLock(lock, root=root):
        # another process may have built it while we waited for the lock
        state, entry = manifest.status(plan.path, plan.lineage, verify=verify, root=root)
        if state == "ok" and entry is not None:
            return _cached(plan, entry)
        if state.startswith("corrupt"):
            why = state.split(": ", 1)[1]
            warnings.warn(f"cached file {plan.path} is corrupt ({why}); rebuilding it", CacheWarning, stacklevel=3)
        elif state == "unrecorded":
            warnings.warn(f"cached file {plan.path} has no manifest entry (an interrupted build?); rebuilding it",
                          CacheWarning, stacklevel=3)
        for leftover in temp_files_for(plan.path):  # from killed builds: we hold the lock
            remove(leftover, within=plan.path.parent, root=root)
        entry = _build(plan)
        return _cached(plan, entry)


def _cached(plan: FilePlan, entry: manifest.Entry) -> CachedFile:
    layout = entry.layout
    return CachedFile(
        path=plan.path, size_bytes=entry.size_bytes, rows=entry.rows, columns=entry.columns,
        dataset=plan.dataset, format=plan.format, codec=plan.codec, sha256=entry.sha256,
        delimiter=layout.delimiter if layout else None, header=layout.header if layout else None,
        line_terminator=layout.line_terminator if layout else None,
        blank_line_after_header=layout.blank_line_after_header if layout else None,
        column_names=list(layout.column_names) if layout and layout.column_names else None,
        synthetic=plan.synthetic, seed=plan.seed if plan.synthetic else None,
        options={**plan.gen_options, **({"variant": plan.variant} if plan.variant else {}), **plan.fmt_options},
        lineage=entry.lineage)


def _build(plan: FilePlan) -> manifest.Entry:
    start = time.perf_counter()
    inputs: list[str] = []
    schema: pa.Schema | None = None
    layout = plan.text_layout()
    with atomic_path(plan.path, "data file", plan.path_root) as tmp:
        if plan.format == "csv" and plan.codec is None:
            rows, columns = _build_text(plan, tmp, inputs)
        elif plan.format == "csv":
            base = _materialize(plan.derived(codec=None, fmt_options={}))
            inputs.append(str(base.path))
            formats.gzip_file(base.path, tmp, plan.fmt_options.get("compression_level"))
            rows, columns = base.rows, base.columns
        else:
            rows, columns, schema = _build_binary(plan, tmp, inputs)
        size = tmp.stat().st_size
        digest = file_digest(tmp)
    st = plan.path.stat()
    entry = manifest.Entry(
        file=plan.path.name, dataset=plan.dataset, format=plan.format, codec=plan.codec, rows=rows,
        columns=columns, size_bytes=size, sha256=digest, mtime_ns=st.st_mtime_ns, lineage=plan.lineage,
        request=plan.request, layout=layout,
        schema=[[f.name, str(f.type)] for f in schema] if schema is not None else None,
        created=datetime.now(UTC).isoformat(timespec="seconds"),
        build_seconds=round(time.perf_counter() - start, 3), inputs=inputs)
    manifest.write(plan.path, entry, plan.path_root)
    return entry


def _build_text(plan: FilePlan, tmp: Path, inputs: list[str]) -> tuple[int, int]:
    if plan.variant:  # DSIB str / cat: derived from the plain CSV of the same month
        base = _materialize(plan.derived(variant=None))
        inputs.append(str(base.path))
        typed = csvio.open_typed(base.path, _base_layout(plan))
        with create_new(tmp) as out:
            rows = variants.write_variant(typed.batches, plan.variant, out)
        return rows, len(typed.schema) + 1
    if plan.synthetic:
        gen = plan.generator
        assert gen is not None and plan.rows is not None
        with create_new(tmp) as out:
            rows = gen.write_csv(out, plan.rows, plan.seed, plan.gen_options)
        return rows, len(gen.layout(plan.gen_options).column_names)
    source = plan.source
    assert source is not None
    archive = require_archive(source, plan.path_root)
    inputs.append(str(archive))
    _size, newlines, ends_with_newline = decompress(archive, tmp, source.compression, plan.path_root)
    rows = newlines + (0 if ends_with_newline else 1)
    rows -= (1 if source.header else 0) + (1 if source.blank_line_after_header else 0)
    columns = source.columns or len(source.column_names) or _count_columns(tmp, source.delimiter)
    return max(rows, 0), columns


def _count_columns(path: Path, delimiter: str) -> int:
    with open(path, "rb") as f:
        line = f.readline()
    return line.count(delimiter.encode()) + 1 if line.strip() else 0


def _build_binary(plan: FilePlan, tmp: Path, inputs: list[str]) -> tuple[int, int, pa.Schema]:
    gen = plan.generator
    if plan.synthetic and gen is not None and gen.kind == "frame":
        tables = gen.tables(plan.rows or 0, plan.seed, plan.gen_options)
        first = next(tables, None)
        if first is None:  # zero rows: an empty table with the frame's schema
            first = _empty_frame(gen, plan)
        schema = first.schema

        def batches() -> Iterable[pa.RecordBatch]:
            yield from first.to_batches()
            for t in tables:
                yield from t.to_batches()

        written = formats.write_batches(plan.format, plan.codec, plan.fmt_options, schema, batches(), tmp)
        return written.rows, written.columns, written.schema
    base = _materialize(plan.derived(format="csv", codec=None, fmt_options={}))
    inputs.append(str(base.path))
    layout = plan.derived(format="csv", codec=None, fmt_options={}).text_layout()
    assert layout is not None
    typed = csvio.open_typed(base.path, layout)
    schema = typed.schema
    data: Iterable[pa.RecordBatch] | pa.Table = typed.batches
    if plan.source is not None and plan.source.variants:  # DSIB months: the flag as bool, like the post
        schema = variants.bool_schema(schema)
        data = variants.bool_batches(typed.batches)
    if not typed.streamed:  # small enough to be in memory: let Feather go through write_feather itself
        data = pa.Table.from_batches(list(data), schema=schema)
    written = formats.write_batches(plan.format, plan.codec, plan.fmt_options, schema, data, tmp)
    return written.rows, written.columns, written.schema


def _empty_frame(gen: Generator, plan: FilePlan) -> pa.Table:
    schema_of = getattr(gen, "schema", None)
    if schema_of is not None:
        return schema_of(plan.gen_options).empty_table()
    probe = next(gen.tables(1, plan.seed, plan.gen_options))
    return probe.schema.empty_table()


# --- what is there ---------------------------------------------------------------------------------------

def cache_dir(root: Path | None = None) -> Path:
    return (Path(root) if root is not None else data_dir()) / "cache"


def cached_files(root: Path | None = None, dataset: str | None = None) -> list[CachedFile]:
    """Every materialised file with its recorded size (for file-size tables and ``data list``)."""
    base = cache_dir(root)
    out = []
    for path, entry in manifest.entries(base / known_dataset(dataset) if dataset is not None else base):
        layout = entry.layout
        out.append(CachedFile(
            path=path, size_bytes=entry.size_bytes, rows=entry.rows, columns=entry.columns, dataset=entry.dataset,
            format=entry.format, codec=entry.codec, sha256=entry.sha256,
            delimiter=layout.delimiter if layout else None, header=layout.header if layout else None,
            line_terminator=layout.line_terminator if layout else None,
            blank_line_after_header=layout.blank_line_after_header if layout else None,
            column_names=list(layout.column_names) if layout and layout.column_names else None,
            synthetic=entry.lineage.get("kind") == "synthetic",
            seed=entry.lineage.get("seed"), options=dict(entry.request.options),
            lineage=entry.lineage))
    return out


def size_table(root: Path | None = None, dataset: str | None = None) -> list[SizeRow]:
    """Rows of (dataset, rows, seed, format, codec, options, size_bytes), for reports."""
    return [{"dataset": c.dataset, "rows": c.rows, "synthetic": c.synthetic, "seed": c.seed, "format": c.format,
             "codec": c.codec, "options": c.options, "size_bytes": c.size_bytes, "path": str(c.path)}
            for c in cached_files(root, dataset)]


def known_dataset(name: str) -> str:
    """`name` if it is a built-in source, a registered user source or a generator; else a DataError. Only such
    names become directories under the cache and the downloads, so no user string is ever taken as a path."""
    known = known_datasets()
    if name not in known:
        raise DataError(f"unknown data set {name!r}; known: {', '.join(known)}")
    return check_name(name, "data set")


def clean(root: Path | None = None, *, dataset: str | None = None, downloads: bool = False,
          stale_only: bool = False) -> int:
    """Delete cached files (all, one data set's, or only stale leftovers); returns the bytes freed.

    Deletes only under ``cache/`` and ``downloads/`` of a data directory inside $COLBENCH_HOME or $COLBENCH_DATA,
    and only through :func:`colbench.paths.remove` (a symlink is removed, never what it points to)."""
    root = owned(Path(root) if root is not None else data_dir(), "data directory")
    cache = cache_dir(root)
    base = cache / known_dataset(dataset) if dataset is not None else cache
    freed = 0
    if stale_only:
        for path, entry in list(manifest.entries(base)):
            try:
                current = resolve(entry.request, root).lineage
            except DataError:
                current = None
            if current is None or manifest.normalized(current) != manifest.normalized(entry.lineage):
                freed += remove(path, within=cache) + remove(manifest.sidecar(path), within=cache)
        if base.is_dir() and not base.is_symlink():
            for p in base.rglob("*"):
                stray = TEMP_MARK in p.name
                no_entry = (p.is_file() and not p.name.endswith((manifest.SUFFIX, ".lock"))
                            and manifest.read(p) is None)
                if p.is_file() and (stray or no_entry):
                    freed += remove(p, within=cache)
        return freed
    freed += remove(base, within=root)
    if downloads:
        dl = downloads_dir(root)
        freed += remove(dl / dataset if dataset is not None else dl, within=root)
    return freed


# --- estimates and prepare --------------------------------------------------------------------------------

@dataclass
class PlannedFile:
    """A file a request needs, with its (estimated) size."""

    path: Path
    label: str
    size_bytes: int
    present: bool
    exact: bool
    format: str = ""  # csv, parquet, feather …; "download" for a real file fetched from the internet


def estimate(request: DataRequest, root: Path | None = None) -> list[PlannedFile]:
    """The file for ``request`` and every file it needs first (CSV, download), each with its size.

    Present files report their real size. Missing ones are estimated: twins from the bytes per row of a
    small sample built once (20 000 rows, remembered in ``<root>/estimates.json``), real files from the
    registry's published sizes.
    """
    plan = resolve(request, root)
    return _estimate(plan, {})


def _label(plan: FilePlan) -> str:
    what = f"{plan.dataset}" + (f"[{plan.variant}]" if plan.variant else "")
    scale = "real" if not plan.synthetic else f"{plan.rows:,} rows"
    codec = plan.codec or "uncompressed"
    opts = "".join(f" {k}={v}" for k, v in sorted(plan.fmt_options.items()))
    return f"{what} ({scale}) {plan.format}/{codec}{opts}"


def _estimate(plan: FilePlan, memo: dict[Path, PlannedFile]) -> list[PlannedFile]:
    if plan.path in memo:
        return []
    state, entry = manifest.status(plan.path, plan.lineage, root=plan.path_root)
    if state == "ok" and entry is not None:
        item = PlannedFile(plan.path, _label(plan), entry.size_bytes, present=True, exact=True, format=plan.format)
        memo[plan.path] = item
        return [item]
    deps: list[PlannedFile] = []
    if plan.format == "csv" and plan.codec is not None:
        deps += _estimate(plan.derived(codec=None, fmt_options={}), memo)
    elif plan.format == "csv" and plan.variant:
        deps += _estimate(plan.derived(variant=None), memo)
    elif plan.format != "csv" and not (plan.synthetic and plan.generator and plan.generator.kind == "frame"):
        deps += _estimate(plan.derived(format="csv", codec=None, fmt_options={}), memo)
    if not plan.synthetic and plan.source is not None and plan.format == "csv" and not plan.variant \
            and plan.codec is None:
        st = source_state(plan.source, plan.path_root)
        if not st.present:
            size = plan.source.compressed_size or plan.source.size or 0
            dl = PlannedFile(archive_path(plan.source, plan.path_root), f"{plan.dataset} download",
                             size, present=False, exact=bool(plan.source.compressed_size), format="download")
            memo[dl.path] = dl
            deps.append(dl)
    size, exact = _predict(plan)
    item = PlannedFile(plan.path, _label(plan), size, present=False, exact=exact, format=plan.format)
    memo[plan.path] = item
    return deps + [item]


def _predict(plan: FilePlan) -> tuple[int, bool]:
    """The size of a missing file and whether it is exact."""
    if not plan.synthetic:
        return _predict_real(plan), False
    gen = plan.generator
    assert gen is not None and plan.rows is not None
    if plan.format == "csv" and plan.codec is None and not plan.variant:
        exact = gen.csv_bytes(plan.rows, plan.gen_options)
        if exact is not None:
            return exact, True
    per_row = _bytes_per_row(plan)
    return int(per_row * plan.rows), False


def _predict_real(plan: FilePlan) -> int:
    """A real file's size: the registry's published one, else its synthetic twin's at the same rows."""
    src = plan.source
    assert src is not None
    if plan.format == "csv" and plan.codec is None and not plan.variant and src.size:
        return src.size
    if plan.format == "csv" and plan.codec == "gzip" and not plan.variant and src.compressed_size:
        return src.compressed_size
    # months without a published row count are taken to be like January (≈ 11 M rows each)
    rows = src.rows or (all_sources()["nyctaxi_2016-01"].rows if src.twin else None)
    if src.twin and rows:
        twin = DataRequest(plan.dataset, plan.format, plan.codec, rows, 0,
                           {**plan.fmt_options, **({"variant": plan.variant} if plan.variant else {})})
        return _predict(resolve(twin, plan.path_root))[0]
    return src.size or (src.compressed_size or 0) * 5


def _calibration_key(plan: FilePlan) -> str:
    lineage = {k: v for k, v in plan.lineage.items() if k not in ("rows", "seed")}
    return json.dumps(lineage, sort_keys=True)


_CALIBRATION: dict[str, float] = {}


def _bytes_per_row(plan: FilePlan) -> float:
    key = _calibration_key(plan)
    if key in _CALIBRATION:
        return _CALIBRATION[key]
    store = plan.path_root / "estimates.json"
    try:
        saved = json.loads(store.read_text())
    except (OSError, ValueError):
        saved = {}
    if key not in saved:
        sample_rows = min(CALIBRATION_ROWS, max(plan.rows or 0, 1000))
        opts = {**plan.gen_options, **plan.fmt_options, **({"variant": plan.variant} if plan.variant else {})}
        with tempfile.TemporaryDirectory(prefix="colbench-calibrate-") as tmp:
            made = materialize(DataRequest(plan.dataset, plan.format, plan.codec, sample_rows, plan.seed, opts),
                               Path(tmp))
        saved[key] = made.size_bytes / max(sample_rows, 1)
        with contextlib.suppress(OSError):  # a read-only root still gets estimates, just not remembered
            write_json_atomic(store, saved, plan.path_root)
    _CALIBRATION[key] = float(saved[key])
    return _CALIBRATION[key]


@dataclass
class PreparePlan:
    files: list[PlannedFile]
    requests: list[DataRequest]

    @property
    def new_bytes(self) -> int:
        return sum(f.size_bytes for f in self.files if not f.present)

    @property
    def present_bytes(self) -> int:
        return sum(f.size_bytes for f in self.files if f.present)


def plan_prepare(requests: Sequence[DataRequest], root: Path | None = None) -> PreparePlan:
    """Every file the requests need (deduplicated, dependencies first) with sizes, before making any."""
    memo: dict[Path, PlannedFile] = {}
    files: list[PlannedFile] = []
    unique: dict[str, DataRequest] = {}
    for req in requests:
        unique.setdefault(json.dumps(req.to_json(), sort_keys=True), req)
    for req in unique.values():
        files += _estimate(resolve(req, root), memo)
    return PreparePlan(files=files, requests=list(unique.values()))


def prepare(requests: Sequence[DataRequest], root: Path | None = None, *, force: bool = False,
            on_file: Any = None) -> list[CachedFile]:
    """Materialise every request (after checking the disk has room); ``on_file(i, n, request)`` reports."""
    root = Path(root) if root is not None else data_dir()
    pp = plan_prepare(requests, root)
    owned_dir(root, "data directory", root)
    free = shutil.disk_usage(root).free
    if pp.new_bytes > free and not force:
        raise DataError(f"preparing needs about {pp.new_bytes / 2**30:.1f} GiB but {root} has "
                        f"{free / 2**30:.1f} GiB free; free space (`colbench data clean`) or pass --force")
    made = []
    for i, req in enumerate(pp.requests):
        if on_file is not None:
            on_file(i, len(pp.requests), req)
        made.append(materialize(req, root))
    return made

