"""What every generator provides, and the chunked CSV writer they share.

Two kinds of generator:

* *text twins* of real sources (taxi, Fannie Mae) yield tables of already formatted columns, because the
  point is the original text layout (``%.17g`` floats, whole-minute timestamps, ``|`` delimiters …);
  the binary formats are converted from that CSV by pyarrow's reader, as for the real file;
* *frames* (E3, E4, vroom) yield typed record batches; every format, CSV included, is written from them.

Determinism: chunk ``k`` of a data set is drawn from ``SeedSequence([seed, generator id, k])`` with a
chunk size fixed per generator (it is part of the generator's version), so the same name, rows and seed
give byte-identical files whatever the machine, and the chunks could be generated in any order.
"""

from __future__ import annotations

import queue
import threading
import zlib
from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, BinaryIO, TypedDict

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv

from colbench.data.errors import DataError


def prefetch(items: Iterator[Any], depth: int = 1) -> Iterator[Any]:
    """Run an iterator one step ahead in a thread.

    Generating a chunk (numpy) and formatting/writing the previous one (Arrow) both release the GIL for
    most of their work, so on two cores this overlaps them; order, and so the output, is unchanged.
    """
    q: queue.Queue[tuple[str, Any]] = queue.Queue(maxsize=depth)
    stop = threading.Event()
    thread = threading.Thread(target=_produce, args=(items, q, stop), name="colbench-prefetch", daemon=True)
    thread.start()
    try:
        while True:
            kind, value = q.get()
            if kind == "done":
                return
            if kind == "error":
                raise value
            yield value
    finally:
        stop.set()
        thread.join()


def _produce(items: Iterator[Any], q: queue.Queue[tuple[str, Any]], stop: threading.Event) -> None:
    """prefetch's thread: every item, then "done"; or the error that ended the iterator."""
    try:
        for item in items:
            if not _put(q, stop, "item", item):
                return
        _put(q, stop, "done", None)
    except BaseException as exc:  # handed to the consumer, which re-raises it
        _put(q, stop, "error", exc)


def _put(q: queue.Queue[tuple[str, Any]], stop: threading.Event, kind: str, value: Any) -> bool:
    """Queue (kind, value) unless the consumer stopped first (False then)."""
    while not stop.is_set():
        try:
            q.put((kind, value), timeout=0.1)
            return True
        except queue.Full:
            continue
    return False


#: a generator option's value (a column count, a value type, a share of nulls …), as JSON holds it
OptionValue = str | int | float | bool | None
#: a generator's options, validated and with defaults filled in: part of the cache key and the lineage
GenOptions = dict[str, OptionValue]


def option_int(options: Mapping[str, OptionValue], name: str) -> int:
    """An integer option (a column count, a value size), typed as one."""
    value = options[name]
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise DataError(f"option {name}={value!r} must be an integer")
    return int(value)


def option_float(options: Mapping[str, OptionValue], name: str) -> float:
    """A number option (a share of nulls), typed as a float."""
    value = options[name]
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise DataError(f"option {name}={value!r} must be a number")
    return float(value)


def option_str(options: Mapping[str, OptionValue], name: str) -> str:
    """A text option (a value type, a delimiter), typed as one."""
    value = options[name]
    if not isinstance(value, str):
        raise DataError(f"option {name}={value!r} must be text")
    return value


class LayoutDoc(TypedDict):
    """A TextLayout as JSON (the ``layout`` of a manifest entry)."""

    delimiter: str
    header: bool
    blank_line_after_header: bool
    line_terminator: str
    column_names: list[str]


@dataclass(frozen=True)
class TextLayout:
    """How a CSV-like file is laid out: what a reader must be told, and what makes the bytes."""

    delimiter: str = ","
    header: bool = True
    blank_line_after_header: bool = False
    line_terminator: str = "\n"
    column_names: tuple[str, ...] = ()

    def to_json(self) -> LayoutDoc:
        return {"delimiter": self.delimiter, "header": self.header,
                "blank_line_after_header": self.blank_line_after_header,
                "line_terminator": self.line_terminator, "column_names": list(self.column_names)}

    @classmethod
    def from_json(cls, doc: LayoutDoc) -> TextLayout:
        return cls(doc.get("delimiter", ","), bool(doc.get("header", True)),
                   bool(doc.get("blank_line_after_header", False)), doc.get("line_terminator", "\n"),
                   tuple(doc.get("column_names") or ()))

    def read_options(self, block_size: int | None = None) -> pacsv.ReadOptions:
        """pyarrow reader options that give only what the experiments gave: delimiter and header handling."""
        # None leaves pyarrow's default, as an option not given at all
        named = not self.header and bool(self.column_names)
        return pacsv.ReadOptions(block_size=block_size or None,
                                 column_names=list(self.column_names) if named else None,
                                 autogenerate_column_names=True if not self.header and not named else None)

    def parse_options(self) -> pacsv.ParseOptions:
        return pacsv.ParseOptions(delimiter=self.delimiter)


