"""Where colbench keeps its files (everything under COLBENCH_HOME, default ~/.colbench), and the one mechanism
every path goes through before colbench writes, renames or deletes there:

- `inside`: a path built from user input stays in the directory it belongs to (after `resolve()`);
- `owned`: every level of a path colbench writes, renames or deletes, from its owned root ($COLBENCH_HOME,
  $COLBENCH_DATA when set, or a root a command was handed: `data --root`, a report's output directory) down to
  the file, is looked at: a symlink planted anywhere on the way (`envs` -> /elsewhere, `spool/<store>` ->
  /elsewhere, a data set's folder -> /elsewhere) that leads out of that root is refused, never followed;
- `owned_dir`, `write_atomic` / `write_text` (written aside and renamed into place), `move`: making folders,
  writing and renaming files only after `owned` said yes;
- `remove`: the one way colbench deletes anything, only inside an owned directory.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import shutil
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

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


def expand_user(path: str | Path, what: str = "path") -> Path:
    """`path` with `~` or `~user` expanded; UnsafePath (one line) when `~user` names no user here (pathlib raises a
    RuntimeError for it)."""
    try:
        return Path(path).expanduser()
    except (RuntimeError, ValueError):  # ValueError: a NUL in the user name
        first = str(path).split("/", 1)[0]
        raise UnsafePath(f"{what} {str(path)[:80]!r}: {first[:40]!r} names no user on this machine") from None


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
        link = next((p for p in [joined, *joined.parents] if _within(_lexical(p), _lexical(base)) and p != base
                     and p.is_symlink()), None)
        if link is not None:  # a plain name, but a link planted there leads out
            raise UnsafePath(f"{what} {shown!r}: {link} is a symlink to {link.resolve()}, outside {base}; remove "
                             "the link")
        raise UnsafePath(f"{what} {shown!r} leads outside {base}: give a name, not a path")
    return joined


def is_within(path: Path, base: Path) -> bool:
    """Whether the entry `path` (not what a symlink there points to) lies strictly inside `base`."""
    location, root = _location(path), Path(base).resolve()
    return location != root and location.is_relative_to(root)


def _lexical(path: Path) -> Path:
    """`path` made absolute without following anything (`..` taken lexically)."""
    return Path(os.path.abspath(path))


def _within(path: Path, root: Path) -> bool:
    return path == root or path.is_relative_to(root)


def in_tree(path: Path, base: Path) -> bool:
    """Whether `path`, as written (no link followed), is `base` or lies below it."""
    return _within(_lexical(path), _lexical(base))


def _roots(root: Path | None) -> list[Path]:
    """$COLBENCH_HOME, $COLBENCH_DATA when set, and `root` when given: the trees colbench may write in."""
    return [colbench_home(), *([data_dir()] if os.environ.get("COLBENCH_DATA") else []),
            *([Path(root)] if root is not None else [])]


def _walk_start(path: Path, root: Path | None) -> tuple[Path, str] | None:
    """The owned root `path` lies in, as written (or in its link-free form), and how to name it: the outermost of
    $COLBENCH_HOME, $COLBENCH_DATA and `root` that holds it, so a link anywhere below the home is seen even under a
    data root a caller handed in ($COLBENCH_HOME/data/...). None when it lies in none of them."""
    own = _where(None)
    found: tuple[Path, str] | None = None
    for top in _roots(root):
        name = str(root) if root is not None and top == Path(root) else own
        for form in (_lexical(top), Path(top).resolve()):
            if _within(path, form) and (found is None or len(form.parts) < len(found[0].parts)):
                found = (form, name)
    return found


def _outside(path: Path, what: str, where: str, link: Path | None) -> UnsafePath:
    because = f": {link} is a symlink to {link.resolve()}" if link else ""
    return UnsafePath(f"{what} {path} is outside {where}{because}; colbench writes and deletes only there: remove "
                      "the link, or point COLBENCH_HOME (or COLBENCH_DATA) at the directory you mean")


def _where(root: Path | None) -> str:
    if root is not None:
        return str(root)
    return (f"colbench's own directories ($COLBENCH_HOME {colbench_home()}"
            f"{', $COLBENCH_DATA ' + str(data_dir()) if os.environ.get('COLBENCH_DATA') else ''})")


def real_path(path: Path) -> Path:
    """`path` with a handle's name (/proc/PID/fd/FD/…, as `through_handle` makes it) put back as the directory the
    handle holds, so the checks below see where a temporary file really is; any other path as it is."""
    prefix = f"/proc/{os.getpid()}/fd/"
    text = str(path)
    if not text.startswith(prefix):
        return Path(path)
    fd, _, rest = text[len(prefix):].partition("/")
    try:
        held = Path(os.readlink(prefix + fd))
    except OSError:
        return Path(path)
    return held / rest if rest else held


def owned(path: Path, what: str = "directory", root: Path | None = None) -> Path:
    """`path` (a directory or a file colbench writes, renames or deletes) if every level of it, from the owned root
    it lies in down to its last component, stays in that root; else UnsafePath naming the symlink that leads out.

    The owned roots are $COLBENCH_HOME and $COLBENCH_DATA (when set), and `root` when a caller was handed one (a
    data root given with --root, a report's output directory). Each existing component is looked at with lstat:
    a symlink is allowed only when it resolves inside the root, and a component that does not exist yet ends the
    walk (colbench makes it, below a checked folder). Checked before the first byte is written, so nothing is
    built into, written through or renamed onto a planted link."""
    path = real_path(Path(path))
    written = _lexical(path)
    start = _walk_start(written, root)
    if start is None:
        raise _outside(path, what, _where(root), _escaping_link(written))
    first, where = start
    # a link may lead from one owned root into another ($COLBENCH_HOME/data -> the disk $COLBENCH_DATA names)
    # (not into a root a caller handed in that lies below it: `$COLBENCH_HOME/data` linked out is refused)
    tops = [first.resolve(), *(Path(top).resolve() for top in _roots(None))]
    current = first
    for part in written.relative_to(first).parts:
        current = current / part
        try:
            is_link = stat.S_ISLNK(os.lstat(current).st_mode)
        except FileNotFoundError:
            break
        except NotADirectoryError:
            raise UnsafePath(f"{what} {path}: {current.parent} is a file, not a directory") from None
        if is_link and not any(_within(current.resolve(), top) for top in tops):
            raise _outside(path, what, where, current)
    if not any(_within(path.resolve(), top) for top in tops):  # `..` after a link: where the system would go
        raise _outside(path, what, where, _escaping_link(written))
    return path


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


# ------------------------------------------------------------------------------------------- writing, renaming

#: what marks a file still being written (a temporary name beside its target, renamed when complete)
TEMP_MARK = ".tmp-"


def temp_path_for(target: Path) -> Path:
    return target.with_name(f".{target.name}{TEMP_MARK}{os.getpid()}-{secrets.token_hex(4)}")


def fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


@contextlib.contextmanager
def directory_handle(path: Path, what: str = "directory", roots: list[Path] | None = None) -> Iterator[int]:
    """An open handle (a file descriptor) on the directory `path`, checked where it really is: the kernel's own
    name of the opened directory (/proc/self/fd) must lie in one of `roots` (resolved). What is then written,
    renamed or deleted relative to the handle (dir_fd) stays in that directory, whatever link is swapped into the
    path afterwards: the window between the owned-path walk and the write is closed (issue 48). Without /proc
    (not Linux) the path walk before it is the check."""
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0))
    try:
        if roots is not None:
            try:
                real = Path(os.readlink(f"/proc/self/fd/{fd}"))
            except OSError:
                real = None
            if real is not None and not any(_within(real, Path(top).resolve()) for top in roots):
                raise UnsafePath(f"{what} {path} is {real}, outside {', '.join(str(r) for r in roots)}: a link was "
                                 "swapped in while colbench wrote; nothing was written there")
        yield fd
    finally:
        os.close(fd)


def through_handle(fd: int, name: str, fallback: Path) -> Path:
    """A path to `name` in the directory the handle `fd` holds open, for code that needs a path (a library writing
    a file, a child process): /proc/PID/fd/FD/NAME resolves through the handle, not through the path's links.
    `fallback` where there is no /proc."""
    through = Path(f"/proc/{os.getpid()}/fd/{fd}")
    return through / name if through.is_dir() else fallback


def _unlink_at(fd: int, name: str) -> None:
    """Delete `name` (a file, a link, or a tree colbench made) in the directory the handle holds; gone is fine."""
    try:
        os.unlink(name, dir_fd=fd)
    except FileNotFoundError:
        return
    except IsADirectoryError:
        shutil.rmtree(name, dir_fd=fd)


@contextlib.contextmanager
def atomic_path(target: Path, what: str = "file", root: Path | None = None) -> Iterator[Path]:
    """Yield a temporary path next to `target` (its folder made and checked, every level: `owned_dir`, then held
    open: `directory_handle`); rename it onto `target` when the block succeeds, relative to that handle. The
    rename replaces a symlink at `target` rather than writing through it; the temporary file is ours (removed when
    the block fails)."""
    target = real_path(Path(target))
    owned_dir(target.parent, f"folder of {what}", root)
    owned(target, what, root)
    name = temp_path_for(target).name
    with directory_handle(target.parent, f"folder of {what}", _roots(root)) as fd:
        try:
            yield through_handle(fd, name, target.parent / name)
            os.replace(name, target.name, src_dir_fd=fd, dst_dir_fd=fd)
        finally:
            _unlink_at(fd, name)  # ours, a moment old; gone already when the rename worked


def create_new(path: Path) -> BinaryIO:
    """Open `path` for writing, failing if anything is there (a symlink included: never followed)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0), 0o644)
    return os.fdopen(fd, "wb")


