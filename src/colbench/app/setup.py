"""`colbench setup r|java`: make the R worker's packages present (the system's package manager, through the
worker's setup script) and build the Java worker's jars into $COLBENCH_HOME."""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from colbench.app.errors import UsageError
from colbench.processes import run_bounded

#: installing R's packages from source takes minutes; an hour is a setup that hangs (stopped, with its children)
SETUP_TIMEOUT_S = 3600.0

def setup_r(check: bool = False) -> int:
    """Run the R worker's setup script (`check`: only report whether R is ready); returns its exit code. Its output
    goes straight to the terminal."""
    from colbench.runtimes import get_runtime
    from colbench.runtimes.sources import WorkerSourcesError, worker_file

    try:
        script = worker_file(*str(get_runtime("r").setup_script).split("/"))
    except WorkerSourcesError as exc:
        raise UsageError(str(exc)) from None
    try:
        return run_bounded(["bash", str(script), *(["--check"] if check else [])], timeout_s=SETUP_TIMEOUT_S,
                           what="the R setup script", capture=False).returncode
    except subprocess.TimeoutExpired as exc:
        raise UsageError(str(exc)) from None


@dataclass(frozen=True)
class JavaWorker:
    arrow_version: str
    jar: Path
    #: it was there already, built from the current sources
    cached: bool


def setup_java(arrow_versions: Sequence[str] = (), force: bool = False,
               say: Callable[[str], None] = lambda _: None,
               on_worker: Callable[[JavaWorker], None] = lambda _: None) -> list[JavaWorker]:
    """The Java worker's jar for each Arrow Java version (none given: the worker's own, pom.xml's), built with Maven
    when missing or stale (or `force`); `say` hears Maven's progress, `on_worker` each worker as it is ready."""
    from colbench.runtimes.java import JavaWorkerError, build_jar, default_arrow_version, ready_jar

    workers = []
    try:
        for version in arrow_versions or [default_arrow_version()]:
            cached = None if force else ready_jar(version)
            worker = JavaWorker(version, cached, True) if cached is not None else \
                JavaWorker(version, build_jar(version, force=force, say=say), False)
            on_worker(worker)
            workers.append(worker)
    except JavaWorkerError as exc:
        raise UsageError(str(exc)) from None
    return workers
