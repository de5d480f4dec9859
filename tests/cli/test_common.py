"""The CLI's shared wrapper: a stop request is one line and the shell's exit code, never a traceback."""

from __future__ import annotations

import signal

import pytest
import typer

from colbench.cli.common import friendly
from colbench.runner.interrupt import Interrupted


@pytest.mark.parametrize("raised, code, line", [
    (KeyboardInterrupt(), 130, "colbench: interrupted"),
    (Interrupted(signal.SIGTERM, "run X interrupted by SIGTERM"), 143, "colbench: run X interrupted by SIGTERM"),
])
def test_a_stop_request_is_one_line_and_the_shells_exit_code(capsys, raised, code, line):
    @friendly
    def command() -> None:
        raise raised

    with pytest.raises(typer.Exit) as stopped:
        command()
    assert stopped.value.exit_code == code
    assert capsys.readouterr().err.strip() == line


def test_messages_are_one_line_however_narrow_the_terminal(tmp_path):
    """Rich would break a long message at 80 columns, mid-sentence and mid-command; colbench's never are."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "COLUMNS": "40", "COLBENCH_HOME": str(tmp_path / "home")}
    done = subprocess.run([sys.executable, "-m", "colbench", "run", "csv-read", "--param", "reader=polar",
                           "--dry-run"], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 2
    (line,) = done.stderr.strip().splitlines()
    assert len(line) > 40 and line.endswith("(did you mean 'polars'?)"), line
