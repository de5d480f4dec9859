"""The points of a bisect, from the request's one source, checked before anything is measured.

`--package NAME` lists NAME's releases on the package index uv uses; `--package java:arrow` Arrow Java's on Maven
Central; `--wheels DIR|FILE` the wheels given; `--git URL_OR_PATH --package NAME` the commits from good to bad.
Points that cannot be tested here (yanked, no wheel for any installed Python, too old for the Java worker, a wheel
for another platform) are left out with the reason, unless they are the good or bad end the user named. A release
from an index is measured on the newest installed Python its wheels support, with the companions of its era
(runtimes/era.py).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from packaging.version import InvalidVersion, Version

from colbench.app.errors import UsageError
from colbench.redact import redact
from colbench.runtimes.builds import Build, git_builds, wheel_builds, wheel_package
from colbench.runtimes.java import MIN_ARROW_JAVA
from colbench.runtimes.points import Point
from colbench.runtimes.releases import (
    Release,
    ReleaseError,
    fetch_url,
    listed_releases,
    maven_releases,
    release_range,
)

#: a package's releases as they were just listed (by a watch pass): the index, the releases in version order
Listed = tuple[str, Sequence[Release]]


@dataclass(frozen=True)
class PointList:
    """The points to search, oldest first (good first, bad last), and the ones left out with why."""

    points: list[Point]
    excluded: dict[str, str] = field(default_factory=dict)
    #: where they came from, in words ("pyarrow releases on https://pypi.org/simple")
    source: str = ""
    package: str = ""


def _position(labels: list[str], ref: str, option: str, where: str) -> int:
    if ref in labels:
        return labels.index(ref)
    try:
        wanted = Version(ref)
        for i, label in enumerate(labels):
            try:
                if Version(label) == wanted:
                    return i
            except InvalidVersion:
                continue
    except InvalidVersion:
        pass
    raise UsageError(f"{option} {ref}: not among {where} ({', '.join(labels[:3])}{' …' if len(labels) > 3 else ''})")


def _from_builds(builds: list[Build], good: str, bad: str, where: str) -> tuple[list[Point], dict[str, str]]:
    labels = [b.label for b in builds]
    lo, hi = _position(labels, good, "--good", where), _position(labels, bad, "--bad", where)
    if lo == hi:
        raise UsageError(f"--good and --bad are the same point ({labels[lo]}): name two")
    if lo > hi:
        raise UsageError(f"--good {good} comes after --bad {bad} in {where}: good is the older one (to find where it "
                         "got faster, keep the order and pass --direction faster)")
    chosen = builds[lo:hi + 1]
    excluded = {b.label: b.skip for b in chosen[1:-1] if b.skip}
    points = [Point(b.label, b.requirement) for b in chosen if b.label not in excluded]
    return points, excluded


def _index_points(package: str, good: str, bad: str, pre: bool, index: str | None = None,
                  deadline_s: float | None = None, listed: Listed | None = None) -> PointList:
    fetch = functools.partial(fetch_url, deadline_s=deadline_s)
    java = package.startswith("java:")
    if java:
        if package not in ("java:arrow", "java:arrow-java"):
            raise UsageError(f"--package {package}: the Java worker pins Arrow Java only (--package java:arrow)")
        oldest = ".".join(map(str, MIN_ARROW_JAVA))
        releases = maven_releases(minimum=oldest, why_minimum="the Java worker needs MemoryUtil's accessors",
                                  fetch=fetch)
        where, name = "Arrow Java releases on Maven Central", "Arrow Java"
    elif package.startswith("r:"):
        raise UsageError("--package r:…: Debian ships one version of each R package, so there is nothing to bisect "
                         "(docs/environments.md)")
    else:
        base, releases = (listed[0], list(listed[1])) if listed else listed_releases(package, index, fetch)
        where, name = f"{package} releases on {redact(base)}", package
    chosen = release_range(releases, good, bad, pre=pre, what=name)
    excluded = {r.version: r.skip for r in chosen[1:-1] if r.skip}
    runtime = "java" if java else "python"
    points = [Point(r.version, r.version if java else f"{package}=={r.version}", runtime,
                    release=None if java else r, package="" if java else package)
              for r in chosen if r.version not in excluded]
    return PointList(points, excluded, where, package)


def list_points(good: str, bad: str, *, package: str | None = None, wheels: Path | None = None,
                git: str | None = None, pre: bool = False, index: str | None = None,
                deadline_s: float | None = None, listed: Listed | None = None) -> PointList:
    """The points from one source (see the module docstring), or a one-line UsageError."""
    if wheels is not None and git is not None:
        raise UsageError("give one of --wheels and --git")
    try:
        if wheels is not None:
            builds = wheel_builds(wheels, package)
            where = f"the wheels of {wheels}"
            points, excluded = _from_builds(builds, good, bad, where)
            return PointList(points, excluded, where, wheel_package(builds))
        if git is not None:
            if not package:
                raise UsageError("--git needs --package NAME: the distribution the repository builds (it takes the "
                                 "place of colbench's own requirement on it)")
            builds = git_builds(git, good, bad, package)
            where = f"commits of {redact(git)}"  # a URL may carry a token: never shown
            points, excluded = _from_builds(builds, builds[0].label, builds[-1].label, where)
            return PointList(points, excluded, where, package)
        if not package:
            raise UsageError("name what to bisect: --package NAME (its releases), --wheels DIR or --git REPO")
        return _index_points(package, good, bad, pre, index, deadline_s, listed)
    except ReleaseError as exc:
        raise UsageError(str(exc)) from None
