"""Tracing only the timed call's allocations under heaptrack: the worker's side of a memory profile.

For `colbench explain --metric memory` and `run --profile-memory` the orchestrator starts the worker under
heaptrack (runner/memory_profile.py), which LD_PRELOADs its library and records every malloc-family call with
its native call stack; colbench's pool shim (preloaded too) reports Arrow's own pools (mimalloc, jemalloc), which
no malloc interposer sees, through heaptrack's API. `WINDOW_VAR` set means: pause heaptrack at once (imports,
data, setup and warm-ups are not recorded), and record only around the timed call:

- `gc.collect()`, then VmHWM is reset to the current RSS (`/proc/self/clear_refs` "5"), so the call's own peak
  RSS can be read after it (the figure the traced peak is checked against);
- `heaptrack_resume()`, a marker allocation (`MARK_START_BYTES` at a fake address, reported and freed through
  heaptrack's API: it tells the reader where the window starts), the call, the end marker, `heaptrack_pause()`.

Arrow's default pool must be one heaptrack sees. The shim sees a pool only where libarrow calls its backend through
a symbol the shim can take over (jemalloc in pyarrow 9.0-22.0 and 25.0-26.0, mimalloc in 25.0-26.0: pyarrow 18-24's
default mimalloc is linked in with hidden symbols, docs/explain.md). `see_arrow_pool` asks the pool for
one buffer before the timed call and reads the shim's count of the blocks it took over: none means the pool is
invisible, and the worker switches Arrow's default pool to the system pool (which heaptrack sees directly, since it
allocates with posix_memalign) for the rest of the process. The bytes the call holds at its peak are the same
whichever pool serves them (the traced peak over the pool's own peak is 1.00-1.01 for all three pools, measured in
docs/explain.md); the worker reports the pool it traced, and `explain` says so.

Only the standard library is imported: this module is on the worker's path.
"""

from __future__ import annotations

import ctypes
import gc
import os
from collections.abc import Callable
from typing import Any

WINDOW_VAR = "COLBENCH_HEAPTRACK_WINDOW"
#: sizes of the two marker allocations: improbable sizes (the reader drops them from every figure)
MARK_START_BYTES = 0x0C01_BE4C_0001
MARK_END_BYTES = 0x0C01_BE4C_0002
_MARK_ADDRESS = 0x10  # never a real allocation: the first page is unmapped


class HeapWindowUnavailable(RuntimeError):
    """The worker was asked for a memory profile but heaptrack is not preloaded (a one-line reason)."""


def _status(field: str) -> int | None:
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


class HeapWindow:
    def __init__(self) -> None:
        scope = ctypes.CDLL(None)
        try:
            self._pause, self._resume = scope.heaptrack_pause, scope.heaptrack_resume
            self._malloc, self._free = scope.heaptrack_malloc, scope.heaptrack_free
        except AttributeError:
            raise HeapWindowUnavailable("a memory profile was asked for, but this worker does not run under "
                                        "heaptrack (start it with `colbench explain --metric memory`)") from None
        self._malloc.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
        self._free.argtypes = [ctypes.c_void_p]
        self._pause()
        self._rss_first: int | None = None

    def before_first_call(self) -> None:
        """The RSS after setup, before the first (warm-up) call: the process without any call's memory."""
        gc.collect()
        self._rss_first = _status("VmRSS")

    def _mark(self, size: int) -> None:
        self._malloc(_MARK_ADDRESS, size)
        self._free(_MARK_ADDRESS)

    def trace(self, call: Callable[[], Any]) -> tuple[dict[str, float], Any]:
        """Run `call()` with heaptrack recording; the RSS before it and its own peak RSS, and what it returned."""
        gc.collect()
        rss_before = _status("VmRSS")
        reset = True
        try:
            with open("/proc/self/clear_refs", "w") as refs:  # VmHWM := VmRSS (Linux >= 4.0)
                refs.write("5")
        except OSError:
            reset = False
        self._resume()
        self._mark(MARK_START_BYTES)
        try:
            output = call()
        finally:
            self._mark(MARK_END_BYTES)
            self._pause()
        metrics: dict[str, float] = {}
        peak = _status("VmHWM")
        if self._rss_first is not None:
            metrics["rss_before_first_call_bytes"] = float(self._rss_first)
        if rss_before is not None:
            metrics["rss_before_call_bytes"] = float(rss_before)
        if reset and peak is not None:
            metrics["call_peak_rss_bytes"] = float(peak)
        return metrics, output


def see_arrow_pool(pyarrow: Any) -> str | None:
    """Make the Arrow pool the timed call allocates from one heaptrack sees: None when the default pool is seen
    (the system pool, or one whose blocks colbench's preloaded shim takes over), else the pool switched to."""
    pool = pyarrow.default_memory_pool()
    if getattr(pool, "backend_name", None) == "system":
        return None
    try:
        taken = ctypes.CDLL(None).colbench_poolshim_taken
    except AttributeError:  # the shim is not preloaded: of Arrow's pools, heaptrack sees the system one only
        taken = None
    if taken is not None:
        taken.restype = ctypes.c_long
        before = taken()
        probe = pyarrow.allocate_buffer(4096, memory_pool=pool)
        seen = taken() > before
        del probe
        if seen:
            return None
    pyarrow.set_memory_pool(pyarrow.system_memory_pool())
    return "system"


def open_window() -> HeapWindow | None:
    """The heap window when the orchestrator asked for one (`WINDOW_VAR`), paused from here on."""
    return HeapWindow() if os.environ.get(WINDOW_VAR) else None
