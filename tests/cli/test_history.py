"""`colbench history` over real stored runs: a 50% step between commits is found where it happens."""

from __future__ import annotations

import json

import pytest

from tests.conftest import colbench

pytestmark = pytest.mark.slow  # real processes: the full run, not the fast tier


def test_history_finds_the_step_and_names_the_commit(tmp_path):
    home = tmp_path / "home"
    for i in range(12):
        factor = "1.0" if i < 6 else "1.5"
        colbench("run", "placebo", "--param", "duration=0.01", "--processes", "2", "--iterations", "5",
                 "--commit", f"{i:02d}" + "ab" * 19, home=home, check=True, env={"COLBENCH_PLACEBO_FACTOR": factor})
    proc = colbench("history", "placebo", "--format", "json", home=home, check=True)
    (history,) = json.loads(proc.stdout)
    assert len(history["points"]) == 12
    assert [p["label"][:2] for p in history["points"]] == [f"{i:02d}" for i in range(12)]
    (change,) = history["change_points"]
    assert change["index"] == 6 and change["at"].startswith("06")
    assert 0.35 < change["magnitude"] < 0.65
    table = colbench("history", "placebo", "--param", "duration=0.01", home=home, check=True).stdout
    assert "change point at 06" in table
    bad = colbench("history", "placebo", "--machine", "elsewhere", home=home)
    assert bad.returncode == 2 and "no results of placebo on machine 'elsewhere'" in bad.stderr
