"""An environment borrows the bytecode another one compiled for the same source files (runtimes/bytecode.py), and
compiles only what is left: a file whose source differs is compiled anew, never taken, and the donor is unchanged."""

from __future__ import annotations

import os
import sys
from importlib.util import cache_from_source
from pathlib import Path

from colbench.runtimes.bytecode import borrow_bytecode, compile_with


def _site(root: Path, files: dict[str, str], mtime: int = 1_700_000_000) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        os.utime(path, (mtime, mtime))
    return root


def test_the_same_sources_bytecode_is_linked_and_a_changed_source_is_compiled_anew(tmp_path):
    files = {"pkg/__init__.py": "X = 1\n", "pkg/core.py": "def f():\n    return 2\n", "pkg/tests/test_x.py": "T = 0\n"}
    donor = _site(tmp_path / "donor", files)
    compile_with(sys.executable, donor)
    pyc = Path(cache_from_source(str(donor / "pkg" / "core.py")))
    assert pyc.is_file() and not Path(cache_from_source(str(donor / "pkg" / "tests" / "test_x.py"))).exists()
    before = pyc.read_bytes()

    # the new one: the same __init__.py, another core.py of the same size and time (only a check by content could
    # tell; Python's own is by size and time, so it is the same file to Python too), a longer other.py
    new = _site(tmp_path / "new", {**files, "pkg/other.py": "Y = 22\n"})
    _site(tmp_path / "donor", {"pkg/other.py": "Y = 2\n"})
    compile_with(sys.executable, donor)
    linked = borrow_bytecode(new, [donor, tmp_path / "missing"])
    assert linked == 2  # __init__ and core; other.py differs in size: not taken
    mine = Path(cache_from_source(str(new / "pkg" / "core.py")))
    assert os.path.samefile(mine, pyc)
    assert not Path(cache_from_source(str(new / "pkg" / "other.py"))).exists()
    assert not (new / "pkg" / "tests" / "__pycache__").exists()

    compile_with(sys.executable, new)  # compiles what is missing, keeps what was linked
    assert Path(cache_from_source(str(new / "pkg" / "other.py"))).is_file()
    assert os.path.samefile(mine, pyc)
    # a source changed after the link: compiled anew into a file of its own, the donor's bytes untouched
    _site(new, {"pkg/core.py": "def f():\n    return 3 + 4\n"}, mtime=1_700_000_100)
    compile_with(sys.executable, new)
    assert not os.path.samefile(mine, pyc) and pyc.read_bytes() == before
    assert borrow_bytecode(new, [donor]) == 0  # all there: nothing linked twice
