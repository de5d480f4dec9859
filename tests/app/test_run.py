"""`app.run` called directly: real placebo workers, a real DuckDB store in a temporary COLBENCH_HOME, the events a
recording observer was told, and the typed outcome (the dry run's estimate included)."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from colbench.app.errors import UsageError
from colbench.app.run import RunRequest, estimate, run
from colbench.app.stores import store_at
from colbench.model.env_request import parse_envs
from colbench.model.run_config import RunConfig
from colbench.store.base import ResultQuery
from tests.app.recording import Recorder
from tests.conftest import require_tools

TWO_CASES = {"duration": ["0.01", "0.02"]}


def request(**fields: Any) -> RunRequest:
    """A RunRequest from the fields of both it and its RunConfig, as `colbench run`'s options give them."""
    configured = {f.name for f in dataclasses.fields(RunConfig)}
    config = RunConfig(**{"targets": [], **{k: v for k, v in fields.items() if k in configured}})
    config.targets = list(config.targets)
    return RunRequest(config=config, **{k: v for k, v in fields.items() if k not in configured})


def quick(**changes: Any) -> RunRequest:
    fields: dict[str, Any] = {"targets": ("placebo",), "overrides": {"duration": ["0.01"]}, "processes": 2,
                              "iterations": 2, "warmup": 0, "argv": ("colbench", "run", "placebo")}
    return request(**{**fields, **changes})


@pytest.mark.slow
def test_a_run_stores_every_execution_and_tells_the_observer_each_step(home: Path) -> None:
    seen = Recorder()
    outcome = run(quick(overrides=TWO_CASES, run_name="two cases"), seen)
    assert (outcome.status, outcome.cases_ok, outcome.cases_failed) == ("finished", 2, 0)
    assert not outcome.all_failed and not outcome.regression
    assert outcome.session is None and outcome.stopped is None
    # one process at a time (the view's ETA counts what is left that many at once), then the run
    assert seen.events[:2] == [("at_once", 1), ("start", outcome.run_id, 2, 4)]
    assert seen.events[-1] == ("finish", "finished")
    # each case: started, its two processes stored, done; the next case only after
    assert seen.kinds()[2:-1] == ["case_started", "execution_done", "execution_done", "case_done"] * 2
    assert [e[2] for e in seen.of("case_done")] == [2, 2]
    stored = store_at(None, create=False).results(ResultQuery(run_ids=(outcome.run_id,)))
    assert len(stored) == 4 and {r.status for r in stored} == {"ok"}
    assert outcome.run.name == "two cases" and outcome.run.argv == ["colbench", "run", "placebo"]

    again = Recorder()  # resuming a finished run: nothing is missing, nothing runs, the resume is on record
    resumed = run(request(resume=outcome.run_id), again)
    assert resumed.run_id == outcome.run_id and resumed.cases_ok == 2
    assert again.events == [("at_once", 1), ("start", outcome.run_id, 0, 0), ("finish", "finished")]
    assert [r["status"] for r in resumed.run.resumes] == ["finished"]


@pytest.mark.slow
def test_a_run_whose_every_case_fails_says_so(home: Path) -> None:
    outcome = run(quick(overrides={"error": ["exception"]}, processes=1), Recorder())
    assert outcome.status == "finished"  # the run itself went through
    assert (outcome.cases_ok, outcome.cases_failed, outcome.all_failed) == (0, 1, True)


@pytest.mark.slow
def test_several_environments_are_compared_look_by_look(home: Path) -> None:
    seen = Recorder()
    outcome = run(quick(processes=None, envs=parse_envs(("a=@current", "b=@current")), until_decided=True, budget_s=60,
                        max_looks=2), seen)
    # the first look's blocks (time decides) and the budget given
    assert seen.of("blocks_chosen") == [("blocks_chosen", 2, 4, "time", 60)]
    assert outcome.session is not None and outcome.session.baseline == "a"
    assert list(outcome.session.comparisons) == ["b"] and len(outcome.session.comparisons["b"]) == 1
    assert outcome.stopped in ("decided", "budget", "looks")
    looks = seen.of("looked")  # every look once, in order; only the last says no more blocks follow
    assert [e[1] for e in looks] == [look.number for look in outcome.session.looks]
    assert [e[3] for e in looks] == [True] * (len(looks) - 1) + [False]
    assert {e[4] for e in looks} == {60}
    envs = {e[2] for e in seen.of("execution_done")}
    assert envs == {"a", "b"}
    assert outcome.run.sequential is not None and outcome.run.sequential.baseline == "a"


@pytest.mark.slow
def test_one_look_asked_for_ends_as_asked_and_never_as_decided(home: Path) -> None:
    """--no-until-decided: the planned blocks, one look; an inconclusive comparison is said to be so because one look
    was asked for, not because 'no more blocks fit', and the summary never says 'every comparison decided'."""
    seen = Recorder()
    outcome = run(quick(processes=2, envs=parse_envs(("a=@current", "b=@current")), until_decided=False), seen)
    assert outcome.session is not None
    assert outcome.session.inconclusive  # two blocks cannot decide a wall-time comparison
    assert outcome.stopped == "fixed"
    (look,) = seen.of("looked")
    assert look[1] == 1 and look[3] is False and look[5] == "fixed"
    assert outcome.run.sequential is None  # one look at full alpha: what `compare` does anyway


