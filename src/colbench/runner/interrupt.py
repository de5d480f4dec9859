"""SIGINT, SIGTERM and SIGHUP stop a run cleanly: the running worker's group is killed, the run is marked
interrupted, and the message says how to resume it. SIGHUP is what a closed terminal (or a dropped ssh session)
sends: the run stops as on Ctrl-C rather than dying with no record of where it was (run under `nohup` to keep it
going instead: a signal ignored when colbench starts stays ignored).

While a run executes, these signals raise `Interrupted` in the main thread, wherever it is (usually blocked
waiting for a worker, which isolate.py then kills and reaps). Inside `deferred()` (storing a finished result)
a signal waits until the block ends, so a completed result is never half-written. Later signals of the same
stop are ignored: the clean-up is short and must not be interrupted itself (`kill -9` still works).
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from types import FrameType

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class Interrupted(BaseException):  # noqa: N818 — like KeyboardInterrupt, it is a request, not an error
    """colbench received SIGINT, SIGTERM or SIGHUP. `exit_code` is the shell's convention (130, 143, 129)."""

    def __init__(self, signum: int, detail: str | None = None) -> None:
        self.signum = signum
        self.detail = detail
        super().__init__(detail or f"interrupted by {signal_name(signum)}")

    @property
    def exit_code(self) -> int:
        return 128 + self.signum

    def __str__(self) -> str:
        return self.detail or f"interrupted by {signal_name(self.signum)}"


def signal_name(signum: int) -> str:
    """SIGTERM, SIGRTMIN+6, or 'signal 99': every number gets a name, none raises."""
    try:
        return signal.Signals(signum).name
    except ValueError:
        pass
    low, high = getattr(signal, "SIGRTMIN", None), getattr(signal, "SIGRTMAX", None)
    if low is not None and high is not None and low < signum < high:
        return f"SIGRTMIN+{signum - low}"
    return f"signal {signum}"


class StopSignals:
    """The handlers installed by `stop_on_signals()`."""

    def __init__(self) -> None:
        self._deferring = 0
        self._pending: int | None = None
        self._raised = False

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        if self._raised:
            return
        if self._deferring:
            self._pending = self._pending or signum
            return
        self._raised = True
        raise Interrupted(signum)

    @contextlib.contextmanager
    def deferred(self) -> Iterator[None]:
        """A block no stop signal interrupts; one that arrived meanwhile is raised when it ends."""
        self._deferring += 1
        try:
            yield
        finally:
            self._deferring -= 1
        if not self._deferring and self._pending is not None and not self._raised:
            self._raised = True
            raise Interrupted(self._pending)


@contextlib.contextmanager
def stop_on_signals() -> Iterator[StopSignals]:
    """Raise `Interrupted` on SIGINT/SIGTERM inside the block (main thread only; elsewhere nothing changes).
    A signal that was set to be ignored when colbench started stays ignored."""
    stop = StopSignals()
    if threading.current_thread() is not threading.main_thread():
        yield stop
        return
    # A signal the parent set to be ignored (a shell's background job ignores SIGINT, nohup SIGHUP) stays ignored.
    previous = {signum: signal.signal(signum, stop._handle) for signum in STOP_SIGNALS
                if signal.getsignal(signum) is not signal.SIG_IGN}
    try:
        yield stop
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
