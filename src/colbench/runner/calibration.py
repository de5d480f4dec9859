"""Machine figures a run measures once, to judge its results against: memory-copy bandwidth.

Method: copy a 256 MiB buffer into another with numpy (one `memcpy` per thread over equal slices, threads
started together), best of 5 repetitions after one untimed pass; bandwidth = bytes copied × 8 / seconds.
Each byte is read once and written once, so this is what a read-only scan can at most reach per byte of
input, and a generous ceiling for any case that touches every byte it reports.
"""

from __future__ import annotations

import threading
import time
from typing import Any

import numpy as np

SIZE = 256 << 20
REPEATS = 5


def memcpy_gbps(threads: int = 1, size: int = SIZE) -> float:
    src = np.ones(size, dtype=np.uint8)
    dst = np.empty_like(src)
    slices = [slice(i * size // threads, (i + 1) * size // threads) for i in range(threads)]

    def copy(part: slice, barrier: threading.Barrier) -> None:
        barrier.wait()
        np.copyto(dst[part], src[part])

    best = float("inf")
    for repeat in range(REPEATS + 1):
        barrier = threading.Barrier(threads + 1)
        workers = [threading.Thread(target=copy, args=(part, barrier)) for part in slices]
        for worker in workers:
            worker.start()
        barrier.wait()
        started = time.perf_counter()
        for worker in workers:
            worker.join()
        elapsed = time.perf_counter() - started
        if repeat:  # the first pass faults the pages in
            best = min(best, elapsed)
    return size * 8 / best / 1e9


def measure(thread_counts: list[int]) -> dict[str, Any]:
    return {
        "memcpy_gbps": {str(t): round(memcpy_gbps(t), 2) for t in sorted(set(thread_counts))},
        "method": "numpy copyto of 256 MiB split over T threads, best of 5 after one warm pass; bits copied / s",
    }