@dataclass(frozen=True)
class OptionSpec:
    """An option a generator accepts (``DataRequest.options`` minus the format options)."""

    name: str
    default: OptionValue
    choices: tuple[OptionValue, ...] | None = None
    kind: type[str] | type[int] | type[float] = str
    help: str = ""


class Generator(ABC):
    """A synthetic data set, scaled by ``rows``."""

    #: data set name as used in DataRequest.dataset
    name: str
    #: bump when the output changes: it invalidates this generator's cached files and only those
    version: str
    kind: str  # "text" or "frame"
    description: str = ""
    chunk_rows: int = 131_072
    option_specs: tuple[OptionSpec, ...] = ()
    #: rows of the real data set (or of the experiment), the scale "full size" means
    full_rows: int | None = None

    @property
    def gen_id(self) -> int:
        return zlib.crc32(self.name.encode())

    def options(self, given: Mapping[str, OptionValue] | None) -> GenOptions:
        """Validated options with defaults filled in (the exact dict that goes into the cache key)."""
        given = dict(given or {})
        out: GenOptions = {}
        for spec in self.option_specs:
            value = given.pop(spec.name, spec.default)
            if value is not None and spec.kind is not str:
                try:
                    value = spec.kind(value)
                except (TypeError, ValueError):
                    raise DataError(f"option {spec.name}={value!r} of {self.name} must be "
                                    f"{spec.kind.__name__}") from None
            if spec.choices is not None and value not in spec.choices:
                raise DataError(f"option {spec.name}={value!r} of {self.name} must be one of "
                                f"{', '.join(map(str, spec.choices))}")
            out[spec.name] = value
        if given:
            known = ", ".join(s.name for s in self.option_specs) or "none"
            raise DataError(f"{self.name} does not take option(s) {', '.join(sorted(given))} "
                            f"(it takes: {known})")
        return out

    def rng(self, seed: int, chunk: int) -> np.random.Generator:
        return np.random.default_rng(np.random.SeedSequence([int(seed) & 0xFFFFFFFF, self.gen_id, chunk]))

    def chunk_sizes(self, rows: int) -> Iterator[tuple[int, int, int]]:
        """(chunk index, first row, rows in chunk) covering ``rows``."""
        for k, start in enumerate(range(0, rows, self.chunk_rows)):
            yield k, start, min(self.chunk_rows, rows - start)

    @abstractmethod
    def layout(self, options: GenOptions) -> TextLayout:
        """The CSV layout of this data set's text form."""

    @abstractmethod
    def tables(self, rows: int, seed: int, options: GenOptions) -> Iterator[pa.Table]:
        """Chunks of the data set, in order: formatted text columns (text twins) or typed columns (frames)."""

    def supports_csv(self, options: GenOptions) -> bool:
        return True

    def csv_bytes(self, rows: int, options: GenOptions) -> int | None:
        """Exact size of the CSV when it can be computed without generating it (else None: sample it)."""
        return None

    def write_csv(self, out: BinaryIO, rows: int, seed: int, options: GenOptions) -> int:
        """Write the text form in chunks; returns the number of data rows written."""
        if not self.supports_csv(options):
            raise DataError(f"{self.name} with {options} has no CSV form (binary values); "
                            "ask for an Arrow or Parquet format")
        lay = self.layout(options)
        if lay.header:
            out.write((lay.delimiter.join(lay.column_names) + lay.line_terminator).encode())
            if lay.blank_line_after_header:
                out.write(lay.line_terminator.encode())
        wopts = pacsv.WriteOptions(include_header=False, delimiter=lay.delimiter,
                                   quoting_style="none", eol=lay.line_terminator, batch_size=16_384)
        written = 0
        writer: pacsv.CSVWriter | None = None
        for table in prefetch(self.tables(rows, seed, options)):
            if writer is None:
                writer = pacsv.CSVWriter(out, table.schema, write_options=wopts)
            writer.write_table(table)
            written += table.num_rows
        if writer is not None:
            writer.close()
        return written
