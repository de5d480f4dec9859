"""The environment of each point a bisect measures: a release, a wheel or a commit, built once and reused.

A Python point is a uv environment (runner/environments.py) with the point's requirement in place of the project's
(`pyarrow==15.0.0`, a wheel's path, `pkg @ git+file:///repo@sha`) plus any requirements given for every point
(`--with "numpy<2"`); a Java point is the Java worker built against that Arrow Java release (`java:arrow==V`).
Building is cached twice: on disk by the environment key (as for `--env`), and here per point for the whole
search, so a point is resolved at most once per bisect. A point that cannot be built keeps its one-line cause.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from colbench.paths import NAME_PATTERN
from colbench.redact import clip, redact
from colbench.runner.environments import EnvError, EnvSpec, colbench_project, ensure_environment
from colbench.runner.execute import EnvChoice
from colbench.runner.runtime_envs import runtime_env

#: uv's error output draws boxes and arrows around its lines
_DECORATION = re.compile(r"^[\s×╰─▶│├┬┴┼┤╭╮╯|:>-]+")


@dataclass(frozen=True)
class Point:
    """`label`: what --good/--bad name and tables show; `requirement`: what is installed (for Java, the Arrow Java
    version); `runtime`: "python" or "java"."""

    label: str
    requirement: str
    runtime: str = "python"


def env_name(label: str) -> str:
    """An environment name (letters, digits, '.', '_', '-') for a point's label: versions are already one."""
    name = re.sub(r"[^A-Za-z0-9._-]", "-", label).strip("-._")[:64] or "point"
    return name if NAME_PATTERN.fullmatch(name) else f"p{name}"[:64]


def one_line(message: str, limit: int = 300) -> str:
    """A multi-line tool error (uv's boxed output) as one line: its lines without decoration, joined."""
    lines = [_DECORATION.sub("", line).strip() for line in message.splitlines()]
    return clip(redact(" ".join(line for line in lines if line)), limit)


def build_error_line(message: str, limit: int = 300) -> str:
    """An environment that could not be built, in one line: the stage that failed, uv's error and its innermost
    cause ("resolving failed: Failed to read `pkg @ file:///…whl` (unable to locate the end of central directory
    record)"), rather than every "cause:" line between."""
    head, sep, detail = message.partition(" failed:\n")
    lines = [line for line in (_DECORATION.sub("", raw).strip() for raw in detail.splitlines()) if line]
    if not sep or not lines:
        return one_line(message, limit)
    first = lines[0].removeprefix("error: ")
    last = re.sub(r"^(cause|Caused by): ", "", lines[-1]) if len(lines) > 1 else ""
    return clip(redact(f"{head.split(' ', 1)[0]} failed: {first}" + (f" ({last})" if last else "")), limit)


@dataclass
class PointEnvironments:
    """Builds (or finds) each point's environment once; remembers what failed and why, and the seconds it took."""

    extra: tuple[str, ...] = ()
    say: Callable[[str], None] = lambda _: None
    built: dict[str, EnvChoice] = field(default_factory=dict)
    failed: dict[str, str] = field(default_factory=dict)
    seconds: float = 0.0
    _project: Path | None = None

    def get(self, point: Point) -> EnvChoice | None:
        """The point's environment, or None when it cannot be built (`failed[label]` says why)."""
        if point.label in self.built:
            return self.built[point.label]
        if point.label in self.failed:
            return None
        started = time.monotonic()
        name = env_name(point.label)
        try:
            if point.runtime == "java":
                env = runtime_env(f"{name}=java:arrow=={point.requirement}", say=self.say)
            else:
                self.say(f"environment {point.label}: {redact(' '.join((point.requirement, *self.extra)))}")
                self._project = self._project or colbench_project()
                built = ensure_environment(EnvSpec(name, (point.requirement, *self.extra)), self._project)
                env = EnvChoice(name=name, python=str(built.python), key=built.key, resolved=dict(built.resolved),
                                spec=redact(" ".join((point.requirement, *self.extra))))
        except EnvError as exc:
            text = str(exc)
            if "NumPy 1.x" in text or "numpy<2" in text:
                text += " (pass --with 'numpy<2')"
            self.failed[point.label] = f"does not install: {build_error_line(text)}"
            return None
        finally:
            self.seconds += time.monotonic() - started
        self.built[point.label] = env
        return env
