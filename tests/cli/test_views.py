"""What `history`, `compare` and `show` print over a small store of records (no worker runs: cheap): an
environment named in history headings, a side found in the run that has it, a failed case's cause and traceback,
counts that read ("1 point", not "1 points")."""

from __future__ import annotations

import json
import re

import pytest
from typer.testing import CliRunner

from colbench.analysis.stats import summary_stats
from colbench.cli.main import app
from colbench.store import open_store
from colbench.words import plural, plural_of
from tests.records import make_result, make_run

TRACEBACK = ('Traceback (most recent call last):\n  File "bench.py", line 9, in run\n    1 / 0\n'
             "ZeroDivisionError: division by zero")


def _result(run_id: str, env: str, index: int, wall: float, **fields):
    walls = [wall * (1 + 0.001 * i) for i in range(3)]
    return make_result(run_id=run_id, result_id=f"{run_id}-{env}-{index}", env_name=env, process_index=index,
                       case_id="c1", params={"duration": 0.01}, timestamp=f"2026-01-0{1 + index}T00:00:00+00:00",
                       samples={"wall_s": walls}, summary={"wall_s": summary_stats(walls)}, **fields)


@pytest.fixture
def store_path(tmp_path, monkeypatch):
    """Run 1: environments old and new (new 20% slower), one failed process of a crash; run 2, later: no
    environments."""
    path = tmp_path / "results.duckdb"
    monkeypatch.setenv("COLBENCH_STORE", str(path))
    db = open_store(str(path))
    db.create_run(make_run(run_id="20260101T000000-aaaaaa", name="pair", envs=[{"name": "old"}, {"name": "new"}],
                           started_at="2026-01-01T00:00:00+00:00", status="finished"))
    for i in range(4):
        db.add_result(_result("20260101T000000-aaaaaa", "old", i, 0.010))
        db.add_result(_result("20260101T000000-aaaaaa", "new", i, 0.012))
    db.create_run(make_run(run_id="20260102T000000-bbbbbb", name="later", started_at="2026-01-02T00:00:00+00:00",
                           status="finished"))
    db.add_result(_result("20260102T000000-bbbbbb", "default", 0, 0.010))
    db.add_result(make_result(
        run_id="20260102T000000-bbbbbb", result_id="failed", case_id="c2", params={"duration": 0.02},
        status="error", process_index=0,
        error={"kind": "crash", "message": "worker killed by SIGSEGV", "traceback": None, "signal": "SIGSEGV",
               "exit_code": -11, "stderr_tail": "loading\nFatal Python error: Segmentation fault"}))
    db.add_result(make_result(
        run_id="20260102T000000-bbbbbb", result_id="raised", case_id="c3", params={"duration": 0.03},
        status="error", process_index=0,
        error={"kind": "exception", "message": "ZeroDivisionError: division by zero", "traceback": TRACEBACK}))
    db.close()
    return path


def _invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.output


def test_plural():
    assert [plural(n, "case") for n in (0, 1, 2)] == ["0 cases", "1 case", "2 cases"]
    assert plural(1, "process") == "1 process" and plural(3, "worker process") == "3 worker processes"
    assert plural(2, "entry") == "2 entries" and plural(2, "day") == "2 days"
    assert plural(1200, "point") == "1,200 points"
    assert plural_of("run record") == "run records"


def test_history_names_each_series_environment(store_path):
    code, out = _invoke("history", "placebo", "--param", "duration=0.01")
    assert code == 0, out
    headings = [line for line in out.splitlines() if " on box-m1 (m1): " in line]
    assert len(headings) == 3, out  # old, new, and the later run's default environment
    assert any("environment old," in h and h.endswith("1 point") for h in headings), headings
    assert any("environment new," in h for h in headings), headings
    assert not re.search(r"\b1 points\b", out)
    code, out = _invoke("history", "placebo", "--format", "json")
    assert {h["env"] for h in json.loads(out)} == {"old", "new", "default"}


def test_compare_finds_named_environments_in_an_earlier_run(store_path):
    code, out = _invoke("compare", "old", "new", "--metric", "time", "--format", "json")
    assert code in (0, 1, 3), out
    document = json.loads(out[out.index("{"):])
    (case,) = document["comparisons"]
    assert case["ratio"] == pytest.approx(1.2, rel=1e-6)
    assert "environment old of run 20260101T000000-aaaaaa (the newest run that has it)" in out
    code, out = _invoke("compare", "old", "missing")
    assert code == 2 and "'missing' is neither a run nor an environment of any run" in out, out


def test_show_gives_the_cause_and_a_way_to_the_traceback(store_path):
    code, out = _invoke("show", "later")
    assert code == 0, out
    flat = " ".join(out.split())
    row = next(line for line in out.splitlines() if "duration=0.02" in line)
    assert "crash: worker killed by SIGSEGV (Fatal" in row, out  # the cause, in its row (the cell wraps)
    assert "2 cases ended in an error: `colbench show 20260102T000000-bbbbbb --errors`" in flat
    code, out = _invoke("show", "later", "--errors")
    assert code == 0, out
    assert "ZeroDivisionError: division by zero" in out and '  File "bench.py", line 9, in run' in out
    assert "    Fatal Python error: Segmentation fault" in out and "exit code -11" in out
    code, out = _invoke("show", "later", "--errors", "--format", "json")
    causes = {e["label"].split()[-1]: e["cause"] for e in json.loads(out)}
    assert causes == {"duration=0.02": "worker killed by SIGSEGV (Fatal Python error: Segmentation fault)",
                      "duration=0.03": "ZeroDivisionError: division by zero"}


# Commands that print results (not files: export, report and data make have their own formats)
RESULT_COMMANDS = ("show", "compare", "history", "claims", "bisect", "explain", "watch", "doctor", "list", "machine",
                   ("store", "info"))


def _format_choices(command) -> set[str]:
    from typing import get_args

    from typer.main import get_command

    group = get_command(app)
    for name in command if isinstance(command, tuple) else (command,):
        group = group.commands[name]  # type: ignore[attr-defined]
    (option,) = [p for p in group.params if "--format" in p.opts]
    return set(get_args(option.type_descriptor.annotation))


def test_every_command_that_prints_results_takes_one_set_of_formats():
    for command in RESULT_COMMANDS:
        extra = {"csv"} if command == "show" else set()  # show's rows also as CSV
        assert _format_choices(command) == {"table", "markdown", "json"} | extra, command


def test_markdown_is_the_table_mode_as_markdown(store_path):
    code, out = _invoke("history", "placebo", "--param", "duration=0.01", "--format", "markdown")
    assert code == 0, out
    assert "environment old," in out and "| when | commit / version |" in out, out
    assert "┃" not in out and "━" not in out  # no box drawing: Markdown tables
    code, out = _invoke("show", "later", "--errors", "--format", "markdown")
    assert code == 0 and "ZeroDivisionError: division by zero" in out, out
    code, out = _invoke("history", "placebo", "--format", "yaml")
    assert code == 2 and "'yaml' is not one of 'table', 'markdown', 'json'" in out, out
