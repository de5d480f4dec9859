"""Keep colbench's own bytecode cached, so a worker's start-up does not include compiling colbench.

Python normally writes `__pycache__/*.pyc` on first import. With PYTHONDONTWRITEBYTECODE (or `-B`), common in
containers and CI, it never does, and every fresh worker compiles colbench's modules from source again: about a
fifth of a Python worker's start-up, measured with callgrind (scripts/measure_overhead.py shows the time). Python
still *reads* existing bytecode in that mode, so the orchestrator compiles colbench's package once per run (only
stale or missing files; nothing when Python writes bytecode itself), for its own interpreter and for each other
Python version a run's environments use (their workers import colbench from the same source). An install directory
that cannot be written is left as it is.

The packages of a uv environment are compiled when it is built (runtimes/python.py): uv installs without bytecode.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterable
from pathlib import Path

from colbench.runtimes.bytecode import compile_with


def cache_own_bytecode(other_pythons: Iterable[str] = ()) -> bool:
    """Compile colbench's modules whose bytecode is missing or stale when Python will not, with this interpreter and
    each of `other_pythons` (the interpreters of a run's environments); True if it had to."""
    if not sys.dont_write_bytecode:
        return False
    import compileall

    import colbench

    package = Path(colbench.__file__).resolve().parent
    with contextlib.suppress(OSError):
        compileall.compile_dir(package, quiet=2, force=False)
    for python in sorted(set(other_pythons) - {sys.executable}):
        compile_with(python, package)
    return True
