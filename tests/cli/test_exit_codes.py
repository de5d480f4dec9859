"""`colbench run`'s exit codes, as `run --help` and the README promise them: 3 when every case of the run ended in
an error, with or without `--env` sides (a comparison of nothing is not "every comparison decided")."""

from __future__ import annotations

import pytest

from tests.conftest import colbench


@pytest.mark.slow
def test_a_run_whose_every_case_failed_exits_3(home) -> None:
    done = colbench("run", "placebo", "--param", "error=exception", "--processes", "1", "--iterations", "1",
                    "--warmup", "0", home=home)
    assert done.returncode == 3, done.stdout + done.stderr
    assert "every case of this run ended in an error" in done.stderr


@pytest.mark.slow
def test_a_comparison_whose_every_case_failed_exits_3_and_says_nothing_was_compared(home) -> None:
    done = colbench("run", "placebo", "--param", "error=exception", "--iterations", "1", "--warmup", "0",
                    "--env", "a=@current", "--env", "b=@current", home=home)
    assert done.returncode == 3, done.stdout + done.stderr
    out = done.stdout + done.stderr
    assert "every comparison decided" not in out
    assert "nothing to compare" in out and "every case of this run ended in an error" in out
