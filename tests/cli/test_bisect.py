"""`colbench bisect` refuses bad input in one line with exit code 2, before anything is built or measured."""

from __future__ import annotations

import pytest

from tests.app.probe import build_wheel
from tests.conftest import require_tools

pytestmark = pytest.mark.slow  # real CLI processes: the full run, not the fast tier


@pytest.fixture
def wheels(tmp_path):
    for version in ("1.0.0", "1.1.0", "1.2.0"):
        build_wheel(tmp_path / "wheels", version)
    return tmp_path / "wheels"


@pytest.mark.parametrize(("args", "message"), [
    (["--good", "1.1.0", "--bad", "1.1.0"], "--good and --bad are the same point (1.1.0): name two"),
    (["--good", "1.2.0", "--bad", "1.0.0"], "--good 1.2.0 comes after --bad 1.0.0"),
    (["--good", "1.0.0", "--bad", "1.9.0"], "--bad 1.9.0: not among the wheels of"),
    (["--good", "1.0.0", "--bad", "1.2.0", "--param", "duration=0.01,0.02"], "give one value, not 0.01, 0.02"),
    (["--good", "1.0.0", "--bad", "1.2.0", "--direction", "sideways"], "--direction 'sideways'"),
    (["--good", "1.0.0", "--bad", "1.2.0", "--git", "."], "give one of --wheels and --git"),
    (["--good", "1.0.0", "--bad", "1.2.0", "--threshold", "150%"], "between 0% and 100%"),
    (["--good", "1.0.0", "--bad", "1.2.0", "--var", "NOEQUALS"], "--var 'NOEQUALS': write KEY=VALUE"),
])
def test_bad_input_is_one_line_and_exit_2(cli, home, wheels, args, message):
    done = cli("bisect", "placebo", "--wheels", str(wheels), *args)
    assert done.returncode == 2, done.stdout + done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], done.stderr
    # nothing half-built: no environment, no run
    assert not (home / "envs").exists() or not any(p for p in (home / "envs").iterdir() if not p.name.startswith("."))
    assert not (home / "results.duckdb").exists() or "bisect" not in cli("show", "--runs").stdout


@pytest.mark.parametrize(("args", "message"), [
    (["placebo", "--good", "1", "--bad", "2"], "name what to bisect: --package NAME"),
    (["placebo", "--good", "a", "--bad", "b", "--git", "/nowhere"], "--git needs --package NAME"),
    (["placebo", "--good", "1", "--bad", "2", "--package", "r:data.table"], "Debian ships one version"),
    (["placebo", "--good", "1", "--bad", "2", "--package", "java:jackson"], "pins Arrow Java only"),
    (["no-such-benchmark", "--good", "1", "--bad", "2", "--package", "pyarrow"], "no-such-benchmark"),
    (["csv-read", "--good", "1", "--bad", "2", "--package", "pyarrow"], "bisect measures one case"),
    (["ipc-bandwidth", "--param", "runtime=java", "--param", "threads=1", "--param", "batch_rows=1000",
      "--param", "access=scan", "--good", "1.0.0", "--bad", "1.2.0", "--wheels", "WHEELS"],
     "ipc-bandwidth runs in the java worker here, and the wheels of"),
])
def test_what_to_bisect_must_be_clear(cli, wheels, args, message):
    if "r:data.table" in args:
        require_tools("Rscript")  # what R has installed is what refuses the pin
    if "runtime=java" in args:
        require_tools("java")  # without Java the case is not planned at all
    done = cli("bisect", *[str(wheels) if a == "WHEELS" else a for a in args])
    assert done.returncode == 2, done.stdout + done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], done.stderr


@pytest.mark.slow
@pytest.mark.parametrize(("args", "message"), [
    (["--package", "colbench-no-such-package-3f9c2", "--good", "1.0", "--bad", "2.0"], "no such package on"),
    (["--package", "pyarrow", "--good", "14.0.9", "--bad", "26.0.1"],
     "--good 14.0.9: pyarrow has no such release (near it: 14.0.1, 14.0.2, 15.0.0, 15.0.1)"),
    (["--package", "pyarrow", "--good", "26.0.1", "--bad", "14.0.2"], "--good 26.0.1 is newer than --bad 14.0.2"),
])
def test_the_package_index_is_asked_and_bad_versions_are_one_line(cli, args, message):
    """Network: the real PyPI."""
    done = cli("bisect", "placebo", *args)
    assert done.returncode == 2, done.stdout + done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], done.stderr
