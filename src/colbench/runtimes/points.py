"""The environment of each point a bisect measures: a release, a wheel or a commit, built once and reused.

A Python point is a uv environment (runtimes/python.py) with the point's requirement in place of the project's
(a wheel's path, `pkg @ git+file:///repo@sha`) plus any requirements given for every point (`--with "numpy<2"`);
a release from an index is a worker-only environment on the newest installed Python its wheels support, with the
companions of its era (runtimes/era.py); a Java point is the Java worker built against that Arrow Java release
(`java:arrow==V`).
Building is cached twice: on disk by the environment key (as for `--env`), and here per point for the whole
search, so a point is resolved at most once per bisect. A point that cannot be built keeps its one-line cause.
"""

from __future__ import annotations

import contextvars
import os
import queue
import re
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from colbench.model.env_request import EnvError, EnvRequest, pins_package, release_request
from colbench.model.packages import canonical_name
from colbench.model.release import Release
from colbench.model.run_config import EnvChoice
from colbench.paths import NAME_PATTERN
from colbench.runtimes.builders import build_error_line as build_error_line
from colbench.runtimes.builders import builder_for, uv_builder
from colbench.runtimes.builders import one_line as one_line


@dataclass(frozen=True)
class Point:
    """`label`: what --good/--bad name and tables show; `requirement`: what is installed (for Java, the Arrow Java
    version); `runtime`: "python" or "java"."""

    label: str
    requirement: str
    runtime: str = "python"
    #: a release listed from an index (its wheels' Python, its upload): built by `runtimes.era.recipe`
    release: Release | None = None
    package: str = ""


def env_name(label: str) -> str:
    """An environment name (letters, digits, '.', '_', '-') for a point's label: versions are already one."""
    name = re.sub(r"[^A-Za-z0-9._-]", "-", label).strip("-._")[:64] or "point"
    return name if NAME_PATTERN.fullmatch(name) else f"p{name}"[:64]


#: what the import check says of a release built against NumPy 1.x (runtimes/python.py `_smoke_test`)
_NUMPY_1 = "built against NumPy 1.x"
NUMPY_1_PIN = "numpy<2"


@dataclass
class PointEnvironments:
    """Builds (or finds) each point's environment once; remembers what failed and why, and the seconds it took.

    A release built against NumPy 1.x (pyarrow before 16 declares `numpy>=1.16` but its wheels do not import
    under NumPy 2) is built again with `numpy<2`, unless the extra requirements pin numpy already; `notes` says
    which points got it, and `differences` shows what else changed between two points."""

    extra: tuple[str, ...] = ()
    say: Callable[[str], None] = lambda _: None
    #: environment variables for every point's workers (`--var KEY=VALUE`)
    variables: dict[str, str] = field(default_factory=dict)
    #: indexes uv searches before its default one (`--index URL`)
    indexes: tuple[str, ...] = ()
    #: what the benchmarks measured at every point need to be imported (`EnvRequest.benchmark_requirements`)
    needs: tuple[str, ...] = ()
    built: dict[str, EnvChoice] = field(default_factory=dict)
    failed: dict[str, str] = field(default_factory=dict)
    notes: dict[str, str] = field(default_factory=dict)
    #: label → the environment's resolved versions, of built points and of points read from stored runs
    versions: dict[str, dict[str, str]] = field(default_factory=dict)
    seconds: float = 0.0
    ahead_seconds: float = 0.0
    _guard: threading.Lock = field(default_factory=threading.Lock)
    _locks: dict[str, threading.Lock] = field(default_factory=dict)

    def request(self, point: Point, extra: tuple[str, ...] | None = None) -> EnvRequest:
        """What the point asks for: its release (built by its era's recipe), its wheel, commit or requirement with the
        extra requirements, or for Java that Arrow Java's worker; with the variables of every point."""
        name, extra = env_name(point.label), self.extra if extra is None else extra
        if point.runtime == "java":
            return EnvRequest(name, "java", variables=dict(self.variables), pins=(("arrow", point.requirement),))
        if point.release is not None:
            return release_request(name, point.package, point.release, extra=extra, variables=self.variables,
                                   indexes=self.indexes).for_benchmarks(self.needs)
        return EnvRequest(name, "uv", (point.requirement,), variables=dict(self.variables),
                          extra_requirements=extra, indexes=self.indexes, benchmark_requirements=self.needs)

    def _release(self, point: Point, say: Callable[[str], None]) -> EnvChoice:
        """A release on its Python with the companions of its era; as of today under the known constraints when that
        day's companions do not resolve or install (a companion without a wheel for that Python yet)."""
        request, uv = self.request(point), uv_builder()
        made = uv.recipe(request)
        try:
            return uv.build(request, say)
        except EnvError as exc:
            if made is None or not made.as_of or not str(exc).startswith(("resolving", "installing")):
                raise  # the release itself does not import: no other day's companions change that
            cause = build_error_line(str(exc), 160)
            self.notes[point.label] = f"companions as of today: as of {made.as_of[:10]} they did not build ({cause})"
        try:
            return uv.build(request, say, dated=False)
        except EnvError as exc:
            if _NUMPY_1 not in str(exc) or self._numpy_pinned():
                raise
        self.notes[point.label] = f"{NUMPY_1_PIN} (built against NumPy 1.x)"
        return uv.build(self.request(point, (*self.extra, NUMPY_1_PIN)), say, dated=False)

    def _numpy_pinned(self) -> bool:
        return pins_package(self.extra, "numpy")

    def get(self, point: Point, *, ahead: bool = False) -> EnvChoice | None:
        """The point's environment, or None when it cannot be built (`failed[label]` says why). One build per
        point: a caller that asks for a point being built (ahead, on another thread) waits for that build, and the
        wait is what counts in `seconds`; builds ahead count in `ahead_seconds`."""
        started = time.monotonic()
        with self._lock_of(point.label):
            try:
                if point.label not in self.built and point.label not in self.failed:
                    self._build(point, ahead)
            finally:
                if ahead:
                    self.ahead_seconds += time.monotonic() - started
                else:
                    self.seconds += time.monotonic() - started
        return self.built.get(point.label)

    def _lock_of(self, label: str) -> threading.Lock:
        with self._guard:
            return self._locks.setdefault(label, threading.Lock())

    def _build(self, point: Point, ahead: bool) -> None:
        say = self.say if not ahead else (lambda text: self.say(f"{text} (built ahead, beside the measuring)"))
        try:
            if point.release is not None:
                env = self._release(point, say)
            else:
                try:
                    env = builder_for(self.request(point)).build(self.request(point), say=say)
                except EnvError as exc:
                    if point.runtime == "java" or _NUMPY_1 not in str(exc) or self._numpy_pinned():
                        raise
                    env = uv_builder().build(self.request(point, (*self.extra, NUMPY_1_PIN)), say)
                    self.notes[point.label] = f"{NUMPY_1_PIN} (built against NumPy 1.x)"
        except EnvError as exc:
            self.failed[point.label] = f"does not install: {build_error_line(str(exc))}"
            return
        self.built[point.label] = env
        self.versions[point.label] = _with_python(env) if env.runtime == "python" else {}

    def adopt(self, label: str, env: EnvChoice) -> None:
        """A point's environment as a stored run recorded it (a resumed search that measures nothing again): its
        versions and notes count, though nothing is built."""
        if env.runtime != "python":
            return
        self.versions.setdefault(label, _with_python(env))
        if NUMPY_1_PIN in (env.spec or "").split() and NUMPY_1_PIN not in self.extra:
            self.notes.setdefault(label, f"{NUMPY_1_PIN} (built against NumPy 1.x)")

    def differences(self, a: str, b: str, package: str) -> list[str]:
        """What else differs between two built points' environments ("numpy 1.26.4 → 2.3.5"), the bisected
        package and colbench left out: a change found between them may come from these too."""
        left, right = self.versions.get(a), self.versions.get(b)
        if not left or not right:
            return []
        skip = {canonical_name(package), "colbench"}
        return [f"{name} {left.get(name, '-')} → {right.get(name, '-')}" for name in sorted(set(left) | set(right))
                if name not in skip and left.get(name) != right.get(name)]