def test_runs_of_several_environments_stop_once_decided_unless_told_otherwise(home: Path) -> None:
    """The dry run plans what the run will do: the deciding metric's first look (and a budget from this machine's
    costs) by default, its fixed blocks for one look, and every process of every environment."""
    from colbench.model.metrics import metric

    sides = parse_envs(("a=@current", "b=@current"))
    default = estimate(quick(processes=None, envs=sides))
    assert default.first_look and default.processes == (metric("time").first_look,)
    assert default.budget_s is not None and default.budget_s >= metric("time").min_budget_s
    # the estimate counts the blocks a real change typically takes here, on both sides
    assert default.expected_blocks == metric("time").expected_blocks
    assert default.estimate.processes == 2 * metric("time").expected_blocks
    fixed = estimate(quick(processes=None, envs=sides, until_decided=False))
    assert not fixed.first_look and fixed.budget_s is None and fixed.expected_blocks is None
    assert fixed.processes == (metric("time").fixed_blocks,)
    assert fixed.estimate.processes == 2 * metric("time").fixed_blocks
    counting = estimate(quick(processes=None, envs=sides, measure=("instructions",)))
    assert counting.processes == (metric("instructions").first_look,)
    # --processes alone fixes the count (one look of that many, as before); with --until-decided it is the first look
    fixed_count = estimate(quick(processes=5, envs=sides))
    assert not fixed_count.first_look and fixed_count.processes == (5,)
    first_of_many = estimate(quick(processes=5, envs=sides, until_decided=True))
    assert first_of_many.first_look and first_of_many.processes == (5,)
    assert counting.estimate.cases[0].counting_s is not None and counting.estimate.cases[0].counting_s > 0


def test_resume_refuses_what_would_change_the_plan(home: Path) -> None:
    with pytest.raises(UsageError, match=r"--resume cannot be combined with --param, --processes"):
        run(request(resume="latest", overrides={"duration": ["0.01"]}, processes=2))


def test_names_shown_to_others_are_refused_with_control_characters(home: Path) -> None:
    with pytest.raises(UsageError, match="--run-name"):
        estimate(quick(run_name="a\x1bb"))


def test_the_dry_run_estimates_the_plan_and_writes_nothing(home: Path) -> None:
    planned = estimate(quick(overrides=TWO_CASES, processes=3, iterations=4))
    assert len(planned.plan.cases) == 2
    assert (planned.processes, planned.iterations, planned.warmup) == ((3,), 4, 0)
    assert [c.case.params["duration"] for c in planned.estimate.cases] == [0.01, 0.02]
    assert planned.estimate.seconds > 0 and planned.data_error is None and not planned.counts_instructions
    assert not (home / "results.duckdb").exists()  # no store made by looking


def test_the_dry_run_tells_the_observer_which_cases_cannot_run(home: Path) -> None:
    seen = Recorder()
    planned = estimate(request(targets=("csv-read",), overrides={"reader": ["pyarrow", "data.table"]},
                                  measure=("instructions",)), seen)
    skipped = seen.of("skipped")
    assert [(e[1], e[2]["reader"]) for e in skipped] == [("csv-read", "data.table")] * len(skipped) and skipped
    assert {c.params["reader"] for c in planned.plan.cases} == {"pyarrow"}
    assert planned.counts_instructions


def test_the_dry_run_of_a_fresh_home_counts_the_java_workers_build(home: Path) -> None:
    """`run quick` on a fresh home builds the Java worker with Maven first (26-47 s here): the estimate says so."""
    from colbench.runtimes import java

    require_tools("java")  # without Java, quick plans no Java case
    planned = estimate(request(targets=("quick",)))
    java_cases = [c for c in planned.plan.cases if c.runtime == "java"]
    assert java_cases, "quick has a Java case"
    expected = 0 if java.missing_tools() else 1
    assert planned.estimate.worker_builds == expected
    assert planned.estimate.worker_build_seconds > 0 or not expected


@pytest.mark.slow
def test_a_run_that_builds_first_says_its_whole_estimate_before_the_builds(home: Path) -> None:
    """`run quick` said "about 14 s" after its Java build and data: the time it says must include what it builds."""

    class Estimates(Recorder):
        def estimated(self, planned: Any) -> None:
            self.events.append(("estimated", planned.data_files_to_build, planned.estimate.seconds))

    seen = Estimates()
    outcome = run(request(targets=("file-read",), overrides={
        "rows": ["2000"], "format": ["parquet"], "codec": ["uncompressed"], "engine": ["pyarrow"],
        "output": ["arrow_table"], "threads": ["1"], "source": ["fanniemae_2016Q4"]},
        processes=1, iterations=1, warmup=0), seen)
    assert outcome.cases_ok == 1
    kind, files, seconds = seen.events[0]
    assert kind == "estimated" and files >= 1 and seconds > 0  # the data it builds (the twin, the file) is in it
    assert seen.kinds().index("estimated") < seen.kinds().index("start")
