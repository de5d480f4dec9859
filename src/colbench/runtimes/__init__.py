"""The language runtimes a worker can run in — python, r, java — known in this one place.

Each runtime says how to start its worker (the command the case and result paths are appended to), whether this
machine can run it (and the command that fixes it when not), how to set it up, its display name, and the start-up
time assumed before this machine has measured one. Like asv's environment plugins, the rest of colbench asks the
registry and never tests a runtime's name itself.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path


class RuntimeUnavailable(RuntimeError):
    """This machine cannot start the runtime's worker; the message says how to fix it."""


def workers_dir() -> Path:
    """The folder holding the R and Java workers (`COLBENCH_WORKERS_DIR` overrides it)."""
    configured = os.environ.get("COLBENCH_WORKERS_DIR")
    if configured:
        return Path(configured)
    return Path(__file__).resolve().parents[3] / "workers"


@dataclass(frozen=True)
class Runtime:
    name: str
    display: str
    #: the command line of a worker, given the Python interpreter of the chosen environment
    command: Callable[[str], list[str]]
    #: why this machine cannot run the worker now, with the command that fixes it; None when it can
    unavailable: Callable[[], str | None]
    #: the script (under workers_dir()) that `colbench setup NAME` runs, if any
    setup_script: str | None = None
    #: a guess used only until this machine has measured a start-up for the runtime
    assumed_startup_s: float = 1.0
    #: why `--measure instructions` cannot count this worker's timed calls; None when it can
    instructions_unsupported: str | None = None

    def worker_command(self, python: str = sys.executable) -> list[str]:
        reason = self.unavailable()
        if reason:
            raise RuntimeUnavailable(reason)
        return self.command(python)


def _python_command(python: str) -> list[str]:
    return [python, "-m", "colbench.worker"]


def _r_script() -> Path:
    return workers_dir() / "r" / "worker.R"


def _r_unavailable() -> str | None:
    if shutil.which("Rscript") is None:
        return "R is not installed: `colbench setup r`"
    if not _r_script().exists():
        return f"the R worker script {_r_script()} is missing: reinstall colbench"
    return None


def _r_command(_python: str) -> list[str]:
    return [shutil.which("Rscript") or "Rscript", "--vanilla", str(_r_script())]


def java_jar() -> Path:
    return workers_dir() / "java" / "target" / "colbench-worker.jar"


def _java_unavailable() -> str | None:
    if shutil.which("java") is None:
        return "Java is not installed: install a JDK 17+, then `colbench setup java`"
    if not java_jar().exists():
        return "the Java worker is not built: `colbench setup java`"
    return None


def _java_command(_python: str) -> list[str]:
    options = workers_dir() / "java" / "jvm.options"
    flags = [line.strip() for line in options.read_text().splitlines()
             if line.strip() and not line.startswith("#")] if options.exists() else []
    return [shutil.which("java") or "java", *flags, "-jar", str(java_jar())]


RUNTIMES: dict[str, Runtime] = {
    "python": Runtime("python", "Python", _python_command, lambda: None, assumed_startup_s=0.25),
    "r": Runtime("r", "R", _r_command, _r_unavailable, setup_script="r/install.sh", assumed_startup_s=0.5,
                 instructions_unsupported="the R worker has no callgrind client-request hook yet"),
    "java": Runtime("java", "Java", _java_command, _java_unavailable, setup_script="java/build.sh",
                    assumed_startup_s=1.0,
                    instructions_unsupported="the Java worker has no callgrind hook, and the JIT compiles on "
                    "background threads at varying times, so its counts would not repeat"),
}


def get_runtime(name: str) -> Runtime:
    try:
        return RUNTIMES[name]
    except KeyError:
        raise RuntimeUnavailable(f"no worker for runtime {name!r}; known: {', '.join(RUNTIMES)}") from None
