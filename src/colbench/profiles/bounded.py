"""A profile's lines, read with bounds on what they decompress to (issue 48: a 174 KB memory profile holding 3 GB
of zeros after its data made `explain --metric memory` hold 6 GB for 26 s).

Every reader of a stored profile (callgrind's dumps, `perf script`'s samples, heaptrack's traces) reads through
`bounded_lines`: no line longer than `MAX_LINE_BYTES`, no more than `MAX_PROFILE_BYTES` in all, after
decompression; past either, the profile is refused in one line, before it is held in memory."""

from __future__ import annotations

import gzip
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Protocol

#: the most a profile may decompress to: callgrind's dump of a second of pyarrow's reading is ~20 MB and
#: heaptrack's trace of it ~50 MB; a gigabyte is a profile colbench did not write
MAX_PROFILE_BYTES = 1 << 30
#: the longest line of any profile format colbench reads (a callgrind `fn=` line with a C++ template name is a few
#: KB; a heaptrack line is tens of bytes)
MAX_LINE_BYTES = 1 << 20


class LineSource(Protocol):
    """What `bounded_lines` reads: a binary file, a pipe, a GzipFile."""

    def readline(self, size: int = -1, /) -> bytes: ...


def bounded_lines(stream: LineSource, name: str, fail: Callable[[str], Exception], *,
                  max_bytes: int = MAX_PROFILE_BYTES, max_line: int = MAX_LINE_BYTES) -> Iterator[str]:
    """The lines (newline kept, UTF-8 with bad bytes replaced) of a binary stream, refused with `fail(message)`
    at a line past `max_line` bytes or a total past `max_bytes`; a damaged gzip stream is `fail` too (a pipe's
    failure, zstd's, is its caller's to read from the exit status)."""
    total = 0
    while True:
        try:
            raw = stream.readline(max_line + 1)
        except (OSError, EOFError, zlib.error) as exc:
            raise fail(f"{name} is not a complete gzip file ({exc})") from None
        if not raw:
            return
        total += len(raw)
        if len(raw) > max_line:
            raise fail(f"{name} has a line longer than {max_line:,} bytes: not a profile colbench wrote; refused")
        if total > max_bytes:
            raise fail(f"{name} holds more than {max_bytes:,} bytes once decompressed: not a profile colbench "
                       "wrote; refused")
        yield raw.decode("utf-8", errors="replace")


def open_profile(path: Path) -> gzip.GzipFile | IO[bytes]:
    """A profile file as a binary stream, gunzipped when its name ends in `.gz`."""
    if path.suffix == ".gz":
        return gzip.open(path, "rb")
    return path.open("rb")
