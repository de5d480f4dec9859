"""What a release is measured with: the newest installed Python its wheels support, and the companions of its era.

A sweep over releases (`run --versions`), a bisect over an index's releases (`bisect --package`) and a watch measure
each release in an environment of its own (runtimes/python.py, worker-only):

- **Python.** The newest installed interpreter that one of the release's wheels installs on (`Release.python`,
  from the wheel tags the index lists: runtimes/releases.py, runtimes/interpreters.py). pyarrow 0.17.1's newest is
  3.8, 4.0.1's 3.9, 8.0.0's 3.10, 21.0.0's 3.13. A release none fits is skipped with the versions its wheels are for.
- **Companions.** The libraries the built-in engines load beside the package (`COMPANIONS`: for pyarrow, numpy for
  its arrays and pandas for `output=dataframe`), resolved as of the release's last upload (uv's `--exclude-newer`):
  the numpy and pandas one could install with it that day, on that Python. pyarrow 0.17.1 (2020-05-18) on 3.8 gets
  numpy 1.18.4 and pandas 1.0.3; 16.1.0 (2024-05-14) on 3.12 numpy 1.26.4 and pandas 2.2.2. Resolved today instead,
  0.17.1 would get numpy 1.24.4 and pandas 2.0.3, three years its juniors, and 14.0.2 NumPy 2, which its wheels
  do not import under.
- **Where no date helps.** An index that gives no upload times (PEP 503 HTML, a plain mirror), or a day on which a
  companion had no wheel for that Python yet: the release is resolved as of today under the known constraints
  (`CONSTRAINTS`: numpy<2 for pyarrow before 16, whose wheels are built against NumPy 1.x), and its note says so.

Both choices are recorded with the run (each environment's spec, interpreter and resolved versions).
"""

from __future__ import annotations

from dataclasses import dataclass

from packaging.specifiers import SpecifierSet
from packaging.version import Version

from colbench.model.packages import canonical_name, requirement_name
from colbench.model.release import Release

#: the libraries the built-in engines load beside a package (a data frame output, a conversion): resolved with it
COMPANIONS: dict[str, tuple[str, ...]] = {
    "pyarrow": ("numpy", "pandas"),
    "pandas": ("numpy", "pyarrow"),
    "polars": ("pyarrow", "pandas"),
    "duckdb": ("numpy", "pandas", "pyarrow"),
    "fastparquet": ("numpy", "pandas"),
}


@dataclass(frozen=True)
class Constraint:
    """`requirement` for the releases of `package` in `versions`, because `why`."""

    package: str
    versions: str
    requirement: str
    why: str


CONSTRAINTS: tuple[Constraint, ...] = (
    Constraint("pyarrow", "<16", "numpy<2", "its wheels are built against NumPy 1.x and do not import under NumPy 2"),
)


@dataclass(frozen=True)
class Recipe:
    """How to build a release's environment: `requirements` (the release, its companions and any extra ones) on
    Python `python` (MAJOR.MINOR; "" for the interpreter running colbench), resolved as of `as_of` (RFC 3339; ""
    for today)."""

    package: str
    version: str
    python: str
    requirements: tuple[str, ...]
    as_of: str = ""

    @property
    def note(self) -> str:
        """How the environment was chosen, in words: "Python 3.8, companions as of 2020-05-18"."""
        python = f"Python {self.python}" if self.python else "this Python"
        when = f"as of {self.as_of[:10]}" if self.as_of else "as of today"
        companions = [r for r in self.requirements[1:]]
        return f"{python}, {' '.join(companions) or 'no companions'} {when}"


def _named(requirements: tuple[str, ...]) -> set[str]:
    return {requirement_name(r) for r in requirements}


def recipe(package: str, release: Release, extra: tuple[str, ...] = (), *, dated: bool = True) -> Recipe:
    """The environment of `release` of `package`: its companions as of its upload when the index says when
    (`dated`), else under the known constraints; `extra` requirements (`--with`) go in beside them and, named, take
    a companion's place."""
    name = canonical_name(package)
    named = _named(extra)
    companions = [c for c in COMPANIONS.get(name, ()) if c not in named]
    as_of = release.uploaded if dated else ""
    requirements = [f"{package}=={release.version}", *companions, *extra]
    if not as_of:
        requirements += [c.requirement for c in CONSTRAINTS if canonical_name(c.package) == name
                         and Version(release.version) in SpecifierSet(c.versions)
                         and _named((c.requirement,)).isdisjoint(named)]
    return Recipe(package, release.version, release.python, tuple(requirements), as_of)
