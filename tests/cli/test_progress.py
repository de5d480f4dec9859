"""The live view of a run when piped (a CI log): a line per finished process with the elapsed time and what is left,
a run announced once however many looks it takes, and never more than `quiet_s` of silence while something runs."""

from __future__ import annotations

import io

from rich.console import Console

from colbench.cli.progress import Heartbeat, LiveView
from colbench.model.records import Run
from colbench.model.run_config import EnvChoice, RunConfig
from colbench.runner.plan import Execution, PlannedCase, make_plan
from colbench.runner.session import Look
from tests.records import make_result


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def view() -> tuple[LiveView, io.StringIO, Clock]:
    out = io.StringIO()
    clock = Clock()
    console = Console(file=out, force_terminal=False, width=200)
    progress = LiveView(console, live=False, clock=clock, quiet_s=10.0)
    progress.heartbeat.start = lambda: None  # type: ignore[method-assign]  # ticks are driven by the test
    return progress, out, clock


def run_record() -> Run:
    return Run(run_id="r1", started_at="2026-01-01T00:00:00+00:00", machine_id="m", machine={},
               config=RunConfig(targets=[]))


def two_at_once(processes: int) -> tuple[LiveView, io.StringIO, Clock, PlannedCase, list[Execution]]:
    """A view of a run of `processes` placebo processes, old and new alternating, told two run side by side."""
    progress, out, clock = view()
    case = make_plan(["placebo"], {"duration": ["0.01"]}).cases[0]
    executions = [Execution(case, EnvChoice(name=name), i, i) for i in range(processes // 2) for name in ("old", "new")]
    progress.at_once(2)
    progress.start(run_record(), 1, processes)
    return progress, out, clock, case, executions


def test_piped_every_finished_process_is_a_line_with_the_time_so_far_and_what_is_left():
    progress, out, clock = view()
    case = make_plan(["placebo"], {"duration": ["0.01"]}).cases[0]
    executions = [Execution(case, EnvChoice(name=name), 0, 0) for name in ("old", "new")]
    progress.expecting(40.0, 2)
    progress.start(run_record(), 1, 2)
    progress.case_started(case)
    progress.execution_started(executions[0])
    clock.now += 20
    progress.execution_done(executions[0], make_result(case_id=case.case_id, status="ok"))
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("run r1: 1 case, 2 worker processes (about 40 s)")
    assert "process 1/2 placebo duration=0.01" in lines[-1] and "[old]: ok in 20 s" in lines[-1]
    assert "(20 s since the start), ETA 20 s" in lines[-1]  # the one left, at the mean of those finished


def test_processes_side_by_side_each_take_their_own_time_and_the_eta_counts_them_at_once():
    """`run --jobs 2`: two processes start together; each line says the time of its own process, and what is left
    is counted two at a time."""
    progress, out, clock, case, executions = two_at_once(6)
    progress.execution_started(executions[0])
    clock.now += 2
    progress.execution_started(executions[1])
    clock.now += 18
    progress.execution_done(executions[0], make_result(case_id=case.case_id, status="ok"))
    progress.execution_started(executions[2])
    clock.now += 2
    progress.execution_done(executions[1], make_result(case_id=case.case_id, status="ok"))
    lines = out.getvalue().splitlines()
    assert "process 1/6" in lines[-2] and "[old]: ok in 20 s" in lines[-2]
    assert "process 2/6" in lines[-1] and "[new]: ok in 20 s" in lines[-1]
    # 4 left at 20 s each, two at a time, the one running for 2 s already: (4 * 20 - 2) / 2
    assert lines[-1].endswith("ETA 39 s"), lines[-1]
    clock.now += 10
    progress._tick()
    assert "… process 3 of 6" in out.getvalue().splitlines()[-1]  # the one still running, from its own start
    assert "12 s so far" in out.getvalue().splitlines()[-1]


def test_side_by_side_the_next_process_starts_before_the_last_result_and_the_eta_still_counts_two_at_a_time():
    """runner/local_jobs.py starts the next process before it hands over the result of the one that ended (the CPU
    stays busy), so three are briefly "running" at `--jobs 2`: the ETA divides by the two the run loop said, not by
    the three it saw (16 processes of 14 min each read "ETA 1 h 05 min" where 1 h 37 min was left)."""
    progress, out, clock, case, executions = two_at_once(16)
    progress.execution_started(executions[0])
    progress.execution_started(executions[1])
    clock.now += 800
    progress.execution_started(executions[2])  # in the order of side_by_side: before the result of 0 is stored
    progress.execution_done(executions[0], make_result(case_id=case.case_id, status="ok"))
    clock.now += 72
    progress.execution_started(executions[3])
    progress.execution_done(executions[1], make_result(case_id=case.case_id, status="ok"))
    line = out.getvalue().splitlines()[-1]
    assert "process 2/16" in line and "ok in 14 min 32 s" in line, line
    # 14 left at (800 + 872) / 2 s, two at a time (the one named running has just started): 14 * 836 / 2
    assert line.endswith("ETA 1 h 37 min"), line


def test_the_estimate_before_any_process_has_ended_is_not_divided_again_by_the_processes_side_by_side():
    """`expecting` is the estimate's wall time of the processes, their jobs counted in already."""
    progress, _, clock, _, executions = two_at_once(4)
    progress.expecting(400.0, 4)  # 4 processes of 200 s, 2 at a time: 400 s of wall, 100 s a process
    progress.execution_started(executions[0])
    progress.execution_started(executions[1])
    assert progress._eta_text() == "ETA 6 min 40 s"
    clock.now += 30
    assert progress._eta_text() == "ETA 6 min 10 s"


def test_no_silence_longer_than_quiet_s_while_a_process_runs():
    progress, out, clock = view()
    case = make_plan(["placebo"], {"duration": ["0.01"]}).cases[0]
    progress.start(run_record(), 1, 1)
    progress.execution_started(Execution(case, EnvChoice(name="new"), 0, 0))
    before = out.getvalue()
    clock.now += 5
    progress._tick()
    assert out.getvalue() == before  # 5 s of quiet is fine
    clock.now += 7
    progress._tick()
    said = out.getvalue()[len(before):]
    assert "… process 1 of 1: placebo duration=0.01" in said and "[new]: 12 s so far" in said
    clock.now += 3
    progress._tick()
    assert out.getvalue()[len(before):] == said  # a line resets the quiet


def test_a_long_build_is_said_while_it_goes():
    progress, out, clock = view()
    progress.said("environment old: building pyarrow==17.0.0 with uv (a fresh environment took 28 s here)")
    clock.now += 11
    progress._tick()
    assert "… 11 s since: environment old: building pyarrow==17.0.0 with uv" in out.getvalue().splitlines()[-1]


def test_a_line_that_says_something_ended_is_never_repeated_as_going_on():
    progress, out, clock = view()
    progress.said("environment old: built in 28 s")
    clock.now += 11
    progress._tick()
    last = out.getvalue().splitlines()[-1]
    assert last.startswith("  … 11 s since: environment old: built in 28 s") and "so far" not in last


def test_a_step_of_the_callers_own_is_said_and_then_every_quiet_s_while_it_runs():
    """explain's profiles under Valgrind take minutes each: said when they start, then a line every 10 s."""
    progress, out, clock = view()
    progress.doing("profiling placebo on a under callgrind (a fresh worker)")
    clock.now += 9
    progress._tick()
    assert out.getvalue().count("profiling placebo") == 1
    clock.now += 2
    progress._tick()
    assert "… profiling placebo on a under callgrind (a fresh worker): 11 s so far" in out.getvalue()


def test_a_step_before_the_workers_is_quiet_when_quick_and_named_when_it_lasts():
    """The Java worker's build ends with a line; what follows (the data, the machine's bandwidth) is named by the
    heartbeat if it lasts, not the build's finished line again."""
    progress, out, clock = view()
    progress.said("Java worker for Arrow Java 19.0.0: built (33 s)")
    progress.preparing("preparing the input data (a file the cache lacks is built or downloaded)")
    assert out.getvalue().count("\n") == 1  # nothing said for the step itself
    clock.now += 11
    progress._tick()
    last = out.getvalue().splitlines()[-1]
    assert "… preparing the input data" in last and "11 s so far" in last and "Java worker" not in last


def test_a_line_said_beside_a_running_process_leaves_the_heartbeat_on_the_process():
    """A bisect builds its next point while a worker measures: the build's line must not become what the heartbeat
    repeats, nor the start the process's duration is taken from."""
    progress, out, clock = view()
    case = make_plan(["placebo"], {"duration": ["0.01"]}).cases[0]
    execution = Execution(case, EnvChoice(name="new"), 0, 0)
    progress.start(run_record(), 1, 1)
    progress.execution_started(execution)
    clock.now += 1
    progress.said("environment 19.0.0: found in the cache (built ahead, beside the measuring)")
    clock.now += 10
    progress._tick()
    last = out.getvalue().splitlines()[-1]
    assert "… process 1 of 1: placebo" in last and "11 s so far" in last, last
    clock.now += 4
    progress.execution_done(execution, make_result(case_id=case.case_id, status="ok"))
    assert "ok in 15 s" in out.getvalue().splitlines()[-1]


def test_a_run_is_announced_once_and_later_looks_say_only_what_they_add():
    progress, out, _ = view()
    progress.start(run_record(), 1, 4)
    progress.finish(run_record())
    progress.context = "look 2"
    progress.start(run_record(), 1, 2)
    lines = out.getvalue().splitlines()
    assert sum(line.startswith("run r1:") for line in lines) == 1
    assert lines[-1] == "look 2: 2 more worker processes in run r1"


def test_looks_say_why_they_ended_as_the_session_ended():
    progress, out, _ = view()
    progress.looked(Look(1, 30.0, 1.0, 0.01, 1, 12, 12, ended="fixed"), None, 0.0)
    progress.looked(Look(3, 590.0, 1.0, 0.01, 1, 4, 20, ended="budget"), None, 600.0)
    progress.looked(Look(2, 90.0, 0.3, 0.003, 0, 1, 3, ended="decided"), None, 600.0)
    fixed, budget, decided = out.getvalue().splitlines()
    assert "the only one asked for" in fixed and "no more blocks fit" not in fixed
    assert "still inconclusive" in budget and "no more blocks fit the budget" in budget
    assert decided.startswith("look 2 (after 3 blocks): every comparison decided")


def test_the_heartbeat_thread_ticks_and_stops():
    ticks: list[int] = []
    beat = Heartbeat(lambda: ticks.append(1), period_s=0.01)
    beat.start()
    import time

    deadline = time.monotonic() + 5
    while not ticks and time.monotonic() < deadline:
        time.sleep(0.01)
    beat.stop()
    count = len(ticks)
    time.sleep(0.05)
    assert count >= 1 and len(ticks) == count  # stopped means no more ticks


def test_the_one_view_hears_every_event_of_a_bisect_and_a_watch_by_name():
    """`LiveView` is passed where a BisectObserver or a WatchObserver is expected (without importing those use cases
    into every command's start): it must have each of their methods, with the same parameters."""
    import inspect

    from colbench.app.bisect import BisectObserver
    from colbench.app.watch import WatchObserver

    for observer in (BisectObserver, WatchObserver):
        for name, method in inspect.getmembers(observer, inspect.isfunction):
            if name.startswith("_"):
                continue
            ours = getattr(LiveView, name)
            assert list(inspect.signature(ours).parameters) == list(inspect.signature(method).parameters), name
    console = Console(file=io.StringIO(), force_terminal=False)
    assert LiveView(console, mode="bisect").run is not None
    view = LiveView(console, mode="watch")
    assert view.run is view  # the runs a pass starts show in the same view


def test_a_bisect_and_a_watch_say_their_steps_in_their_modes():
    from colbench.analysis.bisect import Step
    from colbench.app.bisect import SearchPlan
    from colbench.app.bisect_points import PointList
    from colbench.app.watch import PackagePlan
    from colbench.model.watch import WatchedRelease
    from colbench.runtimes.points import Point

    out = io.StringIO()
    bisect = LiveView(Console(file=out, force_terminal=False, width=300), mode="bisect")
    bisect.listed(PointList([Point(v, f"p=={v}") for v in ("1.0", "1.1", "1.2")], {"1.1a": "no wheel"}, "p on X"))
    bisect.planned(SearchPlan("instructions", "", 2, 1, 3.5, "history", 0, 0.0, 100.0, 200.0, True))
    bisect.look(1, 2, ["1.0", "1.1", "1.2"], 4)
    bisect.step(Step(1, "1.1", "1.0", "1.2", "bad", cause="a cause", measure_s=3.0))
    bisect.close()
    assert out.getvalue().splitlines() == [
        "bisect over 3 points (p on X): 1.0 (good) … 1.2 (bad); about 1 steps after the ends",
        "not tested 1.1a: no wheel",
        "expected: about 1 min 40 s (2 processes a point at 3.50 s each here, from history); --budget: 3 min 20 s",
        "step 1 of about 1: 1.1 (between 1.0 and 1.2), 4 processes a point (look 2: more processes, undecided so far)",
        "step 1 1.1: bad (a cause) (3.0 s)"]
    assert bisect.context == "step 1 of about 1, look 2"  # in front of the run's bar and process lines
    out = io.StringIO()
    watch = LiveView(Console(file=out, force_terminal=False, width=300), mode="watch")
    watch.planned(PackagePlan("pyarrow", "w", "https://pypi.org/simple", "1.0", ("1.1",)))
    watch.say("environment [1.1] built")
    watch.measuring("pyarrow", "1.0", "1.1")
    watch.watched(WatchedRelease("w", "pyarrow", "1.1", "m", "regression", "2026-01-01T00:00:00+00:00",
                                 baseline="1.0"))
    watch.bisect_step(Step(1, "1.05", "1.0", "1.1", "good"))
    watch.close()
    assert out.getvalue().splitlines() == [
        "pyarrow on https://pypi.org/simple: 1 new release to measure from 1.0: 1.1", "environment [1.1] built",
        "measuring pyarrow 1.1 against 1.0", "pyarrow 1.1 vs 1.0: regression", "bisect step 1 1.05: good -"]