def write_atomic(path: Path, data: bytes, what: str = "file", root: Path | None = None, *,
                 durable: bool = True) -> Path:
    """`path` holds `data` or its old content, never a part, even after a power cut: every level checked (`owned`),
    written aside, fsync, rename, fsync of the directory (`durable=False`: no fsyncs, for files that can be made
    again). The one way colbench writes a file under its home or data directory."""
    with atomic_path(path, what, root) as tmp, create_new(tmp) as handle:
        handle.write(data)
        if durable:
            handle.flush()
            os.fsync(handle.fileno())
    if durable:
        fsync_dir(Path(path).parent)
    return Path(path)


def write_text(path: Path, text: str, what: str = "file", root: Path | None = None, *, durable: bool = False) -> Path:
    """`write_atomic` of UTF-8 text (no fsync unless asked: a file colbench can write again)."""
    return write_atomic(path, text.encode("utf-8"), what, root, durable=durable)


def move(source: Path, target: Path, what: str = "file", root: Path | None = None) -> Path:
    """Rename `source` onto `target` (both checked at every level: nothing is moved out of, or into, a folder a
    link leads to); a symlink at `target` is replaced, never followed."""
    source, target = real_path(Path(source)), real_path(Path(target))
    owned(source.parent, f"folder of {what}", root)
    owned(target, what, root)
    roots = _roots(root)
    with directory_handle(source.parent, f"folder of {what}", roots) as from_fd, \
            directory_handle(target.parent, f"folder of {what}", roots) as to_fd:
        os.replace(source.name, target.name, src_dir_fd=from_fd, dst_dir_fd=to_fd)
    return target


