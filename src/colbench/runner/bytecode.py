"""Keep colbench's own bytecode cached, so a worker's start-up does not include compiling colbench.

Python normally writes `__pycache__/*.pyc` on first import. With PYTHONDONTWRITEBYTECODE (or `-B`), common in
containers and CI, it never does, and every fresh worker compiles colbench's modules from source again: about a
fifth of a Python worker's start-up, measured with callgrind (scripts/measure_overhead.py shows the time). Python
still *reads* existing bytecode in that mode, so the orchestrator compiles colbench's package once per run (only
stale or missing files; nothing when Python writes bytecode itself). An install directory that cannot be
written is left as it is.
"""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path


def cache_own_bytecode() -> bool:
    """Compile colbench's modules whose bytecode is missing or stale when Python will not; True if it had to."""
    if not sys.dont_write_bytecode:
        return False
    import compileall

    import colbench

    package = Path(colbench.__file__).resolve().parent
    with contextlib.suppress(OSError):
        compileall.compile_dir(package, quiet=2, force=False)
    return True
