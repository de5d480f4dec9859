"""One request for an environment: every way of naming where a worker runs, parsed once, at the CLI's edge.

The spellings (docs/environments.md):

- `--env NAME=SPEC`, SPEC being `@current` (this interpreter), uv requirements (`pyarrow==14.0.2 numpy<2`), local
  wheels and source trees, git URLs (`git+https://host/repo@ref`, `pkg @ git+…`), with `python==X.Y` to pick the
  interpreter, or `java:arrow==V` / `r:pkg==V` for the other workers; `KEY=VALUE` variables for its workers may
  follow any of them (`--env b="python==3.12 pyarrow==21.0.0 ARROW_IO_THREADS=1"`);
- `--versions PKG==V1,V2` / `PKG>=V` (a sweep), `--with REQ` (beside every release) and `--var KEY=VALUE` (every
  worker's variables), and the releases, wheels and commits a bisect or a watch measures (made by runtimes/points.py
  from what the index lists, each carrying its `Release`).

Each becomes an `EnvRequest`: what kind of builder makes it (runtimes/builders.py chooses in one place), what it
installs, on which Python, with which variables, and for a release the `Release` itself (its Python and its upload
day decide its era's companions, runtimes/era.py). Nothing below `cli/` splits a spec string again
(tests/model/test_env_request.py keeps it so).
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from colbench.model.packages import requirement_name
from colbench.model.release import Release
from colbench.paths import NAME_PATTERN, UnsafePath, expand_user

#: `--env NAME=@current …`: this interpreter, colbench's own environment
CURRENT = "@current"
#: the runtimes whose workers `--env NAME=<runtime>:SPEC` pins (runtimes/__init__.py's `Runtime.pin`; a test keeps the
#: two lists equal): their names are part of the grammar, as `@current` is
PINNED_RUNTIMES = ("java", "r")
#: the kinds of environment, one builder each (runtimes/builders.py)
KINDS = ("current", "uv", *PINNED_RUNTIMES)

_SOURCE_FILES = ("pyproject.toml", "setup.py", "setup.cfg")
#: `KEY=VALUE` after a spec: a shell variable name, one `=` (a requirement's `==` is never one); after uv
#: requirements KEY holds an upper-case letter (`pyarrow=1.0` is refused as the mistyped pin it likely is)
_VARIABLE = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)=(?!=)(.*)", re.DOTALL)
_PIN = re.compile(r"([A-Za-z][A-Za-z0-9._-]*)(?:==([A-Za-z0-9][A-Za-z0-9._-]*))?")
_PYTHON = re.compile(r"python\s*(==|=|>=|<=|~=|!=|<|>)?\s*(.*)", re.IGNORECASE)


class EnvError(Exception):
    """A bad --env option or an environment that cannot be resolved or built; one line that says what to do."""


@dataclass(frozen=True)
class EnvRequest:
    """Where a worker runs, as asked for. `kind`: "current" (the interpreter running colbench), "uv" (a uv
    environment), or a pinned runtime ("java", "r"). `requirements`: for uv, PEP 508 strings, absolute paths of
    local wheels or source trees, or git URLs, in the order given; for a pinned runtime its pins (`arrow==18.1.0`).
    """

    name: str = "default"
    kind: str = "current"
    requirements: tuple[str, ...] = ()
    #: the Python version asked for (`python==3.12`, or exactly `3.12.1`); None: the interpreter running colbench,
    #: or for a release the one its wheels install on
    python: str | None = None
    #: environment variables of its workers (`KEY=VALUE` after the spec, `--var`)
    variables: Mapping[str, str] = field(default_factory=dict, hash=False)
    #: what every environment of a run installs beside its own requirements: `--with`, and what a benchmark source
    #: needs to be imported (its runner library, its plugin's code)
    extra_requirements: tuple[str, ...] = ()
    #: package indexes uv searches before its default one (`--index URL`)
    indexes: tuple[str, ...] = ()
    #: what the benchmarks it is built for need to be imported (an asv suite's runner, pytest for pytest files:
    #: benchmarks/sources.py `requirements`, carried by the plan), each installed unless the request pins that
    #: package itself; not part of the spec in words (the run record keeps what was asked for)
    benchmark_requirements: tuple[str, ...] = ()
    #: a release listed from an index: built on its Python with the companions of its era (runtimes/era.py)
    release: Release | None = None
    #: the package `release` is a version of
    package: str = ""
    #: a pinned runtime's packages and their exact versions (None: the one its worker is built with)
    pins: tuple[tuple[str, str | None], ...] = ()

    @property
    def spec(self) -> str:
        """The spec in words, as a run record keeps it (`EnvChoice.spec`; variables are kept beside it)."""
        if self.kind == "current":
            return " ".join([CURRENT, *(f"{k}={v}" for k, v in self.variables.items())])
        if self.kind in PINNED_RUNTIMES:
            return f"{self.kind}:" + " ".join(f"{p}=={v}" if v else p for p, v in self.pins)
        return " ".join([*([f"python=={self.python}"] if self.python else []), *self.requirements,
                         *self.extra_requirements])

    @property
    def installs(self) -> tuple[str, ...]:
        """What a uv environment installs: its requirements, then the extra ones every environment gets."""
        return (*self.requirements, *self.extra_requirements)

    def with_extra(self, requirements: Sequence[str]) -> EnvRequest:
        """The same request with `requirements` installed too (for a benchmark source's or `--with`'s needs)."""
        return replace(self, extra_requirements=(*self.extra_requirements, *requirements))

    def for_benchmarks(self, requirements: Sequence[str]) -> EnvRequest:
        """The same request built for benchmarks that need `requirements` to be imported (the plan's)."""
        return replace(self, benchmark_requirements=tuple(dict.fromkeys(requirements)))

    def with_variables(self, variables: Mapping[str, str]) -> EnvRequest:
        """The same request with `variables` (`--var`) under its own (its own win)."""
        return replace(self, variables={**variables, **self.variables})


def release_request(name: str, package: str, release: Release, *, extra: Sequence[str] = (),
                    variables: Mapping[str, str] | None = None, indexes: Sequence[str] = ()) -> EnvRequest:
    """A release from an index (a sweep's, a bisect's or a watch's), built with its era's companions."""
    return EnvRequest(name, "uv", (f"{package}=={release.version}",), variables=dict(variables or {}),
                      extra_requirements=tuple(extra), indexes=tuple(indexes), release=release, package=package)


# ---------------------------------------------------------------------------------------------------- parse


EVERY = ("release", "minor", "major")


@dataclass(frozen=True)
class Versions:
    """A parsed `--versions`: the package and either the versions named or a specifier set of a range."""

    package: str
    named: tuple[str, ...] = ()
    within: str = ""
    every: str = "release"


def parse_versions(text: str, every: str | None = None) -> Versions:
    """`pyarrow==0.17.1,1.0.1` or `pyarrow>=0.17[,<20]`; a one-line EnvError for anything else."""
    match = re.fullmatch(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(.*?)\s*", text)
    if not match or not match.group(2):
        raise EnvError(f"--versions {text!r}: name a package and its releases, e.g. pyarrow==0.17.1,1.0.1,21.0.0 "
                       "or 'pyarrow>=0.17' --every minor")
    package, rest = match.group(1), match.group(2)
    if every is not None and every not in EVERY:
        raise EnvError(f"--every {every!r}: choose {', '.join(EVERY)}")
    if rest.startswith("==") and "*" not in rest:
        named = [v.strip() for v in rest[2:].split(",")]
        for version in named:
            try:
                Version(version)
            except InvalidVersion:
                raise EnvError(f"--versions {package}=={rest[2:]}: {version!r} is not a version (e.g. 21.0.0)") \
                    from None
        if len(set(named)) != len(named):
            raise EnvError(f"--versions {package}: a version is named twice")
        if every not in (None, "release"):
            raise EnvError("--every goes with a range of releases ('pyarrow>=0.17'), not with versions named")
        return Versions(package, tuple(named))
    try:
        SpecifierSet(rest)
    except InvalidSpecifier:
        raise EnvError(f"--versions {text!r}: {rest!r} is neither ==V1,V2,… nor a range like >=0.17,<20") from None
    return Versions(package, within=rest, every=every or "release")


def parse_env(option: str, cwd: Path | None = None) -> EnvRequest:
    """`NAME=SPEC` → its request (see the module's doc). Relative paths are taken from `cwd` (default: the current
    directory). Raises `EnvError` with a one-line message on bad input."""
    name, sep, spec = option.partition("=")
    name = name.strip()
    if sep and not name:
        raise EnvError(f"--env name is empty in {option!r}: write NAME=SPEC (e.g. old=pyarrow==15.0.2)")
    if not sep or spec.startswith("="):
        raise EnvError(f"--env expects NAME=SPEC (e.g. old=pyarrow==15.0.2), got {option!r}")
    if not NAME_PATTERN.fullmatch(name):
        raise EnvError(f"--env name {name!r}: use letters, digits, '.', '_' or '-' (at most 64)")
    try:
        tokens = shlex.split(spec)
    except ValueError as exc:
        raise EnvError(f"--env {name}: cannot split {spec!r}: {exc}") from None
    if tokens and tokens[0] == CURRENT:
        return EnvRequest(name, "current", variables=_variables(name, tokens[1:], after=CURRENT))
    prefix, colon, _ = spec.strip().partition(":")
    if colon and prefix in PINNED_RUNTIMES:
        tokens = shlex.split(spec.strip()[len(prefix) + 1:])
        pins = parse_pins(name, [t for t in tokens if not _is_variable(t)])
        return EnvRequest(name, prefix, pins=pins, variables=_variables(name, [t for t in tokens if _is_variable(t)]))
    words = _joined_at_urls([t for t in tokens if not _is_variable(t)])
    variables = _variables(name, [t for t in tokens if _is_variable(t)])
    if not words:
        raise EnvError(f"--env {name}: empty spec (give requirements, a wheel, a source directory or a git URL)")
    python, rest = _python_pin(name, words)
    if not rest:
        raise EnvError(f"--env {name}: name what to install beside python=={python} (e.g. pyarrow==21.0.0)")
    cwd = cwd or Path.cwd()
    return EnvRequest(name, "uv", tuple(_requirement(name, t, cwd) for t in rest), python=python,
                      variables=variables)


def parse_pins(name: str, tokens: Sequence[str]) -> tuple[tuple[str, str | None], ...]:
    """`pkg==1.2.3 other` → (("pkg", "1.2.3"), ("other", None)): a pinned runtime's exact pins (one version each)."""
    pins = []
    for token in tokens:
        match = _PIN.fullmatch(token)
        if not match:
            raise EnvError(f"--env {name}: {token!r}: pin exact versions as PACKAGE==VERSION")
        pins.append((match.group(1), match.group(2)))
    if not pins:
        raise EnvError(f"--env {name}: name what to pin, e.g. java:arrow==18.1.0 or r:data.table==1.14.8")
    return tuple(pins)


def parse_envs(options: Iterable[str], cwd: Path | None = None) -> tuple[EnvRequest, ...]:
    """Every `--env` option parsed; their names must differ."""
    requests = tuple(parse_env(option, cwd) for option in options)
    check_unique(requests)
    return requests


def check_unique(requests: Sequence[EnvRequest]) -> None:
    names = [r.name for r in requests]
    if len(set(names)) != len(names):
        raise EnvError(f"--env names must differ: {', '.join(names)}")


def parse_variables(items: Iterable[str], what: str = "--var") -> dict[str, str]:
    """`KEY=VALUE` options (`--var`) → the variables of every worker."""
    variables = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise EnvError(f"{what} {item!r}: write KEY=VALUE")
        variables[key.strip()] = value
    return variables


def _is_variable(token: str) -> bool:
    match = _VARIABLE.fullmatch(token)
    # `pyarrow=1.0` is a pin mistyped far more often than a variable in lower case (and python=3.12 a Python's pin)
    return match is not None and match.group(1) != match.group(1).lower()


def _variables(name: str, tokens: Sequence[str], after: str = "the spec") -> dict[str, str]:
    variables = {}
    for token in tokens:
        key, sep, value = token.partition("=")
        if not sep or not key:
            raise EnvError(f"--env {name}: after {after} give KEY=VALUE variables, not {token!r}")
        variables[key] = value
    return variables


def _joined_at_urls(tokens: list[str]) -> list[str]:
    """The tokens with "pkg @ url" written with spaces re-joined into one."""
    joined: list[str] = []
    i = 0
    while i < len(tokens):
        if i + 2 < len(tokens) and tokens[i + 1] == "@":
            joined.append(f"{tokens[i]} @ {tokens[i + 2]}")
            i += 3
        else:
            joined.append(tokens[i])
            i += 1
    return joined


def _python_pin(name: str, tokens: list[str]) -> tuple[str | None, list[str]]:
    """The Python version a spec pins (`python==3.12`, at most one), and the spec's other tokens."""
    python = None
    rest = []
    for token in tokens:
        match = _PYTHON.fullmatch(token)
        if not match:
            rest.append(token)
            continue
        if match.group(1) not in ("==", "=") or python is not None:
            raise EnvError(f"--env {name}: pin one Python version as python==3.12 (not {token!r})")
        python = match.group(2).strip()
        if not re.fullmatch(r"\d+\.\d+(\.\d+)?", python):
            raise EnvError(f"--env {name}: python=={python}: name a Python version as MAJOR.MINOR (python==3.12) "
                           "or MAJOR.MINOR.PATCH")
    return python, rest


def _is_git(token: str) -> bool:
    return token.startswith("git+") or "@git+" in token.replace(" ", "")


def _looks_like_path(token: str) -> bool:
    return token.startswith(("/", "./", "../", "~")) or token.endswith(".whl") or os.sep in token


def _requirement(name: str, token: str, cwd: Path) -> str:
    if _is_git(token):
        url = token.split("@", 1)[1].strip() if not token.startswith("git+") else token
        if "://" not in url:
            raise EnvError(f"--env {name}: not a git URL: {token!r} (expected git+https://host/repo@ref)")
        return token
    if _looks_like_path(token) and not re.match(r"^[A-Za-z0-9._-]+\s*(@|\[)", token):
        return _local_source(name, token, cwd)
    from packaging.requirements import InvalidRequirement, Requirement

    try:
        Requirement(token)
    except InvalidRequirement:
        hint = " (pin a version as NAME==V; a variable after a spec is KEY=VALUE, KEY in upper case)" \
            if _VARIABLE.fullmatch(token) else ""
        raise EnvError(f"--env {name}: not a requirement, wheel, directory or git URL: {token!r}{hint}") from None
    return token


def _local_source(name: str, token: str, cwd: Path) -> str:
    """The absolute path of a local wheel or Python source tree (relative ones from `cwd`)."""
    try:
        path = expand_user(token, f"--env {name}:")
    except UnsafePath as exc:
        raise EnvError(str(exc)) from None
    path = (cwd / path).resolve() if not path.is_absolute() else path.resolve()
    if not path.exists():
        raise EnvError(f"--env {name}: no such file or directory: {token}")
    if path.is_file() and path.suffix != ".whl":
        raise EnvError(f"--env {name}: {token} is a file but not a wheel (.whl)")
    if path.is_dir() and not any((path / f).exists() for f in _SOURCE_FILES):
        raise EnvError(f"--env {name}: {token} is not a Python source tree (no pyproject.toml or setup.py)")
    return str(path)


def pins_package(requirements: Iterable[str], package: str) -> bool:
    """Whether one of `requirements` names `package` (PEP 503 names compared)."""
    wanted = requirement_name(package)
    return any(requirement_name(r) == wanted for r in requirements)
