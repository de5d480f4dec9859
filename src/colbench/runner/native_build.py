"""Small C libraries colbench compiles on first use and caches under `$COLBENCH_HOME`: the callgrind helper
(runner/instructions.py) and the Arrow pool shim of memory profiles (runner/memory_profile.py).

A library is named by a hash of what it is built from, so a new source or tool version builds anew; two runs that
build at once both succeed (the result is moved into place atomically, either copy is fine)."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from colbench.paths import move, owned, owned_dir
from colbench.processes import run_bounded


class BuildFailed(RuntimeError):
    """A helper library could not be built: one line that says what to install."""


def build_library(source: str, library: Path, what: str, home: Path, link: tuple[str, ...] = (),
                  missing_header: tuple[str, str] | None = None) -> Path:
    """`source` compiled into `library` (inside `home`, every level checked) unless it is there already.
    `missing_header`: (a header's name, what to say when the compiler cannot find it)."""
    library = owned(library, what, home)
    if library.exists():
        return library
    compiler = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if not compiler:
        raise BuildFailed(f"colbench builds a small C library ({what}) on first use and needs a C compiler: "
                          "install one (Debian/Ubuntu: `apt-get install gcc`)")
    owned_dir(library.parent, f"{what} directory", home)
    with tempfile.TemporaryDirectory(dir=library.parent, prefix=".build-") as tmp:
        source_path, built = Path(tmp) / "source.c", Path(tmp) / "built.so"
        source_path.write_text(source)
        try:
            done = run_bounded([compiler, "-O2", "-shared", "-fPIC", "-o", str(built), str(source_path), *link],
                               timeout_s=120, what=f"the C compiler {compiler}")
        except (OSError, subprocess.SubprocessError) as exc:
            raise BuildFailed(f"cannot run the C compiler {compiler}: {exc}") from None
        if done.returncode != 0:
            if missing_header and missing_header[0] in done.stderr:
                raise BuildFailed(missing_header[1])
            first = next((line for line in done.stderr.splitlines() if "error" in line), done.stderr.strip())
            raise BuildFailed(f"building the {what} with {compiler} failed: {first[:300]}")
        move(built, library, what, home)
    return library
