"""Compile a directory's Python bytecode with a given interpreter, for its version.

uv installs packages without bytecode (`uv pip sync` without `--compile-bytecode`), and Python under
PYTHONDONTWRITEBYTECODE (or unable to write its environment) never caches what it compiles: every worker process
would compile pyarrow's and pandas' modules again, a cost that lands in its start and in its first call, not in later
ones, and costs 8x under Valgrind.
"""

from __future__ import annotations

import contextlib
import subprocess
from pathlib import Path

from colbench.processes import run_bounded

#: what `python -c` runs to compile a directory's missing or stale bytecode, on every CPU, printing nothing. A
#: package's own test folders (`test/`, `tests/` below the directory) are left out: no worker imports them, and they
#: hold most of the files (1,463 of 2,090 for pyarrow 17, pandas and numpy: 1.1 s instead of 2.8 s). A file that
#: does not compile (a module for another Python version) is skipped, not an error.
COMPILE_DIR = """
import compileall, os, re, sys
top = os.path.abspath(sys.argv[1])
tests = re.compile(re.escape(top + os.sep) + r"(?:[^/]+/)*tests?/")
compileall.compile_dir(top, quiet=2, force=False, workers=0, rx=tests)
"""


def compile_with(python: str, directory: Path, timeout_s: float = 600) -> None:
    """Compile `directory`'s missing or stale bytecode with `python`; a failure is left alone (the modules then
    compile on import, as they would without this)."""
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        run_bounded([python, "-c", COMPILE_DIR, str(directory)], timeout_s=timeout_s, what="compiling bytecode")
