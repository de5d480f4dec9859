"""The placebo: busy work of a chosen length, or a chosen way to fail. It tests the runner itself."""

from __future__ import annotations

import os
import sys
import time
from typing import Any, ClassVar

from colbench.model.benchmark import Benchmark, Context, OutputCheck, Params, Work, float_param
from colbench.model.params import Grid, Param, non_negative

ERRORS = ("none", "exception", "segfault", "oom", "hang", "junk", "rt-signal")
#: the real-time signal `error=rt-signal` kills the worker with (SIGRTMIN+6 with glibc): Python has no name for it
RT_SIGNAL = 40
# sha1(b"placebo")[:8], written out so the worker need not import hashlib
_CHECKSUM = "8d6f03c9"


def busy(units: int) -> int:
    """Interpreter-bound integer work, the same instructions every time for a given `units` (the `work` param;
    COLBENCH_EXTRA_WORK borrows it, workers/python/extra_work.py)."""
    acc = 0
    for i in range(units):
        acc = (acc * 31 + i) & 0xFFFF
    return acc


def spin(seconds: float) -> int:
    """Busy-wait (not sleep) so the time is CPU work, as a real benchmark's would be."""
    deadline = time.perf_counter_ns() + int(seconds * 1e9)
    count = 0
    while time.perf_counter_ns() < deadline:
        count += 1
    return count


def _duration(seconds: float) -> str | None:
    return non_negative(seconds) or (None if seconds <= 86_400 else "must be at most 86400 (a day)")


class Placebo(Benchmark):
    name = "placebo"
    description = "Busy work for `duration` seconds, or fail on purpose (`error`): tests the runner."
    engine = "python"
    work_unit = "rows"
    throughput_of = "rows (one a call)"
    work_basis = "rows"
    grid: ClassVar[Grid] = Grid((
        Param("duration", default=(0.01,), type=float, check=_duration, help="seconds of busy work (at most a day)"),
        Param("error", default=("none",), choices=ERRORS, help="how to fail: exception, segfault, oom "
              "(allocate until the memory limit), hang (past the timeout), junk (garbage on stdout/stderr), "
              f"rt-signal (killed by signal {RT_SIGNAL})"),
        Param("threads", default=(1,), type=int, check=lambda v: None if v > 0 else "must be > 0"),
        Param("work", default=(0,), type=int, check=non_negative, help="units of deterministic CPU work per "
              "iteration, after the busy wait: the same instructions every time (for --measure instructions)"),
        Param("setup_work", default=(0,), type=int, check=non_negative, help="units of the same work in setup "
              "(untimed)"),
    ))

    def estimate_seconds(self, params: Params) -> float | None:
        return float_param(params, "duration")

    def setup(self, ctx: Context) -> None:
        busy(ctx.param_int("setup_work"))
        ctx.state["hoard"] = []
        # A known slowdown for testing comparisons: `--env slow="@current COLBENCH_PLACEBO_FACTOR=1.06"`
        ctx.state["factor"] = float(os.environ.get("COLBENCH_PLACEBO_FACTOR", "1"))
        if ctx.state["factor"] != 1:
            ctx.warn(f"placebo duration scaled by COLBENCH_PLACEBO_FACTOR={ctx.state['factor']}")
        duration = ctx.param_float("duration")
        if ctx.measure == "instructions" and duration > 0:
            # The spin runs until a wall-clock deadline, so under Valgrind its count is Valgrind's speed.
            ctx.warn(f"placebo duration={duration:g} spins on the wall clock: its instructions measure how fast "
                     "Valgrind ran, not work; give duration=0 (and work=N) to count")

    def run(self, ctx: Context) -> Any:
        error = ctx.param_str("error")
        if error == "exception":
            raise RuntimeError("placebo raised on purpose")
        if error == "segfault":
            import ctypes

            ctypes.string_at(0)
        if error == "rt-signal":
            os.kill(os.getpid(), RT_SIGNAL)
            time.sleep(60)  # the signal is delivered at once; this is never reached
        if error == "oom":
            while True:  # touch every page so RSS really grows
                ctx.state["hoard"].append(bytearray(os.urandom(1)) * (64 << 20))
        if error == "hang":
            while True:
                time.sleep(3600)
        if error == "junk":
            sys.stdout.write('{"status": "ok", "samples": {"wall_s": [0]}}\n\x00\xff garbage \x1b[31m\n')
            sys.stdout.flush()
            sys.stderr.buffer.write(os.urandom(256) + b"\n")
            sys.stderr.flush()
        return spin(ctx.param_float("duration") * ctx.state["factor"]) + busy(ctx.param_int("work"))

    def after_each(self, ctx: Context, output: Any) -> OutputCheck:
        return OutputCheck(rows=1, columns=1, checksum=_CHECKSUM)

    def work(self, ctx: Context) -> Work:
        return Work(rows=1)
