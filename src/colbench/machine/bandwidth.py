"""Machine figures a run measures once, to judge its results against: memory-copy bandwidth.

Method: copy a 256 MiB buffer into another with numpy (one `memcpy` per thread over equal slices, threads
started together), best of 5 repetitions after one untimed pass; bandwidth = bytes copied × 8 / seconds.
The read bandwidth folds the same amount in place (xor over 64-bit words, the ipc-bandwidth scan kernel):
a case that really touches every byte it counts cannot beat it, unless its data sits in a CPU cache.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import numpy as np

from colbench.model.run_parts import MachineBandwidth

SIZE = 256 << 20
REPEATS = 5


def _best_seconds(threads: int, count: int, work: Callable[[slice], object]) -> float:
    """Best wall time of `work` over `threads` equal slices of `count` items, threads started together."""
    slices = [slice(i * count // threads, (i + 1) * count // threads) for i in range(threads)]

    def run(part: slice, barrier: threading.Barrier) -> None:
        barrier.wait()
        work(part)

    best = float("inf")
    for repeat in range(REPEATS + 1):
        barrier = threading.Barrier(threads + 1)
        workers = [threading.Thread(target=run, args=(part, barrier)) for part in slices]
        for worker in workers:
            worker.start()
        barrier.wait()
        started = time.perf_counter()
        for worker in workers:
            worker.join()
        elapsed = time.perf_counter() - started
        if repeat:  # the first pass faults the pages in
            best = min(best, elapsed)
    return best


def memcpy_gbps(threads: int = 1, size: int = SIZE) -> float:
    src = np.ones(size, dtype=np.uint8)
    dst = np.empty_like(src)
    return size * 8 / _best_seconds(threads, size, lambda part: np.copyto(dst[part], src[part])) / 1e9


def read_gbps(threads: int = 1, size: int = SIZE) -> float:
    """Read-only bandwidth: xor-fold a 256 MiB buffer in place (the scan kernel of ipc-bandwidth)."""
    data = np.ones(size // 8, dtype=np.uint64)
    return size * 8 / _best_seconds(threads, len(data), lambda part: np.bitwise_xor.reduce(data[part])) / 1e9


def measure(thread_counts: list[int]) -> MachineBandwidth:
    """The bandwidths at each thread count, as a run record keeps them (`Run.calibration`)."""
    counts = sorted(set(thread_counts))
    return MachineBandwidth(
        memcpy_gbps={str(t): round(memcpy_gbps(t), 2) for t in counts},
        read_gbps={str(t): round(read_gbps(t), 2) for t in counts},
        method="numpy over 256 MiB split across T threads started together, best of 5 after one warm pass: "
               "memcpy = copyto (bits copied / s); read = xor-fold in place (bits read / s)",
    )
