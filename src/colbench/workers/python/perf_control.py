"""Sampling only the timed call under `perf record`: the worker's side of perf's control FIFOs.

For `colbench explain --profiler perf` the orchestrator starts the worker as the workload of
`perf record --control=fifo:CTL,ACK --delay=-1 …` (runner/perf_profile.py): events start disabled, and perf
enables or disables them when a process writes `enable` / `disable` to the CTL FIFO, answering `ack` on ACK
(perf-record(1), "--control"). The worker enables right before the timed call and disables right after it, so
imports, data generation, setup and warm-ups are not sampled. `CTL_VAR` names the two FIFOs. On Python 3.12+ the
first enable also switches CPython's perf trampolines on, and the last disable moves their map into the folder
`python_names.FOLDER_VAR` names (workers/python/python_names.py): perf's samples then name Python functions.

Only the standard library is imported: this module is on the worker's path.
"""

from __future__ import annotations

import os
from pathlib import Path

from colbench.workers.python.python_names import FOLDER_VAR, PythonNames

CTL_VAR = "COLBENCH_PERF_CTL"
ACK_TIMEOUT_S = 10.0


class PerfControlError(RuntimeError):
    """perf did not answer on its control FIFO."""


class PerfControl:
    def __init__(self, ctl: str, ack: str) -> None:
        # perf holds both FIFOs open read-write, so neither open blocks
        self._ctl = os.open(ctl, os.O_WRONLY | os.O_CLOEXEC)
        self._ack = os.open(ack, os.O_RDONLY | os.O_CLOEXEC)
        self.enabled = False
        folder = os.environ.get(FOLDER_VAR)
        self._names = PythonNames(Path(folder) if folder else None)

    def _send(self, command: bytes) -> None:
        import select

        os.write(self._ctl, command + b"\n")
        ready, _, _ = select.select([self._ack], [], [], ACK_TIMEOUT_S)
        if not ready or not os.read(self._ack, 64).startswith(b"ack"):
            raise PerfControlError(f"perf did not acknowledge {command.decode()!r} on its control FIFO")

    def enable(self) -> None:
        self._names.start()
        self._send(b"enable")
        self.enabled = True

    def disable(self) -> None:
        try:
            if self.enabled:
                self.enabled = False
                self._send(b"disable")
        finally:  # the map leaves /tmp even when perf went away
            self._names.keep()


def open_control() -> PerfControl | None:
    """The control of the perf that runs this worker, when `CTL_VAR` names its FIFOs (`CTL:ACK`)."""
    text = os.environ.get(CTL_VAR, "")
    if not text:
        return None
    ctl, _, ack = text.partition(":")
    return PerfControl(ctl, ack)
