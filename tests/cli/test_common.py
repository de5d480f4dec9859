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