def remove(path: Path, *, within: Path, own_temp: bool = False, root: Path | None = None) -> int:
    """Delete a file, a symlink (never what it points to) or a directory tree; returns the bytes of the regular
    files removed. Refused (UnsafePath) unless the entry lies strictly inside `within` after resolving its parent,
    and `within` and the entry's folder are owned at every level (`owned`; `root`: a data root a caller was handed):
    every deletion in colbench goes through here (but a write case's output in the worker's own scratch:
    `benchmarks.common.remove_output`, on Python 3.8 too). `own_temp`: the entry is a temporary file colbench itself
    created a moment ago next to a file the user asked for (an export's `*.part`), which may be outside colbench's
    tree."""
    path, within = real_path(Path(path)), real_path(Path(within))
    if not own_temp:
        owned(within, "directory", root)
        owned(path.parent, "directory", root)
    if not is_within(path, within):
        raise UnsafePath(f"refusing to delete {path}: it is not inside {within}")
    try:
        folder = directory_handle(path.parent, "folder of what is deleted",
                                  [Path(within).resolve()] if own_temp else _roots(root))
        with folder as fd:  # what goes is what the handle's directory holds, whatever the path leads to by then
            return _remove_at(fd, path)
    except FileNotFoundError:
        return 0


def _remove_at(fd: int, path: Path) -> int:
    """Delete the entry `path.name` of the directory the handle `fd` holds: a file or link, or a tree."""
    try:
        entry = os.lstat(path.name, dir_fd=fd)
    except FileNotFoundError:
        return 0
    if not stat.S_ISDIR(entry.st_mode):
        os.unlink(path.name, dir_fd=fd)
        return entry.st_size if stat.S_ISREG(entry.st_mode) else 0
    freed = tree_size(path)
    shutil.rmtree(path.name, dir_fd=fd)  # fd-based: never follows a link planted inside
    return freed


