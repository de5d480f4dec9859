"""Compile a directory's Python bytecode with a given interpreter, for its version.

uv installs packages without bytecode (`uv pip sync` without `--compile-bytecode`), and Python under
PYTHONDONTWRITEBYTECODE (or unable to write its environment) never caches what it compiles: every worker process
would compile pyarrow's and pandas' modules again, a cost that lands in its start and in its first call, not in later
ones, and costs 8x under Valgrind.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

from colbench.processes import run_bounded

#: what `python -c` runs to compile a directory's missing or stale bytecode, on every CPU, printing nothing. A
#: package's own test folders (`test/`, `tests/` below the directory) are left out: no worker imports them, and they
#: hold most of the files (1,463 of 2,090 for pyarrow 17, pandas and numpy: 1.1 s instead of 2.8 s). A file that
#: does not compile (a module for another Python version) is skipped, not an error. When few files lack their
#: bytecode (the rest borrowed, `borrow_bytecode`) one process checks and compiles them: a pool of workers fed one
#: file at a time took 3.3 s to find 3,145 files up to date, one process 0.75 s (load 13).
COMPILE_DIR = """
import compileall, importlib.util, os, re, sys
top = os.path.abspath(sys.argv[1])
tests = re.compile(re.escape(top + os.sep) + r"(?:[^/]+/)*tests?/")
pyc = importlib.util.cache_from_source
missing = sum(1 for folder, _, files in os.walk(top) if not tests.match(folder + os.sep) for name in files
              if name.endswith(".py") and not os.path.exists(pyc(os.path.join(folder, name))))
compileall.compile_dir(top, quiet=2, force=False, workers=0 if missing > 200 else 1, rx=tests)
"""


def compile_with(python: str, directory: Path, timeout_s: float = 600) -> None:
    """Compile `directory`'s missing or stale bytecode with `python`; a failure is left alone (the modules then
    compile on import, as they would without this)."""
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        run_bounded([python, "-c", COMPILE_DIR, str(directory)], timeout_s=timeout_s, what="compiling bytecode")


def borrow_bytecode(site: Path, donors: Sequence[Path]) -> int:
    """Hard-link into the site-packages `site` the bytecode other environments' site-packages (`donors`, of the same
    Python version) hold for the same source files, before `compile_with` compiles what is left; returns how many
    files it linked.

    Environments of one machine share most of their packages: uv installs them as hard links to the same files of its
    cache, so bisect points or a watch's releases that differ in one library compiled pandas, scipy and matplotlib
    again each (45-55 s of a 52-60 s build at load 13; the bytecode is the same bytes). A source file counts as the
    same when its size and modification time are, the rule Python itself checks a .pyc by, and `compile_with`
    (compileall without force) checks every linked file by it again: a stale one is compiled anew, written beside
    (Python replaces a .pyc, never writes into it), so the donor's file is never changed."""
    linked = 0
    for donor in donors:
        with contextlib.suppress(OSError):
            linked += _borrow_from(site, donor)
    return linked


def _same_source(one: Path, other: Path) -> bool:
    try:
        a, b = one.stat(), other.stat()
    except OSError:
        return False
    return (a.st_size, int(a.st_mtime)) == (b.st_size, int(b.st_mtime))


def _borrow_from(site: Path, donor: Path) -> int:
    linked = 0
    for folder, subfolders, files in os.walk(donor):
        here = Path(folder)
        target = site / here.relative_to(donor)
        if here.name != "__pycache__":
            if not target.is_dir():
                subfolders.clear()  # a package the new environment does not have
            continue
        for name in files:
            source = name.partition(".")[0] + ".py"  # module.cpython-311.pyc, module.cpython-311.opt-1.pyc
            if not name.endswith(".pyc") or (target / name).exists():
                continue
            if not _same_source(here.parent / source, target.parent / source):
                continue
            with contextlib.suppress(OSError):
                target.mkdir(exist_ok=True)
                try:
                    os.link(here / name, target / name)
                except OSError:  # another file system, or links not allowed: a copy is still no compile
                    shutil.copy2(here / name, target / name)
                linked += 1
    return linked
