"""Run estimates from measured costs: a case's history, a per-row model of similar cases, the shipped reference
model, and the data still to build."""

from __future__ import annotations

import pytest

from colbench.model.records import Result
from colbench.runner.estimate import (
    Costs,
    build_rates,
    estimate_case,
    estimate_plan,
    fit_costs,
    model_keys,
    reference_costs,
)
from colbench.runner.plan import make_plan
from tests.conftest import colbench
from tests.records import make_result


def _process(run: str, case: str, rows: int, iteration: float, start: float, began: float, *,
             reader: str = "pyarrow", runtime: str = "python") -> Result:
    """One stored process: `iteration` seconds per timed call (3 timed, 1 warm-up), `start` outside them."""
    return make_result(run_id=run, case_id=case, benchmark="csv-read", status="ok",
                       params={"reader": reader, "rows": rows, "threads": 1}, runtime={"name": runtime},
                       samples={"wall_s": [iteration] * 3}, warmup_samples={"wall_s": [iteration]},
                       summary={"wall_s": {"median": iteration}},
                       process={"started_at": began, "spawn_to_result_s": start + 4 * iteration})


def test_a_case_is_estimated_from_its_history_then_from_similar_cases_by_row():
    # two processes of a 100k-row case: 0.1 s a call, 0.5 s to start; 0.2 s of the orchestrator between them
    results = [_process("r", "small", 100_000, 0.1, 0.5, 1000.0), _process("r", "small", 100_000, 0.1, 0.5, 1001.1)]
    costs = fit_costs(results)
    assert costs.exact["small"] == (pytest.approx(0.1), pytest.approx(0.5 + 0.1))  # gaps median: 0 and 0.2
    key = model_keys("csv-read", {"reader": "pyarrow", "rows": 400_000, "threads": 2})[0]
    assert key in costs.per_row  # rows and threads are not part of what a case is like

    plan = make_plan(["csv-read"], {"reader": ["pyarrow"], "rows": ["400000"], "output": ["arrow_table"],
                                    "source": ["fanniemae_2016Q4"], "compression": ["none"], "threads": ["1"]})
    (case,) = plan.cases
    estimated = estimate_case(case, 3, 1, costs, Costs())
    assert estimated.source == "this machine's model"
    assert estimated.iteration_s == pytest.approx(0.4, rel=0.01)  # 4x the rows, 4x the time a call
    # a bare start (the quickest start seen) plus setup scaled by rows
    assert estimated.process_s > 4 * 0.4


def test_the_orchestrators_time_between_processes_is_a_cost_but_a_one_off_is_capped():
    results = [_process("r", "c", 1000, 0.01, 0.2, 0.0), _process("r", "c", 1000, 0.01, 0.2, 500.0)]
    _, start = fit_costs(results).exact["c"]
    assert start <= 0.2 + 60 / 2 + 1e-9  # the 500 s gap counts at most a minute (then halved by the median)


def test_data_build_time_comes_from_the_manifests_of_this_machine():
    rates = build_rates([{"format": "csv", "build_seconds": 2.0, "size_bytes": 100_000_000},
                         {"format": "csv", "build_seconds": 1.0, "size_bytes": 100_000_000},
                         {"format": "parquet", "build_seconds": 0.0, "size_bytes": 10}])
    assert rates == {"csv": pytest.approx(1.5e-8)}
    plan = make_plan(["placebo"], {"duration": ["0.5"]})
    estimate = estimate_plan(plan, 3, 1, lambda c: 2, Costs(), Costs(), new_data=[("csv", 200_000_000)],
                             build_rates_here=rates)
    assert estimate.data_seconds == pytest.approx(3.0)


def test_every_case_of_the_reference_suites_has_an_estimate_on_a_fresh_machine():
    reference = reference_costs()
    assert reference.per_row and reference.startup_s.get("python")
    for suite in ("quick", "e1", "e2", "e3", "e4", "e5"):
        plan = make_plan([suite])
        estimate = estimate_plan(plan, 3, 1, lambda c: 3, Costs(), reference)
        assert estimate.unknown_cases == 0, (suite, [c.case.case_id for c in estimate.cases if c.source == "none"])
        assert estimate.seconds > len(plan.cases)  # every case costs at least its processes' start


@pytest.mark.slow
def test_a_dry_run_on_a_fresh_home_says_what_its_estimate_is_made_of(home):
    done = colbench("run", "e1", "--dry-run", home=home, check=True)
    out = " ".join(done.stdout.split())
    assert "estimated time:" in out and "at least" not in out
    assert "cases: 6 from reference model" in out
    assert "data to build first: 2 files" in out
