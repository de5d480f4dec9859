"""The language runtimes a worker can run in — python, r, java — known in this one place.

Each runtime says how to start its worker (the command the case and result paths are appended to), whether this
machine can run it (and the command that fixes it when not), how to set it up, its display name, the start-up
time assumed before this machine has measured one, and — for R and Java — what `--env NAME=<runtime>:SPEC`
pins and how a pinned worker is made ready. Like asv's environment plugins, the rest of colbench asks the
registry and never tests a runtime's name itself.

The R and Java workers' files are package data (colbench/workers/, runtimes/sources.py); the Java jars are built
into $COLBENCH_HOME (runtimes/java.py).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from colbench.runtimes import java, r
from colbench.runtimes.pins import PinError, Pins
from colbench.runtimes.sources import WorkerSourcesError

Say = Callable[[str], None]


class RuntimeUnavailable(RuntimeError):
    """This machine cannot start the runtime's worker; the message says how to fix it."""


def _quiet(_: str) -> None:
    pass


@dataclass(frozen=True)
class Runtime:
    name: str
    display: str
    #: the command line of a worker, given the Python interpreter of the chosen environment and the environment's
    #: pins for this runtime ({} outside a pinned environment)
    command: Callable[[str, Mapping[str, str]], list[str]]
    #: why this machine cannot run the worker now, with the command that fixes it; None when it can
    unavailable: Callable[[], str | None]
    #: the script (under the workers' files) that `colbench setup NAME` runs, if any
    setup_script: str | None = None
    #: a guess used only until this machine has measured a start-up for the runtime
    assumed_startup_s: float = 1.0
    #: `--env NAME=<runtime>:SPEC`: check SPEC and make its worker ready; returns the versions it pins
    pin: Callable[[Pins, Say], dict[str, str]] | None = None
    #: make the worker for these pins ready before a run (build what is missing); raises RuntimeUnavailable
    prepare: Callable[[Mapping[str, str], Say], None] | None = None
    #: `--env NAME=<runtime>:SPEC` checked and resolved without making anything (`run --dry-run`): the versions it
    #: pins, or a PinError when one cannot exist
    check_pin: Callable[[Pins], dict[str, str]] | None = None
    #: why `--measure instructions` cannot count this worker's timed calls; None when it can
    instructions_unsupported: str | None = None

    def worker_command(self, python: str = sys.executable, pins: Mapping[str, str] | None = None) -> list[str]:
        reason = self.unavailable()
        if reason:
            raise RuntimeUnavailable(reason)
        try:
            return self.command(python, pins or {})
        except (java.JavaWorkerError, WorkerSourcesError) as exc:
            raise RuntimeUnavailable(str(exc)) from None

    def pin_spec(self, pins: Pins, say: Say = _quiet) -> dict[str, str]:
        if self.pin is None:
            raise PinError(f"{self.display} environments are not pinned this way")
        return self.pin(pins, say)

    def resolve_spec(self, pins: Pins) -> dict[str, str]:
        """What `pin_spec` would pin, without building or installing anything."""
        if self.check_pin is None:
            raise PinError(f"{self.display} environments are not pinned this way")
        return self.check_pin(pins)

    def make_ready(self, pins: Mapping[str, str] | None = None, say: Say = _quiet) -> None:
        if self.prepare is not None:
            self.prepare(pins or {}, say)


def _python_command(python: str, _pins: Mapping[str, str]) -> list[str]:
    return [python, "-m", "colbench.worker"]


def _java_prepare(pins: Mapping[str, str], say: Say) -> None:
    try:
        java.build_jar(pins.get("arrow") or java.default_arrow_version(), say=say)
    except (java.JavaWorkerError, WorkerSourcesError) as exc:
        raise RuntimeUnavailable(str(exc)) from None


RUNTIMES: dict[str, Runtime] = {
    "python": Runtime("python", "Python", _python_command, lambda: None, assumed_startup_s=0.25),
    "r": Runtime("r", "R", lambda _python, _pins: r.command(), r.unavailable, setup_script="r/install.sh",
                 assumed_startup_s=0.5, pin=lambda pins, _say: r.pin(pins), check_pin=r.pin,
                 instructions_unsupported="the R worker has no callgrind client-request hook yet"),
    "java": Runtime("java", "Java", lambda _python, pins: java.java_command(pins.get("arrow")),
                    java.java_unavailable, assumed_startup_s=1.0, pin=java.pin, prepare=_java_prepare,
                    check_pin=java.check_pin,
                    instructions_unsupported="the Java worker has no callgrind hook, and the JIT compiles on "
                    "background threads at varying times, so its counts would not repeat"),
}


def get_runtime(name: str) -> Runtime:
    try:
        return RUNTIMES[name]
    except KeyError:
        raise RuntimeUnavailable(f"no worker for runtime {name!r}; known: {', '.join(RUNTIMES)}") from None
