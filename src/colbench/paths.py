"""Where colbench keeps its files (everything under COLBENCH_HOME, default ~/.colbench), and the two checks every
path built from user input goes through: `inside` (the path stays in the directory it belongs to, after
`resolve()`) and `remove` (the one way colbench deletes anything)."""

from __future__ import annotations

import os
import re
import shutil
import stat
from pathlib import Path

#: names that become one path component (environment names, user source names …): no separators, no dot-dirs
NAME_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")


class UnsafePath(ValueError):
    """A path or name from user input that would leave the directory it belongs to."""


def colbench_home() -> Path:
    return Path(os.environ.get("COLBENCH_HOME") or Path.home() / ".colbench").expanduser()


def data_dir() -> Path:
    """Downloaded sources, synthetic twins and the format cache."""
    return Path(os.environ.get("COLBENCH_DATA") or colbench_home() / "data").expanduser()


def envs_dir() -> Path:
    """uv environments for library-version comparisons."""
    return colbench_home() / "envs"


def default_store_url() -> str:
    return os.environ.get("COLBENCH_STORE") or str(colbench_home() / "results.duckdb")


def check_name(name: str, what: str) -> str:
    """`name` if it can safely be one path component, else an UnsafePath that says what is allowed."""
    if not isinstance(name, str) or not NAME_PATTERN.fullmatch(name):
        raise UnsafePath(f"{what} {name!r}: use letters, digits, '.', '_' or '-' (starting with a letter or digit, "
                         "at most 64)")
    return name


def _location(path: Path) -> Path:
    """Where the entry `path` itself lives: its parent resolved, its own name kept (a symlink is not followed)."""
    path = Path(path).absolute()
    if path.name in ("", ".", ".."):
        return path.resolve()
    return path.parent.resolve() / path.name


def inside(base: Path, *parts: str, what: str = "path") -> Path:
    """`base / parts`, refused (UnsafePath) unless it resolves strictly inside `base` (symlinks followed)."""
    root = Path(base).resolve()
    joined = Path(base).joinpath(*parts)
    target = joined.resolve()
    if target == root or not target.is_relative_to(root):
        shown = "/".join(parts)
        raise UnsafePath(f"{what} {shown!r} leads outside {base}: give a name, not a path")
    return joined


def is_within(path: Path, base: Path) -> bool:
    """Whether the entry `path` (not what a symlink there points to) lies strictly inside `base`."""
    location, root = _location(path), Path(base).resolve()
    return location != root and location.is_relative_to(root)


def owned_roots() -> tuple[Path, ...]:
    """The directories colbench may delete in: $COLBENCH_HOME and $COLBENCH_DATA."""
    return tuple(dict.fromkeys(p.resolve() for p in (colbench_home(), data_dir())))


def require_owned(directory: Path, what: str) -> Path:
    """`directory` if it is (inside) $COLBENCH_HOME or $COLBENCH_DATA; a user-chosen directory elsewhere is refused
    for anything that deletes."""
    resolved = Path(directory).resolve()
    if not any(resolved == root or resolved.is_relative_to(root) for root in owned_roots()):
        raise UnsafePath(f"{what} {directory} is outside $COLBENCH_HOME and $COLBENCH_DATA: colbench deletes nothing "
                         f"there (set COLBENCH_DATA={directory} if it is a colbench data directory)")
    return Path(directory)


def remove(path: Path, *, within: Path) -> int:
    """Delete a file, a symlink (never what it points to) or a directory tree; returns the bytes of the regular
    files removed. Refused (UnsafePath) unless the entry lies strictly inside `within` after resolving its parent:
    every deletion in colbench goes through here."""
    path = Path(path)
    if not is_within(path, within):
        raise UnsafePath(f"refusing to delete {path}: it is not inside {within}")
    try:
        if path.is_symlink() or not path.is_dir():
            size = path.lstat().st_size if path.is_file() and not path.is_symlink() else 0
            path.unlink()
            return size
    except FileNotFoundError:
        return 0
    freed = tree_size(path)
    shutil.rmtree(path)
    return freed


def tree_size(path: Path) -> int:
    """Bytes of the regular files under `path`, symlinks not followed."""
    total = 0
    for folder, _dirs, files in os.walk(path):
        for name in files:
            try:
                st = os.lstat(os.path.join(folder, name))
            except OSError:
                continue
            if stat.S_ISREG(st.st_mode):
                total += st.st_size
    return total
