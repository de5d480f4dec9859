"""Where colbench keeps its files (everything under COLBENCH_HOME, default ~/.colbench), and the checks every path
goes through before colbench writes, renames or deletes there:

- `inside`: a path built from user input stays in the directory it belongs to (after `resolve()`);
- `owned`: a directory colbench writes into or deletes in resolves inside its own tree ($COLBENCH_HOME, or
  $COLBENCH_DATA when set): a symlink planted anywhere on the way (`envs` -> /elsewhere, a data set's folder ->
  /elsewhere) is refused, never followed;
- `remove`: the one way colbench deletes anything, only inside an owned directory.
"""

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
    """The trees colbench may write and delete in, resolved: $COLBENCH_HOME, and $COLBENCH_DATA when the user set it.
    The default data directory ($COLBENCH_HOME/data) is part of the home's tree: a symlink there that leads out of
    the home is not an owned root (set COLBENCH_DATA to that directory to make it one)."""
    roots = [colbench_home().resolve()]
    if os.environ.get("COLBENCH_DATA"):
        roots.append(data_dir().resolve())
    return tuple(dict.fromkeys(roots))


def _owned_root_of(resolved: Path) -> Path | None:
    return next((root for root in owned_roots() if resolved == root or resolved.is_relative_to(root)), None)


def owned(path: Path, what: str = "directory", root: Path | None = None) -> Path:
    """`path` (a directory colbench writes into, renames in or deletes in) if it resolves inside an owned tree
    (`root` when given: the data root a cache call was handed; else $COLBENCH_HOME or $COLBENCH_DATA); UnsafePath,
    naming the symlink that leads out, otherwise. Checked before the first write, so nothing is built into or
    renamed onto a planted link."""
    path = Path(path)
    resolved = path.resolve()
    if root is not None:
        top = Path(root).resolve()
        if resolved == top or resolved.is_relative_to(top):
            return path
        where = f"{root}"
    elif _owned_root_of(resolved) is not None:
        return path
    else:
        where = (f"colbench's own directories ($COLBENCH_HOME {colbench_home()}"
                 f"{', $COLBENCH_DATA ' + str(data_dir()) if os.environ.get('COLBENCH_DATA') else ''})")
    link = _escaping_link(path)
    because = f": {link} is a symlink to {link.resolve()}" if link else ""
    raise UnsafePath(f"{what} {path} is outside {where}{because}; colbench writes and deletes only there: remove "
                     "the link, or point COLBENCH_HOME (or COLBENCH_DATA) at the directory you mean")


def owned_dir(path: Path, what: str = "directory", root: Path | None = None) -> Path:
    """The directory `path`, created if missing, after `owned` checked it (before creating: a planted link is
    refused, not followed; and after: nothing swapped in between resolves elsewhere). The one way colbench makes a
    directory it will write into."""
    owned(path, what, root)
    Path(path).mkdir(parents=True, exist_ok=True)
    return owned(path, what, root)


def _escaping_link(path: Path) -> Path | None:
    """The first component of `path` that is a symlink, if any (the reason it resolves elsewhere)."""
    current = Path(path.anchor)
    for part in path.absolute().parts[1:]:
        current = current / part
        if current.is_symlink():
            return current
    return None


def remove(path: Path, *, within: Path, own_temp: bool = False) -> int:
    """Delete a file, a symlink (never what it points to) or a directory tree; returns the bytes of the regular
    files removed. Refused (UnsafePath) unless the entry lies strictly inside `within` after resolving its parent,
    and `within` itself resolves inside colbench's own tree (`owned`): every deletion in colbench goes through here.
    `own_temp`: the entry is a temporary file colbench itself created a moment ago next to a file the user asked
    for (an export's `*.part`), which may be outside colbench's tree."""
    path = Path(path)
    if not own_temp:
        owned(within, "directory")
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
