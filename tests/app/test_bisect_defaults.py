"""What a bisect measures and how long it expects to take when not told (app/bisect.py): instruction counts where
Valgrind runs and the case allows it, processes from the metric registry, a budget sized from this machine's cost of
a process, and the points' environments counted in."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from colbench.app.bisect import BisectRequest, default_measure, expected_steps, search_plan
from colbench.app.bisect_points import PointList
from colbench.app.stores import store_at
from colbench.model.metrics import metric
from colbench.model.run_config import RunConfig
from colbench.runtimes.points import Point
from tests.conftest import require_tools

needs_valgrind = pytest.mark.skipif(shutil.which("valgrind") is None or shutil.which("cc") is None,
                                    reason="Valgrind and a C compiler are needed to count instructions")


@needs_valgrind
def test_a_single_threaded_python_case_is_bisected_on_instruction_counts(home: Path) -> None:
    measure, why = default_measure(BisectRequest("placebo", "1", "2", overrides={"threads": ["1"]}))
    assert measure == ("instructions",) and "Valgrind runs here" in why


@pytest.mark.parametrize("overrides, reason", [
    ({"threads": ["2"]}, "runs 2 threads"),
    ({"threads": ["1"], "cache": ["cold"]}, "cold page cache"),
])
def test_what_counts_cannot_see_is_bisected_on_wall_time_and_says_why(home: Path, overrides, reason) -> None:
    measure, why = default_measure(BisectRequest("placebo", "1", "2", overrides=overrides))
    assert measure == ("wall",) and why.startswith("measuring wall time:") and reason in why


def test_an_r_case_is_bisected_on_wall_time(home: Path) -> None:
    require_tools("Rscript")  # without R the case is not planned at all
    measure, why = default_measure(BisectRequest("csv-read", "1", "2", overrides={
        "reader": ["data.table"], "source": ["fanniemae_2016Q4"], "compression": ["none"],
        "output": ["dataframe"], "threads": ["1"]}))
    assert measure == ("wall",) and "Python workers only" in why


@pytest.mark.parametrize("points, steps", [(2, 0), (3, 1), (4, 2), (5, 2), (17, 4), (18, 5), (21, 5)])
def test_the_expected_steps_are_a_binary_search_over_the_points_between(points, steps) -> None:
    assert expected_steps(points) == steps


def test_the_default_budget_is_sized_from_the_cost_of_a_process_here(home: Path) -> None:
    request = BisectRequest("placebo", "1.0", "1.3", overrides={"duration": ["0.5"], "threads": ["1"]})
    points = PointList([Point(v, f"probe=={v}") for v in ("1.0", "1.1", "1.2", "1.3")], source="wheels",
                       package="probe")
    config = RunConfig(targets=["placebo"], overrides=dict(request.overrides), measure=("wall",))
    plan = search_plan(store_at(None), request, config, points, "time", metric("time").bisect_first_look, "m", "")
    assert plan.steps == 2 and plan.first == 8
    # the ends (2 points) and 2 steps (3 points each), 8 processes a point, at the cost of one process here
    assert plan.expected_s >= 8 * (2 + 3 * 2) * plan.process_s + plan.env_s
    assert plan.envs_to_build == 4  # nothing in this home's cache: the ends and one point a step
    assert plan.budget_s == pytest.approx(max(600.0, 2 * plan.expected_s)) and not plan.budget_given
    given = search_plan(store_at(None), BisectRequest("placebo", "1.0", "1.3", overrides=dict(request.overrides),
                                                     budget_s=90.0), config, points, "time", 8, "m", "")
    assert given.budget_s == 90.0 and given.budget_given
