"""Run estimates from measured costs: a case's history, a per-row model of similar cases, the shipped reference
model, and the data still to build."""

from __future__ import annotations

import re
from types import SimpleNamespace

import pytest

from colbench.model.records import Result
from colbench.runner.estimate import (
    Costs,
    build_rates,
    estimate_case,
    estimate_plan,
    fit_costs,
    load_factor,
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
    planned = re.search(r"plan: (\d+) cases", out)  # 6 with R installed, 3 without (its cases are skipped)
    assert planned and f"cases: {planned[1]} from reference model" in out, out
    assert "data to build first" in out and "(2 files, " in out


def _counted(case: str, plain_s: float, counting_s: float, load: float = 0.0) -> Result:
    """A `wall,instructions` process: its own spawn to result, and its counting process's beside it."""
    return make_result(case_id=case, benchmark="csv-read", status="ok", params={"reader": "pyarrow", "rows": 1000},
                       samples={"wall_s": [0.1] * 3}, summary={"wall_s": {"median": 0.1}},
                       process={"spawn_to_result_s": plain_s},
                       machine={"load_average": [load, load, load], "cpu_threads": 2},
                       measure={"metrics": ["wall", "instructions"],
                                "instructions": {"process": {"spawn_to_result_s": counting_s}}})


def test_a_counting_process_costs_what_it_took_here_else_the_valgrind_factor_measured_here():
    costs = fit_costs([_counted("a", 2.0, 30.0), _counted("a", 2.0, 34.0), _counted("b", 1.0, 12.0)])
    assert costs.counting == {"a": pytest.approx(32.0), "b": pytest.approx(12.0)}
    assert costs.valgrind_factor == pytest.approx((16.0 + 12.0) / 2)  # median of 32/2 and 12/1
    plan = make_plan(["placebo"], {"duration": ["0.5"]})
    counted = estimate_plan(plan, 3, 1, lambda c: 2, costs, Costs(), envs=2, measure=("instructions",))
    (case,) = counted.cases
    assert case.counting_source.startswith("this machine's Valgrind factor")
    assert case.counting_s == pytest.approx(case.process_s * costs.valgrind_factor)
    # instructions only: every process of both sides is a counting one, and nothing else is counted for them
    assert counted.processes == 4 and counted.process_seconds == pytest.approx(4 * case.counting_s)
    both = estimate_plan(plan, 3, 1, lambda c: 2, costs, Costs(), envs=2, measure=("wall", "instructions"))
    assert both.process_seconds == pytest.approx(4 * (case.process_s + case.counting_s))


def test_history_measured_under_load_is_kept_as_an_idle_machine_would_take_it():
    idle = fit_costs([_counted("a", 2.0, 30.0, load=0.0)]).counting["a"]
    busy = fit_costs([_counted("a", 2.0, 30.0, load=5.0)]).counting["a"]
    assert idle == pytest.approx(30.0)
    assert busy == pytest.approx(30.0 / load_factor(5.0, 2)) and busy < idle
    assert load_factor(0.5, 2) == 1.0 and load_factor(5.0, 2) > 1.0


def test_the_estimate_counts_environments_and_worker_builds_made_first():
    plan = make_plan(["placebo"], {"duration": ["0.5"]})
    here = Costs(env_build_s=30.0, java_build_s=40.0)
    reference = Costs(env_cached_s=2.0, run_s=10.0, java_build_cached_s=4.0)
    estimate = estimate_plan(plan, 3, 1, lambda c: 2, here, reference, envs=2, env_builds=[True, False],
                             worker_builds=[True, False])
    assert (estimate.envs_fresh, estimate.envs_cached, estimate.worker_builds) == (1, 1, 2)
    assert estimate.env_seconds == pytest.approx(30.0 + 2.0)  # a fresh one at this machine's cost, a cached one
    # one Java worker downloading Arrow Java (this machine's cost), one that Maven's repository serves
    assert estimate.worker_build_seconds == pytest.approx(40.0 + 4.0)
    assert estimate.seconds == pytest.approx(estimate.process_seconds + 32.0 + 44.0 + 10.0)
    stretched = estimate_plan(plan, 3, 1, lambda c: 2, here, Costs(), envs=2, load_factor=2.0)
    plain = estimate_plan(plan, 3, 1, lambda c: 2, here, Costs(), envs=2)
    assert stretched.process_seconds == pytest.approx(2 * plain.process_seconds)


def test_the_reference_model_has_what_a_fresh_machine_needs_for_builds_and_counting():
    reference = reference_costs()
    assert reference.valgrind_factor > 1 and reference.env_build_s > reference.env_cached_s > 0
    assert reference.java_build_s > reference.java_build_cached_s > 0


def test_the_load_factor_of_the_moment_is_measured_and_never_below_the_load_averages():
    from colbench.runner.estimate import current_load_factor, measured_share

    share = measured_share()
    assert 0 < share <= 1.0
    assert current_load_factor(5.0) >= load_factor(5.0)  # a quiet moment caught by the probe does not lower it
    assert current_load_factor(0.0) == pytest.approx(max(1.0, 1.0 / share))


def test_history_is_kept_as_idle_by_the_share_of_a_cpu_each_process_got():
    """A counting process that ran 101 s of wall for 19.4 s of CPU (load 13-20 here) is 19.4 s on an idle machine:
    its own record measures the load it met, which the load average understated (3-4x against 5.2x)."""
    from colbench.runner.estimate import _load_then
    from tests.records import make_result

    loaded = make_result(process={"spawn_to_result_s": 101.5, "child_user_s": 18.3, "child_sys_s": 1.1},
                         machine={"load_average": [13.0], "cpu_threads": 2})
    assert _load_then(loaded) == pytest.approx(101.5 / 19.4)
    no_cpu = make_result(process={"spawn_to_result_s": 10.0}, machine={"load_average": [13.0], "cpu_threads": 2})
    assert _load_then(no_cpu) == pytest.approx(load_factor(13.0, 2))  # an older record: the load average's formula
    cold = make_result(params={"cache": "cold"}, process={"spawn_to_result_s": 10.0, "child_user_s": 1.0},
                       machine={"load_average": [0.0], "cpu_threads": 2})
    assert _load_then(cold) == 1.0  # waiting on the disk is not load


def test_a_counting_process_is_estimated_as_the_run_will_make_it_fresh_or_forked():
    """A case counted both ways before: a run that forks its counting processes from servers is estimated at what
    forked ones cost (each server's start on its first), a run of fresh processes at what fresh ones cost."""
    from colbench.runner.estimate import _counting

    def result(seconds: float, server: dict | None) -> SimpleNamespace:
        counted = {"process": {"spawn_to_result_s": seconds}, **({"server": server} if server else {})}
        return SimpleNamespace(case_id="c", measure={"instructions": counted}, process={}, params={}, machine={})

    results = [result(18.0, None), result(20.0, None), result(6.0, {"child": 0, "ready_s": 10.0}),
               result(6.0, {"child": 1, "ready_s": 10.0})]
    assert _counting(results)["c"] == pytest.approx(19.0)
    assert _counting(results, served=True)["c"] == pytest.approx(11.0)


def test_a_case_never_counted_nor_modelled_gets_a_typical_counting_process_and_says_so():
    """An asv or pytest case never run here has no plain figure for a Valgrind factor to scale: its counting process
    is the median of the cases counted here, else the reference VM's median; the estimate calls it rough, so the
    looks' budget is still sized on the first look."""
    from colbench.runner.estimate import CaseEstimate, Estimate, with_counting

    (case,) = make_plan(["placebo"], {"duration": ["0.5"]}).cases
    unmodelled = CaseEstimate(case, None, None, "none")
    here = fit_costs([_counted("a", 2.0, 30.0), _counted("b", 1.0, 12.0), _counted("c", 1.0, 14.0)])
    from_here = with_counting(unmodelled, here, Costs(counting_process_s=99.0))
    assert from_here.counting_s == pytest.approx(14.0) and from_here.counting_source.startswith(
        "the median counting process here")
    from_reference = with_counting(unmodelled, Costs(), Costs(counting_process_s=20.0))
    assert (from_reference.counting_s, from_reference.counting_source) == (
        20.0, "the reference VM's median counting process (20 s)")
    assert with_counting(unmodelled, Costs(), Costs()).counting_s is None
    counted = Estimate(0.0, [from_reference], measure=("instructions",))
    assert (counted.unknown_cases, counted.typical_cases, counted.rough) == (0, 1, True)
    # with wall time too, the plain process is still missing: the case stays out of the total
    both = Estimate(0.0, [from_reference], measure=("wall", "instructions"))
    assert (both.unknown_cases, both.typical_cases) == (1, 1)
    assert reference_costs().counting_process_s > 0  # a fresh machine has the reference VM's figure
