"""The CPython interpreters installed on this machine, found where users keep them, and which one a release's wheels
run on.

Looked for, without running anything but the interpreters on PATH:

- pyenv's versions (`$PYENV_ROOT/versions/X.Y.Z/bin/python`, PYENV_ROOT defaulting to ~/.pyenv). pyenv's *shims* on
  PATH are skipped: a shim runs the version pyenv has selected, and fails for any other;
- uv's managed Pythons (`$UV_PYTHON_INSTALL_DIR`, else `$XDG_DATA_HOME/uv/python`, else ~/.local/share/uv/python:
  what `uv python install` makes and `uv python find` finds);
- `python3.X` on PATH (Debian's /usr/bin/python3.11, a deadsnakes build, …), asked for its exact version.

One interpreter per minor version (the newest patch; a tie goes to pyenv, then uv, then PATH), CPython 3.8 and newer
(the oldest the Python worker runs on), free-threaded builds left out (no release before 3.13 has wheels for them).
A version that none provides is a one-line error naming the command that installs it.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from packaging.tags import Tag, compatible_tags, cpython_tags, platform_tags

from colbench.processes import run_bounded

#: the oldest Python the worker (and the benchmark code it loads) runs on
OLDEST = (3, 8)
_VERSION_DIR = re.compile(r"(\d+)\.(\d+)\.(\d+)")
_UV_DIR = re.compile(r"cpython-(\d+)\.(\d+)\.(\d+)-[^+]*")  # cpython-3.12.1-linux-x86_64-gnu; not …+freethreaded
#: an interpreter answers its version in well under a second; one that has not in 10 s is hung (and killed, with
#: whatever it started)
PROBE_TIMEOUT_S = 10.0
_PATH_NAME = re.compile(r"python(\d+)\.(\d+)")
_SOURCES = ("pyenv", "uv", "PATH")


class InterpreterError(ValueError):
    """A Python version no installed interpreter provides, or a version that is not one; one line."""


@dataclass(frozen=True)
class Interpreter:
    """One installed CPython: its version (major, minor, patch), its executable and where it was found."""

    version: tuple[int, int, int]
    path: Path
    source: str

    @property
    def minor(self) -> str:
        return f"{self.version[0]}.{self.version[1]}"

    @property
    def full(self) -> str:
        return ".".join(map(str, self.version))


def pyenv_root() -> Path:
    return Path(os.environ.get("PYENV_ROOT") or Path.home() / ".pyenv")


def uv_python_dir() -> Path:
    named = os.environ.get("UV_PYTHON_INSTALL_DIR")
    if named:
        return Path(named)
    data = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(data) / "uv" / "python"


def _executable(folder: Path, minor: tuple[int, int]) -> Path | None:
    for name in (f"python{minor[0]}.{minor[1]}", f"python{minor[0]}", "python"):
        candidate = folder / "bin" / name
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return candidate
    return None


def _in_versions_dir(root: Path, pattern: re.Pattern[str], source: str) -> list[Interpreter]:
    found = []
    try:
        entries = sorted(root.iterdir())
    except OSError:
        return []
    for entry in entries:
        match = pattern.fullmatch(entry.name)
        if not match or not entry.is_dir():
            continue
        version = (int(match.group(1)), int(match.group(2)), int(match.group(3)))
        exe = _executable(entry, version[:2])
        if exe is not None:
            found.append(Interpreter(version, exe, source))
    return found


def _ask_version(exe: Path) -> tuple[int, int, int] | None:
    """The exact version of an interpreter on PATH (a CPython one; None for anything else or a broken one)."""
    code = "import sys; print(sys.implementation.name, *sys.version_info[:3], getattr(sys, '_is_gil_enabled', None))"
    try:
        out = run_bounded([str(exe), "-c", code], timeout_s=PROBE_TIMEOUT_S, what=f"probing {exe}", check=True).stdout
        name, major, minor, patch, gil = out.split()
    except (OSError, subprocess.SubprocessError, ValueError):
        return None
    if name != "cpython" or gil == "False":
        return None
    return int(major), int(minor), int(patch)


def _on_path(skip: Iterable[Path]) -> list[Interpreter]:
    skipped = [p.resolve() for p in skip]
    found = []
    seen: set[Path] = set()
    for folder in os.environ.get("PATH", "").split(os.pathsep):
        if not folder or Path(folder).name == "shims":  # pyenv's (and asdf's) shims: see the module's docstring
            continue
        try:
            names = sorted(os.listdir(folder))
        except OSError:
            continue
        for name in names:
            if not _PATH_NAME.fullmatch(name):
                continue
            exe = Path(folder) / name
            real = exe.resolve()
            if real in seen or any(real.is_relative_to(s) for s in skipped) or not os.access(exe, os.X_OK):
                continue
            seen.add(real)
            version = _ask_version(exe)
            if version is not None:
                found.append(Interpreter(version, exe, "PATH"))
    return found


def _rank(found: Interpreter) -> tuple[tuple[int, int, int], int]:
    return found.version, -_SOURCES.index(found.source)


@lru_cache(maxsize=8)
def _installed(pyenv: Path, uv: Path, path_variable: str) -> tuple[Interpreter, ...]:
    candidates = [*_in_versions_dir(pyenv / "versions", _VERSION_DIR, "pyenv"),
                  *_in_versions_dir(uv, _UV_DIR, "uv"), *_on_path([pyenv, uv])]
    best: dict[tuple[int, int], Interpreter] = {}
    for found in candidates:
        if found.version[:2] < OLDEST:
            continue
        held = best.get(found.version[:2])
        if held is None or _rank(found) > _rank(held):
            best[found.version[:2]] = found
    return tuple(best[minor] for minor in sorted(best))


def installed_interpreters() -> list[Interpreter]:
    """One interpreter per minor version, oldest first (see the module's docstring)."""
    return list(_installed(pyenv_root(), uv_python_dir(), os.environ.get("PATH", "")))


def versions_text(interpreters: Sequence[Interpreter]) -> str:
    return ", ".join(i.minor for i in interpreters) or "none"


def install_advice(version: str) -> str:
    """The command that installs a Python version here: pyenv's where pyenv is, else uv's."""
    if shutil.which("pyenv") or (pyenv_root() / "versions").is_dir():
        return f"pyenv install {version}"
    return f"uv python install {version}"


def parse_python_version(text: str, what: str = "python") -> tuple[int, ...]:
    """`3.12` or `3.12.1` → (3, 12) or (3, 12, 1); an InterpreterError for anything else."""
    if not re.fullmatch(r"\d+\.\d+(\.\d+)?", text.strip()):
        raise InterpreterError(f"{what}=={text}: name a Python version as MAJOR.MINOR (python==3.12) or "
                               "MAJOR.MINOR.PATCH")
    return tuple(int(part) for part in text.strip().split("."))


def find_interpreter(version: str, what: str = "python") -> Interpreter:
    """The installed interpreter of `version` (3.12, or exactly 3.12.1), or a one-line InterpreterError that says
    what is installed and how to install the one asked for."""
    wanted = parse_python_version(version, what)
    if wanted[:2] < OLDEST:
        raise InterpreterError(f"{what}=={version}: the Python worker runs on Python {OLDEST[0]}.{OLDEST[1]} and "
                               "newer")
    interpreters = installed_interpreters()
    for found in interpreters:
        if found.version[:len(wanted)] == wanted:
            return found
    held = next((i for i in interpreters if i.version[:2] == wanted[:2]), None)
    have = f" (this machine has {held.full})" if held is not None else ""
    raise InterpreterError(
        f"{what}=={version}: no Python {version} installed here{have}; found {versions_text(interpreters)} on PATH, "
        f"in {pyenv_root() / 'versions'} and in {uv_python_dir()}: install it with `{install_advice(version)}`")


@lru_cache(maxsize=32)
def interpreter_tags(minor: tuple[int, int]) -> frozenset[Tag]:
    """The wheel tags a CPython of this minor version installs on this machine (its platform: manylinux levels of
    this glibc, this architecture), as pip and uv would compute them inside that interpreter."""
    platforms = list(platform_tags())
    return frozenset([*cpython_tags(minor, platforms=platforms),
                      *compatible_tags(minor, interpreter=f"cp{minor[0]}{minor[1]}", platforms=platforms)])


def supported_pythons(wheel_tags: Iterable[Tag], candidates: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    """Which of `candidates` (minor versions) the wheels with these tags install on, oldest first."""
    tags = frozenset(wheel_tags)
    return sorted(minor for minor in set(candidates) if tags & interpreter_tags(minor))


def wheel_pythons(wheel_tags: Iterable[Tag]) -> list[str]:
    """The CPython minor versions a release's wheels name (cp38, cp39 … and abi3's floor), for messages."""
    minors = set()
    for tag in wheel_tags:
        match = re.fullmatch(r"cp(\d)(\d+)", tag.interpreter)
        if match:
            minors.add((int(match.group(1)), int(match.group(2))))
    return [f"{a}.{b}" for a, b in sorted(minors)]


def newest_supporting(wheel_tags: Iterable[Tag], interpreters: Sequence[Interpreter]) -> Interpreter | None:
    """The newest installed interpreter these wheels install on; None when none does."""
    tags = frozenset(wheel_tags)
    fitting = [i for i in interpreters if tags & interpreter_tags((i.version[0], i.version[1]))]
    return fitting[-1] if fitting else None
