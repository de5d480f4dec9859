"""`colbench run … --versions SPEC [--every minor]`: one environment per release of a package, each on the newest
installed Python its wheels support with the companions of its era (runtimes/era.py), measured in one interleaved run.

SPEC names the releases: `pyarrow==0.17.1,1.0.1,21.0.0` (these, each must exist and install here: bad input
otherwise), or a range, `pyarrow>=0.17` or `pyarrow>=12,<20` (every release of the index in it; pre-releases
only when named, yanked ones never; a release no installed Python has a wheel for is skipped with the versions it
has wheels for). `--every minor` (or `major`) keeps the newest release of each minor (major) version of a range: the
arrowbench history, one point per minor release.

Environments are built once each and cached as every release environment is (the same key as a bisect's or a
watch's point of that release). A release whose environment does not install or import is not fatal: its cases
become error results with the cause (`EnvChoice.broken`), and the sweep goes on.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from packaging.specifiers import SpecifierSet
from packaging.version import Version

from colbench.model.env_request import Versions
from colbench.model.run_config import EnvChoice
from colbench.runtimes.env_cache import release_probably_cached
from colbench.runtimes.interpreters import OLDEST, install_advice
from colbench.runtimes.points import Point, PointEnvironments, env_name
from colbench.runtimes.python import EnvError
from colbench.runtimes.releases import Release, ReleaseError, package_index, pypi_releases


@dataclass
class Sweep:
    """The releases chosen, oldest first, and the ones of the range left out with why."""

    package: str
    points: list[Point]
    skipped: dict[str, str] = field(default_factory=dict)
    source: str = ""


def _newest_of_each(releases: list[Release], every: str) -> list[Release]:
    if every == "release":
        return releases
    width = 2 if every == "minor" else 1
    newest: dict[tuple[int, ...], Release] = {}
    for release in releases:  # oldest first: the last of each group wins
        newest[Version(release.version).release[:width]] = release
    return sorted(newest.values(), key=lambda r: Version(r.version))


def _not_installable(package: str, release: Release) -> str:
    wanted = re.findall(r"3\.\d+", release.skip.split("installed:")[0])
    usable = [v for v in wanted if tuple(map(int, v.split("."))) >= OLDEST]
    fix = f"install one (`{install_advice(usable[-1])}`) or leave it out" if usable else \
        f"the worker runs on Python {OLDEST[0]}.{OLDEST[1]} and newer: leave it out"
    return f"--versions {package}=={release.version}: {release.skip}: {fix}"


def plan_sweep(versions: Versions) -> Sweep:
    """The releases a sweep measures, listed from the index uv installs from; one-line EnvErrors for versions named
    that do not exist or cannot be installed here."""
    try:
        releases = pypi_releases(versions.package)
    except ReleaseError as exc:
        raise EnvError(str(exc)) from None
    by_version = {Version(r.version): r for r in releases}
    skipped: dict[str, str] = {}
    if versions.named:
        chosen = []
        for text in versions.named:
            release = by_version.get(Version(text))
            if release is None:
                raise EnvError(f"--versions {versions.package}=={text}: no such release on {package_index()}")
            if release.skip:
                raise EnvError(_not_installable(versions.package, release))
            chosen.append(release)
    else:
        spec = SpecifierSet(versions.within, prereleases=None)
        inside = [r for r in releases if Version(r.version) in spec and
                  (not Version(r.version).is_prerelease or spec.prereleases)]
        for release in inside:
            if release.skip:
                skipped[release.version] = release.skip
        chosen = _newest_of_each([r for r in inside if not r.skip], versions.every)
        if not chosen:
            raise EnvError(f"--versions {versions.package}{versions.within}: no release there installs here"
                           + (f" ({len(skipped)} skipped: {next(iter(skipped.values()))})" if skipped else ""))
    points = [Point(r.version, f"{versions.package}=={r.version}", release=r, package=versions.package)
              for r in sorted(chosen, key=lambda r: Version(r.version))]
    return Sweep(versions.package, points, skipped, f"{versions.package} releases on {package_index()}")


def build_sweep(sweep: Sweep, extra: tuple[str, ...] = (), say: Callable[[str], None] = print,
                needs: tuple[str, ...] = ()) -> list[EnvChoice]:
    """Each release's environment (built once, cached), with `extra` (`--with`) and what the benchmarks `needs`; a
    release whose environment fails is kept, broken, with its cause, so its cases are error results and the others
    run."""
    for version, reason in sweep.skipped.items():
        say(f"skipped {sweep.package} {version}: {reason}")
    builder = PointEnvironments(extra=extra, say=say, needs=needs)
    envs = []
    for point in sweep.points:
        built = builder.get(point)
        if built is None:
            cause = builder.failed[point.label]
            say(f"environment {point.label}: {cause}; its cases are error results, the sweep goes on")
            built = EnvChoice(name=env_name(point.label), spec=f"{point.requirement}", broken=cause,
                              interpreter=point.release.python if point.release else "")
        elif point.label in builder.notes:
            say(f"environment {point.label}: {builder.notes[point.label]}")
        envs.append(built)
    return envs


def planned_builds(sweep: Sweep, extra: tuple[str, ...] = ()) -> list[bool]:
    """For a dry run: per release the sweep measures (named, or listed from the index for a range), whether its
    environment must be built (True) or is probably in the cache."""
    return [not release_probably_cached(point.requirement, extra) for point in sweep.points]