def _with_python(env: EnvChoice) -> dict[str, str]:
    """An environment's resolved versions and its interpreter's: a step between two Pythons says so."""
    return {**env.resolved, **({"python": env.interpreter} if env.interpreter else {})}


class AheadBuilder:
    """Builds the environments of the points a search may measure next while the current step is measured, on CPUs
    the measuring worker is not pinned to (the builder thread's affinity, which uv and its children inherit). When
    the worker needs every CPU there are, nothing is built ahead: never beside a measurement on the same CPU."""

    def __init__(self, envs: PointEnvironments, worker_cpus: Sequence[int] | None) -> None:
        self.envs = envs
        try:
            allowed = set(os.sched_getaffinity(0))
        except AttributeError:  # pragma: no cover - not Linux
            allowed = set()
        self.cpus = sorted(allowed - set(worker_cpus or allowed))
        self._queue: queue.Queue[Point | None] = queue.Queue()
        self._thread: threading.Thread | None = None

    @property
    def possible(self) -> bool:
        return bool(self.cpus)

    def want(self, points: Sequence[Point]) -> None:
        """Build these (in order) when there is a free CPU; points built, failed or already queued are skipped."""
        if not self.possible:
            return
        for point in points:
            if point.label not in self.envs.built and point.label not in self.envs.failed:
                self._queue.put(point)
        if self._thread is None:
            # the builds run under the caller's deadline (colbench.processes.deadline_at) too: its context goes along
            self._thread = threading.Thread(target=contextvars.copy_context().run, args=(self._work,),
                                            name="colbench-build-ahead", daemon=True)
            self._thread.start()

    def close(self) -> None:
        """Drop what is queued and wait for a build under way, so none is cut off when colbench exits."""
        if self._thread is None:
            return
        while True:
            try:
                self._queue.get_nowait()
            except queue.Empty:
                break
            self._queue.task_done()
        self._queue.put(None)
        self._thread.join()
        self._thread = None

    def _work(self) -> None:
        os.sched_setaffinity(0, self.cpus)  # this thread only (Linux): its uv processes run off the worker's CPUs
        while True:
            point = self._queue.get()
            if point is None:
                self._queue.task_done()
                return
            try:
                self.envs.get(point, ahead=True)
            except Exception as exc:  # noqa: BLE001 - the step that needs it builds it again and reports the error
                self.envs.say(f"building {point.label} ahead failed ({one_line(str(exc), 200)}); it is built when "
                              "needed")
            finally:
                self._queue.task_done()
