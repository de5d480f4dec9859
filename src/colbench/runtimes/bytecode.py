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

#: what `python -c` runs to compile a directory's missing or stale bytecode, on every CPU, printing nothing; a file
#: that does not compile (a module for another Python version, a test fixture) is skipped, not an error
COMPILE_DIR = ("import compileall, sys; "
               "compileall.compile_dir(sys.argv[1], quiet=2, force=False, workers=0)")


def compile_with(python: str, directory: Path, timeout_s: float = 600) -> None:
    """Compile `directory`'s missing or stale bytecode with `python`; a failure is left alone (the modules then
    compile on import, as they would without this)."""
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        subprocess.run([python, "-c", COMPILE_DIR, str(directory)], capture_output=True, timeout=timeout_s,
                       check=False)
