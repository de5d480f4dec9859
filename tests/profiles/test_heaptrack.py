"""heaptrack's file read into the timed call's peak (colbench/profiles/heaptrack.py) and the peak named and cut at
the allocating function (colbench/profiles/memory.py), on small files written here in heaptrack's format; the real
tracer runs in tests/app/test_explain_memory.py."""

from __future__ import annotations

import gzip
import io
from pathlib import Path

import pytest

from colbench.profiles.heaptrack import DamagedProfile, read_heaptrack
from colbench.profiles.memory import memory_view
from colbench.workers.python.heap_window import MARK_END_BYTES, MARK_START_BYTES

STRINGS = ["/usr/lib/libc.so.6", "/x/pyarrow/libarrow.so.2600", "malloc", "arrow::ConcatenateBuffers(x)",
           "main_loop", "arrow::PoolBuffer::Reserve(long)"]


def heaptrack_text(events: list[str]) -> str:
    lines = ["v 10400 3", "X python -m colbench.worker"]
    lines += [f"s {len(s):x} {s}" for s in STRINGS]
    lines += ["i 1000 2 5",   # ip 1: main_loop in libarrow
              "i 2000 2 4",   # ip 2: ConcatenateBuffers
              "i 3000 2 6",   # ip 3: PoolBuffer::Reserve
              "i 4000 1 3",   # ip 4: malloc in libc
              "i 5000 2"]     # ip 5: unresolved, in libarrow
    lines += ["t 1 0",  # trace 1: main_loop
              "t 2 1",  # trace 2: ConcatenateBuffers < main_loop
              "t 3 2",  # trace 3: PoolBuffer::Reserve < ConcatenateBuffers < main_loop
              "t 4 3",  # trace 4: malloc < PoolBuffer::Reserve < ConcatenateBuffers < main_loop
              "t 4 1",  # trace 5: malloc < main_loop
              "t 5 1"]  # trace 6: unresolved < main_loop
    lines += ["a 64 4",                           # info 0: 100 B by ConcatenateBuffers (through the pool)
              f"a {MARK_START_BYTES:x} 1",        # info 1: the window's start
              f"a {MARK_END_BYTES:x} 1",          # info 2: its end
              "a 10 5",                           # info 3: 16 B by main_loop itself
              "a 8 6"]                            # info 4: 8 B by code without symbols
    return "\n".join(lines + events) + "\n"


WINDOW = ["+ 0",          # before the window (the worker's start): not the call's
          "+ 1", "- 1",   # the start marker
          "- 0",          # freeing what was allocated before the window: not counted
          "+ 0", "+ 3", "+ 4",  # 100 + 16 + 8 = 124: the peak
          "- 0",          # 24
          "+ 3",          # 40
          "+ 2", "- 2",   # the end marker
          "+ 0"]          # after the window: not the call's


def write(tmp_path: Path, text: str, name: str = "profile.heaptrack.gz") -> Path:
    path = tmp_path / name
    path.write_bytes(gzip.compress(text.encode()))
    return path


def test_the_peak_is_the_calls_live_bytes_at_their_high_water_mark(tmp_path):
    peak = read_heaptrack(write(tmp_path, heaptrack_text(WINDOW)))
    assert peak.peak_bytes == 124 and peak.churn_bytes == 140 and peak.allocations == 4
    by_leaf: dict[str, int] = {}
    for stack, size in peak.stacks.items():
        by_leaf[stack[-1][0]] = by_leaf.get(stack[-1][0], 0) + size
    assert by_leaf == {"malloc": 116, "": 8}
    assert sum(peak.stacks.values()) == peak.peak_bytes
    main_loop_only = next(s for s, size in peak.stacks.items() if size == 16)
    assert [f[0] for f in main_loop_only] == ["main_loop", "malloc"]  # root first


def test_stacks_end_at_the_allocating_function_named_as_explain_names_it(tmp_path):
    view = memory_view(read_heaptrack(write(tmp_path, heaptrack_text(WINDOW))), "a")
    assert view.unit == "B" and view.total == 124
    leaves = {stack[-1]: size for stack, size in view.folded.items()}
    named = {(f.name, f.object): size for f, size in leaves.items()}
    # malloc and the pool's Reserve are the allocator: the bytes belong to who asked for them
    assert named == {("arrow::ConcatenateBuffers(x)", "libarrow.so"): 100, ("main_loop", "libarrow.so"): 16,
                     ("[no symbols] libarrow.so", "libarrow.so"): 8}
    assert [s.library for s in view.stripped] == ["libarrow.so"]


@pytest.mark.parametrize(("events", "text", "why"), [
    (WINDOW, None, None),
    (["+ 0", "+ 3"], None, "no timed call in it"),
    (WINDOW[:6], None, "ends inside the timed call"),
    (None, "hello\n", "no heaptrack data"),
    (None, "s 3 abc\ni 1000 9 9\n", "is not heaptrack's data"),
])
def test_a_damaged_file_is_one_line(tmp_path, events, text, why):
    path = write(tmp_path, text if text is not None else heaptrack_text(events))
    if why is None:
        read_heaptrack(path)
        return
    with pytest.raises(DamagedProfile, match=why):
        read_heaptrack(path)


def test_a_truncated_file_is_damaged(tmp_path):
    whole = gzip.compress(heaptrack_text(WINDOW).encode() * 50)
    path = tmp_path / "profile.heaptrack.gz"
    path.write_bytes(whole[: len(whole) // 2])
    with pytest.raises(DamagedProfile, match="not a complete gzip file"):
        read_heaptrack(path)
    zst = tmp_path / "profile.heaptrack.zst"
    zst.write_bytes(b"\x28\xb5\x2f\xfd" + b"\0" * 40)
    with pytest.raises(DamagedProfile, match="zstd"):
        read_heaptrack(zst)


def test_a_profile_that_decompresses_past_its_bound_is_refused_before_it_is_held(tmp_path):
    """Issue 48: a 174 KB memory profile with 3 GB of zeros after its data held 6 GB for 26 s. Every profile read
    is bounded after decompression: a line past MAX_LINE_BYTES or a file past MAX_PROFILE_BYTES is refused."""
    import time
    import zlib

    from colbench.profiles import bounded

    path = tmp_path / "profile.heaptrack.gz"
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)  # gzip framing
    with path.open("wb") as out:
        out.write(packer.compress(heaptrack_text(WINDOW).encode()))
        zeros = b"\0" * (1 << 20)
        for _ in range(64):  # 64 MiB of zeros on one line, a few KB on disk
            out.write(packer.compress(zeros))
        out.write(packer.flush())
    assert path.stat().st_size < 200_000
    started = time.monotonic()
    with pytest.raises(DamagedProfile, match="a line longer than"):
        read_heaptrack(path)
    assert time.monotonic() - started < 10
    lines = [b"x" * 100 + b"\n"] * 50
    with pytest.raises(DamagedProfile, match="more than 1,000 bytes once decompressed"):
        list(bounded.bounded_lines(io.BytesIO(b"".join(lines)), "p", DamagedProfile, max_bytes=1000))
    assert len(list(bounded.bounded_lines(io.BytesIO(b"".join(lines)), "p", DamagedProfile))) == 50
