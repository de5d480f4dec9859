"""`colbench history` over real stored runs: a 50% step between commits is found where it happens."""

from __future__ import annotations

import json

import pytest

from tests.conftest import colbench

# real processes (the full run, not the fast tier), and a step in measured times: alone (tests/xdist_plan.py)
pytestmark = [pytest.mark.slow, pytest.mark.serial]


def test_history_finds_the_step_and_names_the_commit(stepped_history):
    home = stepped_history  # 12 runs of placebo duration=0.01, 50% slower from the 7th (tests/conftest.py)
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