# ------------------------------------------------------------------------------------ files the user names


def check_output_file(path: Path, what: str, *, makes_folders: bool = False) -> Path:
    """A file the user named for colbench to write or append to (`export -o`, `store copy`'s destination, `watch
    --summary`), checked for what it is before any work starts: an existing regular file (a link to one is the
    user's choice), or a new name in an existing directory (`makes_folders`: or under folders the writer makes, below
    the nearest existing directory). Never a directory, a FIFO (writing to one waits for a reader: forever under
    cron), a socket or a device; a one-line UnsafePath says which."""
    path = Path(path)
    try:
        mode = os.stat(path).st_mode
    except NotADirectoryError:
        raise UnsafePath(f"{what} {path}: cannot write it: a part of its folder is a file, not a directory") from None
    except FileNotFoundError:
        if os.path.lexists(path):
            raise UnsafePath(f"{what} {path}: a symlink to nothing ({os.readlink(path)}); name a file") from None
        folder = path.parent
        while makes_folders and not os.path.lexists(folder) and folder != folder.parent:
            folder = folder.parent  # folders the writer makes: the nearest existing one must be a directory
        if not folder.is_dir():
            why = "is not a directory" if os.path.lexists(folder) else "does not exist"
            raise UnsafePath(f"{what} {path}: cannot write it: {folder} {why}") from None
        return path
    except OSError as exc:
        raise UnsafePath(f"{what} {path}: cannot look at it ({exc.strerror or exc})") from None
    if stat.S_ISREG(mode):
        return path
    kind = ("a directory: give a file name in it" if stat.S_ISDIR(mode) else
            "a FIFO (a named pipe): colbench would wait for a reader" if stat.S_ISFIFO(mode) else
            "a socket" if stat.S_ISSOCK(mode) else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else
            "not a regular file")
    raise UnsafePath(f"{what} {path}: is {kind}; name a regular file or a new one")


def append_output(path: Path, text: str, what: str) -> None:
    """Append `text` to a file the user named, checked again as it is opened (O_NONBLOCK: a FIFO swapped in since
    `check_output_file` fails at once instead of blocking; fstat: only a regular file is written)."""
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags, 0o644)
    except OSError as exc:
        raise UnsafePath(f"{what} {path}: cannot open it for writing ({exc.strerror or exc})") from None
    with os.fdopen(fd, "ab") as handle:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise UnsafePath(f"{what} {path}: is not a regular file; name a regular file or a new one")
        os.set_blocking(fd, True)
        handle.write(text.encode("utf-8"))


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
