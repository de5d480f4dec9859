"""`colbench history` over real stored runs: a 50% step, measured beside a baseline in every run, is found where it
happens."""

from __future__ import annotations

import json

import pytest

from tests.conftest import STEPPED_DURATION, colbench

# real processes (the full run, not the fast tier), and a step in measured times: alone (tests/xdist_plan.py)
pytestmark = [pytest.mark.slow, pytest.mark.serial]


def test_history_finds_the_step_chained_through_a_baseline(stepped_history):
    home = stepped_history  # 12 runs of placebo beside a baseline, 50% slower from the 7th (tests/conftest.py)
    proc = colbench("history", "placebo", "--format", "json", home=home, check=True)
    histories = {h["env"]: h for h in json.loads(proc.stdout)}
    history = histories["code"]
    assert len(history["points"]) == 12 and all(p["ratio"] is not None for p in history["points"])
    (change,) = history["change_points"]
    assert change["index"] == 6 and 0.2 < change["magnitude"] < 0.8  # 1.5x, through this loaded VM's noise
    assert histories["ref"]["change_points"] == []
    table = colbench("history", "placebo", "--param", f"duration={STEPPED_DURATION}", home=home, check=True).stdout
    assert "change point at" in table and "ratio to" in table
    bad = colbench("history", "placebo", "--machine", "elsewhere", home=home)
    assert bad.returncode == 2 and "no results of placebo on machine 'elsewhere'" in bad.stderr
