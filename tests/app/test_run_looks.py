"""`run --until-decided --budget <long>`: the looks after the first spend alpha as a watch pass's do (#46).

Before, only the watch set `GateSettings.least_share`; a run given an hour charged its first look a tenth of the
budget up front and left the looks after it nothing to spend until the time used passed that tenth, so an unchanged
case took as many processes as the budget's first tenth holds. Seeded, no processes: the looks of
`run_until_decided` replayed with the settings `colbench run` builds."""

from __future__ import annotations

import numpy as np

from colbench.analysis.sequential import FIRST_LOOK_FRACTION
from colbench.analysis.verdicts import Verdict
from colbench.app.run import RunRequest, gate_settings
from colbench.model.run_config import RunConfig
from colbench.runner.session import look_fraction
from tests.analysis.test_calibrated_no_change import _until_decided


def test_a_runs_later_looks_spend_a_share_of_the_alpha_left_as_a_watch_does():
    settings = gate_settings(RunRequest(config=RunConfig(targets=["placebo"]), budget_s=3600.0), 3600.0)
    assert settings.least_share == FIRST_LOOK_FRACTION and settings.budget_s == 3600.0
    # the second look, at 2% of an hour used: charged 19% of the spending time, not the first look's 10% again
    assert look_fraction(0.02, FIRST_LOOK_FRACTION, settings.least_share) > FIRST_LOOK_FRACTION
    rng = np.random.default_rng(432)
    # an hour at 30 s a block: 120 blocks; counts at 0.05% between processes, no calibration of the case
    stalled = [_until_decided(rng, 0.0005, None, budget_blocks=120.0, least_share=0.0) for _ in range(10)]
    alive = [_until_decided(rng, 0.0005, None, budget_blocks=120.0, least_share=settings.least_share)
             for _ in range(10)]
    assert all(v == Verdict.NO_CHANGE for v, _ in stalled + alive)
    assert max(n for _, n in alive) < min(n for _, n in stalled)


def test_a_budget_sized_on_the_first_look_where_the_cost_is_unknown():
    """A run whose cases were never run here (an asv suite's first run) cannot size its budget from their costs:
    it was the minimum (2 minutes for counts) against a first look of hours, so no case got a second look. Now the
    budget is that many times the first look's measured time, never below the minimum."""
    from colbench.runner.session import GateSettings, _budget_after_first_look

    deferred = GateSettings(budget_s=120.0, budget_per_first_look=4.0)
    assert _budget_after_first_look(deferred, 3600.0).budget_s == 14400.0
    assert _budget_after_first_look(deferred, 10.0).budget_s == 120.0
    assert _budget_after_first_look(GateSettings(budget_s=120.0), 3600.0).budget_s == 120.0


def test_a_run_of_cases_never_run_here_says_its_budget_follows_the_first_look(tmp_path):
    import shutil
    from pathlib import Path

    from tests.conftest import colbench

    suite = tmp_path / "project"
    shutil.copytree(Path(__file__).parents[1] / "sources" / "asv_project", suite)
    done = colbench("run", f"asv:{suite}", "-b", "time_function$", "--env", "a=@current", "--env", "b=@current",
                    "--iterations", "1", "--warmup", "0", "--max-looks", "2", home=tmp_path / "home")
    assert done.returncode in (0, 1), done.stderr
    said = " ".join((done.stdout + done.stderr).split())
    assert "within 25x the first look's time in all (what a case costs here is not known yet" in said, said
