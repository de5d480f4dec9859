"""Interpreters found where users keep them, each release on the newest one its wheels support, and the companions
of its era; bad input is one line that says what to do."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from packaging.tags import Tag

from colbench.model.env_request import EnvError, parse_env
from colbench.runtimes.era import recipe
from colbench.runtimes.interpreters import (
    Interpreter,
    InterpreterError,
    find_interpreter,
    installed_interpreters,
    newest_supporting,
    wheel_pythons,
)
from colbench.runtimes.releases import Release, releases_from_files

REAL = Path(os.path.realpath(os.sys.executable))  # an interpreter to stand behind the decoy installs


def _install(root: Path, *parts: str) -> Path:
    folder = root.joinpath(*parts[:-1], "bin")
    folder.mkdir(parents=True)
    exe = folder / parts[-1]
    exe.symlink_to(REAL)
    return exe


@pytest.fixture
def decoys(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """pyenv's and uv's folders in a decoy home, PATH with a pyenv shim that must be skipped and nothing else."""
    pyenv, uv = tmp_path / "pyenv", tmp_path / "uv"
    _install(pyenv / "versions", "3.9.18", "python3.9")
    _install(pyenv / "versions", "3.9.7", "python3.9")  # an older patch: the newer one wins
    _install(pyenv / "versions", "3.7.16", "python3.7")  # older than the worker runs on: left out
    _install(uv, "cpython-3.12.1-linux-x86_64-gnu", "python3.12")
    _install(uv, "cpython-3.13.0+freethreaded-linux-x86_64-gnu", "python3.13t")
    shims = tmp_path / "shims"
    shims.mkdir()
    (shims / "python3.10").write_text("#!/bin/sh\nexit 127\n")
    (shims / "python3.10").chmod(0o755)
    monkeypatch.setenv("PYENV_ROOT", str(pyenv))
    monkeypatch.setenv("UV_PYTHON_INSTALL_DIR", str(uv))
    monkeypatch.setenv("PATH", str(shims))
    return tmp_path


def test_interpreters_are_found_in_pyenv_and_uv_folders_not_through_shims(decoys: Path) -> None:
    found = installed_interpreters()
    assert [(i.full, i.source) for i in found] == [("3.9.18", "pyenv"), ("3.12.1", "uv")]
    assert find_interpreter("3.12").path == decoys / "uv" / "cpython-3.12.1-linux-x86_64-gnu" / "bin" / "python3.12"
    assert find_interpreter("3.9.18").full == "3.9.18"


@pytest.mark.parametrize(("asked", "said"), [
    ("3.11", r"no Python 3\.11 installed here; found 3\.9, 3\.12 .*: install it with `pyenv install 3\.11`"),
    ("3.9.7", r"no Python 3\.9\.7 installed here \(this machine has 3\.9\.18\)"),
    ("3.7", r"the Python worker runs on Python 3\.8 and newer"),
    ("three", r"name a Python version as MAJOR\.MINOR"),
])
def test_a_python_no_installed_interpreter_provides_is_one_line(decoys: Path, asked: str, said: str) -> None:
    with pytest.raises(InterpreterError, match=said) as caught:
        find_interpreter(asked)
    assert "\n" not in str(caught.value)


def test_the_install_command_is_uvs_where_there_is_no_pyenv(decoys: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYENV_ROOT", str(decoys / "no-pyenv"))
    with pytest.raises(InterpreterError, match="install it with `uv python install 3.11`"):
        find_interpreter("3.11")


@pytest.mark.parametrize(("option", "said"), [
    ("x=python>=3.10 pyarrow", "pin one Python version as python==3.12"),
    ("x=python==3.12 python==3.13 pyarrow", "pin one Python version"),
    ("x=python==3.12", "name what to install beside python==3.12"),
    ("x=python==3 pyarrow", "name a Python version as MAJOR.MINOR"),
])
def test_env_specs_name_one_python(option: str, said: str) -> None:
    with pytest.raises(EnvError, match=said):
        parse_env(option)


def test_an_env_spec_keeps_its_python_apart_from_its_requirements() -> None:
    spec = parse_env("new=python==3.12 pyarrow==21.0.0")
    assert spec.python == "3.12" and spec.requirements == ("pyarrow==21.0.0",)
    assert spec.spec == "python==3.12 pyarrow==21.0.0"


def _files(*names: str, uploaded: str = "2020-05-18T20:26:22Z") -> list[dict[str, object]]:
    return [{"filename": name, "upload-time": uploaded} for name in names]


def test_a_release_runs_on_the_newest_installed_python_its_wheels_support() -> None:
    here = [Interpreter((3, minor, 0), Path(f"/py3{minor}"), "pyenv") for minor in (8, 9, 10)]
    files = [
        *_files("pyarrow-0.17.1-cp37-cp37m-manylinux2014_x86_64.whl",
                "pyarrow-0.17.1-cp38-cp38-manylinux2014_x86_64.whl", "pyarrow-0.17.1.tar.gz"),
        *_files("pyarrow-0.15.1-cp36-cp36m-manylinux2010_x86_64.whl",
                "pyarrow-0.15.1-cp37-cp37m-manylinux2010_x86_64.whl", "pyarrow-0.15.1.tar.gz",
                uploaded="2019-11-01T15:14:19Z"),
        *_files("pyarrow-8.0.0-cp39-cp39-manylinux_2_17_x86_64.manylinux2014_x86_64.whl",
                "pyarrow-8.0.0-cp310-cp310-manylinux_2_17_x86_64.manylinux2014_x86_64.whl",
                uploaded="2022-05-06T21:36:10Z"),
    ]
    old, oldest, newer = releases_from_files("pyarrow", files, interpreters=here)
    assert (old.version, old.python, old.skip) == ("0.15.1", "", "no wheel for any installed Python (its wheels "
                                                   "are for Python 3.6, 3.7; otherwise a source build; installed: "
                                                   "3.8, 3.9, 3.10)")
    assert (oldest.version, oldest.python, oldest.uploaded) == ("0.17.1", "3.8", "2020-05-18T20:26:22Z")
    assert (newer.version, newer.python) == ("8.0.0", "3.10")
    assert wheel_pythons(newer.wheel_tags) == ["3.9", "3.10"]
    assert newest_supporting(frozenset({Tag("py3", "none", "any")}), here) == here[-1]


def test_a_release_gets_the_companions_of_its_day_or_the_known_constraints_without_one() -> None:
    dated = Release("0.17.1", python="3.8", uploaded="2020-05-18T20:26:22Z")
    made = recipe("pyarrow", dated)
    assert made.requirements == ("pyarrow==0.17.1", "numpy", "pandas") and made.as_of == "2020-05-18T20:26:22Z"
    assert made.note == "Python 3.8, numpy pandas as of 2020-05-18"
    undated = recipe("pyarrow", Release("15.0.2", python="3.12"))
    assert undated.requirements == ("pyarrow==15.0.2", "numpy", "pandas", "numpy<2") and undated.as_of == ""
    assert recipe("pyarrow", Release("16.1.0"), dated=False).requirements == ("pyarrow==16.1.0", "numpy", "pandas")
    mine = recipe("pyarrow", Release("15.0.2"), ("numpy==1.26.4", "duckdb"))
    assert mine.requirements == ("pyarrow==15.0.2", "pandas", "numpy==1.26.4", "duckdb")  # a named numpy wins


def test_a_hung_interpreter_on_path_is_killed_with_what_it_started(tmp_path):
    """Issue 48: a `python3.X` on PATH that hangs was killed after 10 s, but the child it started lived on with
    parent 1. The probe runs in a process group of its own (colbench.processes), killed whole."""
    import os
    import signal
    import sys
    import time

    from colbench.runtimes.interpreters import PROBE_TIMEOUT_S, _ask_version

    pid_file = tmp_path / "child.pid"
    fake = tmp_path / "python3.77"
    fake.write_text(f"#!/bin/sh\n{sys.executable} -c 'import time; time.sleep(600)' &\necho $! > {pid_file}\n"
                    "sleep 600\n")
    fake.chmod(0o755)
    started = time.monotonic()
    assert _ask_version(fake) is None
    assert time.monotonic() - started < PROBE_TIMEOUT_S + 10
    child = int(pid_file.read_text())
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        try:
            os.kill(child, 0)
            state = Path(f"/proc/{child}/stat").read_text().split(") ")[1][0]
        except (ProcessLookupError, FileNotFoundError):
            break
        if state == "Z":
            break
        time.sleep(0.05)
    else:
        os.kill(child, signal.SIGKILL)
        raise AssertionError("the hung interpreter's child lives on")
