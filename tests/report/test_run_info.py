"""The report's run header says what happened to the run: interrupted and resumed, or stopped with the way on."""

from __future__ import annotations

from colbench.report.run_page import run_status
from tests.records import make_run


def test_a_resumed_run_reads_as_resumed_with_where_it_had_stopped():
    run = make_run(run_id="R1", status="finished",
                   resumes=[{"at": "2026-11-25T10:02:03+00:00", "status": "interrupted",
                             "stopped": {"after": 12, "of": 40, "error": "No space left on device"}}])
    assert run_status(run) == ("finished (interrupted after 12 of 40 executions; resumed 2026-11-25 10:02:03 UTC)")


def test_a_stopped_run_names_the_command_that_goes_on():
    run = make_run(run_id="R2", status="interrupted", stopped={"after": 3, "of": 9, "error": "disk full"})
    assert run_status(run) == ("interrupted (stopped after 3 of 9 executions: disk full; "
                               "colbench run --resume R2 goes on)")
    assert run_status(make_run(status="finished")) == "finished"
